import { expect } from 'chai';
import { env } from '../../helpers/env.js';
import { TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { configureJobDeps } from '../../../jobs/deps.js';
import * as tenantDbJob from '../../../jobs/tenant-db.js';
import { runJobId } from '../../../api/platform/tenant-db/runs.js';

/** The test PostgreSQL's superuser, as a tenant_db credential body (the pilots create databases there). */
export function tenantDbCredential(): { host: string; port: number; admin_user: string; admin_password: string } {
  const u = new URL(env.adminDatabaseUrl);
  return {
    host: u.hostname,
    port: Number(u.port),
    admin_user: decodeURIComponent(u.username),
    admin_password: decodeURIComponent(u.password) || 'unused',
  };
}

/** Saves the tenant_db credential through the API. */
export async function saveTenantDbCredential(app: TestApp, token: string): Promise<void> {
  const r = await app.request('PUT', '/api/platform/provisioning/credentials', {
    token,
    body: { tenant_db: tenantDbCredential() },
  });
  expect(r.status, r.text).to.equal(200);
}

/**
 * Runs a queued run's job in this process (the real BullMQ Job from the app's queue, no worker):
 * the processor re-reads the run; a permanent failure is swallowed (the run row says failed).
 * @returns the run row afterwards
 */
export async function runJob(app: TestApp, runId: number, opts: { attemptsMade?: number } = {}) {
  configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY });
  const job = await app.queues.get('tenant-db').getJob(runJobId(runId));
  expect(job, `job of run ${runId}`).to.not.equal(undefined);
  if (opts.attemptsMade !== undefined) job!.attemptsMade = opts.attemptsMade;
  try {
    await tenantDbJob.process(job!);
  } catch {
    // the run row records the failure
  }
  return env.knex('tenant_db_runs').where({ id: runId }).first();
}
