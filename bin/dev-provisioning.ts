/**
 * The provisioning fakes of `npm start` (issue 13 item 10), one process `provisioning`, two
 * loopback HTTP servers, both labelled FAKE:
 * - a Cloudflare API v4 fake on PROVISIONING_DEMO_PORT (default 3003) under `/client/v4`:
 *   `GET /user/tokens/verify`, `GET /zones/{id}`, `GET|POST /zones/{id}/dns_records`,
 *   `DELETE /zones/{id}/dns_records/{record}` in the `{success, errors, messages, result}` envelope;
 *   one zone (DEMO_ZONE_NAME, id DEMO_ZONE_ID), records kept in `<state dir>/cloudflare.json`;
 * - a cPanel UAPI fake on the next port (3004): `Email/add_pop` (POST form), `Email/list_pops`,
 *   `Email/count_pops` (GET), `Authorization: cpanel user:TOKEN`; a new mailbox is appended to the
 *   demo Dovecot's passwd-file (PROVISIONING_DEMO_DOVECOT_USERS, `user@domain:{PLAIN}password`,
 *   re-read by Dovecot within a second) so it can log in over IMAP; without it they stay in memory.
 * Tokens are fixed demo values (DEMO_CF_TOKEN, DEMO_CPANEL_TOKEN): the fakes reach nothing
 * outside. Passwords and tokens are never logged.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { isMainModule, runService } from '../lib/process.js';
import { inheritedEnv, loadConfig } from '../lib/config.js';
import { fileURLToPath } from 'node:url';
import { dovecotDirFor } from './dev-mail.js';
import { demoTenantDbOf, type DemoProvisioningTarget } from '../db/seeds/demo-provisioning.js';

/** The fake zone. */
export const DEMO_ZONE_NAME = 'demo-platform.test';
export const DEMO_ZONE_ID = '0d0e0a0d0b0e0e0f0d0e0a0d0b0e0e0f';
/** Fixed demo tokens (the seed saves them; they open only the fakes). */
export const DEMO_CF_TOKEN = 'demo-fake-cloudflare-token';
export const DEMO_CPANEL_USER = 'demo';
export const DEMO_CPANEL_TOKEN = 'DEMOFAKECPANELTOKEN';
const MAX_BODY = 64 * 1024;

interface Rec {
  id: string;
  type: string;
  name: string;
  content: string;
  proxied: boolean;
  ttl: number;
  comment: string | null;
  created_on: string;
}

/** Options of startProvisioningFakes. */
export interface ProvisioningFakesOptions {
  /** Cloudflare fake port (0 = any); the cPanel fake takes `cpanelPort` */
  cloudflarePort: number;
  cpanelPort: number;
  /** where cloudflare.json is kept (null: memory only) */
  stateDir: string | null;
  /** the demo Dovecot's passwd-file (null: mailboxes in memory only) */
  dovecotUsers: string | null;
  log?: (line: string) => void;
}

/** The running fakes. */
export interface ProvisioningFakes {
  cloudflareUrl: string;
  cpanelPort: number;
  records: Rec[];
  mailboxes: Map<string, string>;
  close(): Promise<void>;
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json', 'x-fake': 'provisioning demo' });
  res.end(JSON.stringify(body));
};
const cfOk = (result: unknown, extra: Record<string, unknown> = {}) => ({
  success: true,
  errors: [],
  messages: [],
  result,
  ...extra,
});
const cfErr = (code: number, message: string) => ({
  success: false,
  errors: [{ code, message }],
  messages: [],
  result: null,
});

async function readBody(req: http.IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw new Error('body too large');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
const HOST = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]*$/i;

/** Starts both fakes. */
export async function startProvisioningFakes(o: ProvisioningFakesOptions): Promise<ProvisioningFakes> {
  const log = o.log ?? (() => undefined);
  const stateFile = o.stateDir ? path.join(o.stateDir, 'cloudflare.json') : null;
  const records: Rec[] = stateFile && fs.existsSync(stateFile) ? JSON.parse(fs.readFileSync(stateFile, 'utf8')) : [];
  const save = () => {
    if (!stateFile) return;
    fs.mkdirSync(path.dirname(stateFile), { recursive: true });
    fs.writeFileSync(stateFile, JSON.stringify(records, null, 1), { mode: 0o600 });
  };
  const mailboxes = new Map<string, string>();

  const cloudflare = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const p = url.pathname.replace(/^\/client\/v4/, '');
      if (req.headers.authorization !== `Bearer ${DEMO_CF_TOKEN}`)
        return json(res, 401, cfErr(1000, 'Invalid API Token'));
      if (req.method === 'GET' && p === '/user/tokens/verify')
        return json(res, 200, cfOk({ id: 'demo-token', status: 'active' }));
      const m = /^\/zones\/([^/]+)(\/dns_records(?:\/([^/]+))?)?$/.exec(p);
      if (!m || m[1] !== DEMO_ZONE_ID) return json(res, 404, cfErr(7003, 'Could not route to the zone'));
      if (!m[2] && req.method === 'GET')
        return json(res, 200, cfOk({ id: DEMO_ZONE_ID, name: DEMO_ZONE_NAME, status: 'active', paused: false }));
      if (m[2] && !m[3] && req.method === 'GET') {
        const name = url.searchParams.get('name');
        const type = url.searchParams.get('type');
        const list = records.filter((r) => (!name || r.name === name.toLowerCase()) && (!type || r.type === type));
        return json(
          res,
          200,
          cfOk(list, {
            result_info: { page: 1, per_page: 100, count: list.length, total_count: list.length, total_pages: 1 },
          }),
        );
      }
      if (m[2] && !m[3] && req.method === 'POST') {
        const b = JSON.parse(await readBody(req)) as Partial<Rec>;
        const name = String(b.name ?? '')
          .toLowerCase()
          .replace(/\.$/, '');
        const type = String(b.type ?? '');
        const content = String(b.content ?? '');
        if (!['A', 'AAAA', 'CNAME', 'TXT'].includes(type))
          return json(res, 400, cfErr(9004, 'DNS record type is invalid.'));
        if (!(name === DEMO_ZONE_NAME || name.endsWith(`.${DEMO_ZONE_NAME}`)) || !HOST.test(name))
          return json(res, 400, cfErr(9005, 'DNS record name is invalid or not in the zone.'));
        if (type === 'A' && !IPV4.test(content)) return json(res, 400, cfErr(9005, 'Content for A record is invalid.'));
        if (type === 'CNAME' && !HOST.test(content))
          return json(res, 400, cfErr(9005, 'Content for CNAME record is invalid.'));
        if (records.some((r) => r.name === name && r.type === type && r.content === content))
          return json(res, 400, cfErr(81058, 'An identical record already exists.'));
        if (records.some((r) => r.name === name && (r.type === 'CNAME') !== (type === 'CNAME')))
          return json(res, 400, cfErr(81053, 'A CNAME record with that host already exists or conflicts.'));
        const rec: Rec = {
          id: randomBytes(16).toString('hex'),
          type,
          name,
          content,
          proxied: b.proxied === true,
          ttl: typeof b.ttl === 'number' ? b.ttl : 1,
          comment: typeof b.comment === 'string' ? b.comment.slice(0, 100) : null,
          created_on: new Date().toISOString(),
        };
        records.push(rec);
        save();
        log(`fake cloudflare: created ${type} ${name} -> ${content}`);
        return json(res, 200, cfOk(rec));
      }
      if (m[3] && req.method === 'DELETE') {
        const i = records.findIndex((r) => r.id === m[3]);
        if (i < 0) return json(res, 404, cfErr(81044, 'Record does not exist.'));
        const [gone] = records.splice(i, 1);
        save();
        log(`fake cloudflare: deleted ${gone!.type} ${gone!.name}`);
        return json(res, 200, cfOk({ id: gone!.id }));
      }
      return json(res, 405, cfErr(10000, 'Method not allowed'));
    })().catch(() => json(res, 400, cfErr(6003, 'Invalid request')));
  });

  const uapi = (res: http.ServerResponse, status: 0 | 1, data: unknown, errors: string[] | null = null) =>
    json(res, 200, { status, errors, messages: null, metadata: {}, data });
  const cpanel = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      if (req.headers.authorization !== `cpanel ${DEMO_CPANEL_USER}:${DEMO_CPANEL_TOKEN}`) {
        res.writeHead(401, { 'content-type': 'text/plain' });
        return res.end('Access denied (FAKE cPanel)');
      }
      const fn = url.pathname.replace(/^\/execute\/Email\//, '');
      if (fn === 'count_pops' && req.method === 'GET') return uapi(res, 1, mailboxes.size);
      if (fn === 'list_pops' && req.method === 'GET') {
        const re = url.searchParams.get('regex');
        const match = re ? new RegExp(re, 'i') : null;
        const list = [...mailboxes.keys()]
          .filter((e) => !match || match.test(e))
          .map((email) => ({ email, login: email }));
        return uapi(res, 1, list);
      }
      if (fn === 'add_pop' && req.method === 'POST') {
        const f = new URLSearchParams(await readBody(req));
        const email = `${f.get('email') ?? ''}@${f.get('domain') ?? ''}`.toLowerCase();
        const password = f.get('password') ?? '';
        if (!/^[a-z0-9._+-]+@[a-z0-9.-]+$/.test(email) || !password || /[:\r\n]/.test(password))
          return uapi(res, 0, null, ['The e-mail address or password is not valid (FAKE cPanel).']);
        if (mailboxes.has(email)) return uapi(res, 0, null, [`The account ${email} already exists!`]);
        if (o.dovecotUsers) fs.appendFileSync(o.dovecotUsers, `${email}:{PLAIN}${password}\n`);
        mailboxes.set(email, f.get('quota') ?? 'unlimited');
        log(`fake cpanel: created mailbox ${email}`);
        return uapi(res, 1, null);
      }
      return uapi(res, 0, null, [`Unknown function ${fn.slice(0, 40)} (FAKE cPanel)`]);
    })().catch(() => uapi(res, 0, null, ['Invalid request (FAKE cPanel)']));
  });

  // mailboxes already in the Dovecot passwd-file (earlier runs) count as existing
  if (o.dovecotUsers && fs.existsSync(o.dovecotUsers))
    for (const line of fs.readFileSync(o.dovecotUsers, 'utf8').split('\n'))
      if (line.includes(':')) mailboxes.set(line.slice(0, line.indexOf(':')).toLowerCase(), 'unlimited');

  const listen = (s: http.Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve((s.address() as AddressInfo).port));
    });
  const cfPort = await listen(cloudflare, o.cloudflarePort);
  const cpPort = await listen(cpanel, o.cpanelPort);
  return {
    cloudflareUrl: `http://127.0.0.1:${cfPort}/client/v4`,
    cpanelPort: cpPort,
    records,
    mailboxes,
    async close() {
      for (const s of [cloudflare, cpanel]) {
        s.closeAllConnections();
        await new Promise((r) => s.close(r));
      }
    },
  };
}

/**
 * What the demo seed saves for fakes on `port` (Cloudflare) and `port + 1` (cPanel), and (issue 14
 * item 9) the `tenant_db` credential of the embedded PostgreSQL.
 * @param dbUrl the database URL of `npm start`; used only when `env` has no DATABASE_URL (then it is
 *   the embedded server, whose superuser may create the pilot databases)
 */
export function demoProvisioningTarget(
  port: number,
  dbUrl: string | null = null,
  env: NodeJS.ProcessEnv = inheritedEnv(),
): DemoProvisioningTarget {
  return {
    // issue 14 item 9: the embedded PostgreSQL's superuser (not a server of the user's DATABASE_URL)
    tenantDb: dbUrl && !env.DATABASE_URL ? demoTenantDbOf(dbUrl) : null,
    cloudflareUrl: `http://127.0.0.1:${port}/client/v4`,
    zoneId: DEMO_ZONE_ID,
    cloudflareToken: DEMO_CF_TOKEN,
    cpanelPort: port + 1,
    cpanelUser: DEMO_CPANEL_USER,
    cpanelToken: DEMO_CPANEL_TOKEN,
  };
}

/** The banner lines of the fakes. */
export function provisioningBanner(port: number): string[] {
  return [
    `Fake Cloudflare    http://127.0.0.1:${port}/client/v4   (FAKE DNS API: zone ${DEMO_ZONE_NAME}; nothing leaves this machine)`,
    `Fake cPanel        http://127.0.0.1:${port + 1}/   (FAKE UAPI: new mailboxes go to the demo Dovecot)`,
    `                   provisioning credentials for both are saved untested (fake: true): test them as admin@platform.test`,
  ];
}

if (isMainModule(import.meta.url)) {
  runService(async () => {
    const line = (l: string) => process.stdout.write(`${l}\n`);
    const config = loadConfig();
    const dataDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', config.dataDir);
    const users = config.mailDemo ? path.join(await dovecotDirFor(dataDir), 'users') : null;
    const fakes = await startProvisioningFakes({
      cloudflarePort: config.provisioningDemoPort,
      cpanelPort: config.provisioningDemoPort + 1,
      stateDir: path.join(dataDir, 'provisioning-demo'),
      dovecotUsers: users && fs.existsSync(users) ? users : null,
      log: line,
    });
    line(`FAKE Cloudflare API v4 on ${fakes.cloudflareUrl}; FAKE cPanel UAPI on http://127.0.0.1:${fakes.cpanelPort}`);
    return { close: () => fakes.close(), graceMs: 1000 };
  });
}

/**
 * Settings of the provisioning runs under `npm start` with the fakes (issue 13 items 6, 9): the
 * mailboxes of non-master tenants at `mail.demo-platform.test` (the fake cPanel adds them to the
 * demo Dovecot) and records pointing at 127.0.0.1, unless the environment sets them.
 * @param port the fakes' port, null when PROVISIONING_DEMO is off (then nothing)
 * @param inherited the launcher's environment
 */
export function provisioningDemoEnv(port: number | null, inherited: NodeJS.ProcessEnv): Record<string, string> {
  if (port === null) return {};
  return {
    PLATFORM_MAIL_DOMAIN: inherited.PLATFORM_MAIL_DOMAIN || `mail.${DEMO_ZONE_NAME}`,
    PROVISIONING_DNS_TARGET: inherited.PROVISIONING_DNS_TARGET || '127.0.0.1',
  };
}
