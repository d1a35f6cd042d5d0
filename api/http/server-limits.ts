import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';

/** HTTP server limits against slow and greedy clients (lib/config.ts AbuseLimits; issue 7 item 6). */
export interface ServerLimits {
  /** The whole request (headers and body) must arrive within this, in ms; then 408 and the socket closes. */
  requestTimeoutMs: number;
  /** The request headers must arrive within this, in ms (at most requestTimeoutMs). */
  headersTimeoutMs: number;
  /** An idle keep-alive connection closes after this, in ms. */
  keepAliveTimeoutMs: number;
  /** Open connections per client address; 0 = no cap. */
  maxConnectionsPerIp: number;
}

/** The answer to a connection over the per-IP cap, in the service's error format. */
export interface Refusal {
  status: number;
  body: Record<string, unknown>;
  /** Retry-After, in seconds. */
  retryAfterSeconds: number;
}

/** How long a connection over the cap may take to send its request before it is dropped, in ms. */
export const REFUSED_GRACE_MS = 1000;

/**
 * Creates the HTTP server of a service (web, mail) with its limits:
 * - `requestTimeout`, `headersTimeout` and `keepAliveTimeout` from `limits`, checked every
 *   `connectionsCheckingInterval` (a quarter of the headers timeout, 100 ms to 1 s; Node's default of
 *   30 s would let a slow client overstay a short timeout by that much);
 * - at most `maxConnectionsPerIp` open connections per client address (the TCP peer: behind a proxy
 *   that is the proxy, so lib/config.ts switches the cap off with TRUST_PROXY unless it is set). A
 *   connection over the cap gets `refusal` (a 429 in the service's body, `Connection: close`,
 *   `Retry-After`, a fresh X-Request-Id) for its first request without reaching the app, and is
 *   dropped after REFUSED_GRACE_MS if it sends nothing.
 * @param handler the app's request listener (app.callback())
 * @param limits the limits
 * @param refusal the answer to a connection over the cap
 * @returns the server (not listening yet)
 */
export function createLimitedServer(
  handler: http.RequestListener,
  limits: ServerLimits,
  refusal: Refusal,
): http.Server {
  const refused = new WeakSet<Socket>();
  const server = http.createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    (req, res) => {
      if (!refused.has(req.socket)) return handler(req, res);
      const body = JSON.stringify(refusal.body);
      res.writeHead(refusal.status, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
        'Retry-After': String(refusal.retryAfterSeconds),
        'X-Request-Id': randomUUID(),
        'Cache-Control': 'no-store',
        Connection: 'close',
      });
      res.end(body);
    },
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  if (limits.maxConnectionsPerIp > 0) capConnectionsPerIp(server, limits.maxConnectionsPerIp, refused);
  return server;
}

/** Counts open connections per remote address; marks those over `max` as refused. */
function capConnectionsPerIp(server: http.Server, max: number, refused: WeakSet<Socket>): void {
  const open = new Map<string, number>();
  server.prependListener('connection', (socket: Socket) => {
    const ip = socket.remoteAddress ?? 'unknown';
    const n = open.get(ip) ?? 0;
    if (n >= max) {
      refused.add(socket);
      const timer = setTimeout(() => socket.destroy(), REFUSED_GRACE_MS);
      timer.unref();
      socket.once('close', () => clearTimeout(timer));
      return;
    }
    open.set(ip, n + 1);
    socket.once('close', () => {
      const left = (open.get(ip) ?? 1) - 1;
      if (left > 0) open.set(ip, left);
      else open.delete(ip);
    });
  });
}
