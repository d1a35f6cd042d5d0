import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import { startWeb } from '../../api/server.js';
import { startMail } from '../../api/mail/server.js';
import { createPlatformAdmin, createTenant } from '../../api/tenants/service.js';
import { login } from '../../api/auth/service.js';
import { createToken } from '../../api/tokens/service.js';
import { openBoardSession } from '../../api/board/session.js';
import { createApiKey } from '../../api/mail/keys/service.js';
import { createOperator } from '../../api/mail/operators/service.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { seal } from '../../lib/crypto.js';

/**
 * Helpers of test/faults/ (issue 7): the real `web` and `mail` services (startWeb/startMail with an
 * environment of their own), the fixtures they need in a given database, timed requests, and
 * SIGSTOP/SIGCONT/SIGKILL of real redis-server and PostgreSQL processes.
 */

/** The APP_KEY of the services under test (64 hex characters). */
export const FAULT_APP_KEY_HEX = randomBytes(32).toString('hex');
export const PASSWORD = 'fault-test-password-1';

/** The web and mail services, started in this process against the given database and Redis. */
export interface Services {
  web: string;
  mail: string;
  close(): Promise<void>;
}

/**
 * Starts `web` and `mail` as their processes do (lib/config.ts from an environment, bounded Redis and
 * PostgreSQL, limited HTTP servers), on ephemeral ports, logging nothing.
 * @param env DATABASE_URL, REDIS_URL and any other variable (limits)
 */
export async function startServices(env: Record<string, string>): Promise<Services> {
  const base = { APP_KEY: FAULT_APP_KEY_HEX, PORT: '0', MAIL_PORT: '0', LOG_LEVEL: 'silent', ...env };
  const web = await startWeb(base);
  const mail = await startMail({ MAIL_BASE_URL: 'http://mail.faults.test', ...base });
  const url = (s: { server: { address(): unknown } }) => `http://127.0.0.1:${(s.server.address() as AddressInfo).port}`;
  return {
    web: url(web),
    mail: url(mail),
    async close() {
      await Promise.all([closeWithin(web.close(), 5000), closeWithin(mail.close(), 5000)]);
    },
  };
}

/** Waits for a close, at most `ms` (a close can wait on a frozen dependency). */
async function closeWithin(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p.catch(() => undefined), new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** What the fault tests call: tokens, sessions, keys, an operator, a mailbox and a domain with a panel. */
export interface FaultFixtures {
  adminEmail: string;
  loginToken: string;
  integrationToken: string;
  boardCookie: string;
  mailKey: string;
  mailbox: string;
  domain: string;
  operatorEmail: string;
}

/**
 * Creates the fixtures in a database (migrated, with the permission catalogue).
 * @param knex the database the services under test use
 */
export async function makeFixtures(knex: Knex): Promise<FaultFixtures> {
  const u = randomBytes(4).toString('hex');
  const { tenant, admin } = await createTenant(knex, {
    slug: `faults-${u}`,
    name: `Faults ${u}`,
    adminEmail: `admin-${u}@faults.test`,
    adminPassword: PASSWORD,
  });
  const { token: loginToken } = await login(knex, { email: admin.email, password: PASSWORD });
  const integration = await createToken(new TenantScope(knex, tenant.id), admin.id, {
    name: 'faults',
    access: 'read_write',
    expires_at: null,
  });
  const ops = await createPlatformAdmin(knex, { email: `ops-${u}@faults.test`, password: PASSWORD });
  const board = await openBoardSession(knex, ops.id);
  const domain = `faults-${u}.test`;
  const [d] = await knex('mail_domains')
    .insert({
      name: domain,
      imap_host: 'imap.invalid',
      imap_port: 993,
      imap_security: 'ssl',
      smtp_host: 'smtp.invalid',
      smtp_port: 465,
      smtp_security: 'ssl',
      panel_type: 'cpanel',
      panel_host: 'panel.invalid',
      panel_port: 2083,
      panel_user: 'faults',
      panel_password_enc: seal(Buffer.from(FAULT_APP_KEY_HEX, 'hex'), 'panel-pw', 'mail_domains.panel_password'),
      panel_ssl: true,
    })
    .returning('id');
  const mailbox = `box@${domain}`;
  const [box] = await knex('mail_mailboxes')
    .insert({ domain_id: d.id, email: mailbox, local_part: 'box' })
    .returning('id');
  const key = await createApiKey(knex, {
    name: `faults-${u}`,
    domainId: d.id,
    mailboxIds: [box.id],
    scopes: ['emails:read', 'mailboxes:create'],
  });
  const operatorEmail = `operator-${u}@faults.test`;
  await createOperator(knex, { email: operatorEmail, password: PASSWORD, name: 'Faults' });
  return {
    adminEmail: admin.email,
    loginToken,
    integrationToken: integration.token,
    boardCookie: `isp_board_session=${board.token}`,
    mailKey: key.key,
    mailbox,
    domain,
    operatorEmail,
  };
}

/** A timed answer. */
export interface Timed {
  status: number;
  body: any;
  text: string;
  headers: Headers;
  ms: number;
}

/**
 * One request with a fresh connection (no keep-alive reuse across a fault), timed; gives up after
 * `abortMs` (a hang must fail the test with a time, not time it out).
 */
export async function timed(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; json?: unknown } = {},
  abortMs = 15_000,
): Promise<Timed> {
  const headers: Record<string, string> = { accept: 'application/json', connection: 'close', ...init.headers };
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['content-type'] = 'application/json';
  }
  const started = performance.now();
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(abortMs),
  });
  const text = await res.text();
  const ms = Math.round(performance.now() - started);
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: body stays null, the text is there */
  }
  return { status: res.status, body: parsed, text, headers: res.headers, ms };
}

/** Sends a signal to each pid (ignoring ones that are gone). */
export function signal(pids: number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
    }
  }
}

/** The pid of a redis-server, from INFO (the server tells us itself). */
export async function redisPid(port: number): Promise<number> {
  const reply = await rawRedis(port, 'INFO server\r\n');
  const m = /process_id:(\d+)/.exec(reply);
  if (!m) throw new Error(`no process_id in INFO: ${reply.slice(0, 200)}`);
  return Number(m[1]);
}

/** Sends one inline command over a fresh socket and returns what came back within 1 s. */
function rawRedis(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let out = '';
    const done = () => {
      s.destroy();
      resolve(out);
    };
    s.setTimeout(1000, done);
    s.on('data', (d) => {
      out += d.toString();
      if (out.includes('process_id:') && out.endsWith('\r\n')) done();
    });
    s.on('error', reject);
    s.write(command);
  });
}

/**
 * Every process of a PostgreSQL cluster: the postmaster (first line of postmaster.pid) and its
 * children (checkpointer, walwriter, backends, ...), postmaster first.
 */
export async function postgresPids(clusterDir: string): Promise<number[]> {
  const master = Number((await fs.readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  const children: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may contain spaces, so read after the last ')'
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === master) children.push(Number(entry));
    } catch {
      /* the process ended meanwhile */
    }
  }
  return [master, ...children];
}

/** Polls `probe` until it returns true or `ms` passes. @returns whether it became true */
export async function eventually(probe: () => Promise<boolean>, ms: number, everyMs = 200): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await probe().catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return false;
}
