import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../db/tenant-scope.js';
import { Customer, Invoice, Package } from '../../db/models/index.js';
import { money, MoneyError, toNumber } from '../../lib/money.js';
import { recordAudit } from '../audit-logs/service.js';
import { NotFound, ValidationFailed } from '../errors.js';
import { paginate, whereContains, type PageParams } from '../shared/list.js';
import { PACKAGE_COLUMNS, packageShape } from '../external/shapes.js';

/**
 * Service packages of the admin API (issue 8 item 3; DESIGN.md §6 "package fields"): CRUD and
 * DELETE, every write audited in its transaction. A package that customers or invoices refer to is
 * deactivated instead of deleted, so no customer loses its package and no invoice its history.
 */

/** Body of POST /api/packages and PUT /api/packages/{id} after schema validation. */
export interface PackageInput {
  name?: string;
  description?: string | null;
  /** Monthly price in the tenant's currency (at most 2 decimals). */
  price?: number;
  /** kbit/s. */
  speed_down_kbps?: number;
  /** kbit/s. */
  speed_up_kbps?: number;
  service_type?: 'pppoe' | 'hotspot' | 'dhcp' | 'static';
  is_active?: boolean;
  is_partner_package?: boolean;
}

/** Validated query of GET /api/packages. */
export interface PackageAdminListQuery extends PageParams {
  search?: string;
  is_active?: boolean;
  is_partner_package?: boolean;
  service_type?: string;
}

/** Who acts: the user and the caller's IP, for the audit log. */
export interface Actor {
  userId: number | null;
  ip?: string | null;
}

/** What DELETE /api/packages/{id} did. */
export type PackageDeleteOutcome = { deleted: true } | { deleted: false; package: ReturnType<typeof packageShape> };

/**
 * GET /api/packages: newest first (id tie-breaker); filters is_active, is_partner_package,
 * service_type, search (substring of name or description, case-insensitive).
 * @returns the list envelope (DESIGN.md §4)
 */
export async function listAdminPackages(scope: TenantScope, query: PackageAdminListQuery) {
  const q = scope.query(Package);
  if (query.is_active !== undefined) q.where('is_active', query.is_active);
  if (query.is_partner_package !== undefined) q.where('is_partner_package', query.is_partner_package);
  if (query.service_type) q.where('service_type', query.service_type);
  whereContains(q, ['name', 'description'], query.search);
  return paginate(q, PACKAGE_COLUMNS, ['created_at', 'id'], query, packageShape);
}

/**
 * GET /api/packages/{id}: the read shape (DESIGN.md §6).
 * @throws NotFound when the id is not a package of the scope's tenant
 */
export async function packageById(scope: TenantScope, id: number) {
  const row = await scope.query(Package).findById(id).select(PACKAGE_COLUMNS);
  if (!row) throw new NotFound('Package');
  return packageShape(row);
}

/** The columns a body sets (only the fields it carries); price checked as money. */
function columns(input: PackageInput): PartialModelObject<Package> {
  const out: PartialModelObject<Package> = {};
  if (input.name !== undefined) out.name = input.name.trim();
  if (input.description !== undefined) out.description = input.description;
  if (input.price !== undefined) {
    try {
      out.price = toNumber(money(input.price));
    } catch (e) {
      if (e instanceof MoneyError) throw new ValidationFailed({ price: ['The price must have at most 2 decimals.'] });
      throw e;
    }
  }
  for (const k of ['speed_down_kbps', 'speed_up_kbps', 'service_type', 'is_active', 'is_partner_package'] as const) {
    if (input[k] !== undefined) Object.assign(out, { [k]: input[k] });
  }
  if (out.name === '') throw new ValidationFailed({ name: ['The name field is required.'] });
  return out;
}

/** The audit summary of a package. */
function summary(r: PartialModelObject<Package>) {
  return {
    name: r.name ?? null,
    price: r.price ?? null,
    speed_down_kbps: r.speed_down_kbps ?? null,
    speed_up_kbps: r.speed_up_kbps ?? null,
    service_type: r.service_type ?? null,
    is_active: r.is_active ?? null,
    is_partner_package: r.is_partner_package ?? null,
  };
}

/**
 * POST /api/packages: creates a package and its audit entry (`packages.created`) in one transaction.
 * @returns the new package's id
 * @throws ValidationFailed (422) for a price with more than 2 decimals or a blank name
 */
export async function createPackage(scope: TenantScope, actor: Actor, input: PackageInput): Promise<number> {
  const cols = columns(input);
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const now = new Date();
    const row = await s.create(Package, { ...cols, created_at: now, updated_at: now }, trx);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'packages.created',
      subject: { type: 'packages', id: row.id },
      after: summary(row),
      ip: actor.ip ?? null,
    });
    return row.id;
  });
}

/**
 * PUT /api/packages/{id}: sets the fields the body carries (a field left out keeps its value),
 * audited as `packages.updated` with before and after.
 * @throws NotFound for an id outside the tenant; ValidationFailed as createPackage
 */
export async function updatePackage(scope: TenantScope, actor: Actor, id: number, input: PackageInput) {
  const cols = columns(input);
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Package).findById(id).forUpdate();
    if (!row) throw new NotFound('Package');
    await s
      .query(Package)
      .findById(id)
      .patch({ ...cols, updated_at: new Date() });
    await recordAudit(s, {
      userId: actor.userId,
      action: 'packages.updated',
      subject: { type: 'packages', id },
      before: summary(row),
      after: summary({ ...row, ...cols }),
      ip: actor.ip ?? null,
    });
  });
}

/**
 * DELETE /api/packages/{id}: deletes a package nobody refers to (`packages.deleted`); a package
 * that a customer (any status) or an invoice refers to is deactivated instead (is_active false,
 * `packages.deactivated`). The package row is locked first, so a customer being given the package
 * at the same moment either counts as a use or fails its foreign key.
 * @returns {deleted: true}, or {deleted: false, package} with the deactivated read shape
 * @throws NotFound for an id outside the tenant
 */
export async function deletePackage(scope: TenantScope, actor: Actor, id: number): Promise<PackageDeleteOutcome> {
  const outcome = await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Package).findById(id).forUpdate();
    if (!row) throw new NotFound('Package');
    const customer = await s.query(Customer).where('package_id', id).select('id').first();
    const invoice = customer ? undefined : await s.query(Invoice).where('package_id', id).select('id').first();
    if (!customer && !invoice) {
      await s.query(Package).deleteById(id);
      await recordAudit(s, {
        userId: actor.userId,
        action: 'packages.deleted',
        subject: { type: 'packages', id },
        before: summary(row),
        ip: actor.ip ?? null,
      });
      return true;
    }
    if (row.is_active) await s.query(Package).findById(id).patch({ is_active: false, updated_at: new Date() });
    await recordAudit(s, {
      userId: actor.userId,
      action: 'packages.deactivated',
      subject: { type: 'packages', id },
      before: { is_active: row.is_active },
      after: { is_active: false, used_by: customer ? 'customers' : 'invoices' },
      ip: actor.ip ?? null,
    });
    return false;
  });
  return outcome ? { deleted: true } : { deleted: false, package: await packageById(scope, id) };
}
