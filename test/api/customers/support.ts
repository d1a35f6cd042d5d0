import { randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import { registerCleanup } from '../../helpers/env.js';
import { findRow } from '../../helpers/tenant-db-mode.js';
import type { TenantFixture } from '../../helpers/fixtures.js';
import type { TestApp } from '../../helpers/http.js';
import { createQueues, type Queues } from '../../../jobs/queues.js';
import * as customerNetwork from '../../../jobs/customer-network.js';

/** Shared pieces of the customer tests (issue 8 item 2). */

/** A PPPoE password no answer, job, log line or audit row may ever show. */
export const PPPOE_SECRET = 'pppoe-Secret-pw-7f3a91';

export const uniq = () => randomBytes(4).toString('hex');

/** Inserts a NAS of the tenant (driver fake, isolation profile `isolir` unless given). */
export async function makeNas(f: TenantFixture, extra: Record<string, unknown> = {}): Promise<number> {
  const row = await f.scope.insert('nas', {
    name: `NAS ${uniq()}`,
    nas_key: `nas-${uniq()}`,
    host: '10.20.0.1',
    isolation_profile: 'isolir',
    ...extra,
  });
  return row.id;
}

/** Inserts a package of the tenant. */
export async function makePackage(f: TenantFixture, extra: Record<string, unknown> = {}): Promise<number> {
  const row = await f.scope.insert('packages', { name: `Home ${uniq()}`, price: 150000, ...extra });
  return row.id;
}

/** A valid create body (pppoe, no NAS) with a unique name and PPPoE username. */
export function customerBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const u = uniq();
  return {
    name: `Budi ${u}`,
    phone: '+6281234500001',
    address: 'Jl. Dago 1, Bandung',
    pppoe_username: `budi-${u}`,
    ...extra,
  };
}

/** Creates a customer through POST /api/customers; fails the test unless 201. */
export async function createCustomer(
  app: TestApp,
  f: TenantFixture,
  body: Record<string, unknown> = {},
): Promise<{ id: number; data: any }> {
  const res = await app.request('POST', '/api/customers', { token: f.adminToken, body: customerBody(body) });
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${res.text}`);
  return { id: res.body.data.id, data: res.body.data };
}

/** The customer row as stored (in its tenant's database in the cut-over test mode). */
export const customerRow = (id: number) => findRow('customers', { id });

/** The customer-network queue of an app. */
export const networkQueue = (app: TestApp): Queue => app.queues.get(customerNetwork.QUEUE);

/**
 * Points an app's producer queues at a Redis that is not there (every add fails fast): what the
 * app answers when Redis is down. Returns a function that restores the real queues.
 */
export function breakQueues(app: TestApp): () => void {
  const dead: Queues = createQueues('redis://127.0.0.1:1', { prefix: `{cust-dead-${process.pid}-${uniq()}}` });
  registerCleanup(() => dead.close());
  const real = app.queues.get.bind(app.queues);
  Object.assign(app.queues, { get: dead.get.bind(dead) });
  return () => Object.assign(app.queues, { get: real });
}
