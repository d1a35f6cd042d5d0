import { expect } from 'chai';
import { ensureDebianPackage } from '../../../lib/infra/apt.js';

/** lib/infra/apt.ts: issue 2 item 2 "apt-get installs it when missing and the user is root; otherwise a clear message with the command". */
describe('lib/infra/apt ensureDebianPackage', () => {
  it('returns the path of a binary that is on PATH, installing nothing', async () => {
    const lines: string[] = [];
    const found = await ensureDebianPackage('sh', ['dash'], (l) => lines.push(l));
    expect(found).to.match(/\/sh$/);
    expect(lines).to.deep.equal([]);
  });

  it('for a user who is not root, stops with the exact apt-get command to run (and runs nothing)', async () => {
    const original = process.getuid;
    process.getuid = () => 1000;
    const lines: string[] = [];
    let err: unknown;
    try {
      await ensureDebianPackage('no-such-binary-isp-test', ['no-such-package-a', 'no-such-package-b'], (l) => lines.push(l));
    } catch (e) { err = e; } finally {
      process.getuid = original;
    }
    expect((err as Error).message).to.equal(
      'no-such-binary-isp-test is not installed. Install it with:\n  sudo apt-get update && sudo apt-get install -y no-such-package-a no-such-package-b',
    );
    expect(lines).to.deep.equal([]);
  });
});
