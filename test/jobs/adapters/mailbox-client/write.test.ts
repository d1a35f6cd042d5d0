import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import {
  createMailboxClient,
  type MailboxClient,
  type MailboxCredentials,
} from '../../../../jobs/adapters/mailbox-client/index.js';
import { getMailStack, type MailStack } from '../../../helpers/mail.js';

/** Every message of a folder of `box`, read over a separate IMAP login: parsed headers, raw header text, flags. */
async function readFolder(stack: MailStack, box: MailboxCredentials, folder: string) {
  const c = await stack.openImap(box.email, box.password);
  try {
    const lock = await c.getMailboxLock(folder);
    try {
      if (!c.mailbox || !c.mailbox.exists) return [];
      const msgs = await c.fetchAll('1:*', { uid: true, source: true, flags: true });
      return Promise.all(
        msgs.map(async (m) => {
          const source = m.source!.toString('utf8');
          const parsed = await simpleParser(m.source!);
          const headerText = source.slice(0, source.indexOf('\r\n\r\n'));
          return { uid: m.uid, flags: [...(m.flags ?? [])], parsed, headerText };
        }),
      );
    } finally {
      lock.release();
    }
  } finally {
    await c.logout();
  }
}

/** The unfolded value of a raw header line. */
function rawHeader(headerText: string, name: string): string | undefined {
  const m = headerText.replace(/\r\n[ \t]+/g, ' ').match(new RegExp(`^${name}: (.*)$`, 'mi'));
  return m?.[1].trim();
}

describe('mailbox client: reply and send (real Dovecot + SMTP relay)', () => {
  let stack: MailStack;
  let client: MailboxClient;
  let desk: MailboxCredentials;
  let customer: MailboxCredentials;
  let replies: MailboxCredentials;
  let other: MailboxCredentials;

  before(async function () {
    this.timeout(60_000);
    stack = await getMailStack();
    client = createMailboxClient();
    [desk, customer, replies, other] = await stack.newMailboxes([
      { local: 'desk', domain: 'shop.test' },
      { local: 'customer' },
      { local: 'replies' },
      { local: 'other' },
    ]);
  });
  after(() => client.close());

  it("reply: threads per RFC 5322 §3.6.4, does not stack Re:, lands in the sender's INBOX, is copied to Sent and flags the original \\Answered", async () => {
    await stack.deliver({
      from: `Customer <${customer.email}>`,
      to: desk.email,
      subject: 'Re: Order 42',
      text: 'Where is my order?',
      messageId: '<orig-42@customer.test>',
      inReplyTo: '<parent-42@shop.test>',
      references: ['<root-42@customer.test>', '<parent-42@shop.test>'],
    });
    const [orig] = await client.listEmails(desk, { limit: 1, unseen: false });
    expect(orig.message_id).to.equal('<orig-42@customer.test>');

    const res = await client.reply(desk, orig.id, { body: 'It ships tomorrow.' });
    expect(res.message_id).to.match(/^<[0-9a-f-]{36}@shop\.test>$/);

    const inbox = await readFolder(stack, customer, 'INBOX');
    const got = inbox.find((m) => m.parsed.messageId === res.message_id);
    expect(got, 'reply delivered to the customer').to.not.equal(undefined);
    expect(rawHeader(got!.headerText, 'In-Reply-To')).to.equal('<orig-42@customer.test>');
    expect(rawHeader(got!.headerText, 'References')).to.equal(
      '<root-42@customer.test> <parent-42@shop.test> <orig-42@customer.test>',
    );
    expect(rawHeader(got!.headerText, 'Subject')).to.equal('Re: Order 42');
    expect(got!.parsed.from?.value[0].address).to.equal(desk.email);
    expect(
      got!.parsed.to && !Array.isArray(got!.parsed.to) ? got!.parsed.to.value.map((a) => a.address) : null,
    ).to.deep.equal([customer.email]);
    expect(got!.parsed.text?.trim()).to.equal('It ships tomorrow.');

    const deskInbox = await readFolder(stack, desk, 'INBOX');
    expect(deskInbox.find((m) => String(m.uid) === orig.id)!.flags).to.include('\\Answered');

    const sent = await readFolder(stack, desk, 'Sent');
    const copy = sent.find((m) => m.parsed.messageId === res.message_id);
    expect(copy, 'copy in Sent').to.not.equal(undefined);
    expect(rawHeader(copy!.headerText, 'References')).to.equal(
      '<root-42@customer.test> <parent-42@shop.test> <orig-42@customer.test>',
    );
    expect(copy!.flags).to.include('\\Seen');
  });

  it('reply: goes to Reply-To when the original has one; an original without References uses its In-Reply-To', async () => {
    await stack.deliver({
      from: customer.email,
      replyTo: replies.email,
      to: desk.email,
      subject: 'Question',
      text: 'q',
      messageId: '<q-1@customer.test>',
      inReplyTo: '<earlier-1@shop.test>',
    });
    const [orig] = await client.listEmails(desk, { limit: 1, unseen: false });
    expect(orig.subject).to.equal('Question');
    const res = await client.reply(desk, orig.id, { body: 'answer' });

    const atReplies = (await readFolder(stack, replies, 'INBOX')).find((m) => m.parsed.messageId === res.message_id);
    expect(atReplies, 'reply delivered to Reply-To').to.not.equal(undefined);
    expect((await readFolder(stack, customer, 'INBOX')).some((m) => m.parsed.messageId === res.message_id)).to.equal(
      false,
    );
    expect(rawHeader(atReplies!.headerText, 'Subject')).to.equal('Re: Question');
    expect(rawHeader(atReplies!.headerText, 'In-Reply-To')).to.equal('<q-1@customer.test>');
    expect(rawHeader(atReplies!.headerText, 'References')).to.equal('<earlier-1@shop.test> <q-1@customer.test>');
  });

  it('reply: an unknown UID throws EmailNotFoundError and sends nothing', async () => {
    const before = stack.relay.delivered;
    let err: unknown = null;
    try {
      await client.reply(desk, '987654', { body: 'x' });
    } catch (e) {
      err = e;
    }
    expect((err as Error)?.name).to.equal('EmailNotFoundError');
    expect(stack.relay.delivered).to.equal(before);
  });

  it("send: lands in the recipient's INBOX and in the sender's Sent folder", async () => {
    const res = await client.send(other, {
      to: customer.email,
      subject: 'Invoice 7',
      body: 'Please find the invoice.',
    });
    expect(res.message_id).to.match(/^<[0-9a-f-]{36}@mail\.test>$/);
    const got = (await readFolder(stack, customer, 'INBOX')).find((m) => m.parsed.messageId === res.message_id);
    expect(got, 'delivered').to.not.equal(undefined);
    expect(got!.parsed.subject).to.equal('Invoice 7');
    expect(got!.parsed.from?.value[0].address).to.equal(other.email);
    expect(got!.parsed.text?.trim()).to.equal('Please find the invoice.');
    expect(rawHeader(got!.headerText, 'In-Reply-To')).to.equal(undefined);
    expect(rawHeader(got!.headerText, 'References')).to.equal(undefined);

    const sent = await readFolder(stack, other, 'Sent');
    expect(sent.map((m) => m.parsed.messageId)).to.include(res.message_id);
  });
});
