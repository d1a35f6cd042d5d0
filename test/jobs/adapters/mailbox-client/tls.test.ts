import { expect } from 'chai';
import crypto from 'node:crypto';
import {
  classifyImapError,
  classifySmtpError,
  classifyTlsError,
  createMailboxClient,
  mailTls,
  MailAuthError,
  MailServerError,
  type MailboxClient,
  type MailboxCredentials,
} from '../../../../jobs/adapters/mailbox-client/index.js';
import { getMailStack, getTestPki, getTlsMailStack, type TestPki, type TlsMailStack } from '../../../helpers/mail.js';

async function caught(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

/** Polls `read` every 20 ms until `done` holds or `ms` pass; returns the last value (the caller asserts on it). */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 5000): Promise<T> {
  let v = await read();
  for (const end = Date.now() + ms; !done(v) && Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 20));
    v = await read();
  }
  return v;
}

const CERT_TEXT = 'TLS certificate of the mail server could not be verified';

describe('mailbox client: TLS and STARTTLS both ways (Dovecot + SMTP relay, test CA, verification on)', () => {
  let pki: TestPki;
  let good: TlsMailStack;
  let client: MailboxClient;
  const warnings: string[] = [];
  // the mailbox password of the failure cases: it must appear in none of their errors
  const SENTINEL = `Sentinel-TLS-${crypto.randomBytes(8).toString('hex')}`;
  const errors: Error[] = [];

  before(async function () {
    this.timeout(60_000);
    pki = await getTestPki();
    good = await getTlsMailStack('good');
    const logger = {
      warn: (_o: object, msg: string) => {
        warnings.push(msg);
      },
    };
    client = createMailboxClient({ tls: { ca: pki.ca.certPem }, logger });
  });
  after(() => client.close());

  for (const mode of ['ssl', 'starttls'] as const) {
    it(`${mode}: sends over SMTP and lists over IMAP, every login encrypted, the Sent copy saved`, async function () {
      this.timeout(20_000);
      const [a, b] = await good.newMailboxes([
        { local: `${mode}-a`, security: mode },
        { local: `${mode}-b`, security: mode },
      ]);
      expect(a.imap.security).to.equal(mode);
      expect(a.smtp.security).to.equal(mode);
      const subject = `over ${mode} ${crypto.randomBytes(4).toString('hex')}`;
      const sent = await client.send(a, { to: b.email, subject, body: 'sent under TLS' });

      const inbox = await client.listEmails(b, { limit: 5, unseen: false });
      expect(inbox.map((m) => [m.subject, m.message_id, m.from])).to.deep.equal([[subject, sent.message_id, a.email]]);
      const detail = await client.getEmail(b, inbox[0].id);
      expect(detail.text?.trim()).to.equal('sent under TLS');
      // the Sent copy went over IMAP with the same TLS settings: no warning about it
      expect(warnings).to.deep.equal([]);

      // the relay saw exactly one AUTH of the sender, inside TLS
      expect(good.relays[mode].authAttempts.filter((x) => x.user === a.email)).to.deep.equal([
        { user: a.email, secure: true },
      ]);
      // Dovecot logged one login per mailbox (pooled connection), each marked TLS
      for (const box of [a, b]) {
        const lines = await until(
          () => good.imapLoginLines(box.email),
          (l) => l.length > 0,
        );
        expect(lines, box.email).to.have.length(1);
        expect(lines[0]).to.match(/, TLS, /);
      }
    });
  }

  describe('a certificate the client cannot verify gives MailServerError on all four paths, never a login', () => {
    const cases: { kind: 'foreign' | 'wrong-host' | 'expired'; code: string; reason: string }[] = [
      { kind: 'foreign', code: 'TLS_CERT_UNTRUSTED', reason: 'not issued by a trusted certificate authority' },
      { kind: 'wrong-host', code: 'TLS_CERT_HOSTNAME', reason: 'issued for another host name' },
      { kind: 'expired', code: 'TLS_CERT_EXPIRED', reason: 'expired' },
    ];
    for (const c of cases) {
      it(`${c.kind} certificate -> ${c.code} (IMAP and SMTP, ssl and starttls)`, async function () {
        this.timeout(30_000);
        const stack = await getTlsMailStack(c.kind);
        const boxes = await stack.newMailboxes([
          { local: `${c.kind}-ssl`, security: 'ssl', password: SENTINEL },
          { local: `${c.kind}-starttls`, security: 'starttls', password: SENTINEL },
        ]);
        for (const box of boxes) {
          const paths: ['imap' | 'smtp', () => Promise<unknown>][] = [
            ['imap', () => client.listEmails(box, { limit: 5, unseen: false })],
            ['smtp', () => client.send(box, { to: box.email, subject: 'never sent', body: 'x' })],
          ];
          for (const [protocol, call] of paths) {
            const err = await caught(call());
            errors.push(err);
            const where = `${box.imap.security} ${protocol}`;
            expect(err, where).to.be.instanceOf(MailServerError);
            expect(err, where).to.not.be.instanceOf(MailAuthError);
            expect((err as MailServerError).protocol, where).to.equal(protocol);
            expect((err as MailServerError).code, where).to.equal(c.code);
            expect(err.message, where).to.equal(`${CERT_TEXT} (${protocol.toUpperCase()}: ${c.reason})`);
          }
        }
        // nothing got past the handshake: no AUTH at either relay, no IMAP login, nothing delivered
        expect(stack.relays.ssl.authAttempts).to.deep.equal([]);
        expect(stack.relays.starttls.authAttempts).to.deep.equal([]);
        expect(stack.relays.ssl.delivered + stack.relays.starttls.delivered).to.equal(0);
        for (const box of boxes) expect(await stack.imapLoginLines(box.email)).to.deep.equal([]);
      });
    }

    it("the test CA not trusted (a client with Node's built-in roots only) -> TLS_CERT_UNTRUSTED", async function () {
      this.timeout(20_000);
      const plain = createMailboxClient();
      try {
        const boxes = await good.newMailboxes([
          { local: 'noca-ssl', security: 'ssl', password: SENTINEL },
          { local: 'noca-starttls', security: 'starttls', password: SENTINEL },
        ]);
        for (const box of boxes) {
          const calls = [
            () => plain.listEmails(box, { limit: 5, unseen: false }),
            () => plain.send(box, { to: box.email, subject: 's', body: 'b' }),
          ];
          for (const call of calls) {
            const err = await caught(call());
            errors.push(err);
            expect(err).to.be.instanceOf(MailServerError);
            expect((err as MailServerError).code).to.equal('TLS_CERT_UNTRUSTED');
            expect(err.message).to.contain(CERT_TEXT);
          }
          expect(await good.imapLoginLines(box.email)).to.deep.equal([]);
          const attempts = [...good.relays.ssl.authAttempts, ...good.relays.starttls.authAttempts];
          expect(attempts.filter((x) => x.user === box.email)).to.deep.equal([]);
        }
      } finally {
        await plain.close();
      }
    });
  });

  describe('STARTTLS required but not offered: no fallback to plaintext', () => {
    it('IMAP and SMTP fail with STARTTLS_UNAVAILABLE and the password is never sent', async function () {
      this.timeout(20_000);
      const plainStack = await getMailStack();
      const box = await plainStack.newMailbox({ local: 'nostarttls' });
      const wantsTls: MailboxCredentials = {
        ...box,
        imap: { ...box.imap, security: 'starttls' },
        smtp: { ...box.smtp, security: 'starttls' },
      };
      const deliveredBefore = plainStack.relay.delivered;
      const imapErr = await caught(client.listEmails(wantsTls, { limit: 5, unseen: false }));
      const smtpErr = await caught(client.send(wantsTls, { to: box.email, subject: 'never sent', body: 'x' }));
      errors.push(imapErr, smtpErr);
      for (const [err, protocol] of [
        [imapErr, 'imap'],
        [smtpErr, 'smtp'],
      ] as const) {
        expect(err, protocol).to.be.instanceOf(MailServerError);
        expect((err as MailServerError).protocol).to.equal(protocol);
        expect((err as MailServerError).code).to.equal('STARTTLS_UNAVAILABLE');
        expect(err.message).to.equal(
          `The ${protocol.toUpperCase()} server does not offer STARTTLS, which this mailbox ` +
            'requires; nothing was sent without TLS',
        );
      }
      // the same mailbox over plaintext ('none') does log in: the refusal above was not about the password
      expect(await client.listEmails(box, { limit: 5, unseen: false })).to.deep.equal([]);
      const logins = await until(
        () => plainStack.imapLogins(box.email),
        (n) => n > 0,
      );
      expect(logins).to.equal(1);
      expect(plainStack.relay.authAttempts.filter((x) => x.user === box.email)).to.deep.equal([]);
      expect(plainStack.relay.delivered).to.equal(deliveredBefore);
    });

    it('ssl against a plaintext port fails the handshake (TLS_HANDSHAKE), no login', async function () {
      this.timeout(20_000);
      const plainStack = await getMailStack();
      const box = await plainStack.newMailbox({ local: 'sslonplain', password: SENTINEL });
      const wantsSsl: MailboxCredentials = {
        ...box,
        imap: { ...box.imap, security: 'ssl' },
        smtp: { ...box.smtp, security: 'ssl' },
      };
      const imapErr = await caught(client.listEmails(wantsSsl, { limit: 5, unseen: false }));
      const smtpErr = await caught(client.send(wantsSsl, { to: box.email, subject: 'never sent', body: 'x' }));
      errors.push(imapErr, smtpErr);
      for (const [err, protocol] of [
        [imapErr, 'imap'],
        [smtpErr, 'smtp'],
      ] as const) {
        expect(err, protocol).to.be.instanceOf(MailServerError);
        expect((err as MailServerError).code, protocol).to.equal('TLS_HANDSHAKE');
        expect(err.message).to.equal(`TLS handshake with the ${protocol.toUpperCase()} server failed`);
      }
      expect(await plainStack.imapLogins(box.email)).to.equal(0);
      expect(plainStack.relay.authAttempts.filter((x) => x.user === box.email)).to.deep.equal([]);
    });
  });

  describe('pure rules', () => {
    it('mailTls: verification always on; servername only for host names; one context with the extra CA', () => {
      const forHost = mailTls({ ca: pki.ca.certPem });
      const byName = forHost('mail.example.test');
      expect(byName.rejectUnauthorized).to.equal(true);
      expect(byName.servername).to.equal('mail.example.test');
      expect(byName.minVersion).to.equal('TLSv1.2');
      expect(byName.secureContext).to.not.equal(undefined);
      const byIp = forHost('127.0.0.1');
      expect(byIp.rejectUnauthorized).to.equal(true);
      expect('servername' in byIp).to.equal(false);
      // one secure context for every connection of the client
      expect(byIp.secureContext).to.equal(byName.secureContext);
      const defaults = mailTls()('mail.example.test');
      expect(defaults).to.deep.equal({
        rejectUnauthorized: true,
        minVersion: 'TLSv1.2',
        servername: 'mail.example.test',
      });
    });

    it('mailTls / createMailboxClient refuse a CA option that is not PEM certificate text', () => {
      expect(() => mailTls({ ca: 'not a certificate' })).to.throw(/tls\.ca must be PEM/);
      const broken = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
      expect(() => createMailboxClient({ tls: { ca: [pki.ca.certPem, broken] } })).to.throw(
        'mailbox client: tls.ca could not be read as PEM certificates',
      );
    });

    it("classifies certificate failures by code, by nodemailer's originalCode and by its STARTTLS message", () => {
      const selfSigned = Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
      const byCode = classifyImapError(selfSigned);
      expect([byCode.constructor, (byCode as MailServerError).code, byCode.message]).to.deep.equal([
        MailServerError,
        'TLS_CERT_UNTRUSTED',
        `${CERT_TEXT} (IMAP: not issued by a trusted certificate authority)`,
      ]);
      const byOriginal = classifySmtpError({ code: 'ESOCKET', originalCode: 'CERT_NOT_YET_VALID', message: 'x' });
      expect((byOriginal as MailServerError).code).to.equal('TLS_CERT_NOT_YET_VALID');
      const wrapped = classifySmtpError({
        code: 'ETLS',
        command: 'STARTTLS',
        message: 'Error initiating TLS - certificate has expired',
      });
      expect([(wrapped as MailServerError).code, wrapped.message]).to.deep.equal([
        'TLS_CERT_EXPIRED',
        `${CERT_TEXT} (SMTP: expired)`,
      ]);
      const altname = classifySmtpError({
        code: 'ETLS',
        message: "Error initiating TLS - Hostname/IP does not match certificate's altnames: x",
      });
      expect((altname as MailServerError).code).to.equal('TLS_CERT_HOSTNAME');
    });

    it('leaves other errors to the usual rules (auth stays auth, network stays network)', () => {
      expect(classifyTlsError({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' }, 'imap')).to.equal(null);
      expect(classifyTlsError({ code: 'toString', message: 'x' }, 'imap')).to.equal(null);
      expect(classifyTlsError({ code: 'EAUTH', responseCode: 535, message: 'Invalid login' }, 'smtp')).to.equal(null);
      // a server text mentioning certificates is not a TLS failure unless the error comes from the TLS layer
      const serverText = { responseText: 'certificate required', message: 'certificate required' };
      expect(classifyTlsError(serverText, 'imap')).to.equal(null);
      const smtpReply = { code: 'ECONNECTION', response: '421 client certificate required', message: 'certificate' };
      expect(classifyTlsError(smtpReply, 'smtp')).to.equal(null);
      expect(classifyImapError({ authenticationFailed: true })).to.be.instanceOf(MailAuthError);
    });
  });

  describe('secrets', () => {
    it('the sentinel password appears in none of the errors above', () => {
      expect(errors.length).to.equal(3 * 4 + 4 + 2 + 2);
      for (const e of errors) {
        const cause = String((e as { cause?: unknown }).cause ?? '');
        const dump = `${e.name} ${e.message} ${e.stack} ${JSON.stringify(e)} ${cause}`;
        expect(dump).to.not.contain(SENTINEL);
      }
    });
  });
});
