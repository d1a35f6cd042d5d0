import crypto from 'node:crypto';
import type { ImapFlow } from 'imapflow';
import type * as Imapflow from 'imapflow';
import { lazyRequire } from '../../../lib/lazy-require.js';
import type { MailboxCredentials, MailServerEndpoint } from './types.js';
import { abortedError, classifyImapError, EmailNotFoundError, MailServerError } from './errors.js';
import { mailTls, type MailTlsFor } from './tls.js';

const imapflow = lazyRequire<typeof Imapflow>('imapflow');

/**
 * In-memory IMAP connection reuse (issue 3 §4): a logged-in imapflow client is kept for a short
 * idle time (default 60 s) under a key that is the SHA-256 of (email, password, host, port,
 * security), so only the same login on the same server can reuse it. Nothing is persisted; the
 * password exists only inside the open client's options and is dropped with it. A connection is
 * closed on any IMAP or network error, when its idle time passes, when the caller's AbortSignal
 * fires, and by close(). Operations on one connection serialise through imapflow's mailbox lock
 * (getMailboxLock), taken by the callers in imap.ts.
 */

/** Options of {@link ImapPool}. */
export interface ImapPoolOptions {
  /** ms a connection may stay unused before it logs out (default 60000; 0 = no reuse) */
  idleMs?: number;
  /**
   * most pooled connections; beyond it the least recently used idle one is closed, or the new one is not pooled
   * (default 100)
   */
  maxPooled?: number;
  /** ms to connect and receive the greeting (default 10000) */
  connectTimeoutMs?: number;
  /** TLS options per host (default: {@link mailTls} with Node's built-in roots only) */
  tls?: MailTlsFor;
}

/** One pooled connection. */
export interface PoolEntry {
  readonly key: string;
  readonly client: ImapFlow;
  /** path of the Sent folder once looked up (special-use \Sent) */
  sentPath?: string;
}

interface Entry extends PoolEntry {
  ready: Promise<void>;
  users: number;
  timer: NodeJS.Timeout | null;
  lastUsed: number;
  closed: boolean;
  pooled: boolean;
  connected: boolean;
}

/** Error codes after which a reused connection is assumed stale and the operation is retried once on a new one. */
const STALE_CODES = new Set(['NoConnection', 'EConnectionClosed', 'StateLogout', 'ECONNRESET', 'EPIPE']);

/** Pool key: SHA-256 hex of email\0password\0host\0port\0security (never the raw password). */
export function poolKey(c: Pick<MailboxCredentials, 'email' | 'password'>, ep: MailServerEndpoint): string {
  return crypto
    .createHash('sha256')
    .update([c.email.trim().toLowerCase(), c.password, ep.host.toLowerCase(), String(ep.port), ep.security].join('\0'))
    .digest('hex');
}

/**
 * imapflow options for an endpoint: `ssl` = implicit TLS (`secure`), `starttls` = STARTTLS
 * required (`doSTARTTLS: true`: imapflow fails with "Server does not support STARTTLS" instead of
 * logging in over plaintext), `none` = plaintext (`doSTARTTLS: false`). TLS options (verification
 * on, servername, extra CAs) from `tlsFor`.
 * @param c the credentials and servers of the mailbox
 * @param timeoutMs connection and greeting timeout in ms
 * @param tlsFor TLS options per host (default: built-in roots only)
 * @returns the ImapFlow constructor options
 */
export function imapOptions(
  c: MailboxCredentials,
  timeoutMs: number,
  tlsFor: MailTlsFor = mailTls(),
): ConstructorParameters<typeof ImapFlow>[0] {
  const ep = c.imap;
  return {
    host: ep.host,
    port: ep.port,
    secure: ep.security === 'ssl',
    doSTARTTLS: ep.security === 'starttls' ? true : ep.security === 'none' ? false : undefined,
    ...(ep.security === 'none' ? {} : { tls: tlsFor(ep.host) }),
    // IMAP LOGIN: one round trip (imapflow's AUTHENTICATE PLAIN waits for a continuation first)
    auth: { user: c.email, pass: c.password, loginMethod: 'LOGIN' },
    logger: false,
    disableAutoIdle: true,
    // no ENABLE CONDSTORE/UTF8 round trip: the client uses neither mod-sequences nor UTF8=ACCEPT
    disableAutoEnable: true,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: 120_000,
    clientInfo: { name: 'isp-mailbox-api' },
  };
}

/** The connection pool. One per process (held by the MailboxClient). */
export class ImapPool {
  private readonly entries = new Map<string, Entry>();
  private readonly idleMs: number;
  private readonly maxPooled: number;
  private readonly timeoutMs: number;
  private readonly tlsFor: MailTlsFor;

  constructor(opts: ImapPoolOptions = {}) {
    this.idleMs = opts.idleMs ?? 60_000;
    this.maxPooled = opts.maxPooled ?? 100;
    this.timeoutMs = opts.connectTimeoutMs ?? 10_000;
    this.tlsFor = opts.tls ?? mailTls();
  }

  /** Number of open pooled connections (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Runs `fn` on a logged-in connection for `c` (reused when one is pooled for the same key).
   * @param retryStale retry once on a fresh connection when a reused one turns out dead (only for read-only work)
   * @throws MailAuthError, MailServerError (connection, server refusal, abort), EmailNotFoundError (from fn; keeps
   *   the connection)
   */
  async run<T>(
    c: MailboxCredentials,
    signal: AbortSignal | undefined,
    fn: (client: ImapFlow, entry: PoolEntry) => Promise<T>,
    retryStale = false,
  ): Promise<T> {
    if (signal?.aborted) throw abortedError('imap');
    const key = poolKey(c, c.imap);
    let entry = this.entries.get(key);
    if (entry && entry.connected && !entry.client.usable) {
      this.discard(entry);
      entry = undefined;
    }
    const reused = !!entry?.connected;
    entry ??= this.open(key, c);
    const e = entry;
    e.users++;
    if (e.timer) {
      clearTimeout(e.timer);
      e.timer = null;
    }
    const onAbort = () => this.discard(e);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await e.ready;
      if (signal?.aborted) throw abortedError('imap');
      return await fn(e.client, e);
    } catch (err) {
      if (signal?.aborted) throw abortedError('imap');
      const mapped = classifyImapError(err, c.password);
      if (mapped instanceof EmailNotFoundError) throw mapped;
      this.discard(e);
      if (retryStale && reused && mapped instanceof MailServerError && STALE_CODES.has(mapped.code)) {
        return this.run(c, signal, fn, false);
      }
      throw mapped;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      e.users--;
      e.lastUsed = Date.now();
      if (e.users === 0 && !e.closed) {
        if (!e.pooled || this.idleMs <= 0) this.release(e);
        else {
          e.timer = setTimeout(() => this.release(e), this.idleMs);
          e.timer.unref();
        }
      }
    }
  }

  /** Logs out and drops every connection. */
  async close(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => this.release(e)));
  }

  private open(key: string, c: MailboxCredentials): Entry {
    const client = new (imapflow().ImapFlow)(imapOptions(c, this.timeoutMs, this.tlsFor));
    const entry: Entry = {
      key,
      client,
      ready: Promise.resolve(),
      users: 0,
      timer: null,
      lastUsed: Date.now(),
      closed: false,
      pooled: true,
      connected: false,
    };
    // imapflow emits 'error' (an unhandled one would crash the process) and 'close'
    client.on('error', () => this.discard(entry));
    client.on('close', () => this.discard(entry));
    entry.ready = client.connect().then(
      () => {
        entry.connected = true;
      },
      (err) => {
        this.discard(entry);
        throw err;
      },
    );
    entry.ready.catch(() => {
      /* handled by run() */
    });
    if (this.entries.size >= this.maxPooled) this.evictOne();
    if (this.entries.size < this.maxPooled) this.entries.set(key, entry);
    else entry.pooled = false;
    return entry;
  }

  private evictOne(): void {
    let oldest: Entry | null = null;
    for (const e of this.entries.values()) if (e.users === 0 && (!oldest || e.lastUsed < oldest.lastUsed)) oldest = e;
    if (oldest) void this.release(oldest);
  }

  /** Closes at once (after an error or abort). */
  private discard(e: Entry): void {
    if (e.closed) return;
    e.closed = true;
    if (e.timer) clearTimeout(e.timer);
    if (this.entries.get(e.key) === e) this.entries.delete(e.key);
    try {
      e.client.close();
    } catch {
      /* already closed */
    }
  }

  /** Logs out gracefully (idle, close()). */
  private async release(e: Entry): Promise<void> {
    if (e.closed) return;
    e.closed = true;
    if (e.timer) clearTimeout(e.timer);
    if (this.entries.get(e.key) === e) this.entries.delete(e.key);
    try {
      if (e.connected) await Promise.race([e.client.logout(), new Promise((r) => setTimeout(r, 2000).unref())]);
    } catch {
      /* closing anyway */
    }
    try {
      e.client.close();
    } catch {
      /* already closed */
    }
  }
}
