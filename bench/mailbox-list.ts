/**
 * `npm run bench -- mailbox-list [--n 30] [--keep]` (issue 3, "Benchmark").
 * A mailbox with 1,000 messages in a real Dovecot. Measured in the same run, interleaved:
 *  - bare: an imapflow script doing connect + login + SELECT INBOX + envelope fetch of the newest
 *    50 + logout (the baseline);
 *  - first: GET /api/v1/mailboxes/<mailbox>/emails?limit=50 through the Mailbox API (the real
 *    `mail` process, a child) on a new HTTP connection with a login the service has not pooled
 *    yet (each sample uses another mailbox login: the mailboxes' homes are symlinks to the one
 *    1,000-message maildir, so every sample lists the same messages);
 *  - repeated: the same request again by the same client within a minute (keep-alive; the
 *    service reuses its pooled IMAP connection).
 * Prints median and p95 of each and the ratios against the bare script's median; targets: first
 * <= 1.3x, repeated <= 0.6x.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { execa, type ResultPromise } from 'execa';
import { ImapFlow } from 'imapflow';
import { startEmbeddedPostgres } from '../lib/infra/postgres.js';
import { startRedis } from '../lib/infra/redis.js';
import { startDovecot } from '../lib/infra/dovecot.js';
import { freePort, portOpen } from '../lib/infra/free-port.js';
import { createKnex, migrateLatest } from '../db/knex.js';
import { inheritedEnv } from '../lib/config.js';
import { createApiKey } from '../api/mail/keys/service.js';

const MESSAGES = 1000;
const LIMIT = 50;
const DOMAIN = 'bench.test';

function arg(args: string[], name: string, def: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1] : def;
}

/** Median and 95th percentile (nearest rank) of samples in ms. */
function stats(xs: number[]): { median: number; p95: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
  return { median: s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2, p95: at(0.95) };
}

function rawMessage(i: number): string {
  const date = new Date(Date.UTC(2026, 0, 1) + i * 3600_000).toUTCString().replace('GMT', '+0000');
  return [
    `From: Sender ${i % 37} <sender${i % 37}@example.test>`,
    `To: bench-0@${DOMAIN}`,
    `Subject: Bench message ${i}`,
    `Date: ${date}`,
    `Message-ID: <bench-${i}@example.test>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    ...Array.from({ length: 12 }, (_, k) => `Line ${k} of message ${i}: the quick brown fox jumps over the lazy dog.`),
    '',
  ].join('\r\n');
}

/** The baseline: a bare imapflow script (login, newest 50 envelopes, logout). @returns ms */
async function bare(port: number, user: string, pass: string): Promise<number> {
  const t0 = performance.now();
  const c = new ImapFlow({
    host: '127.0.0.1',
    port,
    secure: false,
    doSTARTTLS: false,
    auth: { user, pass },
    logger: false,
  });
  c.on('error', () => {
    /* a failure rejects the awaited call */
  });
  await c.connect();
  const lock = await c.getMailboxLock('INBOX');
  const exists = c.mailbox ? c.mailbox.exists : 0;
  const msgs = await c.fetchAll(`${Math.max(1, exists - LIMIT + 1)}:*`, { uid: true, envelope: true, flags: true });
  lock.release();
  await c.logout();
  if (msgs.length !== LIMIT) throw new Error(`bare fetch returned ${msgs.length} messages`);
  return performance.now() - t0;
}

/** One GET through the API. @returns ms */
function apiList(
  port: number,
  agent: http.Agent | false,
  key: string,
  mailbox: string,
  password: string,
): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: '127.0.0.1',
        port,
        agent,
        path: `/api/v1/mailboxes/${encodeURIComponent(mailbox)}/emails?limit=${LIMIT}`,
        headers: { authorization: `Bearer ${key}`, 'x-mailbox-password': password, accept: 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const ms = performance.now() - t0;
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { id: string }[] };
          if (res.statusCode !== 200 || body.data?.length !== LIMIT)
            reject(
              new Error(`API answered ${res.statusCode}: ${Buffer.concat(chunks).toString('utf8').slice(0, 300)}`),
            );
          else resolve(ms);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
  });
}

/** Runs the benchmark. */
export async function run(args: string[]): Promise<void> {
  const n = Number(arg(args, 'n', '30'));
  const warm = 3;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-bench-mail-'));
  await fs.chmod(dir, 0o755);
  const children: ResultPromise[] = [];
  const pg = await startEmbeddedPostgres(path.join(dir, 'postgres'), 'isp_bench', { temporary: true });
  const redis = await startRedis(path.join(dir, 'redis'));
  const dovecot = await startDovecot({ dir: path.join(dir, 'dovecot'), authFailureDelaySeconds: 0 });
  const knex = createKnex(pg.url);
  try {
    await migrateLatest(knex);
    // bench-0 holds the messages; bench-1.. are further logins onto the same maildir (fresh pool keys)
    const users = Array.from({ length: n + warm + 1 }, (_, i) => ({
      email: `bench-${i}@${DOMAIN}`,
      password: `bench-pw-${i}-${randomBytes(4).toString('hex')}`,
    }));
    await dovecot.addUsers(users);
    console.log(`appending ${MESSAGES} messages to ${users[0].email} ...`);
    const filler = new ImapFlow({
      host: '127.0.0.1',
      port: dovecot.imapPort,
      secure: false,
      doSTARTTLS: false,
      auth: { user: users[0].email, pass: users[0].password },
      logger: false,
    });
    filler.on('error', () => {});
    await filler.connect();
    for (let i = 1; i <= MESSAGES; i++) await filler.append('INBOX', rawMessage(i), i % 3 ? ['\\Seen'] : []);
    await filler.logout();
    const home0 = path.join(dovecot.dir, 'mail', users[0].email);
    for (const u of users.slice(1)) await fs.symlink(home0, path.join(dovecot.dir, 'mail', u.email));

    const [domain] = await knex('mail_domains')
      .insert({
        name: DOMAIN,
        imap_host: '127.0.0.1',
        imap_port: dovecot.imapPort,
        imap_security: 'none',
        smtp_host: '127.0.0.1',
        smtp_port: 25,
        smtp_security: 'none',
      })
      .returning('id');
    const boxIds = await knex('mail_mailboxes')
      .insert(users.map((u) => ({ domain_id: domain.id, email: u.email, local_part: u.email.split('@')[0] })))
      .returning('id');
    const { key } = await createApiKey(knex, {
      name: 'bench',
      domainId: domain.id,
      mailboxIds: boxIds.map((r: { id: number }) => r.id),
      scopes: ['emails:read'],
    });

    const mailPort = await freePort();
    const env = {
      ...inheritedEnv(),
      MAIL_PORT: String(mailPort),
      MAIL_BASE_URL: `http://127.0.0.1:${mailPort}`,
      DATABASE_URL: pg.url,
      REDIS_URL: redis.url,
      APP_KEY: randomBytes(32).toString('hex'),
      MAIL_RATE_LIMIT: '100000000',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    };
    const mail = execa('node', ['--import', 'tsx', 'api/mail/server.ts'], {
      env,
      stdout: 'ignore',
      stderr: 'inherit',
      reject: false,
      cleanup: true,
    });
    children.push(mail);
    for (const end = Date.now() + 30_000; !(await portOpen(mailPort));) {
      if (Date.now() > end) throw new Error('the mail process did not listen');
      await new Promise((r) => setTimeout(r, 100));
    }

    const bareMs: number[] = [];
    const firstMs: number[] = [];
    // warm-up (JIT, connection setup paths), not counted
    for (let i = 0; i < warm; i++) {
      await bare(dovecot.imapPort, users[0].email, users[0].password);
      await apiList(mailPort, false, key, users[n + 1 + i].email, users[n + 1 + i].password);
    }
    console.log(`measuring ${n} samples each (interleaved) ...`);
    for (let i = 0; i < n; i++) {
      bareMs.push(await bare(dovecot.imapPort, users[0].email, users[0].password));
      firstMs.push(await apiList(mailPort, false, key, users[1 + i].email, users[1 + i].password));
    }
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    await apiList(mailPort, agent, key, users[0].email, users[0].password);
    const repeatedMs: number[] = [];
    const t0 = Date.now();
    for (let i = 0; i < n; i++) repeatedMs.push(await apiList(mailPort, agent, key, users[0].email, users[0].password));
    agent.destroy();
    if (Date.now() - t0 > 60_000) console.log('warning: the repeated requests took longer than a minute');

    const B = stats(bareMs);
    const F = stats(firstMs);
    const R = stats(repeatedMs);
    const f = (x: number) => x.toFixed(1).padStart(7);
    console.log(
      [
        '',
        `mailbox with ${MESSAGES} messages, limit ${LIMIT}, ${n} samples each      median      p95  (ms)`,
        `bare imapflow: login + fetch newest ${LIMIT} + logout          ${f(B.median)}  ${f(B.p95)}`,
        `API first request (new login, new HTTP connection)       ${f(F.median)}  ${f(F.p95)}`,
        `API repeated request (same client, within a minute)      ${f(R.median)}  ${f(R.p95)}`,
        '',
        'target                                   ratio of medians   ok',
        `first request <= 1.3x bare               ${(F.median / B.median).toFixed(2).padStart(8)}         ${F.median / B.median <= 1.3 ? 'yes' : 'NO'}`,
        `repeated request <= 0.6x bare            ${(R.median / B.median).toFixed(2).padStart(8)}         ${R.median / B.median <= 0.6 ? 'yes' : 'NO'}`,
        `(p95 ratios: first ${(F.p95 / B.p95).toFixed(2)}, repeated ${(R.p95 / B.p95).toFixed(2)})`,
      ].join('\n'),
    );
  } finally {
    for (const c of children) {
      c.kill('SIGTERM');
      await c;
    }
    await knex.destroy();
    await dovecot.stop();
    await redis.stop();
    await pg.stop();
    if (!args.includes('--keep')) await fs.rm(dir, { recursive: true, force: true });
  }
}
