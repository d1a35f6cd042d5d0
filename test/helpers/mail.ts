/**
 * The test run's mail stack (DESIGN.md §7): a real Dovecot (IMAP + LMTP) and the npm smtp-server
 * relay that authenticates against Dovecot's passwd-file and delivers over LMTP into it. Started
 * lazily, once per mocha run, on free loopback ports; torn down by the root hooks' cleanup.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { ImapFlow } from 'imapflow';
import { startDovecot, type LocalDovecot } from '../../lib/infra/dovecot.js';
import { startSmtpRelay, type SmtpRelay } from '../../lib/infra/smtp-relay.js';
import type { MailboxCredentials, MailServerEndpoint } from '../../jobs/adapters/mailbox-client/index.js';
import { registerCleanup } from './env.js';
import { issueCert, makeCa, makeCertDir, type TestCa, type TestCert } from './tls.js';

/** A message to put into a mailbox over LMTP (no SMTP auth involved). */
export interface DeliverMessage {
  from: string;
  to: string;
  subject?: string;
  text?: string;
  html?: string;
  cc?: string;
  replyTo?: string;
  headers?: Record<string, string>;
  messageId?: string;
  inReplyTo?: string;
  references?: string | string[];
  date?: Date;
  attachments?: { filename: string; content: string | Buffer; contentType?: string; cid?: string }[];
  /** a complete RFC 5322 message instead of the fields above (envelope from `from`/`to`) */
  raw?: string | Buffer;
}

/** The running stack. */
export interface MailStack {
  imap: MailServerEndpoint;
  smtp: MailServerEndpoint;
  /** Dovecot's LMTP listener */
  lmtp: { host: string; port: number };
  /** Registers a mailbox in Dovecot's passwd-file (usable at once). */
  addMailbox(email: string, password: string): Promise<void>;
  /** Delivers a message over LMTP into the recipient's INBOX. */
  deliver(msg: DeliverMessage): Promise<void>;
  stopDovecot(): Promise<void>;
  startDovecot(): Promise<void>;
  /** directory holding dovecot.log */
  logsDir: string;
  /** Number of successful IMAP logins of `email` that Dovecot has logged so far. */
  imapLogins(email: string): Promise<number>;
  /** Opens a logged-in imapflow client (with an 'error' listener); the caller logs out. */
  openImap(email: string, password: string): Promise<ImapFlow>;
  /** Registers a fresh mailbox (unique address in `domain`, default mail.test) and returns its credentials. */
  newMailbox(opts?: { local?: string; domain?: string; password?: string }): Promise<MailboxCredentials>;
  /** Same for several mailboxes at once (one passwd-file write: Dovecot sees new users from the next second on). */
  newMailboxes(list: { local?: string; domain?: string; password?: string }[]): Promise<MailboxCredentials[]>;
  dovecot: LocalDovecot;
  relay: SmtpRelay;
}

// globalThis viewed as a holder of our own optional keys: mocha may load this module more than once per run.
const g = globalThis as unknown as { __ispMailStack?: Promise<MailStack> };

/** Returns the run's mail stack, starting it on first use. */
export function getMailStack(): Promise<MailStack> {
  g.__ispMailStack ??= start().catch((e) => {
    g.__ispMailStack = undefined;
    throw e;
  });
  return g.__ispMailStack;
}

async function start(): Promise<MailStack> {
  // not under the run's 0700 temp dir: Dovecot's mail processes (user nobody) must reach it
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-mail-'));
  registerCleanup(() => fs.rm(dir, { recursive: true, force: true }));
  const dovecot = await startDovecot({ dir, authFailureDelaySeconds: 0, log: (l) => console.log(l) });
  registerCleanup(() => dovecot.stop());
  const relay = await startSmtpRelay({
    authenticate: (u, p) => dovecot.checkPassword(u, p),
    isLocal: (a) => dovecot.hasUser(a),
    lmtp: { host: dovecot.host, port: dovecot.lmtpPort },
  });
  registerCleanup(() => relay.stop());
  const lmtp = nodemailer.createTransport({
    host: dovecot.host,
    port: dovecot.lmtpPort,
    lmtp: true,
    ignoreTLS: true,
    secure: false,
    logger: false,
  });
  registerCleanup(() => lmtp.close());
  const imap: MailServerEndpoint = { host: dovecot.host, port: dovecot.imapPort, security: 'none' };
  const smtp: MailServerEndpoint = { host: relay.host, port: relay.port, security: 'none' };
  let n = 0;
  const newMailboxes = async (
    list: { local?: string; domain?: string; password?: string }[],
  ): Promise<MailboxCredentials[]> => {
    const boxes = list.map((o) => ({
      email:
        `${o.local ?? 'box'}-${process.pid}-${++n}-${crypto.randomBytes(3).toString('hex')}@${o.domain ?? 'mail.test'}`.toLowerCase(),
      password: o.password ?? `pw-${crypto.randomBytes(9).toString('base64url')}`,
      imap,
      smtp,
    }));
    await dovecot.addUsers(boxes);
    return boxes;
  };
  return {
    imap,
    smtp,
    lmtp: { host: dovecot.host, port: dovecot.lmtpPort },
    addMailbox: (email, password) => dovecot.addUser(email, password),
    async deliver(m) {
      const envelope = { from: m.from, to: m.to };
      const info =
        m.raw !== undefined
          ? await lmtp.sendMail({ envelope, raw: m.raw })
          : await lmtp.sendMail({
              from: m.from,
              to: m.to,
              cc: m.cc,
              replyTo: m.replyTo,
              subject: m.subject ?? '',
              text: m.text,
              html: m.html,
              headers: m.headers,
              messageId: m.messageId,
              inReplyTo: m.inReplyTo,
              references: m.references,
              date: m.date,
              attachments: m.attachments,
              envelope,
            });
      if (info.rejected?.length) throw new Error(`LMTP rejected ${info.rejected.join(', ')}`);
    },
    stopDovecot: () => dovecot.stop(),
    startDovecot: () => dovecot.start(),
    logsDir: path.dirname(dovecot.logFile),
    async imapLogins(email) {
      const log = await fs.readFile(dovecot.logFile, 'utf8');
      const needle = `imap-login: Info: Login: user=<${email.toLowerCase()}>`;
      return log.split('\n').filter((l) => l.includes(needle)).length;
    },
    async openImap(email, password) {
      const c = new ImapFlow({
        host: imap.host,
        port: imap.port,
        secure: false,
        doSTARTTLS: false,
        auth: { user: email, pass: password },
        logger: false,
      });
      c.on('error', () => {
        /* surfaced by the failing command */
      });
      await c.connect();
      return c;
    },
    newMailbox: async (o = {}) => (await newMailboxes([o]))[0],
    newMailboxes,
    dovecot,
    relay,
  };
}

/** The server certificate a TLS stack presents. */
export type TlsStackKind =
  /** signed by the test CA, for 127.0.0.1 and localhost: verifies when the client trusts `pki.ca` */
  | 'good'
  /** for 127.0.0.1, but signed by another CA (`pki.otherCa`) that the tests' clients do not trust */
  | 'foreign'
  /** signed by the test CA, but for the name mail.elsewhere.test only (not 127.0.0.1) */
  | 'wrong-host'
  /** signed by the test CA for 127.0.0.1, expired a day ago */
  | 'expired';

/** The run's throw-away PKI (made on first use in a temp dir; keys never leave it). */
export interface TestPki {
  /** the test CA: the TLS tests' clients trust it (`createMailboxClient({ tls: { ca: pki.ca.certPem } })`) */
  ca: TestCa;
  /** a second CA nobody trusts */
  otherCa: TestCa;
  certs: Record<TlsStackKind, TestCert>;
}

/** A Dovecot with TLS and two relays (implicit TLS and STARTTLS), all presenting one certificate. */
export interface TlsMailStack {
  kind: TlsStackKind;
  pki: TestPki;
  /** the servers per security mode: ssl = imaps + implicit-TLS SMTP; starttls = IMAP and SMTP with STARTTLS */
  endpoints: Record<'ssl' | 'starttls', { imap: MailServerEndpoint; smtp: MailServerEndpoint }>;
  dovecot: LocalDovecot;
  relays: Record<'ssl' | 'starttls', SmtpRelay>;
  /** Registers fresh mailboxes with the endpoints of their security mode (one passwd-file write). */
  newMailboxes(
    list: { local?: string; password?: string; security: 'ssl' | 'starttls' }[],
  ): Promise<MailboxCredentials[]>;
  /** Registers a mailbox with a given address and password (usable at once). */
  addMailbox(email: string, password: string): Promise<void>;
  /** Dovecot's log lines of successful IMAP logins of `email` (each ends with `TLS` when the session was encrypted). */
  imapLoginLines(email: string): Promise<string[]>;
}

// globalThis viewed as a holder of our own optional keys: mocha may load this module more than once per run.
const tg = globalThis as unknown as {
  __ispTestPki?: Promise<TestPki>;
  __ispTlsStacks?: Map<TlsStackKind, Promise<TlsMailStack>>;
};

/** Returns the run's test PKI, making it on first use (openssl CLI, about a second). */
export function getTestPki(): Promise<TestPki> {
  tg.__ispTestPki ??= makePki().catch((e) => {
    tg.__ispTestPki = undefined;
    throw e;
  });
  return tg.__ispTestPki;
}

async function makePki(): Promise<TestPki> {
  const dir = await makeCertDir();
  const ca = await makeCa(dir, 'trusted');
  const otherCa = await makeCa(dir, 'other');
  const loopback = ['IP:127.0.0.1', 'DNS:localhost'];
  return {
    ca,
    otherCa,
    certs: {
      good: await issueCert(ca, { dir, name: 'good', altNames: loopback }),
      foreign: await issueCert(otherCa, { dir, name: 'foreign', altNames: loopback }),
      'wrong-host': await issueCert(ca, { dir, name: 'wrong-host', altNames: ['DNS:mail.elsewhere.test'] }),
      expired: await issueCert(ca, { dir, name: 'expired', altNames: loopback, days: -1 }),
    },
  };
}

/**
 * Returns the run's TLS mail stack presenting the certificate `kind`, starting it on first use:
 * a Dovecot with TLS (STARTTLS on the IMAP port, imaps on its own port) and two SMTP relays
 * into it, one with implicit TLS and one with STARTTLS (AUTH only after the upgrade).
 */
export function getTlsMailStack(kind: TlsStackKind = 'good'): Promise<TlsMailStack> {
  const stacks = (tg.__ispTlsStacks ??= new Map());
  let p = stacks.get(kind);
  if (!p) {
    p = startTlsStack(kind).catch((e) => {
      stacks.delete(kind);
      throw e;
    });
    stacks.set(kind, p);
  }
  return p;
}

async function startTlsStack(kind: TlsStackKind): Promise<TlsMailStack> {
  const pki = await getTestPki();
  const cert = pki.certs[kind];
  // not under a 0700 dir: Dovecot's mail processes (user nobody) must reach it
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `isp-mail-tls-${kind}-`));
  registerCleanup(() => fs.rm(dir, { recursive: true, force: true }));
  const dovecot = await startDovecot({
    dir,
    authFailureDelaySeconds: 0,
    tls: { certFile: cert.certFile, keyFile: cert.keyFile },
    log: (l) => console.log(l),
  });
  registerCleanup(() => dovecot.stop());
  const relays = {} as Record<'ssl' | 'starttls', SmtpRelay>;
  for (const security of ['ssl', 'starttls'] as const) {
    const relay = await startSmtpRelay({
      authenticate: (u, p) => dovecot.checkPassword(u, p),
      isLocal: (a) => dovecot.hasUser(a),
      lmtp: { host: dovecot.host, port: dovecot.lmtpPort },
      security,
      tls: { cert: cert.certPem, key: cert.keyPem },
    });
    registerCleanup(() => relay.stop());
    relays[security] = relay;
  }
  const endpoints = {
    ssl: {
      imap: { host: dovecot.host, port: dovecot.imapsPort!, security: 'ssl' as const },
      smtp: { host: relays.ssl.host, port: relays.ssl.port, security: 'ssl' as const },
    },
    starttls: {
      imap: { host: dovecot.host, port: dovecot.imapPort, security: 'starttls' as const },
      smtp: { host: relays.starttls.host, port: relays.starttls.port, security: 'starttls' as const },
    },
  };
  let n = 0;
  return {
    kind,
    pki,
    endpoints,
    dovecot,
    relays,
    async newMailboxes(list) {
      const boxes = list.map((o) => ({
        email:
          `${o.local ?? 'tls'}-${process.pid}-${++n}-${crypto.randomBytes(3).toString('hex')}@mail.test`.toLowerCase(),
        password: o.password ?? `pw-${crypto.randomBytes(9).toString('base64url')}`,
        ...endpoints[o.security],
      }));
      await dovecot.addUsers(boxes);
      return boxes;
    },
    addMailbox: (email, password) => dovecot.addUser(email, password),
    async imapLoginLines(email) {
      const log = await fs.readFile(dovecot.logFile, 'utf8');
      const needle = `imap-login: Info: Login: user=<${email.toLowerCase()}>`;
      return log.split('\n').filter((l) => l.includes(needle));
    },
  };
}
