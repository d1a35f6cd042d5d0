/**
 * Shared fixtures of the External v1 tests: the endpoint table (document 1, thirteen endpoints),
 * a tenant with seeded records and tokens, and a snapshot of tenant rows to prove "nothing changed".
 */
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { makeIntegrationToken, makeTenant, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';

export const V1 = '/api/external/v1';

/** Ids of one tenant's seeded records (seedBasics). */
export type Seeded = Awaited<ReturnType<typeof seedBasics>>;

/** One endpoint of document 1: how to call it with the ids of some tenant. */
export interface Endpoint {
  name: string;
  method: 'GET' | 'POST';
  access: 'read' | 'write';
  path: (ids: Seeded) => string;
  /** A valid body for the POSTs, built from the ids of the caller's own tenant. */
  body?: (ids: Seeded) => Record<string, unknown>;
  /** The path holds an id of a record. */
  hasId?: boolean;
}

export const ENDPOINTS: Endpoint[] = [
  { name: 'health', method: 'GET', access: 'read', path: () => `${V1}/health` },
  { name: 'me', method: 'GET', access: 'read', path: () => `${V1}/me` },
  { name: 'customers.list', method: 'GET', access: 'read', path: () => `${V1}/customers` },
  {
    name: 'customers.create',
    method: 'POST',
    access: 'write',
    path: () => `${V1}/customers`,
    body: (ids) => ({ name: 'Budi Santoso', phone: '+628111', address: 'Jl. Merdeka 1', package_id: ids.packageId }),
  },
  {
    name: 'customers.show',
    method: 'GET',
    access: 'read',
    path: (ids) => `${V1}/customers/${ids.customerId}`,
    hasId: true,
  },
  { name: 'packages.list', method: 'GET', access: 'read', path: () => `${V1}/packages` },
  { name: 'invoices.list', method: 'GET', access: 'read', path: () => `${V1}/invoices` },
  {
    name: 'invoices.show',
    method: 'GET',
    access: 'read',
    path: (ids) => `${V1}/invoices/${ids.invoiceId}`,
    hasId: true,
  },
  { name: 'tickets.list', method: 'GET', access: 'read', path: () => `${V1}/tickets` },
  {
    name: 'tickets.create',
    method: 'POST',
    access: 'write',
    path: () => `${V1}/tickets`,
    body: (ids) => ({
      type: 'no internet',
      customer_id: ids.customerId,
      onu_id: ids.onuId,
      priority: 'high',
      external_id: 'CRM-1',
    }),
  },
  { name: 'tickets.show', method: 'GET', access: 'read', path: (ids) => `${V1}/tickets/${ids.ticketId}`, hasId: true },
  { name: 'olts.list', method: 'GET', access: 'read', path: () => `${V1}/olts` },
  { name: 'onus.list', method: 'GET', access: 'read', path: () => `${V1}/onus` },
];

/** A tenant with seeded records, a read token and a read_write token. */
export interface World extends TenantFixture {
  ids: Seeded;
  read: string;
  write: string;
  readId: number;
  writeId: number;
}

/** Creates a tenant (optionally in demo mode), seeds one record of each kind and issues two tokens. */
export async function makeWorld(opts: { demo?: boolean } = {}): Promise<World> {
  const f = await makeTenant(opts);
  const ids = await seedBasics(f);
  const r = await makeIntegrationToken(f, 'read');
  const w = await makeIntegrationToken(f, 'read_write');
  return { ...f, ids, read: r.token, write: w.token, readId: r.data.id, writeId: w.data.id };
}

const SNAPSHOT_TABLES = [
  'customers',
  'packages',
  'invoices',
  'tickets',
  'olts',
  'onus',
  'idempotency_keys',
  'tenant_counters',
  'customer_status_counts',
];

/** Every tenant row of the given tenants (JSON), to compare before and after a request. */
export async function snapshot(tenantIds: number[]): Promise<string> {
  const out: Record<string, unknown[]> = {};
  for (const t of SNAPSHOT_TABLES) {
    out[t] = [];
    // each tenant's rows where they live (its tenant database in the cut-over test mode)
    for (const id of tenantIds)
      out[t].push(
        ...(await tenantKnex(id)(t)
          .where('tenant_id', id)
          .orderBy(t === 'tenant_counters' ? 'name' : t === 'customer_status_counts' ? 'status' : 'id')),
      );
  }
  return JSON.stringify(out);
}

/** Number of rows of a table in a tenant. */
export async function countRows(table: string, tenantId: number): Promise<number> {
  const r = await tenantKnex(tenantId)(table).where({ tenant_id: tenantId }).count({ n: '*' }).first();
  return Number(r!.n);
}

/** Polls `fn` until it returns a truthy value (at most `ms`); returns the last value. */
export async function waitFor<T>(fn: () => Promise<T>, ms = 3000): Promise<T> {
  const until = Date.now() + ms;
  let v = await fn();
  while (!v && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 20));
    v = await fn();
  }
  return v;
}

/** Query string from an object (values URL-encoded). */
export function qs(params: Record<string, string | number | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}
