import { expect } from 'chai';
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { execa } from 'execa';
import { seedDemo } from '../../db/seeds/demo.js';
import { seedDemoProvisioning } from '../../db/seeds/demo-provisioning.js';
import {
  demoProvisioningTarget,
  DEMO_ZONE_NAME,
  provisioningDemoEnv,
  startProvisioningFakes,
} from '../../bin/dev-provisioning.js';
import { parseAppKey } from '../../lib/config.js';
import { env, registerCleanup } from '../helpers/env.js';
import { freshDatabase } from '../helpers/fresh-db.js';
import { getMailStack } from '../helpers/mail.js';
import { outputPattern, startWebAndWorker, walkThrough } from '../helpers/readme.js';
import { appKey, killAll, ROOT, type Proc } from '../faults/support.js';

/**
 * Issue 13 "Done when": the README's "Tenant provisioning" walk-through, run verbatim (bash) as
 * admin@platform.test against the real `web` and `worker` processes on a freshly seeded demo
 * platform, with the provisioning fakes of `npm start` (bin/dev-provisioning.ts) in-process, their
 * credentials seeded untested as `npm start` does, and the test Dovecot taking the new mailboxes
 * (IMAP login over curl). Its output must match the README's "What you see" block.
 */
describe('README "Tenant provisioning", run verbatim against the real processes and the fakes', function () {
  this.timeout(300_000);
  const procs: Proc[] = [];
  let base: string;
  let imap: string;

  before(async () => {
    const stack = await getMailStack();
    imap = `imap://127.0.0.1:${stack.imap.port}`;
    const fakes = await startProvisioningFakes({
      cloudflarePort: 0,
      cpanelPort: 0,
      stateDir: path.join(env.dir, `readme-prov-${randomBytes(3).toString('hex')}`),
      dovecotUsers: stack.dovecot.usersFile,
    });
    registerCleanup(() => fakes.close());
    const db = await freshDatabase();
    await seedDemo(db.knex);
    const key = appKey();
    const cfPort = Number(new URL(fakes.cloudflareUrl).port);
    const target = { ...demoProvisioningTarget(cfPort), cpanelPort: fakes.cpanelPort };
    expect(await seedDemoProvisioning(db.knex, parseAppKey(key), target, new Date())).to.deep.equal([
      'cloudflare',
      'mail_panel',
    ]);
    const vars: Record<string, string> = { DATABASE_URL: db.url, APP_KEY: key, ...provisioningDemoEnv(cfPort, {}) };
    expect(vars.PLATFORM_MAIL_DOMAIN).to.equal(`mail.${DEMO_ZONE_NAME}`);
    ({ base } = await startWebAndWorker(procs, 12, vars));
  });
  after(async () => {
    await killAll(procs.splice(0));
  });

  it('the commands print what the README shows', async () => {
    const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
    const { script, expected } = walkThrough(readme, '## Tenant provisioning');
    const res = await execa('bash', ['-c', script], {
      env: { ...process.env, BASE: base, IMAP: imap },
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
