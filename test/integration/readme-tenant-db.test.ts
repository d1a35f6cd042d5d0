import { expect } from 'chai';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { execa } from 'execa';
import { seedDemo } from '../../db/seeds/demo.js';
import { seedDemoProvisioning } from '../../db/seeds/demo-provisioning.js';
import { demoProvisioningTarget } from '../../bin/dev-provisioning.js';
import { parseAppKey } from '../../lib/config.js';
import { freePort } from '../../lib/infra/free-port.js';
import { env } from '../helpers/env.js';
import { freshDatabase } from '../helpers/fresh-db.js';
import { outputPattern, walkThrough } from '../helpers/readme.js';
import { appKey, killAll, ROOT, startProcfile, type Proc } from '../faults/support.js';

/**
 * Issue 14 "Done when": the README's "Tenant databases" walk-through, run verbatim (bash) as
 * admin@platform.test against the real `web` and `worker` processes on a freshly seeded demo
 * platform whose `tenant_db` credential is saved as `npm start` saves it (the test PostgreSQL's
 * superuser, untested); the CLI of the block uses the same DATABASE_URL. Its output must match the
 * README's "What you see" block.
 */
describe('README "Tenant databases", run verbatim against the real processes', function () {
  this.timeout(300_000);
  const procs: Proc[] = [];
  let base: string;
  let vars: Record<string, string>;

  before(async () => {
    const db = await freshDatabase();
    await seedDemo(db.knex);
    const key = appKey();
    // as bin/dev.ts does for the embedded PostgreSQL (no DATABASE_URL of the user's own)
    const target = demoProvisioningTarget(1, env.adminDatabaseUrl, {});
    expect(target.tenantDb).to.not.equal(null);
    expect(await seedDemoProvisioning(db.knex, parseAppKey(key), target, new Date())).to.include('tenant_db');
    const redisUrl = `${env.redisUrl}/13`;
    const r = new Redis(redisUrl);
    await r.flushdb();
    r.disconnect();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    vars = { DATABASE_URL: db.url, REDIS_URL: redisUrl, APP_KEY: key, PORT: String(port) };
    const web = startProcfile('web', vars);
    const worker = startProcfile('worker', vars);
    procs.push(web, worker);
    await web.waitForLine(/web listening/, 'the web process to listen');
    await worker.waitForLine(/workers started/, 'the workers to start');
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
    expect(res.exitCode, res.stderr).to.equal(0);
    expect(res.stderr, 'stderr').to.equal('');
    expect(output, `output:\n${output}\nstderr:\n${res.stderr}\n`).to.match(outputPattern(expected));
  });
});
