/**
 * The demo e-mails of the local demo mail server (bin/dev-mail.ts): a few customer messages in
 * the demo mailboxes, one with an attachment, one HTML, and a short thread (In-Reply-To /
 * References) so that reading, replying in thread and the unseen filter can be tried at once.
 */

/** One demo message in nodemailer's shape plus the SMTP envelope sender. */
export interface DemoMessage {
  envelopeFrom: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  date: Date;
  messageId: string;
  inReplyTo?: string;
  references?: string[];
  attachments?: { filename: string; content: string; contentType: string }[];
}

/**
 * The demo messages, oldest first.
 * @param domain the demo domain (Message-IDs use it)
 * @param mailboxes [info address, support address]
 */
export function demoMessages(domain: string, mailboxes: string[]): DemoMessage[] {
  const [info, support] = mailboxes;
  const hoursAgo = (h: number) => new Date(Date.now() - h * 3600_000);
  const id = (n: string) => `<demo-${n}@${domain}>`;
  return [
    {
      envelopeFrom: 'maria.lopez@example.com',
      from: 'Maria Lopez <maria.lopez@example.com>',
      to: info,
      subject: 'Question about fibre plans',
      date: hoursAgo(50),
      messageId: id('fibre-1'),
      text: 'Hello,\n\nDo you offer a 500 Mbps fibre plan in the Riverside area, and is there an installation fee?\n\nThanks,\nMaria',
    },
    {
      envelopeFrom: 'accounts@example.net',
      from: 'Accounts <accounts@example.net>',
      to: info,
      subject: 'Invoice INV-2026-0042',
      date: hoursAgo(30),
      messageId: id('invoice-1'),
      text: 'Dear customer,\n\nplease find attached the usage summary for October.\n\nAccounts team',
      attachments: [
        {
          filename: 'usage-october.csv',
          contentType: 'text/csv',
          content: 'day,download_gb,upload_gb\n2026-10-01,12.4,1.1\n2026-10-02,9.8,0.7\n',
        },
      ],
    },
    {
      envelopeFrom: 'tom@example.org',
      from: 'Tom Becker <tom@example.org>',
      to: support,
      subject: 'Internet down since this morning',
      date: hoursAgo(20),
      messageId: id('outage-1'),
      text: 'Hi,\n\nmy connection has been down since 7 am. The ONU shows a red LOS light.\n\nCustomer CUST-000123\nTom',
      html: '<p>Hi,</p><p>my connection has been down since 7 am. The ONU shows a <b style="color:#c00">red LOS light</b>.</p><p>Customer CUST-000123<br>Tom</p>',
    },
    {
      envelopeFrom: 'tom@example.org',
      from: 'Tom Becker <tom@example.org>',
      to: support,
      subject: 'Re: Internet down since this morning',
      date: hoursAgo(2),
      messageId: id('outage-3'),
      inReplyTo: id('outage-2'),
      references: [id('outage-1'), id('outage-2')],
      text: 'Thanks for the quick answer. The light is green again, but the speed is still low.\n\nTom\n\n> We have opened ticket 4711 and a technician is on the way.',
    },
    {
      envelopeFrom: 'news@example.com',
      from: 'Example Networks <news@example.com>',
      to: info,
      subject: 'Maintenance window on Sunday',
      date: hoursAgo(1),
      messageId: id('maintenance-1'),
      text: 'Planned maintenance on Sunday from 02:00 to 04:00 UTC. Short interruptions are possible.',
      html: '<h2>Maintenance window</h2><p>Planned maintenance on <b>Sunday 02:00–04:00 UTC</b>. Short interruptions are possible.</p>',
    },
  ];
}
