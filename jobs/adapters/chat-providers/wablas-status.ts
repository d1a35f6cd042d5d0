import { endpoint, present, resolveRoot } from './define.js';
import { exchange } from './http.js';
import { str } from './inbound.js';
import { readResult } from './read-result.js';
import { wablas } from './wablas.js';
import type { CallOptions, ChatAccount } from './types.js';

/**
 * Wablas's delivery report and device status (issue 11 item 3; document 2 "Chat bot"
 * sync-status, sync-device-status). Source: Wablas "Documentation API Gateway",
 * https://wablas.com/documentation/api (a copy of the page is in the public index), sections:
 * - "Report Realtime" ("report of messages sent from the device today"): `GET
 *   {base}/api/report-realtime?page=&message_id=&limit=` with `Authorization: token.secret_key`;
 *   `message_id` takes several ids separated by commas, `limit` at most 1000. Answer `{status:
 *   true, message, device_id, page, totalPage, totalData, message: [{id, phone: {from, to},
 *   message, status, category, type, date: {created_at, updated_at}}]}` (the page shows `message`
 *   twice; a JSON reader keeps the list). Statuses documented for the reports: pending, sent, read,
 *   cancel; delivered and failed are read too (the tracking webhook's words).
 * - "Device Info": `GET {base}/api/device/info?token=` -> `{status: true, data: {name, serial,
 *   sender, quota, expired_date, active, status: 'connected'|'disconnected'}}`.
 * Times of the report carry no zone (`2022-04-11 07:07:37`); they are not used (decision: the
 * sync's own time is the time a change was learnt).
 */

/** One message of the realtime report. */
export interface ReportItem {
  id: string;
  /** the provider's word, lower case (pending, sent, delivered, read, cancel, failed, ...) */
  status: string;
}

/** What a report call found, or why it could not be read. */
export type ReportResult = { ok: true; items: ReportItem[] } | { ok: false; transient: boolean; error: string };

/** Largest number of message ids asked for in one report call (ids of 36 characters: a URL under 4 KB). */
export const REPORT_IDS_PER_CALL = 50;

function authorization(account: ChatAccount): string {
  return present(account.secret_key) ? `${account.token}.${account.secret_key}` : String(account.token ?? '');
}

function rootOf(account: ChatAccount, opts: CallOptions): { root: string } | { error: string } {
  if (opts.rootOverride) return { root: opts.rootOverride.replace(/\/+$/, '') };
  return resolveRoot(wablas, account);
}

/** The report's list: top-level `message` (documented), `data.message` or `data` when a list. */
function listOf(body: Record<string, unknown>): unknown[] | null {
  if (Array.isArray(body.message)) return body.message;
  const data = body.data;
  if (Array.isArray(data)) return data;
  if (data && typeof data === 'object' && Array.isArray((data as Record<string, unknown>).message))
    return (data as Record<string, unknown>).message as unknown[];
  return null;
}

/**
 * Asks Wablas's realtime report about some message ids (at most REPORT_IDS_PER_CALL).
 * @param ids provider message ids (non-empty)
 * @returns the items the report lists (ids it does not list are simply absent), or the error
 *   (`transient` for network trouble, 408, 429, 5xx)
 */
export async function wablasRealtimeReport(
  account: ChatAccount,
  ids: readonly string[],
  opts: CallOptions = {},
): Promise<ReportResult> {
  if (!present(account.token)) return { ok: false, transient: false, error: 'wablas: the account has no device token' };
  const root = rootOf(account, opts);
  if ('error' in root) return { ok: false, transient: false, error: `wablas: ${root.error}` };
  const outcome = await exchange(
    {
      call: 'check',
      provider: 'wablas',
      method: 'GET',
      url: endpoint(root.root, '/api/report-realtime', {
        page: '1',
        limit: String(Math.max(ids.length, 1)),
        message_id: ids.join(','),
      }),
      headers: { authorization: authorization(account) },
      secrets: [account.token, account.secret_key],
    },
    opts,
  );
  const read = readResult(outcome, 'wablas report');
  if (!read.ok) return read;
  const list = listOf(read.body);
  if (!list) return { ok: false, transient: false, error: 'wablas report: the answer has no message list' };
  const items: ReportItem[] = [];
  for (const raw of list) {
    if (!raw || typeof raw !== 'object') continue;
    const r = raw as Record<string, unknown>;
    const id = str(r.id);
    const status = str(r.status);
    if (id && status) items.push({ id, status: status.toLowerCase() });
  }
  return { ok: true, items };
}

/** A device status as stored (wabot_account_states.device_status). */
export type DeviceState = 'connected' | 'disconnected' | 'unknown' | 'error';

/** What a device check found. */
export interface DeviceResult {
  status: DeviceState;
  /** a short text: the device's name, quota and expiry, or the error; never a secret */
  detail: string;
}

/**
 * Wablas's device status through `GET /api/device/info` (the adapter's connection check).
 * @returns connected / disconnected as the device says, `unknown` for another word, `error` when
 *   the call failed (detail says why)
 */
export async function wablasDeviceStatus(account: ChatAccount, opts: CallOptions = {}): Promise<DeviceResult> {
  const outcome = await wablas.checkConnection(account, opts);
  const read = readResult(outcome, 'wablas device info');
  if (!read.ok) return { status: 'error', detail: read.error };
  const data = read.body.data && typeof read.body.data === 'object' ? (read.body.data as Record<string, unknown>) : {};
  const word = (str(data.status) ?? '').toLowerCase();
  const status: DeviceState = /disconnect/.test(word) ? 'disconnected' : /connect/.test(word) ? 'connected' : 'unknown';
  const parts = [
    str(data.name) ? `name ${str(data.name)}` : null,
    data.quota != null ? `quota ${String(data.quota)}` : null,
    str(data.expired_date) ? `expires ${str(data.expired_date)}` : null,
    data.active === false ? 'inactive' : null,
    status === 'unknown' ? `status ${word || 'not given'}` : null,
  ].filter((p): p is string => !!p);
  return { status, detail: parts.join(', ').slice(0, 300) };
}
