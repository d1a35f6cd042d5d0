import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startRedis, type LocalRedis } from '../../lib/infra/redis.js';
import { env } from '../helpers/env.js';
import { Client, csrfOf } from '../api/mail/dashboard-client.js';
import { makeFixtures, PASSWORD, startServices, timed, type FaultFixtures, type Services } from './services.js';

/** What a raw socket saw: the bytes the server sent and when it closed, ms after the first write. */
interface RawOutcome {
  text: string;
  closedAfterMs: number;
  /** ms after the first write when the first byte came back (null: none). */
  firstByteMs: number | null;
}

/**
 * Opens a TCP connection to `base`, writes `chunks` (the first at once, each further one after
 * `gapMs`), and waits until the server closes the connection or `maxMs` passes.
 */
function raw(base: string, chunks: string[], opts: { gapMs?: number; maxMs?: number } = {}): Promise<RawOutcome> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), '127.0.0.1');
    let text = '';
    let started = 0;
    let firstByteMs: number | null = null;
    const timers: NodeJS.Timeout[] = [];
    const finish = () => {
      timers.forEach(clearTimeout);
      resolve({ text, closedAfterMs: Math.round(performance.now() - started), firstByteMs });
    };
    s.on('connect', () => {
      started = performance.now();
      chunks.forEach((c, i) => {
        if (i === 0) s.write(c);
        else timers.push(setTimeout(() => s.writable && s.write(c), i * (opts.gapMs ?? 200)));
      });
      timers.push(
        setTimeout(() => {
          s.destroy();
        }, opts.maxMs ?? 10_000),
      );
    });
    s.on('data', (d) => {
      firstByteMs ??= Math.round(performance.now() - started);
      text += d.toString();
    });
    s.on('error', () => {
      /* a reset by the server ends the connection like a close */
    });
    s.on('close', finish);
    s.once('error', (e) => {
      if (!started) reject(e);
    });
  });
}

/** Opens a connection and keeps it open without sending anything; resolves once connected. */
function idle(base: string): Promise<net.Socket> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), '127.0.0.1', () => resolve(s));
    s.on('error', reject);
  });
}

/**
 * Issue 7 item 6 on the real services with small limits (HTTP_REQUEST_TIMEOUT_MS 1000,
 * MAX_CONNECTIONS_PER_IP 4, LOGIN_IP_LIMIT 5) and a redis-server of their own (the sign-in counters
 * of 127.0.0.1 must not leak into the other tests' Redis): password spraying gets 429 with
 * Retry-After on all three sign-ins; a slow client is cut off after the request timeout; a client
 * that is refused is answered before its body is read; connections beyond the per-IP cap get 429.
 */
describe('faults: abusive clients (password spraying, slow clients, too many connections)', function () {
  this.timeout(60_000);
  let dir: string;
  let redis: LocalRedis;
  let svc: Services;
  let fx: FaultFixtures;

  before(async function () {
    this.timeout(60_000);
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-faults-abuse-'));
    redis = await startRedis(dir);
    fx = await makeFixtures(env.knex);
    svc = await startServices({
      DATABASE_URL: env.databaseUrl,
      REDIS_URL: redis.url,
      HTTP_REQUEST_TIMEOUT_MS: '1000',
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_KEEPALIVE_TIMEOUT_MS: '500',
      MAX_CONNECTIONS_PER_IP: '4',
      LOGIN_IP_LIMIT: '5',
    });
  });

  after(async function () {
    this.timeout(20_000);
    await svc?.close();
    await redis?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  describe('connections per IP', () => {
    for (const [service, refusal] of [
      ['web', { message: 'Too many open connections from your address. Retry later.', code: 'RATE_LIMITED' }],
      [
        'mail',
        { ok: false, error: 'rate_limited', message: 'Too many open connections from your address. Retry later.' },
      ],
    ] as const) {
      it(`${service}: the 5th open connection from one address gets 429 with Retry-After; closing one frees a place`, async () => {
        const base = service === 'web' ? svc.web : svc.mail;
        const held = await Promise.all([1, 2, 3, 4].map(() => idle(base)));
        try {
          const over = await timed(`${base}/openapi.json`);
          expect(over.status).to.equal(429);
          expect(over.body).to.deep.equal(refusal);
          expect(over.headers.get('retry-after')).to.equal('5');
          expect(over.headers.get('connection')).to.equal('close');
          expect(over.headers.get('x-request-id')).to.be.a('string');
          held.pop()!.destroy();
          await new Promise((r) => setTimeout(r, 50));
          expect((await timed(`${base}/openapi.json`)).status, 'a place is free again').to.equal(200);
        } finally {
          held.forEach((s) => s.destroy());
        }
      });
    }
  });

  describe('slow clients', () => {
    it('headers that never end: the connection is closed after the request timeout (1 s here, 30 s by default)', async () => {
      for (const base of [svc.web, svc.mail]) {
        const out = await raw(base, ['GET /openapi.json HTTP/1.1\r\nHost: x\r\n', 'X-Slow: 1\r\n', 'X-Slow: 2\r\n'], {
          gapMs: 300,
        });
        expect(out.closedAfterMs, base).to.be.within(900, 2500);
        expect(out.text, 'no answer of the app').not.to.match(/^HTTP\/1\.1 200/);
      }
    });

    it('a body that never ends, with a valid token: closed after the request timeout, the handler never ran', async () => {
      const login = await timed(`${svc.web}/api/auth/login`, {
        method: 'POST',
        json: { email: fx.adminEmail, password: PASSWORD },
      });
      const token = login.body.token as string;
      const out = await raw(
        svc.web,
        [
          `POST /api/auth/logout HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":',
          '1',
          '2',
          '3',
        ],
        { gapMs: 300 },
      );
      expect(out.closedAfterMs).to.be.within(900, 2500);
      expect(out.text).not.to.match(/^HTTP\/1\.1 200/);
      const me = await timed(`${svc.web}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });
      expect(me.status, 'the logout never ran').to.equal(200);
    });

    it('no token and a body that never ends: 401 at once, before the body, and the connection is closed', async () => {
      const cases = [
        [svc.web, 'POST /api/integrations/api-tokens', /"code":"UNAUTHENTICATED"/],
        [svc.mail, `POST /api/v1/mailboxes/${encodeURIComponent(fx.mailbox)}/send`, /"error":"unauthorized"/],
      ] as const;
      for (const [base, line, body] of cases) {
        const out = await raw(
          base,
          [`${line} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name":`],
          { maxMs: 5000 },
        );
        expect(out.text, line).to.match(/^HTTP\/1\.1 401 /);
        expect(out.text, line).to.match(/\r\nconnection: close\r\n/i);
        expect(out.text, line).to.match(body);
        expect(out.firstByteMs!, `${line}: answered before the body`).to.be.below(500);
        expect(out.closedAfterMs, `${line}: closed without waiting for the body`).to.be.below(900);
      }
    });
  });

  describe('password spraying: one address, many e-mails (LOGIN_IP_LIMIT 5 failures per 15 minutes)', () => {
    const u = randomBytes(3).toString('hex');

    it('POST /api/auth/login: 429 RATE_LIMITED with Retry-After after 5 failures with different e-mails', async () => {
      for (let i = 1; i <= 5; i++) {
        const r = await timed(`${svc.web}/api/auth/login`, {
          method: 'POST',
          json: { email: `spray-${u}-${i}@faults.test`, password: 'Winter2025!' },
        });
        expect(r.status, `attempt ${i}`).to.equal(401);
      }
      const blocked = await timed(`${svc.web}/api/auth/login`, {
        method: 'POST',
        json: { email: `spray-${u}-6@faults.test`, password: 'Winter2025!' },
      });
      expect(blocked.status).to.equal(429);
      expect(blocked.body).to.deep.equal({ message: 'Too many requests. Retry later.', code: 'RATE_LIMITED' });
      expect(Number(blocked.headers.get('retry-after'))).to.be.within(800, 900);
      const right = await timed(`${svc.web}/api/auth/login`, {
        method: 'POST',
        json: { email: fx.adminEmail, password: PASSWORD },
      });
      expect(right.status, 'the address is blocked, whatever the credentials').to.equal(429);
    });

    for (const [form, page] of [
      ['bull-board sign-in', '/admin/login'],
      ['Mailbox dashboard sign-in', '/login'],
    ] as const) {
      it(`${form}: 429 with Retry-After after 5 failures with different e-mails`, async () => {
        const base = form.startsWith('bull') ? svc.web : svc.mail;
        const c = new Client(base);
        const post = async (email: string) => {
          const f = await c.get(page);
          return c.post(page, { _csrf: csrfOf(f.text), email, password: 'Winter2025!' });
        };
        for (let i = 1; i <= 5; i++)
          expect((await post(`spray-${u}-${i}@faults.test`)).status, `attempt ${i}`).to.equal(401);
        const blocked = await post(`spray-${u}-6@faults.test`);
        expect(blocked.status).to.equal(429);
        expect(Number(blocked.headers.get('retry-after'))).to.be.within(800, 900);
        expect(blocked.text).to.match(/Too many/);
      });
    }
  });
});
