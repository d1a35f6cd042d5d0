import { expect } from 'chai';
import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { seedDemo } from '../../db/seeds/demo.js';
import { freshDatabase } from '../helpers/fresh-db.js';
import { appKey, killAll, ROOT, type Proc } from '../faults/support.js';
import { outputPattern, startWebAndWorker, walkThrough } from '../helpers/readme.js';

/**
 * The README's curl walk-throughs, run verbatim (bash) against the real `web` and `worker` processes
 * on a freshly seeded demo platform, and their output compared with the README's "What you see"
 * block (test/helpers/readme.ts).
 */

describe('README walk-throughs, run verbatim against the real processes', function () {
  this.timeout(300_000);
  const procs: Proc[] = [];
  let base: string;
  let readme: string;

  before(async () => {
    readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
    const db = await freshDatabase();
    await seedDemo(db.knex);
    ({ base } = await startWebAndWorker(procs, 11, {
      DATABASE_URL: db.url,
      APP_KEY: appKey(),
      APK_TOOLCHAIN: 'stub', // the mobile app builder's walk-through (issue 12)
    }));
  });
  after(async () => {
    await killAll(procs.splice(0));
  });

  for (const heading of [
    '## Walk-through with curl',
    '## Admin API walk-through',
    '## Inventory',
    '## Mobile app builder',
  ]) {
    it(`${heading.slice(3)}: the commands print what the README shows`, async () => {
      const { script, expected } = walkThrough(readme, heading);
      const res = await execa('bash', ['-c', script], {
        env: { ...process.env, BASE: base },
        cwd: ROOT,
        reject: false,
        timeout: 240_000,
      });
      const output = `${res.stdout.replace(/\r\n/g, '\n')}\n`;
      expect(res.exitCode, res.stderr).to.equal(0);
      expect(output, `output:\n${output}\nstderr:\n${res.stderr}\n`).to.match(outputPattern(expected));
    });
  }

  it('the pattern of a "What you see" block matches only what it says', () => {
    const p = outputPattern('{"id":...,"status":"open"}\n...\nlast\n');
    expect(p.test('{"id":7,"status":"open"}\nlast\n')).to.equal(true);
    expect(p.test('{"id":7,"status":"open"}\nA\nB\nlast\n')).to.equal(true);
    expect(p.test('{"id":7,"status":"closed"}\nlast\n')).to.equal(false);
    expect(p.test('{"id":7,"status":"open"}\nlast\nmore\n')).to.equal(false);
  });
});
