import { expect } from 'chai';
import nodemailer from 'nodemailer';
import { startSmtpRelay } from '../../../lib/infra/smtp-relay.js';
import { getMailStack, getTlsMailStack, type MailStack } from '../../helpers/mail.js';
import type { MailboxCredentials } from '../../../jobs/adapters/mailbox-client/index.js';

/** Submits over TLS: `ssl` = implicit TLS, `starttls` = STARTTLS required; the CA is trusted. */
async function submitTls(
  port: number,
  security: 'ssl' | 'starttls',
  ca: string,
  auth: { user: string; pass: string },
  to: string,
): Promise<number> {
  const t = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: security === 'ssl',
    requireTLS: security === 'starttls',
    tls: { ca, rejectUnauthorized: true },
    auth,
    logger: false,
  });
  try {
    await t.sendMail({ from: auth.user, to, subject: 'relay tls test', text: 'x' });
    return 250;
  } catch (e) {
    return (e as { responseCode?: number }).responseCode ?? -1;
  } finally {
    t.close();
  }
}

/** Submits one message to the relay; resolves to the SMTP reply code of the failure, or 250. */
async function submit(
  port: number,
  auth: { user: string; pass: string } | null,
  from: string,
  to: string,
): Promise<number> {
  const t = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    auth: auth ?? undefined,
    logger: false,
  });
  try {
    await t.sendMail({ from, to, subject: 'relay test', text: 'x' });
    return 250;
  } catch (e) {
    return (e as { responseCode?: number }).responseCode ?? -1;
  } finally {
    t.close();
  }
}

describe('lib/infra/smtp-relay.ts (the SMTP server of the tests and the demo)', () => {
  let stack: MailStack;
  let a: MailboxCredentials;
  let b: MailboxCredentials;

  before(async function () {
    this.timeout(60_000);
    stack = await getMailStack();
    [a, b] = await stack.newMailboxes([{ local: 'relay-a' }, { local: 'relay-b' }]);
  });

  it("delivers an authenticated submission over LMTP into the recipient's INBOX", async () => {
    expect(await submit(stack.smtp.port, { user: a.email, pass: a.password }, a.email, b.email)).to.equal(250);
    const c = await stack.openImap(b.email, b.password);
    try {
      const status = await c.status('INBOX', { messages: true });
      expect(status && status.messages).to.equal(1);
    } finally {
      await c.logout();
    }
  });

  it('refuses: no login (530), a wrong password (535), another sender (553), a non-local recipient (550)', async () => {
    expect(await submit(stack.smtp.port, null, a.email, b.email)).to.equal(530);
    expect(await submit(stack.smtp.port, { user: a.email, pass: 'wrong-password' }, a.email, b.email)).to.equal(535);
    expect(await submit(stack.smtp.port, { user: a.email, pass: a.password }, b.email, b.email)).to.equal(553);
    expect(
      await submit(stack.smtp.port, { user: a.email, pass: a.password }, a.email, 'someone@elsewhere.example'),
    ).to.equal(550);
  });

  it('nonLocal "discard" accepts and drops outside recipients while still delivering local ones', async () => {
    const relay = await startSmtpRelay({
      authenticate: (u, p) => stack.dovecot.checkPassword(u, p),
      isLocal: (x) => stack.dovecot.hasUser(x),
      nonLocal: 'discard',
      lmtp: stack.lmtp,
    });
    try {
      expect(
        await submit(relay.port, { user: a.email, pass: a.password }, a.email, 'someone@elsewhere.example'),
      ).to.equal(250);
      expect(relay.discarded).to.equal(1);
      expect(await submit(relay.port, { user: a.email, pass: a.password }, a.email, b.email)).to.equal(250);
      expect(relay.delivered).to.equal(2);
      const c = await stack.openImap(b.email, b.password);
      try {
        const status = await c.status('INBOX', { messages: true });
        expect(status && status.messages).to.equal(2);
      } finally {
        await c.logout();
      }
    } finally {
      await relay.stop();
    }
  });

  describe('TLS listeners', () => {
    it('"starttls": plaintext AUTH refused (538), works after STARTTLS; "ssl": TLS from byte one', async function () {
      this.timeout(30_000);
      const tlsStack = await getTlsMailStack('good');
      const ca = tlsStack.pki.ca.certPem;
      const [x, y] = await tlsStack.newMailboxes([
        { local: 'relay-tls-x', security: 'starttls' },
        { local: 'relay-tls-y', security: 'ssl' },
      ]);
      const ssl = tlsStack.relays.ssl;
      const starttls = tlsStack.relays.starttls;
      expect(starttls.security).to.equal('starttls');
      expect(await submit(starttls.port, { user: x.email, pass: x.password }, x.email, y.email)).to.equal(538);
      expect(await submitTls(starttls.port, 'starttls', ca, { user: x.email, pass: x.password }, y.email)).to.equal(
        250,
      );
      expect(await submitTls(ssl.port, 'ssl', ca, { user: y.email, pass: y.password }, x.email)).to.equal(250);
      // the plaintext attempt never reached the login check; both TLS logins did, under TLS
      expect(starttls.authAttempts.filter((a) => a.user === x.email)).to.deep.equal([{ user: x.email, secure: true }]);
      expect(ssl.authAttempts.filter((a) => a.user === y.email)).to.deep.equal([{ user: y.email, secure: true }]);
    });

    it('the plaintext relay offers no STARTTLS and records its logins as not secure', async () => {
      const [p] = await stack.newMailboxes([{ local: 'relay-plain' }]);
      expect(stack.relay.security).to.equal('none');
      expect(await submit(stack.smtp.port, { user: p.email, pass: p.password }, p.email, p.email)).to.equal(250);
      expect(stack.relay.authAttempts.filter((a) => a.user === p.email)).to.deep.equal([
        { user: p.email, secure: false },
      ]);
    });

    it('refuses to start a TLS listener without a certificate', async () => {
      let err: Error | null = null;
      try {
        await startSmtpRelay({ authenticate: () => false, lmtp: stack.lmtp, security: 'ssl' });
      } catch (e) {
        err = e as Error;
      }
      expect(err?.message).to.equal("smtp relay: security 'ssl' needs tls.cert and tls.key");
    });
  });
});
