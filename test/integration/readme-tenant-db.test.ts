import { expect } from 'chai';
import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { seedDemo } from '../../db/seeds/demo.js';
import { seedDemoProvisioning } from '../../db/seeds/demo-provisioning.js';
import { demoProvisioningTarget } from '../../bin/dev-provisioning.js';
import { parseAppKey } from '../../lib/config.js';
import { env } from '../helpers/env.js';
import { freshDatabase } from '../helpers/fresh-db.js';
import { outputPattern, startWebAndWorker, walkThrough } from '../helpers/readme.js';
import { appKey, killAll, ROOT, type Proc } from '../faults/support.js';

/**
 * Issue 14 and 15 "Done when": the README's "Tenant databases" walk-through, run verbatim (bash) as
 * admin@platform.test against the real `web` and `worker` processes on a freshly seeded demo
 * platform whose `tenant_db` credential is saved as `npm start` saves it (the test PostgreSQL's
 * superuser, untested); the CLI of the block uses the same DATABASE_URL. Its output must match the
 * README's "What you see" block (HTTP statuses and run statuses included); issue 15's customer is
 * then looked up in the shared database.
 */
describe('README "Tenant databases", run verbatim against the real processes', function () {
  this.timeout(300_000);
  const procs: Proc[] = [];
  let base: string;
  let vars: Record<string, string>;
  let shared: Awaited<ReturnType<typeof freshDatabase>>['knex'];

  before(async () => {
    const db = await freshDatabase();
    shared = db.knex;
    await seedDemo(db.knex);
    const key = appKey();
    // as bin/dev.ts does for the embedded PostgreSQL (no DATABASE_URL of the user's own)
    const target = demoProvisioningTarget(1, env.adminDatabaseUrl, {});
    expect(target.tenantDb).to.not.equal(null);
    expect(await seedDemoProvisioning(db.knex, parseAppKey(key), target, new Date())).to.include('tenant_db');
    ({ base, vars } = await startWebAndWorker(procs, 13, { DATABASE_URL: db.url, APP_KEY: key }));
  });
  after(async () => {
    await killAll(procs.splice(0));
  });

  it('the commands print what the README shows', async () => {
    const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
    const { script, expected } = walkThrough(readme, '## Tenant databases');
    const res = await execa('bash', ['-c', script], {
      env: { ...process.env, ...vars, BASE: base },
      cwd: ROOT,
      reject: false,
      timeout: 240_000,
    });
    const output = `${res.stdout.replace(/\r\n/g, '\n')}\n`;
    expect(res.exitCode, `${res.stderr}\noutput:\n${output}`).to.equal(0);
    expect(res.stderr, `stderr (output:\n${output})`).to.equal('');
    expect(output, `output:\n${output}\nstderr:\n${res.stderr}\n`).to.match(outputPattern(expected));
    // issue 15: the external API's customer, created after the cutover, listed from the tenant
    // database, served from the shared one after the rollback with the same id, and still there
    // (the shared row, not a copy) after issue 14's rollbacks dropped the tenant database
    const ids = [...output.matchAll(/^customer (\d+) (CUST-\d{6}) Budi Cutover$/gm)].map((m) => [m[1], m[2]]);
    expect(ids, 'created, then read back after the rollback').to.have.length(2);
    expect(ids[1], 'the same customer after the rollback').to.deep.equal(ids[0]);
    expect(output).to.contain(`customers from tenant_db: newest ${ids[0][0]} Budi Cutover\n`);
    const row = await shared('customers as c')
      .join('tenants as t', 't.id', 'c.tenant_id')
      .where({ 'c.id': Number(ids[0][0]), 't.slug': 'pilot-net' })
      .first('c.code', 'c.name');
    expect(row).to.deep.equal({ code: ids[0][1], name: 'Budi Cutover' });
    const tenant = await shared('tenants').where({ slug: 'pilot-net' }).first('db_mode');
    expect(tenant.db_mode).to.equal('shared_db');
  });
});
