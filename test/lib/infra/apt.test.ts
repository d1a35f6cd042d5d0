import { expect } from 'chai';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { aptInstallCommand, ensureDebianPackage, which } from '../../../lib/infra/apt.js';
import { startRedis } from '../../../lib/infra/redis.js';

/**
 * lib/infra/apt.ts: issue 2 item 2 "apt-get installs it when missing and the user is root; otherwise a clear message
 * with the command".
 */
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
      await ensureDebianPackage('no-such-binary-isp-test', ['no-such-package-a', 'no-such-package-b'], (l) =>
        lines.push(l),
      );
    } catch (e) {
      err = e;
    } finally {
      process.getuid = original;
    }
    expect((err as Error).message).to.equal(
      'no-such-binary-isp-test is not installed. Install it with:\n  sudo apt-get update && sudo apt-get install -y no-such-package-a no-such-package-b',
    );
    expect(lines).to.deep.equal([]);
  });

  /** The lookups of a user without apt rights on a machine that lacks the binary. */
  const notRootNothingFound = { uid: 1000, which: async () => null };

  for (const [binary, packages, command] of [
    ['redis-server', ['redis-server'], 'sudo apt-get update && sudo apt-get install -y redis-server'],
    [
      'dovecot',
      ['dovecot-imapd', 'dovecot-lmtpd'],
      'sudo apt-get update && sudo apt-get install -y dovecot-imapd dovecot-lmtpd',
    ],
  ] as const) {
    it(`not root and ${binary} missing: stops with "${command}" and runs nothing`, async () => {
      const lines: string[] = [];
      const looked: string[] = [];
      let err: unknown;
      try {
        await ensureDebianPackage(binary, [...packages], (l) => lines.push(l), {
          uid: 1000,
          which: async (b) => {
            looked.push(b);
            return null;
          },
        });
      } catch (e) {
        err = e;
      }
      expect((err as Error).message).to.equal(`${binary} is not installed. Install it with:\n  ${command}`);
      expect(aptInstallCommand([...packages])).to.equal(command);
      expect(looked).to.deep.equal([binary]); // apt-get itself is not even looked for
      expect(lines).to.deep.equal([]);
    });
  }

  it('startRedis without redis-server, not root: rejects with the install command, creates no data dir', async () => {
    const dir = path.join(os.tmpdir(), `isp-apt-redis-${process.pid}-${Date.now()}`);
    let err: unknown;
    try {
      await startRedis(dir, () => {}, { apt: notRootNothingFound });
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).to.contain('sudo apt-get install -y redis-server');
    expect(
      await fs.access(dir).then(
        () => true,
        () => false,
      ),
    ).to.equal(false);
  });

  it('root on a system without apt-get: says so instead of failing on a missing program', async () => {
    let err: unknown;
    try {
      await ensureDebianPackage('redis-server', ['redis-server'], () => {}, { uid: 0, which: async () => null });
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).to.equal(
      'redis-server is not installed, and there is no apt-get here: ' +
        "install redis-server with this system's package manager",
    );
  });

  it('which: finds an executable on the given PATH first, then in the sbin/bin fallbacks; null otherwise', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-which-'));
    try {
      await fs.writeFile(path.join(dir, 'isp-tool'), '#!/bin/sh\n', { mode: 0o755 });
      await fs.writeFile(path.join(dir, 'isp-data'), 'not executable', { mode: 0o644 });
      expect(await which('isp-tool', `/nonexistent:${dir}`)).to.equal(path.join(dir, 'isp-tool'));
      expect(await which('isp-data', dir)).to.equal(null);
      expect(await which('sh', '/nonexistent')).to.equal('/usr/bin/sh');
      expect(await which('isp-no-such-tool', dir)).to.equal(null);
      // an absolute path is checked as it is (a package's helper outside PATH)
      expect(await which(path.join(dir, 'isp-tool'), '/nonexistent')).to.equal(path.join(dir, 'isp-tool'));
      expect(await which(path.join(dir, 'isp-data'), dir)).to.equal(null);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
