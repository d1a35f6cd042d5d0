import { expect } from 'chai';
import { execa } from 'execa';
import { startMail } from '../../../api/mail/server.js';
import { freePort } from '../../../lib/infra/free-port.js';
import { env } from '../../helpers/env.js';
import { TEST_APP_KEY } from './support.js';

/** The `mail` process (Procfile `mail: node --import tsx api/mail/server.ts`). */
describe('Mailbox API: the mail process (api/mail/server.ts)', () => {
  const baseEnv = (port: number): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
    APP_KEY: TEST_APP_KEY.toString('hex'),
    MAIL_PORT: String(port),
    MAIL_BASE_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'info',
  });

  it('listens on MAIL_PORT, announces MAIL_BASE_URL in the index, and closes', async () => {
    const port = await freePort();
    const { url, close } = await startMail({
      ...baseEnv(port),
      MAIL_BASE_URL: 'https://mail.example.test',
      LOG_LEVEL: 'silent',
    });
    try {
      expect(url).to.equal('https://mail.example.test');
      const res = await fetch(`http://127.0.0.1:${port}/api/v1`);
      expect(res.status).to.equal(200);
      const body = (await res.json()) as { base_url: string; docs: string };
      expect(body).to.include({ base_url: 'https://mail.example.test', docs: 'https://mail.example.test/docs' });
    } finally {
      await close();
    }
    const after = await fetch(`http://127.0.0.1:${port}/api/v1`).then(
      () => 'open',
      () => 'closed',
    );
    expect(after).to.equal('closed');
  });

  it('refuses to start without MAIL_BASE_URL, APP_KEY, DATABASE_URL or REDIS_URL, naming the variable', async () => {
    const port = await freePort();
    for (const name of ['MAIL_BASE_URL', 'APP_KEY', 'DATABASE_URL', 'REDIS_URL']) {
      const e = { ...baseEnv(port), [name]: '' };
      let err: unknown;
      try {
        await startMail(e);
      } catch (x) {
        err = x;
      }
      expect((err as Error)?.message, name).to.include(name);
    }
    let bad: unknown;
    try {
      await startMail({ ...baseEnv(port), MAIL_RATE_LIMIT: 'lots' });
    } catch (x) {
      bad = x;
    }
    expect((bad as Error).message).to.include('MAIL_RATE_LIMIT');
  });

  it('runs as a process and exits 0 on SIGTERM', async function () {
    this.timeout(60_000);
    const port = await freePort();
    const child = execa(process.execPath, ['--import', 'tsx', 'api/mail/server.ts'], {
      env: baseEnv(port),
      extendEnv: false,
      reject: false,
      timeout: 60_000,
    });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('mail listening')) resolve();
      });
      child.then((r) => reject(new Error(`mail exited early (${r.exitCode}): ${r.stderr}`)));
    });
    const res = await fetch(`http://127.0.0.1:${port}/api/v1`);
    expect(res.status).to.equal(200);
    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode).to.equal(0);
  });
});
