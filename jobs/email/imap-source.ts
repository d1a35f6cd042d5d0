import type { ImapFlow, FetchMessageObject } from 'imapflow';
import type * as Imapflow from 'imapflow';
import { lazyRequire } from '../../lib/lazy-require.js';
import type { Knex } from 'knex';
import type { ExternalEmailAccount } from '../../db/models/index.js';
import { TenantScope } from '../../db/tenant-scope.js';
import type { Clock } from '../../lib/clock.js';
import type { Storage } from '../../lib/storage/index.js';
import type { JobLike } from '../queues.js';
import { classifyImapError, MailServerError } from '../adapters/mailbox-client/index.js';
import { imapOptions } from '../adapters/mailbox-client/pool.js';
import type { AccountLogins } from './account.js';
import { alreadyStored, storeInbound } from './store.js';

const imapflow = lazyRequire<typeof Imapflow>('imapflow');

/**
 * The IMAP side of the sync (issue 9 item 3): INBOX opened read-only (EXAMINE), messages fetched
 * with BODY.PEEK (imapflow's fetch and download never set \Seen, and EXAMINE forbids it anyway),
 * incremental by UIDVALIDITY + last UID, the first sync (and one after a new UIDVALIDITY) limited
 * to the newest FIRST_SYNC_LIMIT messages of the last FIRST_SYNC_DAYS days.
 */

/** Most messages of a first sync. */
export const FIRST_SYNC_LIMIT = 200;
/** Days a first sync looks back. */
export const FIRST_SYNC_DAYS = 30;
/** Messages per batch (one envelope FETCH, one progress update, one log line, one cursor move). */
export const BATCH_SIZE = 25;
/** Bytes of a message kept as text when it cannot be parsed. */
const FALLBACK_BYTES = 1024 * 1024;

/** Codes of a failed connection test. */
export type TestErrorCode =
  'dns_failed' | 'connect_failed' | 'tls_failed' | 'auth_failed' | 'timeout' | 'protocol_error';

/** The answer of a connection test. */
export type TestOutcome =
  | {
      ok: true;
      data: { protocol: 'imap' | 'pop3'; messages_on_server: number; synced: number; communication_id: number | null };
    }
  | { ok: false; error: { code: TestErrorCode; message: string } };

/** Counters of a sync (the job's progress). */
export interface SyncCounts {
  fetched: number;
  imported: number;
  skipped: number;
}

/** What a sync or test needs. */
export interface SourceContext {
  knex: Knex;
  storage?: Storage;
  account: ExternalEmailAccount;
  logins: AccountLogins;
  clock: Clock;
  job: JobLike<unknown>;
  signal?: AbortSignal;
  /** longest wait for the server to connect, greet or answer a login, in ms (default 10 s) */
  timeoutMs?: number;
}

/** Connects and logs in; the signal closes the connection. @throws MailAuthError, MailServerError */
async function connect(c: SourceContext): Promise<ImapFlow> {
  if (c.signal?.aborted) throw new MailServerError('imap', 'ABORTED', 'IMAP sync aborted');
  const client = new (imapflow().ImapFlow)(imapOptions(c.logins.incoming, c.timeoutMs ?? 10_000));
  client.on('error', () => {
    /* surfaced by the failing command */
  });
  c.signal?.addEventListener('abort', () => client.close(), { once: true });
  try {
    await client.connect();
  } catch (e) {
    client.close();
    throw classifyImapError(e, c.logins.incoming.password);
  }
  return client;
}

/** Runs `fn` on a logged-in connection with INBOX examined; logs out afterwards. */
async function withInbox<T>(c: SourceContext, fn: (client: ImapFlow) => Promise<T>): Promise<T> {
  const client = await connect(c);
  try {
    await client.mailboxOpen('INBOX', { readOnly: true });
    return await fn(client);
  } catch (e) {
    if (c.signal?.aborted) throw new MailServerError('imap', 'ABORTED', 'IMAP sync aborted');
    throw classifyImapError(e, c.logins.incoming.password);
  } finally {
    await client.logout().catch(() => client.close());
  }
}

/**
 * imapflow answers a FETCH or download on a connection that has gone with nothing instead of an
 * error: without this check a sync would move its cursor past messages it never read.
 * @throws MailServerError NoConnection when the connection is no longer usable
 */
function ensureUsable(client: ImapFlow) {
  if (!client.usable) throw new MailServerError('imap', 'NoConnection', 'IMAP connection closed by the server');
}

/** The external key of an IMAP message. */
const keyOf = (uidValidity: number, uid: number) => `imap:${uidValidity}:${uid}`;

/**
 * Imports one message unless it is stored already (by key or Message-ID, tombstones included).
 * @returns imported (with the row id), or skipped
 */
async function importOne(
  c: SourceContext,
  client: ImapFlow,
  m: FetchMessageObject,
  uidValidity: number,
): Promise<{ outcome: 'imported' | 'skipped'; id: number | null }> {
  const accountRef = c.account.email.toLowerCase();
  const key = keyOf(uidValidity, m.uid);
  const messageId = m.envelope?.messageId?.trim() || null;
  if (await alreadyStored(c.knex, c.account.tenant_id, accountRef, key, messageId))
    return { outcome: 'skipped', id: null };
  const dl = await client.download(String(m.uid), undefined, { uid: true });
  if (!dl.content) {
    ensureUsable(client);
    return { outcome: 'skipped', id: null };
  }
  const res = await storeInbound(
    c.knex,
    c.storage,
    dl.content,
    {
      tenantId: c.account.tenant_id,
      accountRef,
      source: 'imap',
      externalKey: key,
      receivedAt: m.internalDate ? new Date(m.internalDate) : null,
      now: c.clock.now(),
    },
    async () => {
      const again = await client.download(String(m.uid), undefined, { uid: true, maxBytes: FALLBACK_BYTES });
      const chunks: Buffer[] = [];
      for await (const chunk of again.content ?? []) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  );
  return res.outcome === 'imported' ? { outcome: 'imported', id: res.id } : { outcome: 'skipped', id: null };
}

/** Moves the cursor forward (never back), under the same UIDVALIDITY. */
async function moveCursor(c: SourceContext, uidValidity: number, lastUid: number) {
  await new TenantScope(c.knex, c.account.tenant_id)
    .table('external_email_accounts')
    .where({ id: c.account.id })
    .update({
      imap_uidvalidity: uidValidity,
      imap_last_uid: c.knex.raw(
        'CASE WHEN imap_uidvalidity = ? THEN GREATEST(coalesce(imap_last_uid, 0), ?) ELSE ? END',
        [uidValidity, lastUid, lastUid],
      ),
    });
}

/**
 * The sync: new messages since the cursor (or the first-sync window), in UID order, in batches;
 * the cursor moves after each batch's rows are committed, so an interrupted sync resumes where it
 * stopped and a repeated one imports nothing twice. Progress {fetched, imported, skipped} and one
 * log line per batch; the AbortSignal is checked between messages.
 * @throws MailAuthError, MailServerError (network, server, abort)
 */
export async function syncImap(c: SourceContext): Promise<SyncCounts> {
  const counts: SyncCounts = { fetched: 0, imported: 0, skipped: 0 };
  await withInbox(c, async (client) => {
    const box = client.mailbox;
    if (!box) throw new MailServerError('imap', 'NO_MAILBOX', 'INBOX could not be opened');
    const uidValidity = Number(box.uidValidity);
    const known = c.account.imap_uidvalidity === uidValidity && c.account.imap_last_uid != null;
    let uids: number[] = [];
    if (box.exists) {
      if (known) {
        const last = Number(c.account.imap_last_uid);
        if (box.uidNext > last + 1) {
          const found = await client.search({ uid: `${last + 1}:*` }, { uid: true });
          uids = (found || []).filter((u) => u > last);
        }
      } else {
        const since = new Date(c.clock.now().getTime() - FIRST_SYNC_DAYS * 86_400_000);
        const found = await client.search({ since }, { uid: true });
        uids = (found || []).sort((a, b) => a - b).slice(-FIRST_SYNC_LIMIT);
      }
    }
    uids.sort((a, b) => a - b);
    for (let i = 0; i < uids.length; i += BATCH_SIZE) {
      const batch = uids.slice(i, i + BATCH_SIZE);
      const msgs = await client.fetchAll(
        batch.join(','),
        { uid: true, internalDate: true, envelope: true },
        { uid: true },
      );
      ensureUsable(client);
      msgs.sort((a, b) => a.uid - b.uid);
      for (const m of msgs) {
        if (c.signal?.aborted) throw new MailServerError('imap', 'ABORTED', 'IMAP sync aborted');
        counts.fetched++;
        const r = await importOne(c, client, m, uidValidity);
        counts[r.outcome === 'imported' ? 'imported' : 'skipped']++;
      }
      await moveCursor(c, uidValidity, batch[batch.length - 1]);
      await c.job.updateProgress({ ...counts });
      await c.job.log(
        `batch ${i / BATCH_SIZE + 1}: UIDs ${batch[0]}..${batch[batch.length - 1]}; ` +
          `fetched ${counts.fetched}, imported ${counts.imported}, skipped ${counts.skipped}`,
      );
    }
    // everything below uidNext was looked at (older first-sync messages are left out on purpose)
    await moveCursor(c, uidValidity, Math.max(0, box.uidNext - 1));
    if (!uids.length) await c.job.updateProgress({ ...counts });
  });
  return counts;
}

/**
 * The connection test: logs in, examines INBOX, and imports the newest message not imported yet
 * (at most 1; among the newest 50). The cursor and the sync state are left alone.
 * @throws MailAuthError, MailServerError
 */
export async function testImap(c: SourceContext): Promise<TestOutcome> {
  return withInbox(c, async (client) => {
    const box = client.mailbox;
    if (!box) throw new MailServerError('imap', 'NO_MAILBOX', 'INBOX could not be opened');
    const uidValidity = Number(box.uidValidity);
    let synced = 0;
    let id: number | null = null;
    if (box.exists) {
      const msgs = await client.fetchAll(`${Math.max(1, box.exists - 49)}:*`, {
        uid: true,
        internalDate: true,
        envelope: true,
      });
      msgs.sort((a, b) => b.uid - a.uid);
      for (const m of msgs) {
        const r = await importOne(c, client, m, uidValidity);
        if (r.outcome === 'imported') {
          synced = 1;
          id = r.id;
          break;
        }
      }
    }
    return {
      ok: true as const,
      data: { protocol: 'imap' as const, messages_on_server: box.exists, synced, communication_id: id },
    };
  });
}
