import { expect } from 'chai';
import {
  createMailboxClient,
  EmailNotFoundError,
  type MailboxClient,
  type MailboxCredentials,
} from '../../../../jobs/adapters/mailbox-client/index.js';
import { getMailStack, type MailStack } from '../../../helpers/mail.js';

describe('mailbox client: reading (real Dovecot)', () => {
  let stack: MailStack;
  let client: MailboxClient;
  let box: MailboxCredentials;
  let fresh: MailboxCredentials;
  let empty: MailboxCredentials;
  let detailBox: MailboxCredentials;

  before(async function () {
    this.timeout(60_000);
    stack = await getMailStack();
    client = createMailboxClient();
    [box, fresh, empty, detailBox] = await stack.newMailboxes([
      { local: 'reader' },
      { local: 'unseen' },
      { local: 'empty' },
      { local: 'detail' },
    ]);
    for (let i = 1; i <= 5; i++) {
      await stack.deliver({
        from: `Sender ${i} <sender${i}@example.test>`,
        to: box.email,
        subject: `message ${i}`,
        text: `body ${i}`,
        messageId: `<m${i}.${box.email}>`,
      });
    }
  });
  after(() => client.close());

  it('lists INBOX newest first (UID descending) and honours the limit', async () => {
    const all = await client.listEmails(box, { limit: 20, unseen: false });
    expect(all.map((m) => m.subject)).to.deep.equal(['message 5', 'message 4', 'message 3', 'message 2', 'message 1']);
    const uids = all.map((m) => Number(m.id));
    expect(uids).to.deep.equal([...uids].sort((a, b) => b - a));
    expect(all[0]).to.include({
      from: 'Sender 5 <sender5@example.test>',
      to: box.email,
      message_id: `<m5.${box.email}>`,
      seen: false,
    });
    expect(all[0].date).to.match(
      /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d \+0000$/,
    );

    const two = await client.listEmails(box, { limit: 2, unseen: false });
    expect(two.map((m) => m.id)).to.deep.equal(all.slice(0, 2).map((m) => m.id));
  });

  it('unseen=true keeps only messages without \\Seen; reading one with getEmail removes it from that list', async () => {
    await stack.deliver({ from: 'a@example.test', to: fresh.email, subject: 'first', text: 'x' });
    await stack.deliver({ from: 'b@example.test', to: fresh.email, subject: 'second', text: 'y' });
    const before = await client.listEmails(fresh, { limit: 20, unseen: true });
    expect(before.map((m) => m.subject)).to.deep.equal(['second', 'first']);

    const read = await client.getEmail(fresh, before[1].id);
    expect(read.subject).to.equal('first');

    const after = await client.listEmails(fresh, { limit: 20, unseen: true });
    expect(after.map((m) => m.subject)).to.deep.equal(['second']);
    const all = await client.listEmails(fresh, { limit: 20, unseen: false });
    expect(all.map((m) => [m.subject, m.seen])).to.deep.equal([
      ['second', false],
      ['first', true],
    ]);
  });

  it('returns an empty list for an empty INBOX', async () => {
    expect(await client.listEmails(empty, { limit: 20, unseen: false })).to.deep.equal([]);
    expect(await client.listEmails(empty, { limit: 20, unseen: true })).to.deep.equal([]);
  });

  it('getEmail returns the raw source and the parsed fields, with attachment metadata', async () => {
    const m = detailBox;
    await stack.deliver({
      from: '"Ana Díaz" <ana@example.test>',
      to: `Desk <${m.email}>`,
      cc: 'carl@example.test, dora@example.test',
      replyTo: 'replies@example.test',
      subject: 'Quarterly report – Q3',
      text: 'Plain body\nline 2',
      html: '<p>HTML <b>body</b></p>',
      messageId: '<detail-1@example.test>',
      inReplyTo: '<parent@example.test>',
      references: ['<root@example.test>', '<parent@example.test>'],
      date: new Date('2026-03-04T05:06:07Z'),
      attachments: [
        { filename: 'report.csv', content: 'a,b\n1,2\n', contentType: 'text/csv' },
        {
          filename: 'logo.png',
          content: Buffer.from([137, 80, 78, 71, 1, 2, 3]),
          contentType: 'image/png',
          cid: 'logo@example.test',
        },
      ],
    });
    const [summary] = await client.listEmails(m, { limit: 1, unseen: false });
    const d = await client.getEmail(m, summary.id);
    expect(d.id).to.equal(summary.id);
    expect(d.from).to.equal('Ana Díaz <ana@example.test>');
    expect(d.to).to.equal(`Desk <${m.email}>`);
    expect(d.cc).to.equal('carl@example.test, dora@example.test');
    expect(d.reply_to).to.equal('replies@example.test');
    expect(d.subject).to.equal('Quarterly report – Q3');
    expect(d.date).to.equal('Wed, 04 Mar 2026 05:06:07 +0000');
    expect(d.message_id).to.equal('<detail-1@example.test>');
    expect(d.in_reply_to).to.equal('<parent@example.test>');
    expect(d.references).to.equal('<root@example.test> <parent@example.test>');
    expect(d.text?.trim()).to.equal('Plain body\nline 2');
    expect(d.html).to.equal('<p>HTML <b>body</b></p>');
    // nodemailer puts the inline (cid) image into multipart/related ahead of the mixed part
    expect([...d.attachments].sort((a, b) => String(a.filename).localeCompare(String(b.filename)))).to.deep.equal([
      { filename: 'logo.png', content_type: 'image/png', size: 7, content_id: 'logo@example.test' },
      { filename: 'report.csv', content_type: 'text/csv', size: 8, content_id: null },
    ]);
    // body_raw is the RFC 5322 source as stored by Dovecot: headers, blank line, MIME body
    expect(d.body_raw).to.match(/^Return-Path: |^Delivered-To: |^Received: |^Content-Type: |^From: /m);
    expect(d.body_raw).to.contain('Message-ID: <detail-1@example.test>');
    expect(d.body_raw).to.contain('\r\n\r\n');
    expect(d.body_raw).to.match(/Content-Type: multipart\/mixed; boundary=/);
    expect(d.body_raw).to.contain('filename=report.csv');
  });

  it('getEmail of an unknown or malformed UID throws EmailNotFoundError', async () => {
    let err: unknown = null;
    try {
      await client.getEmail(box, '999999');
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(EmailNotFoundError);
    err = null;
    try {
      await client.getEmail(box, '12abc');
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(EmailNotFoundError);
    // the connection stays usable after a not-found
    expect((await client.listEmails(box, { limit: 1, unseen: false }))[0].subject).to.equal('message 5');
  });
});
