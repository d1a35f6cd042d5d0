import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { ConnectionOptions, TlsOptions } from 'node:tls';
import Pop3Command from 'node-pop3';
import { classifyTlsError, MailAuthError, MailServerError, scrubSecret } from '../adapters/mailbox-client/index.js';
import { mailTls, type MailTlsFor } from '../adapters/mailbox-client/tls.js';
import type { MailServerEndpoint } from '../adapters/mailbox-client/index.js';

/**
 * A read-only POP3 session for the sync (issue 9 item 3) on node-pop3 0.11.0: USER/PASS, STAT,
 * UIDL, TOP and RETR, QUIT; DELE is never sent (the class has no way to). Around the library:
 * - a multi-line answer ends at `CRLF.CRLF` even when TCP splits the terminator over two reads
 *   (node-pop3 looks for it per chunk only and would wait for ever);
 * - message bodies are streamed (never turned into a string) and dot-unstuffed (RFC 1939 §3);
 * - a connection that closes, errs or stays silent for `timeoutMs` fails the pending command
 *   (the library leaves it pending), and the AbortSignal closes the connection;
 * - errors become MailAuthError (USER/PASS refused) or MailServerError (codes as the IMAP side:
 *   ECONNREFUSED..., ETIMEDOUT, EConnectionClosed, TLS_*, POP3_ERR), never quoting the password.
 * STARTTLS (STLS) is not offered by node-pop3: such an account fails with STARTTLS_UNAVAILABLE
 * rather than logging in without TLS.
 */

const TERMINATOR = Buffer.from('\r\n.\r\n');
const CRLF = Buffer.from('\r\n');

/** node-pop3 with a multi-line reader that finds the terminator across chunk boundaries. */
class SplitSafePop3 extends Pop3Command {
  /** the last two bytes before the bytes held back (the status line's CRLF at first) */
  private lead: Buffer = CRLF;
  /** up to 4 bytes not pushed yet: they may be the start of the terminator */
  private held: Buffer = Buffer.alloc(0);

  override _updateStream(): Readable {
    this.lead = CRLF;
    this.held = Buffer.alloc(0);
    return super._updateStream();
  }

  override _pushStream(buffer: Buffer): void {
    const data = Buffer.concat([this.held, buffer]);
    const stream = this._stream!;
    if (Buffer.concat([this.lead, data]).subarray(-5).equals(TERMINATOR)) {
      // the CRLF before the dot ends the message's last line; the dot line is not content
      if (data.length > 3) stream.push(data.subarray(0, data.length - 3));
      this.held = Buffer.alloc(0);
      this._endStream();
      return;
    }
    const keep = Math.min(4, data.length);
    const out = data.subarray(0, data.length - keep);
    if (out.length) {
      stream.push(out);
      this.lead = Buffer.concat([this.lead, out]).subarray(-2);
    }
    this.held = data.subarray(data.length - keep);
  }
}

/** Removes the byte-stuffing dot of lines that begin with "." (RFC 1939 §3). */
class Unstuff extends Transform {
  private lineStart = true;

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    if (!chunk.length) return cb();
    const parts: Buffer[] = [];
    let from = this.lineStart && chunk[0] === 0x2e ? 1 : 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, nl + 1)) {
      if (nl + 1 < chunk.length && chunk[nl + 1] === 0x2e) {
        parts.push(chunk.subarray(from, nl + 1));
        from = nl + 2;
      }
    }
    parts.push(chunk.subarray(from));
    this.lineStart = chunk[chunk.length - 1] === 0x0a;
    cb(null, parts.length === 1 ? parts[0] : Buffer.concat(parts));
  }
}

/**
 * node-pop3 types tlsOptions as TlsOptions but spreads them into tls.connect() after its own
 * servername (the host): passing our ConnectionOptions (verification on, TLS 1.2+, servername only
 * for a host name, never an IP) with servername set explicitly makes ours win.
 */
function connectOptions(c: ConnectionOptions): TlsOptions {
  // safe: the object only ever reaches tls.connect(), whose options type it is
  return { servername: undefined, ...c } as unknown as TlsOptions;
}

/** Socket and library error fields node-pop3 passes on. */
interface Pop3LibError {
  code?: string;
  eventName?: string;
  command?: string;
  message?: string;
}

const NETWORK = /^(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|ETIMEDOUT)$/;

/**
 * Classifies a failure of the POP3 session.
 * @param password stripped from any quoted server text
 */
export function classifyPop3Error(err: unknown, password?: string): MailAuthError | MailServerError {
  if (err instanceof MailAuthError || err instanceof MailServerError) return err;
  const tlsError = classifyTlsError(err, 'pop3');
  if (tlsError) return tlsError;
  const e = (err ?? {}) as Pop3LibError;
  const code = String(e.code ?? '');
  if (NETWORK.test(code)) return new MailServerError('pop3', code, `POP3 connection failed (${code})`);
  if (e.eventName === 'timeout') return new MailServerError('pop3', 'ETIMEDOUT', 'POP3 server did not answer in time');
  if (e.eventName === 'close' || e.eventName === 'end' || e.message === 'no-socket')
    return new MailServerError('pop3', 'EConnectionClosed', 'POP3 connection closed by the server');
  if (e.eventName === 'bad-server-response')
    return new MailServerError('pop3', 'POP3_PROTOCOL', 'POP3 server sent an answer that is not POP3');
  if (e.eventName === 'error' && (e.command?.startsWith('PASS') || e.command?.startsWith('USER')))
    return new MailAuthError('pop3');
  if (e.eventName === 'error')
    return new MailServerError(
      'pop3',
      'POP3_ERR',
      `POP3 server refused the command: ${scrubSecret(String(e.message ?? ''), password)}`,
    );
  return new MailServerError(
    'pop3',
    code || 'POP3_ERROR',
    `POP3 error (${scrubSecret(code || 'unknown', password, 60)})`,
  );
}

/** Options of {@link Pop3Session.open}. */
export interface Pop3Options {
  /** longest silence of the server, in ms (connect, greeting, any answer) */
  timeoutMs: number;
  signal?: AbortSignal;
  /** TLS options per host (default: Node's roots, verification on) */
  tlsFor?: MailTlsFor;
}

/** A logged-in POP3 session. Every method rejects with MailAuthError / MailServerError. */
export class Pop3Session {
  private failure: MailAuthError | MailServerError | null = null;
  private readonly failed: Promise<never>;
  private fail!: (e: MailAuthError | MailServerError) => void;
  private idle: NodeJS.Timeout | null = null;
  private body: Transform | null = null;

  private constructor(
    private readonly client: SplitSafePop3,
    private readonly password: string,
    private readonly o: Pop3Options,
  ) {
    this.failed = new Promise<never>((_r, reject) => {
      this.fail = (e) => {
        if (this.failure) return;
        this.failure = e;
        reject(e);
        this.body?.destroy(e);
        this.destroy();
      };
    });
    this.failed.catch(() => undefined);
    // node-pop3 emits 'error' for -ERR answers and socket errors: without a listener Node throws
    client.on('error', () => undefined);
  }

  /**
   * Connects (TLS for `ssl`), reads the greeting and logs in with USER/PASS.
   * @throws MailAuthError when USER or PASS is refused; MailServerError otherwise (STARTTLS_UNAVAILABLE
   *   for `starttls`, ABORTED when the signal fires)
   */
  static async open(ep: MailServerEndpoint, user: string, password: string, o: Pop3Options): Promise<Pop3Session> {
    if (ep.security === 'starttls')
      throw new MailServerError(
        'pop3',
        'STARTTLS_UNAVAILABLE',
        'POP3 with STARTTLS (STLS) is not supported: use ssl (POP3S, usually port 995); nothing was sent without TLS',
      );
    if (o.signal?.aborted) throw new MailServerError('pop3', 'ABORTED', 'POP3 sync aborted');
    const tls = ep.security === 'ssl';
    const client = new SplitSafePop3({
      user,
      password,
      host: ep.host,
      port: ep.port,
      tls,
      ...(tls ? { tlsOptions: connectOptions((o.tlsFor ?? mailTls())(ep.host)) } : {}),
    });
    const s = new Pop3Session(client, password, o);
    const connecting = client.connect();
    s.watch();
    try {
      await s.guard(connecting);
      await s.guard(client.command('USER', user));
      await s.guard(client.command('PASS', password));
    } catch (e) {
      s.destroy();
      throw s.failure ?? classifyPop3Error(e, password);
    }
    return s;
  }

  /** Watches the socket: close, silence and the abort signal fail the session. */
  private watch() {
    const sock = this.client._socket;
    const closed = () =>
      this.fail(new MailServerError('pop3', 'EConnectionClosed', 'POP3 connection closed by the server'));
    sock?.once('close', closed);
    sock?.on('error', (e: Error) => this.fail(classifyPop3Error(e, this.password)));
    sock?.on('data', () => this.bump());
    this.bump();
    const onAbort = () => this.fail(new MailServerError('pop3', 'ABORTED', 'POP3 sync aborted'));
    this.o.signal?.addEventListener('abort', onAbort, { once: true });
  }

  private bump() {
    if (this.idle) clearTimeout(this.idle);
    if (this.failure) return;
    this.idle = setTimeout(
      () => this.fail(new MailServerError('pop3', 'ETIMEDOUT', 'POP3 server did not answer in time')),
      this.o.timeoutMs,
    );
  }

  /** Races a library call against the session's failure. */
  private async guard<T>(p: Promise<T>): Promise<T> {
    p.catch(() => undefined);
    try {
      return await Promise.race([p, this.failed]);
    } catch (e) {
      throw this.failure ?? classifyPop3Error(e, this.password);
    }
  }

  /** STAT: the number of messages in the maildrop. */
  async count(): Promise<number> {
    const info = await this.guard(this.client.STAT());
    return Number(String(info).split(' ')[0]) || 0;
  }

  /** UIDL: message number and unique id of every message, in maildrop order. */
  async uidls(): Promise<{ n: number; uidl: string }[]> {
    const rows = (await this.guard(this.client.UIDL())) as string[][];
    return rows.filter((r) => r.length >= 2 && /^\d+$/.test(r[0])).map((r) => ({ n: Number(r[0]), uidl: r[1] }));
  }

  /** TOP n 0: the header block of message `n` (dot-unstuffing irrelevant for headers). */
  async headers(n: number): Promise<string> {
    return this.guard(this.client.TOP(n, 0));
  }

  /**
   * RETR n: the raw message as a stream (dot-unstuffed). Read it to the end (or destroy it) before
   * the next command; a failure of the session destroys it with the error.
   */
  async retr(n: number): Promise<Readable> {
    const [, stream] = await this.guard(this.client.command('RETR', n));
    const out = new Unstuff();
    this.body = out;
    // a reader that stops early (a parse failure) must not stop the answer: the rest is read and
    // dropped, so the library sees the terminator and the next command can go
    out.on('error', () => undefined);
    out.once('close', () => {
      if (this.body === out) this.body = null;
      stream.unpipe(out);
      stream.resume();
    });
    stream.pipe(out);
    return out;
  }

  /** RETR n into memory, keeping at most `maxBytes` (the rest is read and dropped). */
  async retrText(n: number, maxBytes: number): Promise<string> {
    const s = await this.retr(n);
    const chunks: Buffer[] = [];
    let size = 0;
    await this.guard(
      (async () => {
        for await (const c of s) {
          if (size < maxBytes) chunks.push((c as Buffer).subarray(0, maxBytes - size));
          size += (c as Buffer).length;
        }
      })(),
    );
    return Buffer.concat(chunks).toString('utf8');
  }

  /** QUIT (nothing was marked for deletion, so the maildrop is unchanged), then closes. Never throws. */
  async quit(): Promise<void> {
    if (!this.failure) {
      const t = setTimeout(() => this.destroy(), 2000);
      await Promise.race([this.client.QUIT(), this.failed]).catch(() => undefined);
      clearTimeout(t);
    }
    this.destroy();
  }

  /** Closes the connection at once. */
  destroy(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    const sock = this.client._socket;
    if (sock && !sock.destroyed) sock.destroy();
  }
}
