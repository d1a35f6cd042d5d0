import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Koa from 'koa';
import { createDashboardRouter, type DashboardDeps } from '../../../api/mail/dashboard/index.js';
import { createOperator } from '../../../api/mail/operators/service.js';
import { createLogger } from '../../../lib/logger.js';
import { env, registerCleanup } from '../../helpers/env.js';

/** A dashboard served alone on a loopback port (the mail app mounts the same router at its root). */
export interface DashServer {
  url: string;
  appKey: Buffer;
  logs: string[];
}

/** Starts the dashboard router in its own Koa app against the test database and Redis. */
export async function startDashboard(config: Partial<DashboardDeps['config']> = {}): Promise<DashServer> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const appKey = config.appKey ?? randomBytes(32);
  const router = createDashboardRouter({
    knex: env.knex,
    redis: env.redis,
    logger: createLogger('info', sink),
    config: {
      mailBaseUrl: 'http://127.0.0.1',
      loginThrottle: { points: 5, durationSeconds: 900, keyPrefix: `t-dash-${randomBytes(4).toString('hex')}` },
      ...config,
      appKey,
    },
  });
  const app = new Koa();
  app.silent = true;
  app.use(router.routes());
  app.use(router.allowedMethods());
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  registerCleanup(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, appKey, logs };
}

/** A response as the tests see it. */
export interface Page {
  status: number;
  text: string;
  headers: Headers;
  location: string | null;
  setCookies: string[];
}

/** A minimal browser: a cookie jar, GET and form POST, no redirects followed. */
export class Client {
  readonly jar = new Map<string, string>();
  constructor(readonly base: string) {}

  private cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private async send(method: string, path: string, body?: string): Promise<Page> {
    const headers: Record<string, string> = { accept: 'text/html' };
    if (this.jar.size) headers.cookie = this.cookieHeader();
    if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(this.base + path, { method, headers, body, redirect: 'manual' });
    const setCookies = res.headers.getSetCookie();
    for (const c of setCookies) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i);
      const value = pair.slice(i + 1);
      if (/Max-Age=0/i.test(c) || !value) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return {
      status: res.status,
      text: await res.text(),
      headers: res.headers,
      location: res.headers.get('location'),
      setCookies,
    };
  }

  get(path: string): Promise<Page> {
    return this.send('GET', path);
  }

  /** POSTs a form; array values become repeated fields. */
  post(path: string, form: Record<string, string | string[] | undefined>): Promise<Page> {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) {
      if (v === undefined) continue;
      for (const x of Array.isArray(v) ? v : [v]) p.append(k, x);
    }
    return this.send('POST', path, p.toString());
  }

  /** Signs in (GET /login for the form token, then POST). */
  async login(email: string, password: string): Promise<Page> {
    const form = await this.get('/login');
    return this.post('/login', { _csrf: csrfOf(form.text), email, password });
  }
}

/** The CSRF token of the first form of a page. */
export function csrfOf(page: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(page);
  if (!m) throw new Error('no CSRF field on the page');
  return m[1];
}

/** A hidden field's value. */
export function fieldOf(page: string, name: string): string {
  const m = new RegExp(`name="${name}"\\s+value="([^"]*)"`).exec(page); // attributes may be on separate lines
  if (!m) throw new Error(`no field ${name} on the page`);
  return m[1];
}

export const OP_PASSWORD = 'operator password 1';

/** Creates an operator with a unique e-mail. */
export async function makeOperator(): Promise<{ id: number; email: string }> {
  const email = `op-${randomBytes(4).toString('hex')}@example.test`;
  const op = await createOperator(env.knex, { email, password: OP_PASSWORD, name: 'Test Operator' });
  return { id: op.id, email };
}

/** A unique domain name. */
export function domainName(): string {
  return `d-${randomBytes(4).toString('hex')}.test`;
}
