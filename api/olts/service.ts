import type { Queue } from 'bullmq';
import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../db/tenant-scope.js';
import { HomeBase, Olt } from '../../db/models/index.js';
import { sealCredentials, type DeviceCredentials } from '../../db/credentials.js';
import { enqueueOltPoll } from '../../jobs/onu-poll.js';
import { recordAudit } from '../audit-logs/service.js';
import { InvalidTransition, NotFound, ValidationFailed } from '../errors.js';
import { paginate, whereContains, type PageParams } from '../shared/list.js';
import { iso } from '../shared/schemas.js';
import { oltShape } from '../external/shapes.js';

/**
 * OLTs of the admin API (issue 8 item 3; DESIGN.md §6 OLT fields): CRUD with home base, driver,
 * write-only credentials (sealed with APP_KEY, never returned) and is_active; `POST
 * /api/olts/{id}/poll` enqueues an onu-poll job for one OLT. The status is the polls' business.
 * Every write is audited in its transaction (never with the credentials).
 */

/** Body of POST /api/olts and PUT /api/olts/{id} after schema validation. */
export interface OltInput {
  name?: string;
  vendor?: string | null;
  model?: string | null;
  ip_address?: string;
  location?: string | null;
  pon_ports?: number;
  home_base_id?: number | null;
  driver?: string;
  /** Write-only; undefined keeps, null removes. */
  credentials?: DeviceCredentials | null;
  is_active?: boolean;
  /** Present only to be refused by PUT (the polls set the status). */
  status?: unknown;
}

/** Validated query of GET /api/olts. */
export interface OltAdminListQuery extends PageParams {
  search?: string;
  status?: 'online' | 'offline';
  home_base_id?: number;
  is_active?: boolean;
}

/** Who acts: the user and the caller's IP, for the audit log. */
export interface Actor {
  userId: number | null;
  ip?: string | null;
}

const COLUMNS = [
  'o.id',
  'o.name',
  'o.vendor',
  'o.model',
  'o.ip_address',
  'o.location',
  'o.status',
  'o.pon_ports',
  'o.home_base_id',
  'o.driver',
  'o.credentials_enc',
  'o.is_active',
  'o.last_polled_at',
  'o.last_poll_error',
  'o.created_at',
  'o.updated_at',
  'hb.name as hb_name',
];

/** OLTs `o` of the scope's tenant with their home base `hb` (same tenant). */
function oltFrom(scope: TenantScope) {
  return scope.query(Olt, { alias: 'o' }).leftJoin('home_bases as hb', (j) => {
    j.on('hb.id', 'o.home_base_id').andOn('hb.tenant_id', 'o.tenant_id');
  });
}

/** Row -> admin read shape: the external OLT shape + home base, driver, has_credentials, is_active, poll state. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a joined row: the columns of o and hb
function oltAdminShape(r: Record<string, any>) {
  return {
    ...oltShape(r),
    home_base_id: r.home_base_id,
    home_base: r.home_base_id && r.hb_name != null ? { id: r.home_base_id, name: r.hb_name } : null,
    driver: r.driver,
    has_credentials: r.credentials_enc != null,
    is_active: r.is_active,
    last_polled_at: iso(r.last_polled_at),
    last_poll_error: r.last_poll_error,
  };
}

/**
 * GET /api/olts: newest first (id tie-breaker); filters status, home_base_id, is_active, search
 * (substring of name, IP address, location, vendor or model).
 * @returns the list envelope (DESIGN.md §4)
 */
export async function listAdminOlts(scope: TenantScope, query: OltAdminListQuery) {
  const q = oltFrom(scope);
  if (query.status) q.where('o.status', query.status);
  if (query.home_base_id) q.where('o.home_base_id', query.home_base_id);
  if (query.is_active !== undefined) q.where('o.is_active', query.is_active);
  whereContains(q, ['o.name', 'o.ip_address', 'o.location', 'o.vendor', 'o.model'], query.search);
  return paginate(q, COLUMNS, ['o.created_at', 'o.id'], query, oltAdminShape);
}

/**
 * GET /api/olts/{id}: the admin read shape.
 * @throws NotFound when the id is not an OLT of the scope's tenant
 */
export async function oltById(scope: TenantScope, id: number) {
  const row = await oltFrom(scope).select(COLUMNS).where('o.id', id).first();
  if (!row) throw new NotFound('OLT');
  return oltAdminShape(row);
}

/**
 * The columns a body sets (only the fields it carries); credentials sealed for this tenant.
 * @throws ValidationFailed for a foreign home_base_id or a blank name
 * @throws Error when credentials are given and the app has no APP_KEY (a configuration fault, 500)
 */
async function columns(s: TenantScope, appKey: Buffer | undefined, input: OltInput) {
  const out: PartialModelObject<Olt> = {};
  if (input.name !== undefined) out.name = input.name.trim();
  for (const k of ['vendor', 'model', 'location'] as const) {
    if (input[k] !== undefined) out[k] = input[k]?.trim() || null;
  }
  if (input.ip_address !== undefined) out.ip_address = input.ip_address;
  if (input.pon_ports !== undefined) out.pon_ports = input.pon_ports;
  if (input.driver !== undefined) out.driver = input.driver;
  if (input.is_active !== undefined) out.is_active = input.is_active;
  if (input.home_base_id !== undefined) out.home_base_id = input.home_base_id;
  if (input.credentials !== undefined) {
    if (input.credentials === null) out.credentials_enc = null;
    else {
      if (!appKey) throw new Error('APP_KEY is not configured: credentials cannot be stored');
      out.credentials_enc = sealCredentials(appKey, 'olts', s.tenantId, input.credentials);
    }
  }
  if (out.name === '') throw new ValidationFailed({ name: ['The name field is required.'] });
  if (input.home_base_id != null && !(await s.query(HomeBase).findById(input.home_base_id).select('id')))
    throw new ValidationFailed({ home_base_id: ['The selected home base id is invalid.'] });
  return out;
}

/** The audit summary of an OLT: never the credentials, only whether they are stored. */
function summary(r: PartialModelObject<Olt>) {
  return {
    name: r.name ?? null,
    vendor: r.vendor ?? null,
    model: r.model ?? null,
    ip_address: r.ip_address ?? null,
    location: r.location ?? null,
    pon_ports: r.pon_ports ?? null,
    home_base_id: r.home_base_id ?? null,
    driver: r.driver ?? null,
    has_credentials: r.credentials_enc != null,
    is_active: r.is_active ?? null,
  };
}

/**
 * POST /api/olts: creates an OLT (status offline until its first poll; driver `fake`, 16 PON ports,
 * active by default), audited as `olts.created`.
 * @param appKey APP_KEY, to seal the credentials
 * @returns the new id
 * @throws ValidationFailed (422) for a foreign home_base_id
 */
export async function createOlt(
  scope: TenantScope,
  appKey: Buffer | undefined,
  actor: Actor,
  input: OltInput,
): Promise<number> {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const cols = await columns(s, appKey, input);
    const now = new Date();
    const row = await s.create(Olt, { ...cols, status: 'offline', created_at: now, updated_at: now }, trx);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'olts.created',
      subject: { type: 'olts', id: row.id },
      after: summary(row),
      ip: actor.ip ?? null,
    });
    return row.id;
  });
}

/**
 * PUT /api/olts/{id}: sets the fields the body carries (credentials: left out keeps, null
 * removes), audited as `olts.updated` with before and after (credentials as has_credentials only).
 * @throws ValidationFailed for a `status` field or a foreign home_base_id; NotFound for an id
 *   outside the tenant
 */
export async function updateOlt(
  scope: TenantScope,
  appKey: Buffer | undefined,
  actor: Actor,
  id: number,
  input: OltInput,
) {
  if (input.status !== undefined) {
    throw new ValidationFailed({ status: ['The status cannot be set: it comes from the onu-poll job.'] });
  }
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Olt).findById(id).forUpdate();
    if (!row) throw new NotFound('OLT');
    const cols = await columns(s, appKey, input);
    await s
      .query(Olt)
      .findById(id)
      .patch({ ...cols, updated_at: new Date() });
    await recordAudit(s, {
      userId: actor.userId,
      action: 'olts.updated',
      subject: { type: 'olts', id },
      before: summary(row),
      after: summary({ ...row, ...cols }),
      ip: actor.ip ?? null,
    });
  });
}

/**
 * POST /api/olts/{id}/poll: enqueues an onu-poll job for one active OLT (a second request in the
 * same minute gets the same job). Changes no row: the job does.
 * @param queue the onu-poll producer queue
 * @returns {olt_id, job_id}
 * @throws NotFound for an id outside the tenant; InvalidTransition (422) for an inactive OLT;
 *   QueueUnavailableError (503 QUEUE_UNAVAILABLE) when Redis does not take the job
 */
export async function requestOltPoll(scope: TenantScope, queue: Queue, id: number) {
  const olt = await scope.query(Olt).findById(id).select('id', 'tenant_id', 'is_active');
  if (!olt) throw new NotFound('OLT');
  if (!olt.is_active) throw new InvalidTransition('inactive', 'poll', ['active']);
  const jobId = await enqueueOltPoll(queue, { id: olt.id, tenant_id: olt.tenant_id });
  return { olt_id: olt.id, job_id: jobId };
}
