import { expect } from 'chai';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { execa } from 'execa';
import { startMailDemo, type MailDemo } from '../../bin/dev-mail.js';
import { seedDemo } from '../../db/seeds/demo.js';
import { freePort } from '../../lib/infra/free-port.js';
import { removeSystemState } from '../../lib/infra/system-dirs.js';
import { env, registerCleanup } from '../helpers/env.js';
import { freshDatabase } from '../helpers/fresh-db.js';
import { outputPattern, walkThrough } from '../helpers/readme.js';
import { appKey, killAll, ROOT, startProcfile, type Proc } from '../faults/support.js';

/**
 * Issue 9 "Done when": the README's "The e-mail client" walk-through, run verbatim (bash) against
 * the real `web`, `worker` and `mail` processes and npm start's demo mail server (Dovecot, the SMTP
 * relay, demo-isp's account on cs@demo.mail.test) on a freshly seeded demo platform. The reader
 * fills in the two values of the banner (the demo API key, info@'s password); the test puts in its
 * own banner's.
 */
describe('README "The e-mail client", run verbatim against the real processes and the demo mail server', function () {
  this.timeout(300_000);
  const procs: Proc[] = [];
  let demo: MailDemo | null = null;
  const vars: Record<string, string> = {};
  let key = '';
  let infoPassword = '';

  before(async () => {
    const db = await freshDatabase();
    await seedDemo(db.knex);
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-readme-email-'));
    registerCleanup(() => fs.rm(dataDir, { recursive: true, force: true }));
    registerCleanup(() => removeSystemState(dataDir)); // runs first: it finds the state through dataDir
    const redisUrl = `${env.redisUrl}/12`;
    const r = new Redis(redisUrl);
    await r.flushdb();
    r.disconnect();
    const [port, mailPort] = [await freePort(), await freePort()];
    Object.assign(vars, {
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl,
      APP_KEY: appKey(),
      PORT: String(port),
      MAIL_PORT: String(mailPort),
      MAIL_BASE_URL: `http://127.0.0.1:${mailPort}`,
    });
    demo = await startMailDemo({ dataDir, env: vars, log: () => undefined });
    const banner = demo.banner.join('\n');
    key = banner.match(/demo API key\s+(mbxk_\S+)/)?.[1] ?? '';
    infoPassword = banner.match(/mailbox\s+info@demo\.mail\.test\s+password (\S+)/)?.[1] ?? '';
    expect(key, banner).to.match(/^mbxk_/);
    expect(infoPassword, banner).to.match(/^demo-/);
    const web = startProcfile('web', vars);
    const worker = startProcfile('worker', vars);
    const mail = startProcfile('mail', vars);
    procs.push(web, worker, mail);
    await web.waitForLine(/web listening/, 'the web process to listen');
    await worker.waitForLine(/workers started/, 'the workers to start');
    await mail.waitForLine(/mail listening/, 'the Mailbox API to listen');
  });
  after(async () => {
    await killAll(procs.splice(0));
    if (demo) await demo.stop();
  });

  it('the commands print what the README shows: synced in, answered in the thread', async () => {
    const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
    const { script, expected } = walkThrough(readme, '## The e-mail client');
    // the two lines the reader fills in from the banner
    expect(script).to.match(/^KEY=mbxk_\.\.\. /m);
    expect(script).to.match(/^INFO_PW=demo-\.\.\. /m);
    const filled = script.replace(/^KEY=.*$/m, `KEY=${key}`).replace(/^INFO_PW=.*$/m, `INFO_PW=${infoPassword}`);
    const res = await execa('bash', ['-c', filled], {
      env: { ...process.env, BASE: `http://127.0.0.1:${vars.PORT}`, MAIL: `${vars.MAIL_BASE_URL}/api/v1` },
      cwd: ROOT,
      reject: false,
      timeout: 240_000,
    });
    const output = `${res.stdout.replace(/\r\n/g, '\n')}\n`;
    expect(res.exitCode, res.stderr).to.equal(0);
    expect(output, `output:\n${output}\nstderr:\n${res.stderr}\n`).to.match(outputPattern(expected));
    // the reply's In-Reply-To and References name the e-mail it answers
    const ids = [...output.matchAll(/<([^>]+@demo\.mail\.test)>/g)].map((m) => m[1]);
    expect(ids).to.have.length(3);
    expect(new Set(ids).size).to.equal(1);
  });
});
