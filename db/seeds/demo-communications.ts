import type { TenantScope } from '../tenant-scope.js';

/**
 * Demo inbox of a tenant (issue 9 item 4): a few e-mails from seeded customers, as if synced from
 * the tenant's shared mailbox `cs@demo.mail.test` (the demo Dovecot's third mailbox). Inserted
 * directly (the seed has no APP_KEY and reaches no mail server); a real sync adds the mailbox's own.
 */

/** The account_ref of the demo inbox. */
export const DEMO_INBOX = 'cs@demo.mail.test';

const MESSAGES = [
  {
    subject: 'Internet mati sejak pagi',
    text: 'Selamat pagi, koneksi internet di rumah saya mati sejak jam 6 pagi. Mohon dicek.',
  },
  {
    subject: 'Pertanyaan tagihan bulan ini',
    text: 'Halo, tagihan saya bulan ini lebih besar dari biasanya. Bisa dijelaskan?',
  },
  { subject: 'Upgrade paket', text: 'Saya ingin upgrade ke paket yang lebih cepat. Bagaimana caranya?' },
] as const;

/**
 * Writes the demo e-mails (newest last) from the first customers that have an e-mail address.
 * @param now the seed's moment; the messages are dated in the two days before it
 * @returns how many were written
 */
export async function seedDemoCommunications(scope: TenantScope, opts: { now: Date }): Promise<number> {
  const customers = await scope
    .table('customers')
    .whereNotNull('email')
    .orderBy('id')
    .limit(MESSAGES.length)
    .select('id', 'name', 'email');
  for (const [i, c] of customers.entries()) {
    const m = MESSAGES[i];
    const at = new Date(opts.now.getTime() - (MESSAGES.length - i) * 11 * 3_600_000);
    await scope.insert('communication_messages', {
      channel: 'email',
      direction: 'in',
      status: 'received',
      source: 'imap',
      account_ref: DEMO_INBOX,
      customer_id: c.id,
      counterpart: String(c.email).toLowerCase(),
      from_address: String(c.email).toLowerCase(),
      from_name: c.name,
      to_addresses: DEMO_INBOX,
      subject: m.subject,
      snippet: m.text.slice(0, 200),
      body_text: m.text,
      message_id: demoInboxMessageId(scope.tenantId, i + 1),
      external_key: `seed:${i + 1}`,
      occurred_at: at,
      received_at: at,
      created_at: at,
      updated_at: at,
    });
  }
  return customers.length;
}

/** The demo inbox's e-mails (subject, text), oldest first; bin/dev-mail-account.ts delivers the same ones. */
export const DEMO_INBOX_MESSAGES = MESSAGES;

/** The Message-ID of the demo inbox's e-mail `n` (1-based) of a tenant, shared by the seed and the demo mailbox. */
export function demoInboxMessageId(tenantId: number, n: number): string {
  return `<seed-${tenantId}-${n}@demo.mail.test>`;
}
