import net from 'node:net';
import nock from 'nock';
import { freePort } from '../../../../lib/infra/free-port.js';

/** What a nock interceptor saw of one request. */
export interface Seen {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * Intercepts one request to origin + path (any method) and answers status/body/headers, recording
 * the request. The returned `seen()` throws when nothing arrived.
 */
export function intercept(
  origin: string,
  method: 'get' | 'post',
  path: string | RegExp,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): { seen(): Seen; done(): boolean } {
  let seen: Seen | undefined;
  const scope = nock(origin)
    [method](path)
    .query(true)
    .reply(function (uri, reqBody) {
      const h: Record<string, string> = {};
      for (const [k, v] of Object.entries(this.req.headers)) h[k.toLowerCase()] = String(v);
      seen = {
        method: method.toUpperCase(),
        path: uri,
        headers: h,
        body: typeof reqBody === 'string' ? reqBody : JSON.stringify(reqBody),
      };
      return [status, typeof body === 'string' ? body : JSON.stringify(body), headers];
    });
  return {
    seen() {
      if (!seen) throw new Error('no request reached the interceptor');
      return seen;
    },
    done: () => scope.isDone(),
  };
}

/** A loopback TCP server that misbehaves after reading a whole request head. */
export interface Loopback {
  port: number;
  /** bytes the server received (the request, once written) */
  received(): string;
  close(): Promise<void>;
}

/**
 * Starts a server on 127.0.0.1. mode 'silent' reads and never answers (a timeout after write);
 * 'reset' destroys the connection once the request arrived (a reset after write); 'answer' replies
 * with the given raw HTTP response; 'garbage' answers plain HTTP to the first bytes (a TLS client
 * fails its handshake).
 */
export async function loopback(mode: 'silent' | 'reset' | 'answer' | 'garbage', raw = ''): Promise<Loopback> {
  let data = '';
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      data += chunk.toString('utf8');
      if (mode === 'garbage') socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      if (!data.includes('\r\n\r\n')) return;
      if (mode === 'reset') socket.resetAndDestroy();
      if (mode === 'answer') socket.end(raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    received: () => data,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 where nothing listens (connection refused). */
export const closedPort = freePort;

/** A raw HTTP/1.1 response with a JSON body. */
export function rawJson(status: number, body: unknown): string {
  const text = JSON.stringify(body);
  return `HTTP/1.1 ${status} X\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`;
}
