import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../db/tenant-scope.js';
import { Customer, Nas, Package } from '../../db/models/index.js';
import { sealCredentials } from '../../db/credentials.js';
import type { Queues } from '../../jobs/queues.js';
import { recordAudit } from '../audit-logs/service.js';
import { Conflict, NotFound, ValidationFailed, type FieldErrors } from '../errors.js';
import { CUSTOMER_DEFAULTS, customerCode, customerDetail } from '../external/customers.js';
import { MAC_REQUIRED_SERVICE_TYPES, normaliseMac } from './mac.js';
import { customerAdminSelect, customerAdminShape } from './list.js';
import { applyStatus, requestNetworkPush, type Actor, type CustomerStatus } from './network-state.js';

/**
 * Admin customers (issue 8 item 2): create, show, update; the status and the network sync through
 * api/customers/network-state.ts. Every write is one transaction with its audit entry and, when it
 * changes what the NAS should hold, the customer-network job (enqueued in the transaction: Redis
 * down -> 503 QUEUE_UNAVAILABLE and nothing changed).
 */

/** Body of POST /api/customers and PUT /api/customers/{id} after schema validation. */
export interface CustomerAdminInput {
  name?: string;
  phone?: string;
  address?: string;
  email?: string | null;
  latitude?: number | null;
  longitude?: number | null;
  package_id?: number | null;
  /** POST only (document 1's create payload); PUT refuses it. */
  status?: unknown;
  service_type?: Customer['service_type'] | null;
  billing_cycle?: Customer['billing_cycle'] | null;
  mac_address?: string | null;
  /** 1..28 or null. */
  billing_day?: number | null;
  nas_id?: number | null;
  pppoe_username?: string | null;
  /** Write-only: sealed with APP_KEY; undefined keeps, null removes. */
  pppoe_password?: string | null;
}

/** Columns whose change makes the NAS's copy stale (a customer-network push follows). */
const NETWORK_COLUMNS = [
  'package_id',
  'service_type',
  'mac_address',
  'nas_id',
  'pppoe_username',
  'pppoe_password_enc',
] as const;

/** Latest invoices and tickets shown on the detail (as document 1's detail). */
/**
 * GET /api/customers/{id}: the admin read shape + latest_invoices and latest_tickets (5 each).
 * @throws NotFound when the id is not a customer of the scope's tenant
 */
export async function customerAdminById(scope: TenantScope, id: number) {
  return customerDetail(scope, id, customerAdminSelect(scope), customerAdminShape);
}

/**
 * The columns a body sets (only the fields it carries), and the field errors the body alone shows.
 * @throws Error when a password is given and the app has no APP_KEY (a configuration fault, 500)
 */
function columnsOf(
  tenantId: number,
  appKey: Buffer | undefined,
  input: CustomerAdminInput,
  errors: FieldErrors,
): PartialModelObject<Customer> {
  const out: PartialModelObject<Customer> = {};
  for (const f of ['name', 'phone', 'address'] as const) {
    const v = input[f];
    if (v === undefined) continue;
    if (!v.trim()) errors[f] = [`The ${f} field is required.`];
    out[f] = v.trim();
  }
  for (const f of ['email', 'latitude', 'longitude', 'package_id', 'billing_day', 'nas_id'] as const) {
    if (input[f] !== undefined) Object.assign(out, { [f]: input[f] });
  }
  if (input.service_type != null) out.service_type = input.service_type;
  if (input.billing_cycle != null) out.billing_cycle = input.billing_cycle;
  if (input.mac_address !== undefined) {
    out.mac_address = input.mac_address === null ? null : normaliseMac(input.mac_address);
    if (input.mac_address !== null && !out.mac_address) {
      errors.mac_address = [
        'The mac address field must be a valid MAC address (AA:BB:CC:DD:EE:FF, AABB.CCDD.EEFF or AABBCCDDEEFF).',
      ];
    }
  }
  if (input.pppoe_username !== undefined) out.pppoe_username = input.pppoe_username;
  if (input.pppoe_password !== undefined) {
    if (input.pppoe_password === null) out.pppoe_password_enc = null;
    else {
      if (!appKey) throw new Error('APP_KEY is not configured: the PPPoE password cannot be stored');
      out.pppoe_password_enc = sealCredentials(appKey, 'customers', tenantId, { password: input.pppoe_password });
    }
  }
  return out;
}

/**
 * Rules on the record as it will be (the stored row merged with the body): MAC for dhcp/static,
 * a PPPoE username for pppoe/hotspot customers on a NAS, package and NAS of the tenant (a NAS
 * newly given must be active), the PPPoE username free in the tenant (409).
 * @param before the stored row (undefined on create)
 */
async function check(
  s: TenantScope,
  merged: PartialModelObject<Customer>,
  cols: PartialModelObject<Customer>,
  errors: FieldErrors,
  before?: Customer,
) {
  if (MAC_REQUIRED_SERVICE_TYPES.includes(String(merged.service_type)) && !merged.mac_address && !errors.mac_address) {
    errors.mac_address = ['The mac address field is required when service type is dhcp or static.'];
  }
  const onNas = merged.nas_id != null;
  if (onNas && ['pppoe', 'hotspot'].includes(String(merged.service_type)) && !merged.pppoe_username) {
    errors.pppoe_username = ['The pppoe username field is required when the customer is on a NAS (pppoe, hotspot).'];
  }
  // one after another: a transaction is one connection, which runs one query at a time
  if (cols.package_id != null && !(await s.query(Package).findById(Number(cols.package_id)).select('id'))) {
    errors.package_id = ['The selected package id is invalid.'];
  }
  if (cols.nas_id != null) {
    const nas = await s.query(Nas).findById(Number(cols.nas_id)).select('id', 'is_active');
    if (!nas) errors.nas_id = ['The selected nas id is invalid.'];
    else if (!nas.is_active && nas.id !== before?.nas_id) errors.nas_id = ['The selected NAS is not active.'];
  }
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  if (cols.pppoe_username) {
    const q = s.query(Customer).whereRaw('lower(pppoe_username) = lower(?)', [cols.pppoe_username]).select('id');
    if (before) q.whereNot('id', before.id);
    if (await q.first()) throw new Conflict('A customer with this pppoe_username already exists.');
  }
}

/** The audit summary of a customer: ids and network fields, never the password (only whether it is set). */
function summary(r: PartialModelObject<Customer>) {
  return {
    code: r.code ?? null,
    name: r.name ?? null,
    status: r.status ?? null,
    package_id: r.package_id ?? null,
    service_type: r.service_type ?? null,
    billing_cycle: r.billing_cycle ?? null,
    billing_day: r.billing_day ?? null,
    mac_address: r.mac_address ?? null,
    nas_id: r.nas_id ?? null,
    pppoe_username: r.pppoe_username ?? null,
    pppoe_password_set: r.pppoe_password_enc != null,
  };
}

/**
 * POST /api/customers: creates a customer (document 1's defaults; code CUST-000123 from the
 * tenant's counter), audited `customers.created`; a customer on a NAS gets its first push.
 * `status` suspended means suspend_reason manual.
 * @param appKey APP_KEY, to seal the PPPoE password
 * @returns the new id and its push job id (null when nothing is pushed)
 * @throws ValidationFailed (422); Conflict (409) for a PPPoE username the tenant has;
 *   QueueUnavailableError (503) when Redis does not take the push (nothing is created)
 */
export async function createAdminCustomer(
  scope: TenantScope,
  queues: Queues,
  appKey: Buffer | undefined,
  actor: Actor,
  input: CustomerAdminInput,
): Promise<{ id: number; jobId: string | null }> {
  const errors: FieldErrors = {};
  const cols = columnsOf(scope.tenantId, appKey, input, errors);
  const status = (input.status ?? CUSTOMER_DEFAULTS.status) as CustomerStatus;
  const merged: PartialModelObject<Customer> = {
    service_type: CUSTOMER_DEFAULTS.service_type,
    billing_cycle: CUSTOMER_DEFAULTS.billing_cycle,
    ...cols,
    status,
  };
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    await check(s, merged, cols, errors);
    const code = customerCode(await s.nextNumber('customer', trx));
    const now = new Date();
    const row = await s.create(
      Customer,
      {
        ...merged,
        code,
        customer_tier: CUSTOMER_DEFAULTS.customer_tier,
        suspend_reason: status === 'suspended' ? 'manual' : null,
        status_changed_at: now,
        created_at: now,
        updated_at: now,
      },
      trx,
    );
    await recordAudit(s, {
      userId: actor.userId,
      action: 'customers.created',
      subject: { type: 'customers', id: row.id },
      after: summary(row),
      ip: actor.ip ?? null,
    });
    const jobs = await requestNetworkPush(trx, queues, scope.tenantId, [row.id]);
    return { id: row.id, jobId: jobs.get(row.id) ?? null };
  });
}

/**
 * PUT /api/customers/{id}: sets the fields the body carries (left out keeps; null clears a nullable
 * one; pppoe_password: null removes it), audited `customers.updated`. A change of package, service
 * type, MAC, NAS or PPPoE login requests a network push in the same transaction.
 * @returns the push's job id, or null when the NAS's copy did not change
 * @throws ValidationFailed for `status` (naming the status endpoint) or bad fields; NotFound for an id
 *   outside the tenant; Conflict (409) for a taken PPPoE username; QueueUnavailableError (503)
 */
export async function updateAdminCustomer(
  scope: TenantScope,
  queues: Queues,
  appKey: Buffer | undefined,
  actor: Actor,
  id: number,
  input: CustomerAdminInput,
): Promise<string | null> {
  if (input.status !== undefined) {
    throw new ValidationFailed({ status: ['The status cannot be set here; use POST /api/customers/{id}/status.'] });
  }
  const errors: FieldErrors = {};
  const cols = columnsOf(scope.tenantId, appKey, input, errors);
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Customer).findById(id).forUpdate();
    if (!row) throw new NotFound('Customer');
    const merged: PartialModelObject<Customer> = { ...row, ...cols };
    await check(s, merged, cols, errors, row);
    await s
      .query(Customer)
      .findById(id)
      .patch({ ...cols, updated_at: new Date() });
    const changed = NETWORK_COLUMNS.filter((c) => c in cols && cols[c] !== row[c]);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'customers.updated',
      subject: { type: 'customers', id },
      before: summary(row),
      after: { ...summary(merged), ...('pppoe_password_enc' in cols ? { pppoe_password_changed: true } : {}) },
      ip: actor.ip ?? null,
    });
    if (!changed.length) return null;
    const jobs = await requestNetworkPush(trx, queues, scope.tenantId, [id]);
    return jobs.get(id) ?? null;
  });
}

/**
 * POST /api/customers/{id}/status: active <-> suspended (suspend_reason manual), active or suspended
 * -> terminated; the row changes at once, audited, and its network push is requested.
 * @returns the push's job id, or null when the customer has no NAS
 * @throws NotFound; InvalidTransition (422) for a refused change; QueueUnavailableError (503: nothing changed)
 */
export async function changeCustomerStatus(
  scope: TenantScope,
  queues: Queues,
  actor: Actor,
  id: number,
  target: CustomerStatus,
  reason: string | null | undefined,
): Promise<string | null> {
  return scope.knex.transaction(async (trx) => {
    const row = await scope.withTransaction(trx).query(Customer).findById(id).forUpdate();
    if (!row) throw new NotFound('Customer');
    return applyStatus(trx, queues, row, target, {
      suspendReason: 'manual',
      reason: reason?.trim() || null,
      actor,
    });
  });
}

/**
 * POST /api/customers/{id}/network-sync: pushes the customer's latest state again (a new version, so
 * a fresh job with fresh attempts; an older job still queued skips itself), audited
 * `customers.network_sync_requested`.
 * @returns the push's job id
 * @throws NotFound; ValidationFailed (422 on nas_id) when the customer has no NAS and no session to
 *   remove; QueueUnavailableError (503: nothing changed)
 */
export async function requestCustomerSync(
  scope: TenantScope,
  queues: Queues,
  actor: Actor,
  id: number,
): Promise<string> {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Customer).findById(id).forUpdate();
    if (!row) throw new NotFound('Customer');
    const jobs = await requestNetworkPush(trx, queues, scope.tenantId, [id]);
    const jobId = jobs.get(id);
    if (!jobId) {
      throw new ValidationFailed({
        nas_id: ['The customer has nothing on a NAS to sync: give it a NAS first (a terminated customer is gone).'],
      });
    }
    await recordAudit(s, {
      userId: actor.userId,
      action: 'customers.network_sync_requested',
      subject: { type: 'customers', id },
      before: { sync_status: row.network_sync_status, state: row.network_state, error: row.network_error },
      after: { job_id: jobId },
      ip: actor.ip ?? null,
    });
    return jobId;
  });
}
