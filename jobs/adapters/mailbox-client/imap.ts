import type { ImapFlow } from 'imapflow';
import type { EmailDetail, EmailSummary } from './types.js';
import type { PoolEntry } from './pool.js';
import { EmailNotFoundError } from './errors.js';
import { parseReplyOriginal, toDetail, toSummary, type ReplyOriginal } from './parse.js';

/**
 * IMAP operations on a logged-in imapflow client (from the pool). Each takes the INBOX lock
 * (imapflow getMailboxLock), which serialises concurrent requests on one connection.
 */

/**
 * Takes the INBOX lock. On a reused connection that already has INBOX selected, a NOOP first
 * makes the server announce messages delivered since (Dovecot reports them to SEARCH and FETCH
 * only after such a sync); a fresh SELECT is current anyway.
 */
async function lockInbox(client: ImapFlow) {
  const wasSelected = !!client.mailbox && client.mailbox.path === 'INBOX';
  const lock = await client.getMailboxLock('INBOX');
  if (wasSelected) {
    try {
      await client.noop();
    } catch (e) {
      lock.release();
      throw e;
    }
  }
  return lock;
}

/** A UID as the API passes it: a positive decimal integer string. */
function checkUid(uid: string): string {
  if (!/^[1-9][0-9]{0,9}$/.test(uid) || Number(uid) > 4294967295) throw new EmailNotFoundError(uid);
  return uid;
}

/**
 * Lists INBOX newest first (UID descending), fetching envelopes (uid, envelope, flags) of the
 * newest `limit` only. All messages: the last `limit` sequence numbers (sequence order is UID
 * order; the count is current after SELECT or the NOOP of lockInbox), one FETCH. Unseen only:
 * UID SEARCH UNSEEN, then a UID FETCH of the newest `limit` of those.
 */
export async function listInbox(client: ImapFlow, o: { limit: number; unseen: boolean }): Promise<EmailSummary[]> {
  const limit = Math.max(0, Math.floor(o.limit));
  if (!limit) return [];
  const lock = await lockInbox(client);
  try {
    const query = { uid: true, envelope: true, flags: true };
    let msgs;
    if (o.unseen) {
      const found = await client.search({ seen: false }, { uid: true });
      if (!found || !found.length) return [];
      const uids = [...found].sort((a, b) => b - a).slice(0, limit);
      msgs = await client.fetchAll(uids.join(','), query, { uid: true });
    } else {
      const exists = client.mailbox ? client.mailbox.exists : 0;
      if (!exists) return [];
      msgs = await client.fetchAll(`${Math.max(1, exists - limit + 1)}:*`, query);
    }
    return msgs
      .sort((a, b) => b.uid - a.uid)
      .slice(0, limit)
      .map(toSummary);
  } finally {
    lock.release();
  }
}

/** Fetches one INBOX message's full source, marks it \Seen, and parses it. @throws EmailNotFoundError */
export async function fetchDetail(client: ImapFlow, uid: string): Promise<EmailDetail> {
  checkUid(uid);
  const lock = await lockInbox(client);
  try {
    const m = await client.fetchOne(uid, { uid: true, source: true, flags: true }, { uid: true });
    if (!m || !m.source) throw new EmailNotFoundError(uid);
    if (!m.flags?.has('\\Seen')) await client.messageFlagsAdd(uid, ['\\Seen'], { uid: true });
    return await toDetail(m.uid, m.source);
  } finally {
    lock.release();
  }
}

/** Reads the header fields of an INBOX message a reply needs (no body, no \Seen change). @throws EmailNotFoundError */
export async function fetchReplyOriginal(client: ImapFlow, uid: string): Promise<ReplyOriginal> {
  checkUid(uid);
  const lock = await lockInbox(client);
  try {
    const m = await client.fetchOne(uid, { uid: true, headers: true }, { uid: true });
    if (!m || !m.headers) throw new EmailNotFoundError(uid);
    return await parseReplyOriginal(m.headers);
  } finally {
    lock.release();
  }
}

/** Sets \Answered on an INBOX message. */
export async function markAnswered(client: ImapFlow, uid: string): Promise<void> {
  const lock = await lockInbox(client);
  try {
    await client.messageFlagsAdd(checkUid(uid), ['\\Answered'], { uid: true });
  } finally {
    lock.release();
  }
}

/**
 * The Sent folder: the mailbox with special-use \Sent (RFC 6154), else one named "Sent", else a
 * new "Sent" (created and subscribed). Cached on the pooled connection.
 */
export async function sentFolder(client: ImapFlow, entry: PoolEntry): Promise<string> {
  if (entry.sentPath) return entry.sentPath;
  const boxes = await client.list();
  const found =
    boxes.find((b) => b.specialUse === '\\Sent') ??
    boxes.find((b) => b.path.toLowerCase() === 'sent' || b.name.toLowerCase() === 'sent');
  let path = found?.path;
  if (!path) {
    const created = await client.mailboxCreate('Sent');
    path = created.path;
    await client.mailboxSubscribe(path).catch(() => false);
  }
  entry.sentPath = path;
  return path;
}

/** Appends a sent message (flag \Seen) to the Sent folder. */
export async function appendToSent(client: ImapFlow, entry: PoolEntry, raw: Buffer): Promise<void> {
  const path = await sentFolder(client, entry);
  const res = await client.append(path, raw, ['\\Seen'], new Date());
  if (!res) throw Object.assign(new Error('APPEND to Sent was refused'), { code: 'APPEND_FAILED' });
}
