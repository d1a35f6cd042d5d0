import { TenantScope } from '../../db/tenant-scope.js';
import { MailServerError } from '../adapters/mailbox-client/index.js';
import {
  BATCH_SIZE,
  FIRST_SYNC_DAYS,
  FIRST_SYNC_LIMIT,
  type SourceContext,
  type SyncCounts,
  type TestOutcome,
} from './imap-source.js';
import { Pop3Session } from './pop3-client.js';
import { alreadyStored, storeInbound } from './store.js';

/**
 * The POP3 side of the sync (issue 9 item 3), read-only: UIDL, TOP, RETR, never DELE (the
 * session class cannot send it). Incremental by the table `email_seen_uidls` (one row per UIDL
 * handled, written after the batch's rows committed). First sync (no UIDL seen yet): only the
 * newest FIRST_SYNC_LIMIT messages dated within FIRST_SYNC_DAYS days (Date header read with
 * TOP n 0, newest first; the walk stops after FIRST_SYNC_STOP_AFTER older ones in a row); the
 * rest is marked seen without being imported, as the IMAP cursor skips older messages.
 * External key `pop3:<uidl>`.
 */

/** Consecutive messages older than the window after which a first sync stops looking further back. */
export const FIRST_SYNC_STOP_AFTER = 25;
/** Bytes of a message kept as text when it cannot be parsed. */
const FALLBACK_BYTES = 1024 * 1024;
/** Default longest server silence, in ms. */
const DEFAULT_TIMEOUT_MS = 10_000;

const keyOf = (uidl: string) => `pop3:${uidl}`;

/** Opens the account's POP3 session. @throws MailAuthError, MailServerError */
function open(c: SourceContext): Promise<Pop3Session> {
  const l = c.logins.incoming;
  return Pop3Session.open(l.imap, l.email, l.password, {
    timeoutMs: c.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    signal: c.signal,
  });
}

/** Runs `fn` on a logged-in session; QUIT afterwards (nothing is marked deleted, nothing changes). */
async function withSession<T>(c: SourceContext, fn: (s: Pop3Session) => Promise<T>): Promise<T> {
  const s = await open(c);
  try {
    return await fn(s);
  } finally {
    await s.quit();
  }
}

/** The Date header of a header block (unfolded), or null when absent or unreadable. */
export function headerDate(headers: string): Date | null {
  const m = headers.replace(/\r?\n[ \t]+/g, ' ').match(/^Date:[ \t]*(.+)$/im);
  const t = m ? Date.parse(m[1].trim()) : NaN;
  return Number.isNaN(t) ? null : new Date(t);
}

/**
 * Imports message `n` unless its key is stored already (tombstones included).
 * @returns imported (with the row id) or skipped (stored before, or a Message-ID duplicate)
 */
async function importOne(
  c: SourceContext,
  s: Pop3Session,
  n: number,
  uidl: string,
): Promise<{ outcome: 'imported' | 'skipped'; id: number | null }> {
  const accountRef = c.account.email.toLowerCase();
  const key = keyOf(uidl);
  if (await alreadyStored(c.knex, c.account.tenant_id, accountRef, key, null)) return { outcome: 'skipped', id: null };
  const res = await storeInbound(
    c.knex,
    c.storage,
    await s.retr(n),
    {
      tenantId: c.account.tenant_id,
      accountRef,
      source: 'pop3',
      externalKey: key,
      receivedAt: null,
      now: c.clock.now(),
    },
    () => s.retrText(n, FALLBACK_BYTES),
  );
  return res.outcome === 'imported' ? { outcome: 'imported', id: res.id } : { outcome: 'skipped', id: null };
}

/** Records UIDLs as seen (after their rows are committed). */
async function markSeen(c: SourceContext, uidls: string[]) {
  const scope = new TenantScope(c.knex, c.account.tenant_id);
  for (let i = 0; i < uidls.length; i += 500) {
    const rows = uidls.slice(i, i + 500).map((uidl) => ({
      tenant_id: scope.tenantId,
      account_id: c.account.id,
      uidl,
      seen_at: c.clock.now(),
    }));
    await c.knex('email_seen_uidls').insert(rows).onConflict(['account_id', 'uidl']).ignore();
  }
}

const aborted = (c: SourceContext) => {
  if (c.signal?.aborted) throw new MailServerError('pop3', 'ABORTED', 'POP3 sync aborted');
};

/**
 * The first sync's choice: walking from the newest message back, those dated within the window,
 * at most FIRST_SYNC_LIMIT (a message without a readable Date counts as new).
 * @returns the chosen messages in maildrop order
 */
async function firstSyncWindow(c: SourceContext, s: Pop3Session, todo: { n: number; uidl: string }[]) {
  const since = c.clock.now().getTime() - FIRST_SYNC_DAYS * 86_400_000;
  const chosen: { n: number; uidl: string }[] = [];
  let olderInARow = 0;
  for (let i = todo.length - 1; i >= 0 && chosen.length < FIRST_SYNC_LIMIT; i--) {
    aborted(c);
    const d = headerDate(await s.headers(todo[i].n));
    if (d && d.getTime() < since) {
      if (++olderInARow >= FIRST_SYNC_STOP_AFTER) break;
      continue;
    }
    olderInARow = 0;
    chosen.push(todo[i]);
  }
  return chosen.reverse();
}

/**
 * The sync: messages whose UIDL was not seen (first sync: the window), in maildrop order, in
 * batches of BATCH_SIZE; after each batch its UIDLs are recorded, so an interrupted sync resumes
 * and a repeated one imports nothing twice. Progress {fetched, imported, skipped} and one log line
 * per batch; the AbortSignal is checked between messages and closes the connection.
 * @throws MailAuthError, MailServerError (network, server, abort)
 */
export async function syncPop3(c: SourceContext): Promise<SyncCounts> {
  const counts: SyncCounts = { fetched: 0, imported: 0, skipped: 0 };
  await withSession(c, async (s) => {
    const list = await s.uidls();
    const seen = new Set<string>(
      await new TenantScope(c.knex, c.account.tenant_id)
        .table('email_seen_uidls')
        .where({ account_id: c.account.id })
        .pluck('uidl'),
    );
    let todo = list.filter((m) => !seen.has(m.uidl));
    let leftOut: string[] = [];
    if (seen.size === 0 && todo.length) {
      const chosen = await firstSyncWindow(c, s, todo);
      const keep = new Set(chosen.map((m) => m.uidl));
      leftOut = todo.filter((m) => !keep.has(m.uidl)).map((m) => m.uidl);
      todo = chosen;
    }
    for (let i = 0; i < todo.length; i += BATCH_SIZE) {
      const batch = todo.slice(i, i + BATCH_SIZE);
      for (const m of batch) {
        aborted(c);
        counts.fetched++;
        const r = await importOne(c, s, m.n, m.uidl);
        counts[r.outcome === 'imported' ? 'imported' : 'skipped']++;
      }
      await markSeen(
        c,
        batch.map((m) => m.uidl),
      );
      await c.job.updateProgress({ ...counts });
      await c.job.log(
        `batch ${i / BATCH_SIZE + 1}: messages ${batch[0].n}..${batch[batch.length - 1].n}; ` +
          `fetched ${counts.fetched}, imported ${counts.imported}, skipped ${counts.skipped}`,
      );
    }
    // messages outside the first sync's window are left out for good
    await markSeen(c, leftOut);
    if (!todo.length) await c.job.updateProgress({ ...counts });
  });
  return counts;
}

/**
 * The connection test: logs in, lists the maildrop, and imports the newest message not imported
 * yet (at most 1; among the newest 50). The seen UIDLs and the sync state are left alone.
 * @throws MailAuthError, MailServerError
 */
export async function testPop3(c: SourceContext): Promise<TestOutcome> {
  return withSession(c, async (s) => {
    const list = await s.uidls();
    let synced = 0;
    let id: number | null = null;
    for (const m of list.slice(-50).reverse()) {
      const r = await importOne(c, s, m.n, m.uidl);
      if (r.outcome === 'imported') {
        synced = 1;
        id = r.id;
        break;
      }
    }
    return {
      ok: true as const,
      data: { protocol: 'pop3' as const, messages_on_server: list.length, synced, communication_id: id },
    };
  });
}
