import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { execa } from 'execa';
import { startWeb } from '../../api/server.js';
import { freePort } from '../../lib/infra/free-port.js';
import { env } from '../helpers/env.js';

/** The `web` process (Procfile `web: node --import tsx api/server.ts`, DESIGN.md §1). */
describe('the web process (api/server.ts)', () => {
  const baseEnv = (port: number): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
    APP_KEY: randomBytes(32).toString('hex'),
    PORT: String(port),
    LOG_LEVEL: 'info',
  });

  it('listens on PORT, announces PUBLIC_BASE_URL in /openapi.json, answers JSON errors, and closes', async () => {
    const port = await freePort();
    const { close } = await startWeb({
      ...baseEnv(port),
      PUBLIC_BASE_URL: 'https://isp.example.test',
      LOG_LEVEL: 'silent',
    });
    try {
      const doc = (await (await fetch(`http://127.0.0.1:${port}/openapi.json`)).json()) as {
        servers: { url: string }[];
      };
      expect(doc.servers).to.deep.equal([{ url: 'https://isp.example.test' }]);
      const res = await fetch(`http://127.0.0.1:${port}/api/external/v1/health`);
      expect(res.status).to.equal(401);
      expect(await res.json()).to.deep.equal({ message: 'Unauthenticated.', code: 'UNAUTHENTICATED' });
    } finally {
      await close();
    }
    const after = await fetch(`http://127.0.0.1:${port}/openapi.json`).then(
      () => 'open',
      () => 'closed',
    );
    expect(after).to.equal('closed');
  });

  it('refuses to start without DATABASE_URL, REDIS_URL or APP_KEY, or with a malformed PORT, naming the variable', async () => {
    const port = await freePort();
    for (const [name, value] of [
      ['DATABASE_URL', ''],
      ['REDIS_URL', ''],
      ['APP_KEY', ''],
      ['PORT', 'web'],
      ['APP_KEY', 'too-short'],
    ]) {
      let err: unknown;
      try {
        await startWeb({ ...baseEnv(port), [name]: value });
      } catch (x) {
        err = x;
      }
      expect((err as Error)?.message, `${name}=${value}`).to.match(new RegExp(`^${name}`));
    }
    const free = await fetch(`http://127.0.0.1:${port}/`).then(
      () => 'open',
      () => 'closed',
    );
    expect(free).to.equal('closed');
  });

  it('runs as a process: exits 1 naming a missing variable; exits 0 on SIGTERM', async function () {
    this.timeout(60_000);
    const port = await freePort();
    const bad = await execa(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
      env: { ...baseEnv(port), REDIS_URL: '' },
      extendEnv: false,
      reject: false,
      timeout: 60_000,
    });
    expect(bad.exitCode).to.equal(1);
    expect(bad.stderr).to.include('REDIS_URL');
    const child = execa(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
      env: baseEnv(port),
      extendEnv: false,
      reject: false,
      timeout: 60_000,
    });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('web listening')) resolve();
      });
      child.then((r) => reject(new Error(`web exited early (${r.exitCode}): ${r.stderr}`)));
    });
    expect((await fetch(`http://127.0.0.1:${port}/openapi.json`)).status).to.equal(200);
    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode).to.equal(0);
  });
});
