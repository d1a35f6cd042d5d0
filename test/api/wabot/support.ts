/**
 * Support of the chat-bot route tests (issue 10 items 4, 5): the web app, a `wabot-send` worker on
 * its queue prefix (the real processor, configuration loaded from the tables), the fake wablas
 * gateway of bin/dev-wabot.ts on a free loopback port, and tenants configured through the API.
 */
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { startWorkers } from '../../../workers/main.js';
import * as wabotSend from '../../../jobs/wabot-send.js';
import { createLogger } from '../../../lib/logger.js';
import { startFakeWablas, type FakeWablas } from '../../../bin/dev-wabot.js';

/** A running world: app, worker, gateway, and the worker's log lines. */
export interface WabotWorld {
  app: TestApp;
  gw: FakeWablas;
  workerLogs: string[];
  /** stops the worker and the gateway (also done by the run's cleanup) */
  close(): Promise<void>;
}

/**
 * Starts the app, a wabot-send worker on its prefix and the fake gateway (closed by the run's cleanup).
 * @param devices labels of device tokens on the gateway (none: `device <hash>`)
 */
export async function wabotWorld(devices: Record<string, string> = {}): Promise<WabotWorld> {
  const app = await startTestApp();
  const gw = await startFakeWablas({ port: 0, devices });
  registerCleanup(() => gw.close());
  const workerLogs: string[] = [];
  const sink = new Writable({
    write(chunk, _e, cb) {
      workerLogs.push(chunk.toString());
      cb();
    },
  });
  const handle = await startWorkers({
    redisUrl: env.redisUrl,
    knex: env.knex,
    appKey: TEST_WEB_APP_KEY,
    prefix: app.queues.prefix,
    logger: createLogger('info', sink),
    queues: ['wabot-send'],
    registry: { 'wabot-send': { processor: wabotSend.process, concurrency: 5 } },
  });
  registerCleanup(() => handle.close());
  return {
    app,
    gw,
    workerLogs,
    async close() {
      await handle.close();
      await gw.close();
    },
  };
}

/** A wablas account entry at the gateway (no limits unless given). */
export function gwAccount(gw: FakeWablas, id: string, over: Record<string, unknown> = {}) {
  return {
    id,
    provider: 'wablas',
    label: `Label ${id}`,
    token: `tok-${id}`,
    base_url: gw.url,
    weight: 1,
    max_messages_per_minute: 0,
    message_delay_seconds: 0,
    ...over,
  };
}

/**
 * A new tenant whose chat bot is saved through PUT /api/wabot/config.
 * @param settings merged into `settings` (accounts included)
 * @param top top-level fields (wa_number, provider, ...)
 */
export async function configuredTenant(
  app: TestApp,
  gw: FakeWablas,
  settings: Record<string, unknown>,
  top: Record<string, unknown> = {},
  opts: { demo?: boolean } = {},
): Promise<TenantFixture> {
  const t = await makeTenant(opts);
  const res = await app.request('PUT', '/api/wabot/config', {
    token: t.adminToken,
    body: {
      provider: 'wablas',
      wa_number: '0812 0000 0001',
      ...top,
      settings: { enabled: true, base_url: gw.url, max_messages_per_minute: 0, message_delay_seconds: 0, ...settings },
    },
  });
  expect(res.status, res.text).to.equal(200);
  return t;
}

/** The tenant's outbound chat rows, oldest first. */
export function chatRows(tenantId: number) {
  return env.knex('communication_messages').where({ tenant_id: tenantId }).whereNot('channel', 'email').orderBy('id');
}

/** Inserts an outbound chat row as the send path leaves it (default: a failed WhatsApp message). */
export async function chatRow(t: TenantFixture, over: Record<string, unknown> = {}): Promise<number> {
  const now = new Date();
  const [row] = await env
    .knex('communication_messages')
    .insert({
      tenant_id: t.tenant.id,
      channel: 'whatsapp',
      direction: 'out',
      status: 'failed',
      source: 'bot',
      account_ref: 'gone',
      counterpart: '0812-3456 7890',
      recipient_kind: 'phone',
      body_text: 'Your invoice INV-000001 is due.',
      snippet: 'Your invoice INV-000001 is due.',
      error_code: 'invalid_recipient',
      error_message: 'refused',
      occurred_at: now,
      queued_at: now,
      failed_at: now,
      ...over,
    })
    .returning('id');
  return Number(row.id);
}

/** Polls `fn` until it returns a truthy value (every 100 ms, at most `ms`). @returns that value */
export async function eventually<T>(fn: () => Promise<T>, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v || Date.now() >= until) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}
