import {
  EmailNotFoundError,
  MailAuthError,
  MailServerError,
  type EmailDetail,
  type EmailSummary,
  type MailboxClient,
  type MailboxCredentials,
} from '../../../jobs/adapters/mailbox-client/index.js';

/**
 * An in-memory MailboxClient implementing the contract: one INBOX per address, the right password
 * per address, a `down` switch (-> MailServerError). Records every call without the password.
 */
export class FakeMailboxClient implements MailboxClient {
  passwords = new Map<string, string>();
  inbox = new Map<string, EmailDetail[]>();
  down = false;
  calls: { method: string; email: string; passwordMatched: boolean; args: unknown }[] = [];
  sent: { email: string; to: string; subject: string; body: string }[] = [];

  private check(c: MailboxCredentials, method: string, args: unknown) {
    const ok = this.passwords.get(c.email) === c.password;
    this.calls.push({ method, email: c.email, passwordMatched: ok, args });
    if (this.down) throw new MailServerError('imap', 'ECONNREFUSED', 'IMAP connection failed (ECONNREFUSED)');
    if (!ok) throw new MailAuthError('imap');
  }

  addMessage(email: string, m: Partial<EmailDetail> & { subject: string }): EmailDetail {
    const box = this.inbox.get(email) ?? [];
    const id = String(box.length + 1);
    const full: EmailDetail = {
      id,
      from: 'sender@example.test',
      to: email,
      cc: '',
      date: 'Mon, 2 Nov 2026 10:00:00 +0000',
      message_id: `<m${id}.${email}>`,
      references: '',
      in_reply_to: '',
      reply_to: '',
      body_raw: `Subject: ${m.subject}\r\n\r\nhello`,
      text: 'hello',
      html: null,
      attachments: [],
      ...m,
    };
    box.push(full);
    this.inbox.set(email, box);
    return full;
  }

  seen = new Set<string>();

  async listEmails(c: MailboxCredentials, o: { limit: number; unseen: boolean }): Promise<EmailSummary[]> {
    this.check(c, 'listEmails', o);
    return [...(this.inbox.get(c.email) ?? [])]
      .reverse()
      .filter((m) => !o.unseen || !this.seen.has(`${c.email}/${m.id}`))
      .slice(0, o.limit)
      .map((m) => ({
        id: m.id,
        from: m.from,
        to: m.to,
        subject: m.subject,
        date: m.date,
        message_id: m.message_id,
        seen: this.seen.has(`${c.email}/${m.id}`),
      }));
  }

  async getEmail(c: MailboxCredentials, uid: string): Promise<EmailDetail> {
    this.check(c, 'getEmail', uid);
    const m = (this.inbox.get(c.email) ?? []).find((x) => x.id === uid);
    if (!m) throw new EmailNotFoundError(uid);
    this.seen.add(`${c.email}/${uid}`);
    return m;
  }

  async reply(c: MailboxCredentials, uid: string, o: { body: string }): Promise<{ message_id: string }> {
    this.check(c, 'reply', { uid, ...o });
    const m = (this.inbox.get(c.email) ?? []).find((x) => x.id === uid);
    if (!m) throw new EmailNotFoundError(uid);
    this.sent.push({ email: c.email, to: m.from, subject: `Re: ${m.subject}`, body: o.body });
    return { message_id: `<reply-${this.sent.length}@fake.test>` };
  }

  async send(c: MailboxCredentials, o: { to: string; subject: string; body: string }): Promise<{ message_id: string }> {
    this.check(c, 'send', o);
    this.sent.push({ email: c.email, ...o });
    return { message_id: `<sent-${this.sent.length}@fake.test>` };
  }

  async verifyLogin(c: MailboxCredentials): Promise<void> {
    this.check(c, 'verifyLogin', null);
  }

  async close(): Promise<void> {
    /* nothing pooled */
  }
}
