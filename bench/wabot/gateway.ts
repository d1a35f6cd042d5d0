import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { ChatSendConfig, SendAccount } from '../../jobs/wabot/send-config.js';

/**
 * A local fake of Wablas's send endpoint for the wabot-send tests and the wabot-throttle benchmark (not the demo
 * gateway of bin/): `POST /api/send-message` answers Wablas's documented success with a pending
 * message id, and records every arrival (time, account token, phone). Behaviour per phone:
 * `hang` phones never get an answer (the connection stays open), `status` phones get that HTTP
 * status (a Wablas refusal body, plain text for 5xx), everything else is accepted.
 */
export interface Arrival {
  /** performance.timeOrigin + performance.now(), ms (one clock for all arrivals) */
  atMs: number;
  token: string;
  phone: string;
  message: string;
}

export interface FakeGateway {
  url: string;
  arrivals: Arrival[];
  /** phones that get no answer */
  hang: Set<string>;
  /** phone -> status to answer (429 gets Retry-After: 1) */
  status: Map<string, number>;
  close(): Promise<void>;
}

/** Starts the fake gateway on a free loopback port. */
export async function startFakeGateway(): Promise<FakeGateway> {
  const arrivals: Arrival[] = [];
  const hang = new Set<string>();
  const status = new Map<string, number>();
  let n = 0;
  const server = http.createServer((req, res) => {
    const atMs = performance.timeOrigin + performance.now();
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const form = new URLSearchParams(body);
      const phone = form.get('phone') ?? '';
      arrivals.push({
        atMs,
        token: String(req.headers.authorization ?? ''),
        phone,
        message: form.get('message') ?? '',
      });
      if (req.method !== 'POST' || req.url !== '/api/send-message') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":false,"message":"not found"}');
        return;
      }
      if (hang.has(phone)) return;
      const code = status.get(phone);
      if (code) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (code === 429) headers['retry-after'] = '1';
        if (code >= 500) {
          res.writeHead(code, { 'content-type': 'text/plain' }).end('Internal Server Error');
          return;
        }
        const message = code === 401 ? 'token invalid' : `status ${code}`;
        res.writeHead(code, headers).end(JSON.stringify({ status: false, message }));
        return;
      }
      n += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          status: true,
          message: 'Message is pending and waiting to be processed',
          data: { messages: [{ id: `fake-${n}`, phone, message: form.get('message'), status: 'pending' }] },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    hang,
    status,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A wablas account at the gateway. */
export function gatewayAccount(gatewayUrl: string, id: string, over: Partial<SendAccount> = {}): SendAccount {
  return {
    id,
    provider: 'wablas',
    token: `tok-${id}-SENTINEL`,
    secret_key: null,
    number: null,
    base_url: gatewayUrl,
    label: id,
    enabled: true,
    weight: 1,
    maxPerMinute: 0,
    delaySeconds: 0,
    ...over,
  };
}

/** An in-memory configuration of a tenant. */
export function memoryConfig(
  tenantId: number,
  accounts: SendAccount[],
  over: Partial<ChatSendConfig> = {},
): ChatSendConfig {
  return {
    tenantId,
    enabled: true,
    callingCode: '62',
    defaultRecipient: null,
    accounts,
    poolVersion: accounts
      .filter((a) => a.enabled)
      .map((a) => `${a.id}:${a.weight}`)
      .join(','),
    ...over,
  };
}
