/**
 * The fake chat gateway of `npm start` (issue 10 item 6): a loopback HTTP server that speaks the
 * three Wablas calls jobs/adapters/chat-providers/wablas.ts makes (send, device status) or a later
 * sync-status will make (realtime report), so the real wablas adapter works against it. It
 * delivers nothing: it records each arrival (with its arrival time and the gap since the same
 * device's previous one, to check the pace), logs it, and lists it on an HTML page labelled FAKE.
 * The first send to `620000000000` is refused with Wablas's documented refusal in an HTTP 200
 * (`{status: false, message}`, classified `permanent` / `invalid_recipient`); later ones pass.
 *
 * Run by bin/dev.ts as the process `wabot` unless WABOT_DEMO=off; WABOT_DEMO_PORT (default 3002,
 * lib/config.ts).
 * Wablas calls (https://wablas.com/documentation/api):
 * - `POST /api/send-message` (form or JSON: phone, message, isGroup), `Authorization: token` or
 *   `token.secret_key` -> `{status: true, message, data: {device_id, quota, messages: [{id, phone,
 *   message, status: 'pending'}]}}`
 * - `GET /api/report-realtime?message_id=&page=&limit=` (Authorization; `message_id` one id or
 *   several separated by commas) -> the documented "Report Realtime" answer `{status: true,
 *   device_id, page, totalPage, totalData, message: [{id, phone: {from, to}, message, status,
 *   category, type, date: {created_at, updated_at}}]}` (times `YYYY-MM-DD HH:mm:ss`, Asia/Jakarta);
 *   a message reads `pending` for its first 2 s, `sent` until 4 s, `delivered` until 8 s, then
 *   `read` (simulated; issue 11's "delivered, then read, seconds after a send")
 * - `GET /api/device/info?token=` -> `{status: true, data: {..., status: 'connected'}}`
 * - `POST /api/device/change-webhook-url` and `/change-tracking-url` (form `webhook_url` /
 *   `tracking_url`) -> `{status: true, message: 'webhook url successfully changed'}` (logged
 *   without the URL's key)
 * A missing token answers 401 `{status: false, message: 'token invalid'}`. Tokens never appear in
 * a log line or on the page: a device is shown by its demo label or a hash of its token.
 */
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isMainModule, runService } from '../lib/process.js';
import { loadConfig } from '../lib/config.js';
import { DEMO_WABOT_DEVICES } from '../db/seeds/demo-wabot.js';
import { renderArrivalsPage } from './dev-wabot-page.js';

/** The number whose first send is refused (issue 10 item 6). */
export const REFUSED_ONCE_NUMBER = '620000000000';
/** How long a message reads `pending` in the realtime report before it reads `sent`. */
export const PENDING_MS = 2000;
/** When (ms after the send) a message reads `delivered`, then `read`. */
export const DELIVERED_MS = 4000;
export const READ_MS = 8000;

/** The report's status of a message sent `age` ms ago. */
export function reportStatusAt(age: number): 'pending' | 'sent' | 'delivered' | 'read' {
  if (age >= READ_MS) return 'read';
  if (age >= DELIVERED_MS) return 'delivered';
  return age >= PENDING_MS ? 'sent' : 'pending';
}

/** `YYYY-MM-DD HH:mm:ss` in Asia/Jakarta (UTC+7, no DST), as Wablas's report writes its times. */
function wablasTime(ms: number): string {
  return new Date(ms + 7 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');
}
const MAX_BODY = 64 * 1024;
const MAX_KEPT = 1000;

/** One request that reached the send endpoint. */
export interface Arrival {
  /** 1, 2, ... in arrival order */
  seq: number;
  /** arrival time, ms since the epoch */
  at: number;
  /** ms since the same device's previous arrival, null for its first */
  gapMs: number | null;
  /** the device's demo label, or `device <6 hex of the token's SHA-256>` */
  device: string;
  phone: string;
  isGroup: boolean;
  /** the text, at most 500 characters */
  message: string;
  /** accepted (with the message id) or refused (with the reason) */
  result: 'accepted' | 'refused';
  id: string | null;
  reason: string | null;
}

/** Options of startFakeWablas. */
export interface FakeWablasOptions {
  /** TCP port (0 = any free one) */
  port?: number;
  /** display labels of known device tokens (default: the demo-isp accounts) */
  devices?: Readonly<Record<string, string>>;
  /** where arrival lines go (default: none) */
  log?: (line: string) => void;
  /** the clock, ms since the epoch (default Date.now) */
  now?: () => number;
}

/** A running fake gateway. */
export interface FakeWablas {
  /** `http://127.0.0.1:<port>`: the base URL of a wablas account */
  url: string;
  /** arrivals so far, oldest first (the last 1000) */
  arrivals: Arrival[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseFields(text: string, type: string | undefined): Record<string, string> {
  if (/json/i.test(type ?? '')) {
    const j = JSON.parse(text || '{}') as Json;
    return Object.fromEntries(Object.entries(j).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  }
  return Object.fromEntries(new URLSearchParams(text));
}

/**
 * Starts the fake Wablas gateway on 127.0.0.1 (loopback only).
 * @returns its URL, the arrivals and close()
 * @throws the listen error (e.g. EADDRINUSE)
 */
export async function startFakeWablas(opts: FakeWablasOptions = {}): Promise<FakeWablas> {
  const devices = opts.devices ?? DEMO_WABOT_DEVICES;
  const now = opts.now ?? Date.now;
  const log = opts.log ?? (() => {});
  const arrivals: Arrival[] = [];
  const sent = new Map<string, { device: string; phone: string; message: string; at: number }>();
  const lastAt = new Map<string, number>();
  const refused = new Set<string>();
  let seq = 0;

  const deviceOf = (token: string) =>
    devices[token] ?? `device ${createHash('sha256').update(token).digest('hex').slice(0, 6)}`;
  /** the token part of `Authorization: token` or `token.secret_key` */
  const tokenOf = (req: http.IncomingMessage) =>
    String(req.headers.authorization ?? '')
      .split('.')[0]
      .trim();

  const answer = (res: http.ServerResponse, status: number, body: Json) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const noToken = (res: http.ServerResponse) => answer(res, 401, { status: false, message: 'token invalid' });

  async function send(req: http.IncomingMessage, res: http.ServerResponse) {
    const token = tokenOf(req);
    if (!token) return noToken(res);
    let fields: Record<string, string>;
    try {
      fields = parseFields(await readBody(req), req.headers['content-type']);
    } catch {
      return answer(res, 400, { status: false, message: 'unreadable request body' });
    }
    const phone = (fields.phone ?? '').trim();
    const message = fields.message ?? '';
    if (!phone || !message) return answer(res, 400, { status: false, message: 'phone and message are required' });
    const at = now();
    const device = deviceOf(token);
    const prev = lastAt.get(device);
    lastAt.set(device, at);
    const isGroup = fields.isGroup === 'true';
    const a: Arrival = {
      seq: ++seq,
      at,
      gapMs: prev === undefined ? null : at - prev,
      device,
      phone,
      isGroup,
      message: message.slice(0, 500),
      result: 'accepted',
      id: null,
      reason: null,
    };
    if (phone === REFUSED_ONCE_NUMBER && !refused.has(phone)) {
      refused.add(phone);
      a.result = 'refused';
      a.reason = `phone number ${phone} is not registered on WhatsApp (FAKE gateway: the first send to it is always refused)`;
    } else {
      a.id = randomUUID();
      sent.set(a.id, { device, phone, message: a.message, at });
    }
    arrivals.push(a);
    if (arrivals.length > MAX_KEPT) arrivals.shift();
    const gap = a.gapMs === null ? 'first of this device' : `+${(a.gapMs / 1000).toFixed(2)} s after its previous`;
    log(
      `#${a.seq} ${new Date(at).toISOString()} ${device} -> ${isGroup ? 'group ' : ''}${phone} (${gap}): ` +
        (a.id ? `accepted ${a.id}` : 'refused'),
    );
    if (!a.id) return answer(res, 200, { status: false, message: a.reason });
    return answer(res, 200, {
      status: true,
      message: 'Message is pending and waiting to be processed (FAKE gateway: nothing is delivered)',
      data: {
        device_id: device,
        quota: 9999,
        messages: [{ id: a.id, phone, message: a.message, status: 'pending', ref_id: null }],
      },
    });
  }

  function report(req: http.IncomingMessage, res: http.ServerResponse, q: URLSearchParams) {
    const token = tokenOf(req);
    if (!token) return noToken(res);
    const device = deviceOf(token);
    const ids = new Set(
      (q.get('message_id') ?? '')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    );
    const mine = [...sent.entries()].filter(([k, m]) => m.device === device && (!ids.size || ids.has(k))).reverse();
    if (ids.size && !mine.length) return answer(res, 200, { status: false, message: 'message not found' });
    const perPage = Math.min(1000, Math.max(1, Number.parseInt(q.get('limit') ?? '10', 10) || 10));
    const page = Math.max(1, Number.parseInt(q.get('page') ?? '1', 10) || 1);
    const t = now();
    const rows = mine.slice((page - 1) * perPage, page * perPage).map(([k, m]) => {
      const status = reportStatusAt(t - m.at);
      const changed = { pending: 0, sent: PENDING_MS, delivered: DELIVERED_MS, read: READ_MS }[status];
      return {
        id: k,
        phone: { from: device, to: m.phone },
        message: m.message,
        file: null,
        status,
        category: 'text',
        type: 'agent',
        date: { created_at: wablasTime(m.at), updated_at: wablasTime(m.at + changed) },
      };
    });
    return answer(res, 200, {
      status: true,
      device_id: device,
      page,
      totalPage: Math.max(1, Math.ceil(mine.length / perPage)),
      totalData: mine.length,
      message: rows,
    });
  }

  async function changeUrl(req: http.IncomingMessage, res: http.ServerResponse, field: 'webhook_url' | 'tracking_url') {
    const token = tokenOf(req);
    if (!token) return noToken(res);
    let fields: Record<string, string>;
    try {
      fields = parseFields(await readBody(req), req.headers['content-type']);
    } catch {
      return answer(res, 400, { status: false, message: 'unreadable request body' });
    }
    const url = (fields[field] ?? '').trim();
    if (!url) return answer(res, 400, { status: false, message: `${field} is required` });
    log(`${deviceOf(token)}: ${field} set to ${url.split('?')[0]} (key not logged)`);
    const what = field === 'webhook_url' ? 'webhook url' : 'tracking url';
    return answer(res, 200, { status: true, message: `${what} successfully changed` });
  }

  function deviceInfo(res: http.ServerResponse, q: URLSearchParams) {
    const token = (q.get('token') ?? '').trim();
    if (!token) return noToken(res);
    return answer(res, 200, {
      status: true,
      message: 'success',
      data: { name: `FAKE ${deviceOf(token)}`, sender: null, quota: 9999, expired_date: null, status: 'connected' },
    });
  }

  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = `${req.method} ${u.pathname.replace(/\/+$/, '') || '/'}`;
    const fail = (e: unknown) => {
      if (!res.headersSent) answer(res, 500, { status: false, message: `FAKE gateway error: ${(e as Error).message}` });
    };
    try {
      if (route === 'POST /api/send-message') return void send(req, res).catch(fail);
      if (route === 'GET /api/report-realtime') return report(req, res, u.searchParams);
      if (route === 'GET /api/device/info') return deviceInfo(res, u.searchParams);
      if (route === 'POST /api/device/change-webhook-url') return void changeUrl(req, res, 'webhook_url').catch(fail);
      if (route === 'POST /api/device/change-tracking-url') return void changeUrl(req, res, 'tracking_url').catch(fail);
      if (route === 'GET /arrivals.json') return answer(res, 200, { fake: true, arrivals: [...arrivals].reverse() });
      if (route === 'GET /') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
        return void res.end(renderArrivalsPage([...arrivals].reverse(), REFUSED_ONCE_NUMBER));
      }
      return answer(res, 404, { status: false, message: 'not found (FAKE wablas gateway)' });
    } catch (e) {
      fail(e);
    }
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (isMainModule(import.meta.url)) {
  runService(async () => {
    const line = (s: string) => process.stdout.write(`${s}\n`);
    const gw = await startFakeWablas({ port: loadConfig().wabotDemoPort, log: line });
    line(`FAKE wablas gateway on ${gw.url} (loopback only; delivers nothing; arrivals at ${gw.url}/)`);
    return { close: gw.close, graceMs: 1000 };
  });
}
