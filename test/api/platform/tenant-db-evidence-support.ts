import { expect } from 'chai';
import type { Knex } from 'knex';
import { env } from '../../helpers/env.js';
import { TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { runJob } from './tenant-db-support.js';
import { readTenantDb } from '../../../api/platform/tenant-db/state.js';
import { tenantConnection } from '../../../api/platform/tenant-db/admin.js';
import { tenantPools } from '../../../db/tenant-pools.js';

/** Issue 15's evidence tests: a tenant taken through pilot -> schema -> dry-run -> copy, and helpers. */

/** POSTs a tenant-db step and runs its job in this process; expects 202 and a succeeded run. */
export async function runStep(app: TestApp, token: string, slug: string, path: string, body: object = {}) {
  const r = await app.request('POST', `/api/platform/tenants/${slug}/provisioning/${path}`, { token, body });
  expect(r.status, `${path}: ${r.text}`).to.equal(202);
  const run = await runJob(app, r.body.data.id);
  expect(run.status, `${path}: ${run.error}`).to.equal('succeeded');
  return run;
}

/** Takes a tenant from none to data_copied through the API (the lifecycle fixture). */
export async function copiedTenant(app: TestApp, token: string, slug: string): Promise<void> {
  await runStep(app, token, slug, 'pilot-db/run', { confirm_phrase: 'RUN DB PILOT' });
  await runStep(app, token, slug, 'tenant-schema/run', { confirm_phrase: 'RUN TENANT SCHEMA' });
  await runStep(app, token, slug, 'data-copy/dry-run');
  await runStep(app, token, slug, 'data-copy/run', { confirm_phrase: 'COPY TENANT DATA PILOT' });
}

/** The tenant database's knex (job pool, as the tenant role). */
export async function tenantKnex(tenantId: number): Promise<Knex> {
  const row = await readTenantDb(env.knex, tenantId);
  return tenantPools('job').get(tenantId, tenantConnection(row, TEST_WEB_APP_KEY));
}
