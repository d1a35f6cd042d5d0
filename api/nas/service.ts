import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../db/tenant-scope.js';
import { Nas } from '../../db/models/index.js';
import { sealCredentials, type DeviceCredentials } from '../../db/credentials.js';
import { recordAudit } from '../audit-logs/service.js';
import { Conflict, NotFound, ValidationFailed } from '../errors.js';
import { paginate, whereContains, type PageParams } from '../shared/list.js';
import { iso } from '../shared/schemas.js';

/**
 * NAS (issue 8 item 3): the routers customers connect through. CRUD; nas_key unique per tenant
 * (case-insensitive, 409); credentials write-only, sealed with APP_KEY, never returned. The NAS id
 * is the `router_id` other modules refer to (DHCP lease bind, customers.nas_id). Every write is
 * audited in its transaction (never with the credentials).
 */

/** Body of POST /api/nas and PUT /api/nas/{id} after schema validation. */
export interface NasInput {
  name?: string;
  nas_key?: string;
  driver?: string;
  host?: string;
  /** TCP port, 1..65535. */
  port?: number;
  /** Write-only; undefined keeps, null removes. */
  credentials?: DeviceCredentials | null;
  isolation_profile?: string | null;
  is_active?: boolean;
}

/** Validated query of GET /api/nas. */
export interface NasListQuery extends PageParams {
  search?: string;
  is_active?: boolean;
}

/** Who acts: the user and the caller's IP, for the audit log. */
export interface Actor {
  userId: number | null;
  ip?: string | null;
}

const COLUMNS = [
  'id',
  'name',
  'nas_key',
  'driver',
  'host',
  'port',
  'credentials_enc',
  'isolation_profile',
  'is_active',
  'created_at',
  'updated_at',
];

/** Row -> read shape (api/nas/schemas.ts nasRead): has_credentials instead of the sealed value. */
function nasShape(r: Nas) {
  return {
    id: r.id,
    name: r.name,
    nas_key: r.nas_key,
    driver: r.driver,
    host: r.host,
    port: r.port,
    has_credentials: r.credentials_enc != null,
    isolation_profile: r.isolation_profile,
    is_active: r.is_active,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/**
 * GET /api/nas: newest first (id tie-breaker); filters is_active, search (substring of name,
 * nas_key or host).
 * @returns the list envelope (DESIGN.md §4)
 */
export async function listNas(scope: TenantScope, query: NasListQuery) {
  const q = scope.query(Nas);
  if (query.is_active !== undefined) q.where('is_active', query.is_active);
  whereContains(q, ['name', 'nas_key', 'host'], query.search);
  return paginate(q, COLUMNS, ['created_at', 'id'], query, nasShape);
}

/**
 * GET /api/nas/{id}: the read shape.
 * @throws NotFound when the id is not a NAS of the scope's tenant
 */
export async function nasById(scope: TenantScope, id: number) {
  const row = await scope.query(Nas).findById(id).select(COLUMNS);
  if (!row) throw new NotFound('NAS');
  return nasShape(row);
}

/**
 * The columns a body sets (only the fields it carries); credentials sealed for this tenant.
 * @throws Error when credentials are given and the app has no APP_KEY (a configuration fault, 500)
 */
function columns(tenantId: number, appKey: Buffer | undefined, input: NasInput): PartialModelObject<Nas> {
  const out: PartialModelObject<Nas> = {};
  if (input.name !== undefined) out.name = input.name.trim();
  if (input.nas_key !== undefined) out.nas_key = input.nas_key;
  if (input.driver !== undefined) out.driver = input.driver;
  if (input.host !== undefined) out.host = input.host;
  if (input.port !== undefined) out.port = input.port;
  if (input.isolation_profile !== undefined) out.isolation_profile = input.isolation_profile?.trim() || null;
  if (input.is_active !== undefined) out.is_active = input.is_active;
  if (input.credentials !== undefined) {
    if (input.credentials === null) out.credentials_enc = null;
    else {
      if (!appKey) throw new Error('APP_KEY is not configured: credentials cannot be stored');
      out.credentials_enc = sealCredentials(appKey, 'nas', tenantId, input.credentials);
    }
  }
  if (out.name === '') throw new ValidationFailed({ name: ['The name field is required.'] });
  return out;
}

/** 409 when another NAS of the tenant has the key in any case (the unique index guards races). */
async function assertKeyFree(s: TenantScope, key: string | undefined, exceptId?: number) {
  if (key === undefined) return;
  const q = s.query(Nas).whereRaw('lower(nas_key) = lower(?)', [key]).select('id');
  if (exceptId) q.whereNot('id', exceptId);
  if (await q.first()) throw new Conflict('A NAS with this nas_key already exists.');
}

const summary = (r: PartialModelObject<Nas>) => ({
  name: r.name ?? null,
  nas_key: r.nas_key ?? null,
  driver: r.driver ?? null,
  host: r.host ?? null,
  port: r.port ?? null,
  has_credentials: r.credentials_enc != null,
  isolation_profile: r.isolation_profile ?? null,
  is_active: r.is_active ?? null,
});

/**
 * POST /api/nas: creates a NAS (driver fake, port 8728, active by default), audited as `nas.created`.
 * @param appKey APP_KEY, to seal the credentials
 * @returns the new id (the router_id)
 * @throws Conflict (409) for a nas_key the tenant has
 */
export async function createNas(
  scope: TenantScope,
  appKey: Buffer | undefined,
  actor: Actor,
  input: NasInput,
): Promise<number> {
  const cols = columns(scope.tenantId, appKey, input);
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    await assertKeyFree(s, input.nas_key);
    const now = new Date();
    const row = await s.create(Nas, { ...cols, created_at: now, updated_at: now }, trx);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'nas.created',
      subject: { type: 'nas', id: row.id },
      after: summary(row),
      ip: actor.ip ?? null,
    });
    return row.id;
  });
}

/**
 * PUT /api/nas/{id}: sets the fields the body carries (credentials: left out keeps, null removes),
 * audited as `nas.updated`.
 * @throws NotFound for an id outside the tenant; Conflict (409) for a nas_key another NAS has
 */
export async function updateNas(
  scope: TenantScope,
  appKey: Buffer | undefined,
  actor: Actor,
  id: number,
  input: NasInput,
) {
  const cols = columns(scope.tenantId, appKey, input);
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Nas).findById(id).forUpdate();
    if (!row) throw new NotFound('NAS');
    await assertKeyFree(s, input.nas_key, id);
    await s
      .query(Nas)
      .findById(id)
      .patch({ ...cols, updated_at: new Date() });
    await recordAudit(s, {
      userId: actor.userId,
      action: 'nas.updated',
      subject: { type: 'nas', id },
      before: summary(row),
      after: summary({ ...row, ...cols }),
      ip: actor.ip ?? null,
    });
  });
}
