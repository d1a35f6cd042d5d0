import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { redactSecrets } from '../mail-panel/classify.js';
import { systemClock } from '../../../lib/clock.js';
import type { CallKind, CallOptions, ProviderName, ProviderOutcome } from './types.js';

/**
 * The HTTP exchange of the chat adapters. It uses node:http/https rather than fetch because the
 * send job must know whether a failed request can have reached the provider (at most once, issue
 * 10 item 3): the exchange records when the connection is established (TCP `connect`, and TLS
 * `secureConnect` for https); a failure before that is "not written" (the provider cannot have
 * seen a byte), anything after it "written". One new connection per request (no keep-alive), so a
 * request never goes out on a socket the server has already closed. No redirects are followed.
 */

/** Default deadline of a whole exchange, in ms. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** Bodies beyond this are not read further (the outcome is then a `network` failure after write). */
export const MAX_BODY_BYTES = 256 * 1024;

/** One request to a provider. */
export interface ExchangeRequest {
  call: CallKind;
  provider: ProviderName;
  method: 'GET' | 'POST' | 'PUT';
  url: URL;
  headers: Record<string, string>;
  /** form fields (application/x-www-form-urlencoded) or a JSON value; none for GET */
  form?: URLSearchParams;
  json?: unknown;
  /** values that must never appear in the outcome (tokens, keys) */
  secrets: ReadonlyArray<string | null | undefined>;
}

function parseJson(text: string): unknown {
  const t = text.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return undefined;
  try {
    return JSON.parse(t);
  } catch {
    return undefined;
  }
}

function errorCode(err: unknown): string {
  let cur: unknown = err;
  for (let i = 0; cur && typeof cur === 'object' && i < 5; i++) {
    const e = cur as { code?: unknown; cause?: unknown; name?: unknown };
    if (typeof e.code === 'string' && e.code !== '') return e.code;
    cur = e.cause;
  }
  return 'ERROR';
}

/**
 * Sends one request and reports the outcome; never rejects.
 * @returns `response` with the status and the secret-free body, or `network` with `written`
 *   false when the connection was never established (DNS, refused, connect or TLS failure, an
 *   abort or deadline before connecting) and true otherwise (reset, deadline or abort after
 *   connecting, a body that broke off or exceeded MAX_BODY_BYTES)
 */
export function exchange(req: ExchangeRequest, opts: CallOptions = {}): Promise<ProviderOutcome> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const clock = opts.clock ?? systemClock;
  const label = `${req.provider} ${req.call}`;
  const base = { kind: 'network' as const, call: req.call, provider: req.provider };
  if (opts.signal?.aborted) {
    return Promise.resolve({ ...base, written: false, code: 'ABORTED', detail: `${label}: aborted before connecting` });
  }
  let body: string | undefined;
  const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
  if (req.form) {
    body = req.form.toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  } else if (req.json !== undefined) {
    body = JSON.stringify(req.json);
    headers['content-type'] = 'application/json';
  }
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));

  return new Promise<ProviderOutcome>((resolve) => {
    let connected = false;
    let settled = false;
    const transport = req.url.protocol === 'https:' ? https : http;
    const finish = (outcome: ProviderOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const fail = (code: string, detail: string) => {
      finish({ ...base, written: connected, code, detail: redactSecrets(`${label}: ${detail}`, req.secrets) });
    };
    const request = transport.request(req.url, { method: req.method, headers, agent: false });
    const onAbort = () => {
      fail('ABORTED', connected ? 'aborted after the request was sent' : 'aborted before connecting');
      request.destroy();
    };
    const timer = setTimeout(() => {
      fail('ETIMEDOUT', `no complete answer within ${timeoutMs} ms`);
      request.destroy();
    }, timeoutMs);
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    request.on('socket', (socket: Socket) => {
      const tls = req.url.protocol === 'https:';
      // errors of a socket we already gave up on (destroyed after a deadline) are not ours to throw
      socket.on('error', () => {});
      if (!socket.connecting) connected = true;
      else socket.once(tls ? 'secureConnect' : 'connect', () => (connected = true));
    });
    request.on('error', (err) => fail(errorCode(err), errorCode(err)));
    request.on('response', (res) => {
      connected = true;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          fail('EBODYTOOLARGE', `HTTP ${res.statusCode}: body larger than ${MAX_BODY_BYTES} bytes`);
          request.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (err) => fail(errorCode(err), `HTTP ${res.statusCode}: body broke off (${errorCode(err)})`));
      res.on('aborted', () => fail('ECONNRESET', `HTTP ${res.statusCode}: body broke off`));
      res.on('end', () => {
        const text = redactSecrets(Buffer.concat(chunks).toString('utf8'), req.secrets);
        const retryAfter = res.headers['retry-after'];
        finish({
          kind: 'response',
          call: req.call,
          provider: req.provider,
          status: res.statusCode ?? 0,
          retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
          receivedAt: clock.now().getTime(),
          text,
          json: parseJson(text),
        });
      });
    });
    request.end(body);
  });
}
