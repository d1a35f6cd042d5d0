/**
 * Helpers of the reply-email tests (issue 9 item 5): an own SMTP relay into the run's Dovecot (so a
 * test can stop, refuse or cut it without touching the shared one), inbound rows, reading a mailbox.
 */
import { randomBytes } from 'node:crypto';
import { env } from '../../helpers/env.js';
import type { MailStack } from '../../helpers/mail.js';
import type { TenantFixture } from '../../helpers/fixtures.js';
import { startSmtpRelay, type SmtpRelay } from '../../../lib/infra/smtp-relay.js';

/** Starts a relay into the stack's Dovecot (on `port` when given: a restart on the same port). */
export function ownRelay(stack: MailStack, port?: number): Promise<SmtpRelay> {
  return startSmtpRelay({
    port,
    authenticate: (u, p) => stack.dovecot.checkPassword(u, p),
    isLocal: (a) => stack.dovecot.hasUser(a),
    lmtp: stack.lmtp,
  });
}

/** Points the tenant's account at an SMTP port. */
export async function useSmtpPort(tenantId: number, port: number): Promise<void> {
  await env.knex('external_email_accounts').where({ tenant_id: tenantId }).update({ outgoing_port: port });
}

/** An inbound e-mail row as the sync stores it. */
export async function inboundRow(
  t: TenantFixture,
  accountRef: string,
  o: { from: string; messageId: string | null; references?: string | null; inReplyTo?: string | null },
): Promise<{ id: number }> {
  const now = new Date();
  const [row] = await env
    .knex('communication_messages')
    .insert({
      tenant_id: t.tenant.id,
      channel: 'email',
      direction: 'in',
      status: 'received',
      source: 'imap',
      account_ref: accountRef.toLowerCase(),
      counterpart: o.from,
      from_address: o.from,
      to_addresses: accountRef,
      subject: 'Invoice question',
      snippet: 'Why is my invoice higher?',
      body_text: 'Why is my invoice higher?',
      message_id: o.messageId,
      references: o.references ?? null,
      in_reply_to: o.inReplyTo ?? null,
      external_key: `test:${randomBytes(6).toString('hex')}`,
      occurred_at: now,
      received_at: now,
    })
    .returning('id');
  return { id: Number(row.id) };
}

/** One header of a raw message (continuation lines unfolded), or null. */
export function header(source: string, name: string): string | null {
  const head = source.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
  const m = new RegExp(`^${name}:[ \\t]*(.*)$`, 'im').exec(head);
  return m ? m[1].trim() : null;
}

/** The messages of a folder (source and flags), oldest first; [] when the folder is missing or empty. */
export async function folderMessages(
  stack: MailStack,
  box: { email: string; password: string },
  folder = 'INBOX',
): Promise<{ source: string; flags: string[] }[]> {
  const c = await stack.openImap(box.email, box.password);
  try {
    const list = await c.list();
    if (!list.some((b) => b.path === folder)) return [];
    const lock = await c.getMailboxLock(folder, { readOnly: true });
    try {
      const box = c.mailbox;
      if (!box || box.exists === 0) return [];
      const out: { source: string; flags: string[] }[] = [];
      for await (const m of c.fetch('1:*', { source: true, flags: true })) {
        out.push({ source: m.source?.toString('utf8') ?? '', flags: [...(m.flags ?? [])] });
      }
      return out;
    } finally {
      lock.release();
    }
  } finally {
    await c.logout().catch(() => c.close());
  }
}

/** Polls `fn` until it returns a truthy value (every 100 ms, at most `ms`). @returns that value */
export async function eventually<T>(fn: () => Promise<T>, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v || Date.now() >= until) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}
