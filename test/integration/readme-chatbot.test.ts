import { expect } from 'chai';
import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { seedDemo } from '../../db/seeds/demo.js';
import { DEMO_WABOT_DEVICES, seedDemoWabot } from '../../db/seeds/demo-wabot.js';
import { startFakeWablas } from '../../bin/dev-wabot.js';
import { parseAppKey } from '../../lib/config.js';
import { freePort } from '../../lib/infra/free-port.js';
import { freshDatabase } from '../helpers/fresh-db.js';
import { appKey, killAll, ROOT, type Proc } from '../faults/support.js';
import { outputPattern, startWebAndWorker, walkThrough } from '../helpers/readme.js';

/**
 * The README's "The chat bot" walk-through (issue 10), run verbatim (bash) against the real `web`
 * and `worker` processes on a freshly seeded demo platform, with the fake wablas gateway of
 * `npm start` (bin/dev-wabot.ts) on a free loopback port and demo-isp's chat bot configured on it
 * exactly as `npm start` does (db/seeds/demo-wabot.ts). Its output must match the README's "What
 * you see" block (`...` as in readme-walkthrough.test.ts). The pace is real (no WABOT_TIME_SCALE):
 * the six messages drain in about 15 s.
 */
describe('README "The chat bot", run verbatim against the real processes and the fake gateway', function () {
  this.timeout(300_000);
  const procs: Proc[] = [];
  let base: string;
  let gateway: string;
  let readme: string;
  let closeGateway: () => Promise<void>;

  before(async () => {
    readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
    const db = await freshDatabase();
    await seedDemo(db.knex);
    const gw = await startFakeWablas({ port: await freePort(), devices: DEMO_WABOT_DEVICES });
    closeGateway = gw.close;
    gateway = gw.url;
    const key = appKey();
    expect(await seedDemoWabot(db.knex, parseAppKey(key), { gatewayUrl: gw.url })).to.equal('seeded');
    ({ base } = await startWebAndWorker(procs, 12, { DATABASE_URL: db.url, APP_KEY: key }));
  });
  after(async () => {
    await killAll(procs.splice(0));
    await closeGateway?.();
  });

  it('the commands print what the README shows', async () => {
    const { script, expected } = walkThrough(readme, '## The chat bot');
    const res = await execa('bash', ['-c', script], {
      env: { ...process.env, BASE: base, GATEWAY: gateway },
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
