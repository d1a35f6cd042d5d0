import { expect } from 'chai';
import nodemailer from 'nodemailer';
import { startSmtpRelay } from '../../../lib/infra/smtp-relay.js';
import { getMailStack, type MailStack } from '../../helpers/mail.js';
import type { MailboxCredentials } from '../../../jobs/adapters/mailbox-client/index.js';

/** Submits one message to the relay; resolves to the SMTP reply code of the failure, or 250. */
async function submit(port: number, auth: { user: string; pass: string } | null, from: string, to: string): Promise<number> {
  const t = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, auth: auth ?? undefined, logger: false });
  try {
    await t.sendMail({ from, to, subject: 'relay test', text: 'x' });
    return 250;
  } catch (e) {
    return (e as { responseCode?: number }).responseCode ?? -1;
  } finally { t.close(); }
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

  it('delivers an authenticated submission over LMTP into the recipient\'s INBOX', async () => {
    expect(await submit(stack.smtp.port, { user: a.email, pass: a.password }, a.email, b.email)).to.equal(250);
    const c = await stack.openImap(b.email, b.password);
    try {
      const status = await c.status('INBOX', { messages: true });
      expect(status && status.messages).to.equal(1);
    } finally { await c.logout(); }
  });

  it('refuses: no login (530), a wrong password (535), another sender (553), a non-local recipient (550)', async () => {
    expect(await submit(stack.smtp.port, null, a.email, b.email)).to.equal(530);
    expect(await submit(stack.smtp.port, { user: a.email, pass: 'wrong-password' }, a.email, b.email)).to.equal(535);
    expect(await submit(stack.smtp.port, { user: a.email, pass: a.password }, b.email, b.email)).to.equal(553);
    expect(await submit(stack.smtp.port, { user: a.email, pass: a.password }, a.email, 'someone@elsewhere.example')).to.equal(550);
  });

  it('nonLocal "discard" accepts and drops outside recipients while still delivering local ones', async () => {
    const relay = await startSmtpRelay({
      authenticate: (u, p) => stack.dovecot.checkPassword(u, p), isLocal: (x) => stack.dovecot.hasUser(x), nonLocal: 'discard', lmtp: stack.lmtp,
    });
    try {
      expect(await submit(relay.port, { user: a.email, pass: a.password }, a.email, 'someone@elsewhere.example')).to.equal(250);
      expect(relay.discarded).to.equal(1);
      expect(await submit(relay.port, { user: a.email, pass: a.password }, a.email, b.email)).to.equal(250);
      expect(relay.delivered).to.equal(2);
      const c = await stack.openImap(b.email, b.password);
      try {
        const status = await c.status('INBOX', { messages: true });
        expect(status && status.messages).to.equal(2);
      } finally { await c.logout(); }
    } finally { await relay.stop(); }
  });
});
