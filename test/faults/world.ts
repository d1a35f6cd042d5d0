/**
 * The world of the hostile-input tests and the fuzzer (issue 7 items 5 and 7): both services
 * in-process on loopback ports (web: test/helpers/http.ts, mail: test/api/mail/support.ts with a
 * FakeMailboxClient), one tenant with a record of each kind and tokens of every kind, one mail
 * domain with a panel, a registered mailbox with one e-mail, and an API key with every scope.
 * `credentials()` and `samplePath()` turn a route of either OpenAPI document into a request that
 * passes authentication, so a test reaches validation and the handler, not just the 401.
 */
import http from 'node:http';
import net from 'node:net';
import { issueToken, login } from '../../api/auth/service.js';
import { createPlatformAdmin } from '../../api/tenants/service.js';
import { MAIL_SCOPES } from '../../api/mail/keys/service.js';
import { env } from '../helpers/env.js';
import { startTestApp, type TestApp } from '../helpers/http.js';
import { makeIntegrationToken, makeTenant, PASSWORD, seedBasics, type TenantFixture } from '../helpers/fixtures.js';
import { FakeMailboxClient } from '../api/mail/fake-client.js';
import { pilotAbilities, PILOT_TTL_MS } from '../../api/platform/tenant-db/pilot-tokens.js';
import { makeDomain, makeKey, makeMailbox, startMailTestApp, uniq, type MailTestApp } from '../api/mail/support.js';

/** Ids of the tenant's seeded records. */
export type Seeded = Awaited<ReturnType<typeof seedBasics>>;

/** Which service a request goes to. */
export type Service = 'web' | 'mail';

/** Everything the fault tests need. */
export interface FaultWorld {
  web: TestApp;
  mail: MailTestApp;
  client: FakeMailboxClient;
  tenant: TenantFixture;
  ids: Seeded;
  /** Integration token, read_write. */
  integration: string;
  /** The tenant Super Admin's login token. */
  login: string;
  /** A platform admin's login token (issue 13: /api/platform/*). */
  platform: string;
  /** An integration token of the tenant that DELETE /api/integrations/api-tokens/{id} may revoke. */
  victimTokenId: number;
  mailKey: string;
  mailbox: string;
  domain: string;
  mailboxPassword: string;
  /** UID of the e-mail in the mailbox's INBOX. */
  emailId: string;
  /** A supplier of the tenant (issue 16: the list GET /api/suppliers/{supplier}/items). */
  supplierId: number;
  /** A live pilot token of the tenant (issue 15 item 9: the /api/tenant-db-pilot smoke routes). */
  pilot: string;
}

let world: Promise<FaultWorld> | null = null;

/**
 * Builds the world once per mocha run (shared); `own: true` builds a private one for the fuzzer,
 * whose random requests change its tenant (module switches, users, tokens), which must not leak
 * into the hostile-input tests that run after it.
 */
export function faultWorld(opts: { own?: boolean } = {}): Promise<FaultWorld> {
  if (opts.own) return build();
  world ??= build();
  return world;
}

async function build(): Promise<FaultWorld> {
  // its own login-throttle keys: the fuzzer's failed logins from 127.0.0.1 must not throttle other tests
  const web = await startTestApp({
    loginThrottle: { points: 10, durationSeconds: 900, keyPrefix: `rl:fault-login-${uniq()}` },
  });
  const client = new FakeMailboxClient();
  const mail = await startMailTestApp({ mailClient: client, config: { createWaitMs: 20 } });
  const tenant = await makeTenant();
  const ids = await seedBasics(tenant);
  const integration = (await makeIntegrationToken(tenant, 'read_write')).token;
  const victimTokenId = (await makeIntegrationToken(tenant, 'read')).data.id;
  const domain = await makeDomain({
    panel: { type: 'cpanel', host: 'panel.invalid', port: 2083, user: 'panel', password: 'panel-pw' },
  });
  const box = await makeMailbox(domain, `fault-${uniq()}`);
  const { key } = await makeKey(domain, [box.id], [...MAIL_SCOPES]);
  const mailboxPassword = `mbx-${uniq()}`;
  client.passwords.set(box.email, mailboxPassword);
  const email = client.addMessage(box.email, { subject: 'Hello' });
  const supplierId = (await tenant.scope.insert('suppliers', { name: 'Fault supplier' })).id;
  const opsEmail = `ops-${uniq()}@faults.test`;
  await createPlatformAdmin(env.knex, { email: opsEmail, password: PASSWORD });
  const platform = (await login(env.knex, { email: opsEmail, password: PASSWORD })).token;
  const pilot = (
    await issueToken(env.knex, 'pilot', {
      tenant_id: tenant.tenant.id,
      user_id: tenant.admin.id,
      name: 'fault test pilot',
      abilities: pilotAbilities(tenant.tenant.id),
      expires_at: new Date(Date.now() + PILOT_TTL_MS),
    })
  ).token;
  return {
    web,
    mail,
    client,
    tenant,
    ids,
    integration,
    login: tenant.adminToken,
    platform,
    victimTokenId,
    mailKey: key,
    mailbox: box.email,
    domain: domain.name,
    mailboxPassword,
    emailId: email.id,
    supplierId,
    pilot,
  };
}

/** A fresh login token of the tenant admin (for POST /api/auth/logout, which revokes the one it gets). */
export async function freshLoginToken(w: FaultWorld): Promise<string> {
  const { token } = await issueToken(env.knex, 'login', {
    tenant_id: w.tenant.tenant.id,
    user_id: w.tenant.admin.id,
    name: 'fault test',
    expires_at: new Date(Date.now() + 3600_000),
  });
  return token;
}

/** An OpenAPI operation as the tests read it. */
export interface DocOperation {
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; schema?: Record<string, unknown> }[];
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, unknown>;
}

/**
 * The Authorization header (and the mailbox password) that let a request of this operation
 * through authentication. POST /api/auth/logout gets a fresh login token each time.
 */
export async function credentials(
  w: FaultWorld,
  service: Service,
  method: string,
  path: string,
  op: DocOperation,
): Promise<Record<string, string>> {
  const scheme = Object.keys(op.security?.[0] ?? {})[0];
  if (!scheme) return {};
  if (service === 'mail') {
    const headers: Record<string, string> = { authorization: `Bearer ${w.mailKey}` };
    if (op.parameters?.some((p) => p.name === 'X-Mailbox-Password')) headers['x-mailbox-password'] = w.mailboxPassword;
    return headers;
  }
  if (scheme === 'integrationToken') return { authorization: `Bearer ${w.integration}` };
  if (scheme === 'pilotToken') return { authorization: `Bearer ${w.pilot}` };
  if (path.startsWith('/api/platform/')) return { authorization: `Bearer ${w.platform}` };
  if (method === 'post' && path === '/api/auth/logout') return { authorization: `Bearer ${await freshLoginToken(w)}` };
  return { authorization: `Bearer ${w.login}` };
}

/** A real value for a path parameter of an OpenAPI path (an existing record the caller may see). */
export function sampleParam(w: FaultWorld, path: string, name: string): string {
  if (name === 'mailbox') return w.mailbox;
  if (name === 'tenant') return w.tenant.tenant.slug;
  if (name === 'domain') return w.domain;
  if (name === 'job_id') return 'mailbox-create-1';
  if (name === 'supplier') return String(w.supplierId);
  if (path.startsWith('/api/v1/mailboxes/')) return w.emailId;
  if (path.includes('/customers/')) return String(w.ids.customerId);
  if (path.includes('/invoices/')) return String(w.ids.invoiceId);
  if (path.includes('/tickets/')) return String(w.ids.ticketId);
  if (path.includes('/api-tokens/')) return String(w.victimTokenId);
  return '1';
}

/** An OpenAPI path template with every parameter replaced (URL-encoded) by `value(name)`. */
export function fillPath(template: string, value: (name: string) => string, encode = true): string {
  return template.replace(/\{([^}]+)\}/g, (_, n: string) => (encode ? encodeURIComponent(value(n)) : value(n)));
}

/** A raw answer read off a socket. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends bytes on a fresh TCP connection and reads the answer until the server closes it (or 5 s).
 * For requests fetch() cannot send: malformed framing, oversized headers, any method.
 */
export function rawRequest(baseUrl: string, bytes: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error('no answer within 5 s')), 5000);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const lines = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number(lines[0].split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(bytes);
  });
}

/** A request with any method through node:http (fetch refuses TRACE and friends). */
export function methodRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, baseUrl), { method, headers: { accept: 'application/json', ...headers } });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) h[k] = Array.isArray(v) ? v.join(', ') : String(v ?? '');
        resolve({ status: res.statusCode ?? 0, headers: h, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}
