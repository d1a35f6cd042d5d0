import type { Knex } from 'knex';
import { TenantScope } from '../../db/tenant-scope.js';
import type { Clock } from '../../lib/clock.js';
import type { CallOptions } from '../adapters/chat-providers/types.js';
import {
  REPORT_IDS_PER_CALL,
  wablasDeviceStatus,
  wablasRealtimeReport,
  type DeviceState,
} from '../adapters/chat-providers/wablas-status.js';
import { storeDeviceStatus } from './account-states.js';
import type { ChatSendConfig, SendAccount } from './send-config.js';

/**
 * The chat bot's status sync (issue 11 item 3; document 2 "Chat bot" sync-status,
 * sync-device-status): reads Wablas's realtime report for outbound messages still `pending` or
 * `sent`, and each Wablas device's status. It only reads from the provider and moves rows
 * forward: it never sends or resends anything.
 */

/** How far back sync-status looks, in ms (decision: 7 days; Wablas's report covers "today"). */
export const SYNC_WINDOW_MS = 7 * 86_400_000;
/** Default and largest number of outbox rows one sync-status checks (document 2 "Limits"). */
export const SYNC_DEFAULT_LIMIT = 50;
export const SYNC_MAX_LIMIT = 200;

/** The enabled wablas accounts of a configuration (the only ones with a report). */
export function wablasAccounts(config: ChatSendConfig | null): SendAccount[] {
  return (config?.accounts ?? []).filter((a) => a.provider === 'wablas' && a.enabled);
}

/** What sync-status answers (200 either way). */
export type SyncStatusResult =
  | { ok: true; checked: number; updated: number }
  | { ok: false; warning: true; message: string; checked: number; updated: number };

type Target = 'sent' | 'delivered' | 'read' | 'failed';

/** A report word -> the outbox status it means; null for pending or an unknown word (no change). */
export function reportStatus(word: string): Target | null {
  const s = word.toLowerCase();
  if (/read|play/.test(s)) return 'read';
  if (/deliver|receiv/.test(s)) return 'delivered';
  if (/cancel|fail|reject|invalid|error|expire/.test(s)) return 'failed';
  if (/^sent$|success|server/.test(s)) return 'sent';
  return null;
}

/** Statuses a report may move a row from (forward only; failed only before delivery). */
const FROM: Record<Target, string[]> = {
  sent: ['pending'],
  delivered: ['pending', 'sent'],
  read: ['pending', 'sent', 'delivered'],
  failed: ['pending', 'sent'],
};

/** Options of the sync calls. */
export interface SyncOptions {
  clock: Clock;
  /** provider call options (timeout, root override of tests and the fake gateway) */
  call?: CallOptions;
}

/**
 * Checks up to `limit` outbound chat rows with a message id in `pending` or `sent` on the
 * tenant's enabled wablas accounts, oldest first, queued in the last SYNC_WINDOW_MS, against
 * Wablas's realtime report, and moves each to sent, delivered, read (times filled where empty) or
 * failed (`provider_failed`) as reported.
 * @param limit 1..SYNC_MAX_LIMIT
 * @returns ok with the counts, or ok=false warning=true naming the provider error (rows of the
 *   accounts that answered are still updated)
 */
export async function syncStatus(
  knex: Knex,
  config: ChatSendConfig | null,
  tenantId: number,
  limit: number,
  opts: SyncOptions,
): Promise<SyncStatusResult> {
  const accounts = wablasAccounts(config);
  if (!accounts.length)
    return { ok: false, warning: true, message: 'No enabled wablas account.', checked: 0, updated: 0 };
  const scope = new TenantScope(knex, tenantId);
  const now = opts.clock.now();
  const rows: { id: string; account_ref: string; message_id: string }[] = await scope
    .table('communication_messages')
    .where({ direction: 'out', channel: 'whatsapp' })
    .whereIn('status', ['pending', 'sent'])
    .whereNotNull('message_id')
    .whereIn(
      'account_ref',
      accounts.map((a) => a.id),
    )
    .where('occurred_at', '>=', new Date(now.getTime() - SYNC_WINDOW_MS))
    .orderBy([{ column: 'occurred_at' }, { column: 'id' }])
    .limit(limit)
    .select('id', 'account_ref', 'message_id');
  let updated = 0;
  const errors: string[] = [];
  for (const account of accounts) {
    const mine = rows.filter((r) => r.account_ref === account.id);
    for (let i = 0; i < mine.length; i += REPORT_IDS_PER_CALL) {
      const chunk = mine.slice(i, i + REPORT_IDS_PER_CALL);
      const report = await wablasRealtimeReport(
        account,
        chunk.map((r) => r.message_id),
        opts.call,
      );
      if (!report.ok) {
        errors.push(`${account.label || account.id}: ${report.error}`);
        break;
      }
      const byId = new Map(report.items.map((it) => [it.id, it.status]));
      for (const r of chunk) {
        const word = byId.get(r.message_id);
        const target = word ? reportStatus(word) : null;
        if (target) updated += await apply(scope, Number(r.id), target, word!, opts.clock.now());
      }
    }
  }
  if (errors.length)
    return {
      ok: false,
      warning: true,
      message: `The provider could not be read (temporary): ${errors.join('; ')}`.slice(0, 500),
      checked: rows.length,
      updated,
    };
  return { ok: true, checked: rows.length, updated };
}

async function apply(scope: TenantScope, id: number, target: Target, word: string, now: Date): Promise<number> {
  const k = scope.knex;
  const set: Record<string, unknown> = { status: target, updated_at: now };
  if (target === 'failed') {
    Object.assign(set, {
      failed_at: now,
      error_code: 'provider_failed',
      error_message: `wablas report: ${word}`.slice(0, 500),
    });
  } else {
    set.sent_at = k.raw('coalesce(sent_at, ?)', [now]);
    if (target !== 'sent') set.delivered_at = k.raw('coalesce(delivered_at, ?)', [now]);
    if (target === 'read') set.read_at = k.raw('coalesce(read_at, ?)', [now]);
  }
  return scope.table('communication_messages').where({ id }).whereIn('status', FROM[target]).update(set);
}

/** One account's device status as sync-device-status answers it. */
export interface DeviceStatusItem {
  account_id: string;
  label: string;
  status: DeviceState;
  detail: string;
  checked_at: string;
}

/**
 * Checks each enabled wablas account's device (Wablas "Device Info") and stores the result per
 * account (wabot_account_states).
 * @returns one item per account, in configuration order
 */
export async function syncDeviceStatus(
  knex: Knex,
  config: ChatSendConfig | null,
  tenantId: number,
  opts: SyncOptions,
): Promise<DeviceStatusItem[]> {
  const out: DeviceStatusItem[] = [];
  for (const account of wablasAccounts(config)) {
    const r = await wablasDeviceStatus(account, opts.call);
    const at = opts.clock.now();
    await storeDeviceStatus(knex, tenantId, account.id, r, at);
    out.push({
      account_id: account.id,
      label: account.label,
      status: r.status,
      detail: r.detail,
      checked_at: at.toISOString(),
    });
  }
  return out;
}
