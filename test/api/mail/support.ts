/**
 * Test support of the Mailbox API tests (test/api/mail/*.test.ts, test/jobs/mailbox-create*.test.ts):
 * an in-process mail app on a loopback port, mail fixtures written straight into the tables, the
 * run's APP_KEY, and the sentinel passwords with a dump of every table and every Redis key.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createMailApp } from '../../../api/mail/app.js';
import { handleMailClientErrors } from '../../../api/mail/middleware/errors.js';
import type { MailConfig } from '../../../api/mail/context.js';
import { createApiKey, type MailScope } from '../../../api/mail/keys/service.js';
import { createLogger } from '../../../lib/logger.js';
import { seal } from '../../../lib/crypto.js';
import { createQueues, type Queues } from '../../../jobs/queues.js';
import type { MailboxClient } from '../../../jobs/adapters/mailbox-client/index.js';
import { env, registerCleanup } from '../../helpers/env.js';

/** The mailbox password used by every mailbox of these tests; it must appear nowhere afterwards. */
export const SENTINEL_MAILBOX_PASSWORD = 'Sentinel-MBX-6d1f0a9b-pw';
/** The initial password of every mailbox the create tests ask for; it must appear nowhere afterwards. */
export const SENTINEL_NEW_PASSWORD = 'Sentinel-NEW-3c7e52d4-pw';

// globalThis viewed as a holder of our own optional keys: mocha may load this module more than once per run.
const g = globalThis as unknown as { __mailTestLogs?: string[]; __mailTestKey?: Buffer; __mailTestOutput?: string[] };
/** Every log line written by any mail app or job logger of these tests. */
export const allMailLogs: string[] = (g.__mailTestLogs ??= []);
/** The APP_KEY of this test run. */
export const TEST_APP_KEY: Buffer = (g.__mailTestKey ??= randomBytes(32));

/**
 * Everything this test process writes to stdout and stderr from the first import of this module on
 * (console output, loggers without a capture sink, library warnings): the sentinel check of
 * test/zz-no-secrets.test.ts searches it too. The streams still print as before.
 */
export const processOutput: string[] = (g.__mailTestOutput ??= teeProcessOutput());

function teeProcessOutput(): string[] {
  const out: string[] = [];
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      out.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
  return out;
}

/** A logger whose lines land in `into` and in allMailLogs. */
export function captureLogger(into: string[] = []) {
  const sink = new Writable({
    write(chunk, _enc, cb) {
      const s = chunk.toString();
      into.push(s);
      allMailLogs.push(s);
      cb();
    },
  });
  return createLogger('debug', sink);
}

export const uniq = () => randomBytes(4).toString('hex');

/** A test response. */
export interface MailResponse {
  status: number;
  body: any;
  headers: Headers;
  text: string;
}

/** A running mail app. */
export interface MailTestApp {
  url: string;
  logs: string[];
  queues: Queues;
  request(
    method: string,
    path: string,
    opts?: { key?: string; password?: string; body?: unknown; raw?: string; headers?: Record<string, string> },
  ): Promise<MailResponse>;
}

/**
 * Starts createMailApp on a loopback port (closed by the run's cleanup).
 * @param opts.mailClient the MailboxClient (a fake or the real one)
 * @param opts.config overrides (rateLimit default: 100000 a minute; rateLimitPrefix unique)
 * @param opts.prefix queue prefix (default unique)
 */
export async function startMailTestApp(opts: {
  mailClient: MailboxClient;
  config?: Partial<MailConfig>;
  prefix?: string;
}): Promise<MailTestApp> {
  const logs: string[] = [];
  const queues = createQueues(env.redisUrl, { prefix: opts.prefix ?? `{mailtest-${uniq()}}` });
  const { app, close } = createMailApp({
    knex: env.knex,
    redis: env.redis,
    logger: captureLogger(logs),
    queues,
    mailClient: opts.mailClient,
    config: {
      mailBaseUrl: 'http://mail.example.test',
      appKey: TEST_APP_KEY,
      rateLimit: { points: 100000, durationSeconds: 60 },
      rateLimitPrefix: `rl:mailtest:${uniq()}`,
      ...opts.config,
    },
  });
  const server = http.createServer(app.callback());
  handleMailClientErrors(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  registerCleanup(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await close();
    await queues.close();
  });
  return {
    url,
    logs,
    queues,
    async request(method, path, o = {}) {
      const headers: Record<string, string> = { accept: 'application/json', ...o.headers };
      if (o.key !== undefined) headers.authorization = `Bearer ${o.key}`;
      if (o.password !== undefined) headers['x-mailbox-password'] = o.password;
      let body: string | undefined;
      if (o.raw !== undefined) {
        body = o.raw;
        headers['content-type'] ??= 'application/json';
      } else if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['content-type'] = 'application/json';
      }
      const res = await fetch(url + path, { method, headers, body, redirect: 'manual' });
      const text = await res.text();
      let parsed: any;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
      return { status: res.status, body: parsed, headers: res.headers, text };
    },
  };
}

/** A mail domain row. */
export interface DomainFixture {
  id: number;
  name: string;
}

/**
 * Inserts a mail domain.
 * @param o.imap/smtp servers (default unreachable placeholders), o.panel a cPanel config (password sealed like the
 *   dashboard does)
 */
export async function makeDomain(
  o: {
    name?: string;
    imap?: { host: string; port: number; security: string };
    smtp?: { host: string; port: number; security: string };
    panel?: {
      type: 'cpanel' | 'directadmin' | 'hestia';
      host: string;
      port: number;
      user: string;
      password: string;
      ssl?: boolean;
    } | null;
  } = {},
): Promise<DomainFixture> {
  const name = o.name ?? `d-${uniq()}.test`;
  const imap = o.imap ?? { host: 'imap.invalid', port: 993, security: 'ssl' };
  const smtp = o.smtp ?? { host: 'smtp.invalid', port: 465, security: 'ssl' };
  const p = o.panel ?? null;
  const [row] = await env
    .knex('mail_domains')
    .insert({
      name,
      imap_host: imap.host,
      imap_port: imap.port,
      imap_security: imap.security,
      smtp_host: smtp.host,
      smtp_port: smtp.port,
      smtp_security: smtp.security,
      panel_type: p?.type ?? null,
      panel_host: p?.host ?? null,
      panel_port: p?.port ?? null,
      panel_user: p?.user ?? null,
      panel_password_enc: p ? seal(TEST_APP_KEY, p.password, 'mail_domains.panel_password') : null,
      panel_ssl: p?.ssl ?? true,
    })
    .returning(['id', 'name']);
  return row;
}

/** Registers a mailbox of a domain; returns its id and lowercase address. */
export async function makeMailbox(
  domain: DomainFixture,
  local = `box-${uniq()}`,
): Promise<{ id: number; email: string }> {
  const email = `${local}@${domain.name}`.toLowerCase();
  const [row] = await env
    .knex('mail_mailboxes')
    .insert({ domain_id: domain.id, email, local_part: local.toLowerCase() })
    .returning(['id', 'email']);
  return row;
}

/** Creates an API key through the key service; returns the plain key and its id. */
export async function makeKey(
  domain: DomainFixture,
  mailboxIds: number[],
  scopes: MailScope[],
): Promise<{ key: string; id: number }> {
  const r = await createApiKey(env.knex, { name: `test-${uniq()}`, domainId: domain.id, mailboxIds, scopes });
  return { key: r.key, id: r.data.id };
}

/** URL path segment of a mailbox address (`@` -> `%40`). */
export const enc = (email: string) => encodeURIComponent(email);

/**
 * Everything stored: every row of every table of the test database as JSON (like a data-only
 * pg_dump), and every Redis key with its value (strings, hashes, lists, sets, sorted sets, streams).
 */
export async function dumpStores(): Promise<{ db: string; redis: string }> {
  const tables: string[] = (
    await env.knex.raw(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`,
    )
  ).rows.map((r: { table_name: string }) => r.table_name);
  const parts: string[] = [];
  for (const t of tables) {
    const { rows } = await env.knex.raw('SELECT row_to_json(x)::text AS j FROM ?? x', [t]);
    parts.push(`${t}:`, ...rows.map((r: { j: string }) => r.j));
  }
  const r = env.redis;
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await r.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const k of keys) {
      const type = await r.type(k);
      out.push(`${k} (${type})`);
      if (type === 'string') out.push(String(await r.get(k)));
      else if (type === 'hash') out.push(JSON.stringify(await r.hgetall(k)));
      else if (type === 'list') out.push(JSON.stringify(await r.lrange(k, 0, -1)));
      else if (type === 'set') out.push(JSON.stringify(await r.smembers(k)));
      else if (type === 'zset') out.push(JSON.stringify(await r.zrange(k, '0', '-1')));
      else if (type === 'stream') out.push(JSON.stringify(await r.xrange(k, '-', '+')));
    }
  } while (cursor !== '0');
  return { db: parts.join('\n'), redis: out.join('\n') };
}

/** The forms a leaked secret could take in a store or a log (plain, URL-encoded, base64). */
export function secretForms(secret: string): string[] {
  return [...new Set([secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')])];
}
