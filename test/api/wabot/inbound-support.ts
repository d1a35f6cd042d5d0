import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { TestApp, TestResponse } from '../../helpers/http.js';
import type { TenantFixture } from '../../helpers/fixtures.js';

/** Helpers of the inbound-webhook tests (issue 11 items 1, 2): fixtures, form encoding, a configured tenant. */

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/wabot');

/** A fixture of test/fixtures/wabot (a fresh copy each call). */
export function fixture(name: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(DIR, `${name}.json`), 'utf8'));
}

/**
 * A nested body as a form, keys in bracket form (`payload[from]`, `entry[0][messaging][0][sender][id]`)
 * as qs reads them.
 */
export function toForm(body: unknown): string {
  const out = new URLSearchParams();
  const walk = (v: unknown, key: string) => {
    if (v === null || v === undefined) return;
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${key}[${i}]`));
    else if (typeof v === 'object')
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) walk(x, key ? `${key}[${k}]` : k);
    else out.append(key, String(v));
  };
  walk(body, '');
  return out.toString();
}

/** The page id of the Messenger account (messenger-*.json's recipient). */
export const PAGE_ID = '104512345678901';

/** One account per provider, numbered as the fixtures' device numbers. */
export const ACCOUNTS = [
  { id: 'acc-wablas', provider: 'wablas', token: 'wb-tok', number: '6281200000001', base_url: 'https://wablas.test' },
  { id: 'acc-fonnte', provider: 'fonnte', token: 'fn-tok', number: '6281200000002' },
  { id: 'acc-ruangwa', provider: 'ruangwa', token: 'rw-tok', number: '6281200000003' },
  {
    id: 'acc-waha',
    provider: 'waha',
    token: 'wh-tok',
    secret_key: 'default',
    number: '6281200000004',
    base_url: 'https://waha.test',
  },
  { id: 'acc-messenger', provider: 'messenger', token: 'page-tok', secret_key: PAGE_ID },
  { id: 'acc-watzap', provider: 'watzap', token: 'wz-key', secret_key: 'wz-number-key', number: '6281200000006' },
  { id: 'acc-starsender', provider: 'starsender', token: 'ss-key', number: '6281200000007' },
];

/**
 * Saves a configuration with the seven accounts (or the given ones) and returns GET config's data.
 * @param settings settings beyond the defaults (enabled true unless given)
 */
export async function configure(
  app: TestApp,
  f: TenantFixture,
  settings: Record<string, unknown> = {},
  accounts: readonly Record<string, unknown>[] = ACCOUNTS,
) {
  const res = await app.request('PUT', '/api/wabot/config', {
    token: f.adminToken,
    body: { provider: 'wablas', settings: { base_url: 'https://wablas.test', enabled: true, ...settings, accounts } },
  });
  expect(res.status, res.text).to.equal(200);
  return res.body.data as { webhook_url: string; accounts: { id: string; webhook_url: string }[] };
}

/** The path and query of a webhook URL (the test app listens elsewhere than PUBLIC_BASE_URL). */
export function pathOf(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

/** POSTs a body to a webhook path as JSON or as a form. */
export function post(app: TestApp, url: string, body: unknown, as: 'json' | 'form' = 'json'): Promise<TestResponse> {
  return as === 'json'
    ? app.request('POST', pathOf(url), { body })
    : app.request('POST', pathOf(url), {
        raw: toForm(body),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
}
