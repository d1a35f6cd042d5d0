import { expect } from 'chai';
import type { ImapFlow } from 'imapflow';
import { createMailboxClient, type MailboxClient } from '../../../jobs/adapters/mailbox-client/index.js';
import { getMailStack, type MailStack } from '../../helpers/mail.js';
import { registerCleanup } from '../../helpers/env.js';
import {
  SENTINEL_MAILBOX_PASSWORD as PW,
  captureLogger,
  enc,
  makeDomain,
  makeKey,
  makeMailbox,
  startMailTestApp,
  uniq,
  type MailTestApp,
} from './support.js';

/** Raw header block of a message -> lowercase name -> unfolded value (first occurrence). */
function headersOf(raw: Buffer | string): Record<string, string> {
  const out: Record<string, string> = {};
  const text = raw
    .toString()
    .split(/\r?\n\r?\n/)[0]
    .replace(/\r?\n[ \t]+/g, ' ');
  for (const line of text.split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i).toLowerCase()] ??= line.slice(i + 1).trim();
  }
  return out;
}

/** Waits (bounded) until a message with this Message-ID is in `folder`; returns its headers and flags. */
async function findByMessageId(
  c: ImapFlow,
  folder: string,
  messageId: string,
): Promise<{ uid: number; headers: Record<string, string>; flags: Set<string> }> {
  for (let i = 0; i < 50; i++) {
    const lock = await c.getMailboxLock(folder);
    try {
      const uids = await c.search({ header: { 'message-id': messageId } }, { uid: true });
      if (uids && uids.length) {
        const m = await c.fetchOne(String(uids[0]), { uid: true, headers: true, flags: true }, { uid: true });
        if (m && m.headers) return { uid: m.uid, headers: headersOf(m.headers), flags: m.flags ?? new Set() };
      }
    } finally {
      lock.release();
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no message ${messageId} in ${folder}`);
}

async function sentFolder(c: ImapFlow): Promise<string> {
  const boxes = await c.list();
  const sent = boxes.find((b) => b.specialUse === '\\Sent') ?? boxes.find((b) => b.path.toLowerCase() === 'sent');
  if (!sent) throw new Error('no Sent folder');
  return sent.path;
}

describe('Mailbox API: e-mail endpoints against real Dovecot and SMTP (document 3 "Endpoints")', () => {
  let app: MailTestApp;
  let stack: MailStack;
  let client: MailboxClient;
  let box: { id: number; email: string };
  let second: { id: number; email: string };
  let bulk: { id: number; email: string };
  let sender: string;
  const ccAddress = `cc-${uniq()}@outside.test`;
  let key: string;
  const origId = `<orig-${uniq()}@outside.test>`;
  const rootId = `<root-${uniq()}@outside.test>`;

  before(async function () {
    this.timeout(120_000);
    stack = await getMailStack();
    client = createMailboxClient({ idleMs: 2000, logger: captureLogger() });
    registerCleanup(() => client.close());
    app = await startMailTestApp({ mailClient: client });
    const domain = await makeDomain({ imap: stack.imap, smtp: stack.smtp });
    box = await makeMailbox(domain, `inbox-${uniq()}`);
    second = await makeMailbox(domain, `second-${uniq()}`);
    bulk = await makeMailbox(domain, `bulk-${uniq()}`);
    sender = `sender-${uniq()}@outside.test`;
    for (const e of [box.email, second.email, bulk.email, sender]) await stack.addMailbox(e, PW);
    for (let i = 1; i <= 25; i++)
      await stack.deliver({ from: sender, to: bulk.email, subject: `Bulk ${i}`, text: `message ${i}` });
    await stack.deliver({ from: sender, to: box.email, subject: 'First', text: 'one' });
    await stack.deliver({ from: sender, to: box.email, subject: 'Second', text: 'two', cc: ccAddress });
    await stack.deliver({
      from: sender,
      to: box.email,
      subject: 'Question',
      text: 'Can you help?',
      html: '<p>Can you <b>help</b>?</p>',
      messageId: origId,
      references: rootId,
      attachments: [{ filename: 'notes.txt', content: 'attached text', contentType: 'text/plain' }],
    });
    key = (await makeKey(domain, [box.id, second.id, bulk.id], ['emails:read', 'emails:reply', 'emails:send'])).key;
  });

  it("GET /api/v1/mailboxes lists the key's mailboxes with their IMAP and SMTP hosts", async () => {
    const res = await app.request('GET', '/api/v1/mailboxes', { key });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      data: [box.email, second.email, bulk.email]
        .sort()
        .map((email) => ({ email, imap_host: stack.imap.host, smtp_host: stack.smtp.host })),
    });
  });

  it("lists e-mails newest first with document 3's summary fields; limit bounds the count", async () => {
    const res = await app.request('GET', `/api/v1/mailboxes/${enc(box.email)}/emails`, { key, password: PW });
    expect(res.status).to.equal(200);
    expect(res.body.data.map((e: { subject: string }) => e.subject)).to.deep.equal(['Question', 'Second', 'First']);
    const q = res.body.data[0];
    expect(q.id).to.match(/^[1-9][0-9]*$/);
    expect(Number(res.body.data[0].id)).to.be.greaterThan(Number(res.body.data[1].id));
    expect(q.from).to.include(sender);
    expect(q.to).to.include(box.email);
    expect(q.message_id).to.equal(origId);
    expect(q.date).to.match(/^[A-Z][a-z]{2}, \d{1,2} [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d [+-]\d{4}$/);
    const two = await app.request('GET', `/api/v1/mailboxes/${enc(box.email)}/emails?limit=2`, { key, password: PW });
    expect(two.body.data.map((e: { subject: string }) => e.subject)).to.deep.equal(['Question', 'Second']);
    const empty = await app.request('GET', `/api/v1/mailboxes/${enc(second.email)}/emails`, { key, password: PW });
    expect(empty.body).to.deep.equal({ data: [] });
  });

  it('limit defaults to 20 (the newest) and goes up to 100', async () => {
    const def = await app.request('GET', `/api/v1/mailboxes/${enc(bulk.email)}/emails`, { key, password: PW });
    expect(def.status).to.equal(200);
    expect(def.body.data.map((e: { subject: string }) => e.subject)).to.deep.equal(
      Array.from({ length: 20 }, (_, i) => `Bulk ${25 - i}`),
    );
    const max = await app.request('GET', `/api/v1/mailboxes/${enc(bulk.email)}/emails?limit=100`, {
      key,
      password: PW,
    });
    expect(max.status).to.equal(200);
    expect(max.body.data).to.have.length(25);
    expect(max.body.data.at(-1).subject).to.equal('Bulk 1');
  });

  it('the detail carries cc and the RFC 2822 date of the message', async () => {
    const list = await app.request('GET', `/api/v1/mailboxes/${enc(box.email)}/emails`, { key, password: PW });
    const s = list.body.data.find((e: { subject: string }) => e.subject === 'Second');
    const res = await app.request('GET', `/api/v1/mailboxes/${enc(box.email)}/emails/${s.id}`, { key, password: PW });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({
      id: s.id,
      subject: 'Second',
      cc: ccAddress,
      date: s.date,
      in_reply_to: '',
      reply_to: '',
    });
    expect(res.body.data.text.trim()).to.equal('two');
  });

  it('reads one e-mail (document 3 detail + parsed fields) and unseen=1 drops it afterwards', async () => {
    const before = await app.request('GET', `/api/v1/mailboxes/${enc(box.email)}/emails?unseen=1`, {
      key,
      password: PW,
    });
    const q = before.body.data.find((e: { subject: string }) => e.subject === 'Question');
    expect(q).to.be.an('object');
    const res = await app.request('GET', `/api/v1/mailboxes/${enc(box.email)}/emails/${q.id}`, { key, password: PW });
    expect(res.status).to.equal(200);
    const d = res.body.data;
    expect(d).to.include({ id: q.id, subject: 'Question', message_id: origId, references: rootId });
    expect(d.from).to.include(sender);
    expect(d.to).to.include(box.email);
    expect(d.body_raw).to.match(/^[\s\S]*Message-ID: <orig-/i);
    expect(d.body_raw).to.include('Subject: Question');
    expect(d.text.trim()).to.equal('Can you help?');
    expect(d.html).to.include('<b>help</b>');
    expect(d.attachments).to.deep.equal([
      { filename: 'notes.txt', content_type: 'text/plain', size: 13, content_id: d.attachments[0].content_id },
    ]);
    const after = await app.request('GET', `/api/v1/mailboxes/${enc(box.email)}/emails?unseen=true`, {
      key,
      password: PW,
    });
    expect(after.body.data.map((e: { id: string }) => e.id)).not.to.include(q.id);
    expect(after.body.data).to.have.length(before.body.data.length - 1);
    const all = await app.request('GET', `/api/v1/mailboxes/${enc(box.email)}/emails?unseen=0`, { key, password: PW });
    expect(all.body.data).to.have.length(3);
  });

  it('replies in the thread: the recipient gets Re: subject, In-Reply-To and References; the original is \\Answered; a copy is in Sent', async function () {
    this.timeout(30_000);
    const list = await app.request('GET', `/api/v1/mailboxes/${enc(box.email)}/emails`, { key, password: PW });
    const q = list.body.data.find((e: { subject: string }) => e.subject === 'Question');
    const res = await app.request('POST', `/api/v1/mailboxes/${enc(box.email)}/emails/${q.id}/reply`, {
      key,
      body: { body: 'Yes, we can.', mailbox_password: PW },
    });
    expect(res.status).to.equal(200);
    expect(res.body.ok).to.equal(true);
    expect(res.body.message_id).to.match(/^<[^<>@\s]+@[^<>\s]+>$/);
    const s = await stack.openImap(sender, PW);
    const b = await stack.openImap(box.email, PW);
    try {
      const got = await findByMessageId(s, 'INBOX', res.body.message_id);
      expect(got.headers.subject).to.equal('Re: Question');
      expect(got.headers['in-reply-to']).to.equal(origId);
      expect(got.headers.references.split(/\s+/)).to.deep.equal([rootId, origId]);
      expect(got.headers.from).to.include(box.email);
      const original = await findByMessageId(b, 'INBOX', origId);
      expect([...original.flags]).to.include('\\Answered');
      const copy = await findByMessageId(b, await sentFolder(b), res.body.message_id);
      expect(copy.headers.subject).to.equal('Re: Question');
    } finally {
      await s.logout();
      await b.logout();
    }
  });

  it('sends a new e-mail: the recipient receives it and a copy is in Sent', async function () {
    this.timeout(30_000);
    const subject = `Hello ${uniq()}`;
    const res = await app.request('POST', `/api/v1/mailboxes/${enc(box.email)}/send`, {
      key,
      password: PW,
      body: { to: second.email, subject, body: 'A new message.' },
    });
    expect(res.status).to.equal(200);
    expect(res.body).to.have.keys(['ok', 'message_id']);
    expect(res.body.ok).to.equal(true);
    const list = await app.request('GET', `/api/v1/mailboxes/${enc(second.email)}/emails`, { key, password: PW });
    const got = list.body.data.find((e: { message_id: string }) => e.message_id === res.body.message_id);
    expect(got).to.include({ subject });
    expect(got.from).to.include(box.email);
    const b = await stack.openImap(box.email, PW);
    try {
      const copy = await findByMessageId(b, await sentFolder(b), res.body.message_id);
      expect(copy.headers.to).to.include(second.email);
    } finally {
      await b.logout();
    }
  });

  it('never echoes the mailbox password in any answer', async () => {
    const answers = [
      await app.request('GET', `/api/v1/mailboxes/${enc(box.email)}/emails`, { key, password: PW }),
      await app.request('POST', `/api/v1/mailboxes/${enc(box.email)}/send`, {
        key,
        body: { mailbox_password: PW, to: 'bad', subject: 'x', body: 'y' },
      }),
      await app.request('POST', `/api/v1/mailboxes/${enc(box.email)}/emails/1/reply`, {
        key,
        body: { mailbox_password: PW },
      }),
    ];
    for (const a of answers) {
      expect(a.text).not.to.include(PW);
      for (const [, v] of a.headers) expect(v).not.to.include(PW);
    }
    expect(answers[1].status).to.equal(422);
  });
});
