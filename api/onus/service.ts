import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../db/tenant-scope.js';
import { Customer, Olt, Onu } from '../../db/models/index.js';
import { recordAudit } from '../audit-logs/service.js';
import { Conflict, NotFound, ValidationFailed, type FieldErrors } from '../errors.js';
import { paginate, whereContains, type PageParams } from '../shared/list.js';
import { ONU_COLUMNS, onuFrom, onuShape } from '../external/shapes.js';

/**
 * ONUs of the admin API (issue 8 item 3): CRUD; the serial number is unique per tenant (409);
 * DELETE deactivates (is_active false: no longer polled nor listed by the external API, history
 * kept). The readings (status, rx_power and tx_power in dBm, uptime in seconds, last_seen) are
 * written by the onu-poll job only. Every write is audited in its transaction.
 */

/** Body of POST /api/onus and PUT /api/onus/{id} after schema validation. */
export interface OnuInput {
  serial_number?: string;
  olt_id?: number | null;
  customer_id?: number | null;
  pon_port?: string | null;
  is_active?: boolean;
  /** Present only to be refused by PUT (the polls set the status). */
  status?: unknown;
}

/** Validated query of GET /api/onus. */
export interface OnuAdminListQuery extends PageParams {
  search?: string;
  status?: string;
  olt_id?: number;
  customer_id?: number;
  is_active?: boolean;
}

/** Who acts: the user and the caller's IP, for the audit log. */
export interface Actor {
  userId: number | null;
  ip?: string | null;
}

const COLUMNS = [...ONU_COLUMNS, 'n.is_active'];

/** Row -> admin read shape: the external ONU shape + olt_id and is_active. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a joined row: the columns of n, nc and nl
function onuAdminShape(r: Record<string, any>) {
  return { ...onuShape(r), olt_id: r.olt_id, is_active: r.is_active };
}

/**
 * GET /api/onus: newest first (id tie-breaker), active and inactive; filters status, olt_id,
 * customer_id, is_active, search (substring of the serial number).
 * @returns the list envelope (DESIGN.md §4)
 */
export async function listAdminOnus(scope: TenantScope, query: OnuAdminListQuery) {
  const q = onuFrom(scope);
  if (query.status) q.where('n.status', query.status);
  if (query.olt_id) q.where('n.olt_id', query.olt_id);
  if (query.customer_id) q.where('n.customer_id', query.customer_id);
  if (query.is_active !== undefined) q.where('n.is_active', query.is_active);
  whereContains(q, ['n.serial_number'], query.search);
  return paginate(q, COLUMNS, ['n.created_at', 'n.id'], query, onuAdminShape);
}

/**
 * GET /api/onus/{id}: the admin read shape.
 * @throws NotFound when the id is not an ONU of the scope's tenant
 */
export async function onuById(scope: TenantScope, id: number) {
  const row = await onuFrom(scope).select(COLUMNS).where('n.id', id).first();
  if (!row) throw new NotFound('ONU');
  return onuAdminShape(row);
}

/**
 * The columns a body sets (only the fields it carries; serial upper-case).
 * @throws ValidationFailed for an olt_id or customer_id not of the tenant
 */
async function columns(s: TenantScope, input: OnuInput) {
  const out: PartialModelObject<Onu> = {};
  if (input.serial_number !== undefined) out.serial_number = input.serial_number.toUpperCase();
  if (input.olt_id !== undefined) out.olt_id = input.olt_id;
  if (input.customer_id !== undefined) out.customer_id = input.customer_id;
  if (input.pon_port !== undefined) out.pon_port = input.pon_port?.trim() || null;
  if (input.is_active !== undefined) out.is_active = input.is_active;
  const errors: FieldErrors = {};
  // one after another: a transaction is one connection, which runs one query at a time
  if (input.olt_id != null && !(await s.query(Olt).findById(input.olt_id).select('id')))
    errors.olt_id = ['The selected olt id is invalid.'];
  if (input.customer_id != null && !(await s.query(Customer).findById(input.customer_id).select('id')))
    errors.customer_id = ['The selected customer id is invalid.'];
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return out;
}

/** 409 when another ONU of the tenant has the serial (the unique index is the guard under races). */
async function assertSerialFree(s: TenantScope, serial: string | undefined, exceptId?: number) {
  if (serial === undefined) return;
  const q = s.query(Onu).where('serial_number', serial).select('id');
  if (exceptId) q.whereNot('id', exceptId);
  if (await q.first()) throw new Conflict('An ONU with this serial number already exists (it may be inactive).');
}

const summary = (r: PartialModelObject<Onu>) => ({
  serial_number: r.serial_number ?? null,
  olt_id: r.olt_id ?? null,
  customer_id: r.customer_id ?? null,
  pon_port: r.pon_port ?? null,
  is_active: r.is_active ?? null,
});

/**
 * POST /api/onus: creates an ONU (status offline, no readings until the next poll of its OLT),
 * audited as `onus.created`.
 * @returns the new id
 * @throws Conflict (409) for a serial number the tenant has; ValidationFailed (422) for foreign ids
 */
export async function createOnu(scope: TenantScope, actor: Actor, input: OnuInput): Promise<number> {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const cols = await columns(s, input);
    await assertSerialFree(s, input.serial_number?.toUpperCase());
    const now = new Date();
    const row = await s.create(Onu, { ...cols, status: 'offline', created_at: now, updated_at: now }, trx);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'onus.created',
      subject: { type: 'onus', id: row.id },
      after: summary(row),
      ip: actor.ip ?? null,
    });
    return row.id;
  });
}

/**
 * PUT /api/onus/{id}: sets the fields the body carries, audited as `onus.updated`.
 * @throws ValidationFailed for a `status` field or foreign ids; NotFound for an id outside the
 *   tenant; Conflict (409) for a serial number another ONU has
 */
export async function updateOnu(scope: TenantScope, actor: Actor, id: number, input: OnuInput) {
  if (input.status !== undefined) {
    throw new ValidationFailed({ status: ['The status cannot be set: it comes from the onu-poll job.'] });
  }
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Onu).findById(id).forUpdate();
    if (!row) throw new NotFound('ONU');
    const cols = await columns(s, input);
    await assertSerialFree(s, input.serial_number?.toUpperCase(), id);
    await s
      .query(Onu)
      .findById(id)
      .patch({ ...cols, updated_at: new Date() });
    await recordAudit(s, {
      userId: actor.userId,
      action: 'onus.updated',
      subject: { type: 'onus', id },
      before: summary(row),
      after: summary({ ...row, ...cols }),
      ip: actor.ip ?? null,
    });
  });
}

/**
 * DELETE /api/onus/{id}: deactivates the ONU (is_active false; `onus.deactivated`); an inactive
 * one stays as it is (no second audit entry). PUT is_active true brings it back.
 * @throws NotFound for an id outside the tenant
 */
export async function deactivateOnu(scope: TenantScope, actor: Actor, id: number) {
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Onu).findById(id).forUpdate();
    if (!row) throw new NotFound('ONU');
    if (!row.is_active) return;
    await s.query(Onu).findById(id).patch({ is_active: false, updated_at: new Date() });
    await recordAudit(s, {
      userId: actor.userId,
      action: 'onus.deactivated',
      subject: { type: 'onus', id },
      before: { is_active: true },
      after: { is_active: false },
      ip: actor.ip ?? null,
    });
  });
}
