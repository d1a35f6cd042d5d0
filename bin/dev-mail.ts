/**
 * The local demo mail server of `npm start` (issue 3 §1): Dovecot (IMAP + LMTP) and the SMTP relay
 * of the tests, with their data under `<dataDir>/mail` (as root Dovecot's instance lives outside the
 * checkout: see dovecotDirFor), plus the demo rows of the Mailbox API:
 * domain demo.mail.test (IMAP/SMTP on those loopback ports, security none, no panel), the
 * mailboxes info@ and support@ with a few e-mails, a demo operator, and a fresh demo API key with
 * every scope (the previous demo key is revoked: a plain key is never stored, so each start prints
 * a new one). Issue 9: a third mailbox cs@ holding e-mails from demo-isp's customers, and demo-isp's
 * e-mail account pointing at it (bin/dev-mail-account.ts). Called by bin/dev.ts after the
 * migrations unless MAIL_DEMO=off.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { startDovecot, type LocalDovecot } from '../lib/infra/dovecot.js';
import { startSmtpRelay, type SmtpRelay } from '../lib/infra/smtp-relay.js';
import { freePort, portOpen } from '../lib/infra/free-port.js';
import { isRoot, systemStateDir } from '../lib/infra/system-dirs.js';
import { createKnex, type Knex } from '../db/knex.js';
import { hashPassword } from '../api/auth/service.js';
import { createApiKey, PERMISSION_SETS, revokeApiKey } from '../api/mail/keys/service.js';
import { DEMO_PASSWORD } from '../db/seeds/demo.js';
import { demoMessages } from './dev-mail-messages.js';
import { DEMO_ACCOUNT_EMAIL, DEMO_ACCOUNT_TENANT, ensureDemoEmailAccount } from './dev-mail-account.js';
import { parseAppKey } from '../lib/config.js';

export const DEMO_MAIL_DOMAIN = 'demo.mail.test';
export const DEMO_MAILBOXES = [
  { local: 'info', name: 'Info desk' },
  { local: 'support', name: 'Support' },
] as const;
export const DEMO_OPERATOR_EMAIL = `operator@${DEMO_MAIL_DOMAIN}`;
/** Name of the demo API key (each start revokes the previous one of this name and creates a new one). */
export const DEMO_KEY_NAME = 'demo key (npm start)';

/** What startMailDemo returns (bin/dev.ts MailDemo). */
export interface MailDemo {
  env: Record<string, string>;
  banner: string[];
  stop(): Promise<void>;
}

/** State kept in `<dataDir>/mail/demo.json` (mode 600): ports and the demo mailboxes' passwords on this demo server. */
interface DemoState {
  imapPort: number;
  lmtpPort: number;
  smtpPort: number;
  /** POP3 port of the demo Dovecot (issue 9) */
  pop3Port: number;
  passwords: Record<string, string>;
  delivered: boolean;
  /** the e-mails of the demo e-mail account's mailbox (cs@) were delivered (issue 9) */
  accountDelivered: boolean;
}

/**
 * Starts the demo mail server and makes sure the demo rows exist (idempotent: a restart reuses
 * ports, users and e-mails and only replaces the demo API key).
 * @param opts.dataDir the launcher's data directory (.data); the mail server lives in `<dataDir>/mail`
 * @param opts.env must hold DATABASE_URL (migrations already applied); MAIL_BASE_URL is used in the banner
 * @returns extra env for the children (none needed), banner lines (ports, logins, the demo key), stop()
 * @throws Error when DATABASE_URL is missing or Dovecot cannot start (with the apt-get command when not root)
 */
export async function startMailDemo(opts: {
  dataDir: string;
  env: Record<string, string>;
  log: (line: string) => void;
  /** the tenant whose e-mail account points at cs@ (default demo-isp; tests use their own) */
  accountTenant?: string;
}): Promise<MailDemo> {
  const { dataDir, env, log } = opts;
  if (!env.DATABASE_URL) throw new Error('startMailDemo needs DATABASE_URL');
  const dir = path.join(dataDir, 'mail');
  await fs.mkdir(dir, { recursive: true });
  const dovecotDir = await dovecotDirFor(dataDir);
  const stateFile = path.join(dir, 'demo.json');
  const state = await readState(stateFile);

  log(`starting the demo mail server (Dovecot + SMTP relay, data in ${dovecotDir}) ...`);
  let dovecot: LocalDovecot | null = null;
  let relay: SmtpRelay | null = null;
  let knex: Knex | null = null;
  try {
    const imapPort = state.imapPort && !(await portOpen(state.imapPort)) ? state.imapPort : await freePort();
    const lmtpPort = state.lmtpPort && !(await portOpen(state.lmtpPort)) ? state.lmtpPort : await freePort();
    const pop3Port = state.pop3Port && !(await portOpen(state.pop3Port)) ? state.pop3Port : await freePort();
    dovecot = await startDovecot({ dir: dovecotDir, imapPort, lmtpPort, pop3Port, log });
    const dc = dovecot;
    const smtpPort = state.smtpPort && !(await portOpen(state.smtpPort)) ? state.smtpPort : await freePort();
    relay = await startSmtpRelay({
      port: smtpPort,
      authenticate: (u, p) => dc.checkPassword(u, p),
      isLocal: (a) => dc.hasUser(a),
      nonLocal: 'discard',
      lmtp: { host: dc.host, port: dc.lmtpPort },
    });
    Object.assign(state, { imapPort, lmtpPort, smtpPort, pop3Port });

    const mailboxes = DEMO_MAILBOXES.map((m) => ({ ...m, email: `${m.local}@${DEMO_MAIL_DOMAIN}` }));
    const missing = [];
    state.passwords[DEMO_ACCOUNT_EMAIL] ??= `demo-${crypto.randomBytes(6).toString('hex')}`;
    if (!(await dc.hasUser(DEMO_ACCOUNT_EMAIL)))
      missing.push({ email: DEMO_ACCOUNT_EMAIL, password: state.passwords[DEMO_ACCOUNT_EMAIL] });
    for (const m of mailboxes) {
      state.passwords[m.email] ??= `demo-${crypto.randomBytes(6).toString('hex')}`;
      if (!(await dc.hasUser(m.email))) missing.push({ email: m.email, password: state.passwords[m.email] });
    }
    await dc.addUsers(missing);
    if (!state.delivered) {
      await deliverDemoMessages(
        dc,
        mailboxes.map((m) => m.email),
      );
      state.delivered = true;
    }
    await writeState(stateFile, state);

    knex = createKnex(env.DATABASE_URL, { min: 0, max: 2 });
    const rows = await ensureDemoRows(knex, { imapPort, smtpPort: relay.port, mailboxes });
    const key = await freshDemoKey(knex, rows);
    const accountTenant = opts.accountTenant ?? DEMO_ACCOUNT_TENANT;
    const account = env.APP_KEY
      ? await ensureDemoEmailAccount(knex, dc, {
          appKey: parseAppKey(env.APP_KEY),
          password: state.passwords[DEMO_ACCOUNT_EMAIL],
          smtpPort: relay.port,
          delivered: state.accountDelivered,
          tenantSlug: accountTenant,
        })
      : null;
    if (account?.tenant && !state.accountDelivered) {
      state.accountDelivered = true;
      await writeState(stateFile, state);
    }
    if (!account?.tenant) log(`no tenant ${accountTenant} (or no APP_KEY): its demo e-mail account is not set up`);
    await knex.destroy();
    knex = null;

    const base = env.MAIL_BASE_URL || 'http://127.0.0.1:3001';
    const first = mailboxes[0].email;
    const banner = [
      `Mail demo          domain ${DEMO_MAIL_DOMAIN}: IMAP 127.0.0.1:${imapPort}, SMTP 127.0.0.1:${relay.port}, POP3 127.0.0.1:${pop3Port} (plaintext, loopback only; mail to other domains is accepted and dropped)`,
      ...mailboxes.map((m) => `  mailbox          ${m.email.padEnd(26)} password ${state.passwords[m.email]}`),
      `  dashboard        ${base}/login as ${DEMO_OPERATOR_EMAIL} / ${DEMO_PASSWORD}`,
      `  demo API key     ${key}   (all scopes, both mailboxes; a new one each start)`,
      ...(account?.tenant
        ? [
            `  e-mail account   ${DEMO_ACCOUNT_EMAIL.padEnd(26)} password ${state.passwords[DEMO_ACCOUNT_EMAIL]}   (${accountTenant}'s e-mail account: Account menu > E-mail, sync every 5 minutes)`,
          ]
        : []),
      `  try              curl -H 'Authorization: Bearer ${key}' -H 'X-Mailbox-Password: ${state.passwords[first]}' ${base}/api/v1/mailboxes/${encodeURIComponent(first)}/emails`,
    ];
    log(`demo mail server up: IMAP ${imapPort}, SMTP ${relay.port}`);
    const started = { dovecot, relay };
    return {
      env: {},
      banner,
      stop: async () => {
        await started.relay.stop().catch(() => undefined);
        await started.dovecot.stop();
      },
    };
  } catch (e) {
    if (knex) await knex.destroy().catch(() => undefined);
    if (relay) await relay.stop().catch(() => undefined);
    if (dovecot) await dovecot.stop().catch(() => undefined);
    throw e;
  }
}

/**
 * Where the demo Dovecot keeps its instance (config, passwd-file, maildirs). Not root:
 * `<dataDir>/mail/dovecot`. Root: Dovecot's auth process (user dovecot) and mail processes (nobody)
 * cannot enter a checkout inside a 0700 directory, and its passdb/userdb args cannot hold a path with
 * spaces, so the instance lives in the data directory's state directory (lib/infra/system-dirs.ts,
 * `/var/lib/isp-platform/<key>/dovecot`); one that an earlier version made in the checkout stays there.
 * @returns the absolute instance directory
 */
export async function dovecotDirFor(dataDir: string): Promise<string> {
  const local = path.resolve(dataDir, 'mail', 'dovecot');
  if (!isRoot()) return local;
  try {
    await fs.access(path.join(local, 'users'));
    return local;
  } catch {
    /* none in the checkout */
  }
  return path.join(await systemStateDir(dataDir), 'dovecot');
}

async function readState(file: string): Promise<DemoState> {
  try {
    const s = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<DemoState>;
    return {
      imapPort: s.imapPort ?? 0,
      lmtpPort: s.lmtpPort ?? 0,
      smtpPort: s.smtpPort ?? 0,
      pop3Port: s.pop3Port ?? 0,
      passwords: s.passwords ?? {},
      delivered: !!s.delivered,
      accountDelivered: !!s.accountDelivered,
    };
  } catch {
    return {
      imapPort: 0,
      lmtpPort: 0,
      smtpPort: 0,
      pop3Port: 0,
      passwords: {},
      delivered: false,
      accountDelivered: false,
    };
  }
}

async function writeState(file: string, s: DemoState): Promise<void> {
  await fs.writeFile(file, JSON.stringify(s, null, 2), { mode: 0o600 });
}

/** Delivers the demo e-mails over LMTP (once per data directory). */
async function deliverDemoMessages(dc: LocalDovecot, mailboxes: string[]): Promise<void> {
  const lmtp = nodemailer.createTransport({
    host: dc.host,
    port: dc.lmtpPort,
    lmtp: true,
    ignoreTLS: true,
    secure: false,
    logger: false,
  });
  try {
    for (const m of demoMessages(DEMO_MAIL_DOMAIN, mailboxes)) {
      await lmtp.sendMail({ ...m, envelope: { from: m.envelopeFrom, to: m.to } });
    }
  } finally {
    lmtp.close();
  }
}

/** Upserts the demo domain, its mailboxes and the demo operator. @returns ids for the key */
async function ensureDemoRows(
  knex: Knex,
  o: { imapPort: number; smtpPort: number; mailboxes: { local: string; name: string; email: string }[] },
) {
  const servers = {
    imap_host: '127.0.0.1',
    imap_port: o.imapPort,
    imap_security: 'none',
    smtp_host: '127.0.0.1',
    smtp_port: o.smtpPort,
    smtp_security: 'none',
  };
  const [domain] = await knex('mail_domains')
    .insert({ name: DEMO_MAIL_DOMAIN, ...servers, panel_type: null })
    .onConflict('name')
    .merge({ ...servers, updated_at: knex.fn.now() })
    .returning(['id']);
  const domainId = Number(domain.id);
  await knex('mail_mailboxes')
    .insert(
      o.mailboxes.map((m) => ({ domain_id: domainId, email: m.email, local_part: m.local, display_name: m.name })),
    )
    .onConflict('email')
    .ignore();
  const mailboxIds = (
    await knex('mail_mailboxes')
      .whereIn(
        'email',
        o.mailboxes.map((m) => m.email),
      )
      .orderBy('id')
      .pluck('id')
  ).map(Number);
  let operator = await knex('mail_operators').whereRaw('lower(email) = ?', [DEMO_OPERATOR_EMAIL]).first('id');
  if (!operator) {
    [operator] = await knex('mail_operators')
      .insert({ email: DEMO_OPERATOR_EMAIL, name: 'Demo operator', password_hash: await hashPassword(DEMO_PASSWORD) })
      .returning(['id']);
  }
  return { domainId, mailboxIds, operatorId: Number(operator.id) };
}

/**
 * Revokes the previous demo key(s) and creates a new one with every scope for the demo mailboxes.
 * @returns the plain key
 */
async function freshDemoKey(
  knex: Knex,
  r: { domainId: number; mailboxIds: number[]; operatorId: number },
): Promise<string> {
  const old = await knex('mail_api_keys')
    .where({ name: DEMO_KEY_NAME, domain_id: r.domainId })
    .whereNull('revoked_at')
    .pluck('id');
  for (const id of old) await revokeApiKey(knex, Number(id));
  const { key } = await createApiKey(knex, {
    name: DEMO_KEY_NAME,
    domainId: r.domainId,
    mailboxIds: r.mailboxIds,
    scopes: PERMISSION_SETS.full,
    operatorId: r.operatorId,
  });
  return key;
}
