import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { TenantScope } from '../../db/tenant-scope.js';
import { tenantScopeOf } from '../../db/tenant-routing.js';
import { WabotSetting } from '../../db/models/index.js';
import { webhookKeyMatches } from '../../db/wabot-secrets.js';
import { publishEvent } from '../events/service.js';
import { ModuleDisabled, NotFound, Unauthenticated, ValidationFailed } from '../errors.js';
import type { TenantInfo } from '../context.js';
import { normalizePhone, type ProviderName } from '../../jobs/adapters/chat-providers/index.js';
import {
  INBOUND_PARSERS,
  parseInboundWith,
  type InboundMessage,
  type InboundParse,
  type InboundReceipt,
} from '../../jobs/adapters/chat-providers/inbound-parsers.js';
import { loadChatSendConfig } from '../../jobs/wabot/load-config.js';
import type { SendAccount } from '../../jobs/wabot/send-config.js';
import { systemClock, type Clock } from '../../lib/clock.js';

/**
 * The chat bot's inbound webhook (issue 11 item 1; document 2 "Chat bot" `POST
 * /api/wabot/inbound/{tenant_slug}`, "Events"): providers call it without login, authenticated by
 * the tenant's webhook secret in `?key=`. authenticateInbound() runs before the body is read;
 * receiveInbound() reads the body with the tenant's providers' parsers
 * (jobs/adapters/chat-providers/inbound-parsers.ts) and, in one transaction, stores incoming
 * messages (publishing `inbound_chat_message` for each new one) and applies delivery receipts to
 * the outbox. Everything commits before the 200: a provider's retry adds nothing (the unique
 * inbound message id), a crash before the commit loses nothing the provider will not send again.
 */

/** The tenant and its chat-bot settings row, once the key matched. */
export interface InboundTenant {
  tenant: TenantInfo;
  settings: WabotSetting;
}

/** Slugs as tenants are created (a-z, 0-9, '-'); anything else cannot be a tenant. */
const SLUG = /^[a-z0-9][a-z0-9-]{0,99}$/;

/**
 * Finds the tenant of the path and checks the webhook key (constant time) and the module switch,
 * in that order, before anything else of the request is read.
 * @param key the `key` query value as received (a repeated parameter is refused)
 * @throws NotFound (404) for an unknown slug; Unauthenticated (401) for a missing or wrong key, or a
 *   tenant without chat-bot configuration (no key exists); ModuleDisabled (403) when wabot is off
 */
export async function authenticateInbound(
  knex: Knex,
  appKey: Buffer | undefined,
  slug: string,
  key: unknown,
): Promise<InboundTenant> {
  const tenant: TenantInfo | undefined = SLUG.test(slug)
    ? await knex('tenants')
        .select('id', 'slug', 'name', 'demo_mode', 'modules', 'settings', 'timezone')
        .where({ slug })
        .first()
    : undefined;
  if (!tenant) throw new NotFound('Tenant');
  // the tenant's database after its cutover (issue 15 item 4)
  const settings = await (await tenantScopeOf(knex, tenant.id, appKey)).query(WabotSetting).first();
  const ok =
    typeof key === 'string' &&
    key.length > 0 &&
    key.length <= 200 &&
    !!settings &&
    !!appKey &&
    webhookKeyMatches(appKey, tenant.id, settings.webhook_secret_enc, key);
  if (!ok) throw new Unauthenticated('The webhook key is missing or wrong.');
  if (!(tenant.modules ?? []).includes('wabot')) throw new ModuleDisabled('wabot');
  return { tenant, settings: settings! };
}

/** What one call did (the route answers `{ok: true}` whatever it was; tests and logs read this). */
export interface InboundResult {
  provider: ProviderName;
  account_id: string;
  /** new inbound rows (each published as `inbound_chat_message`) */
  stored: number[];
  /** messages already stored (a provider's redelivery) */
  duplicates: number;
  /** own messages, echoes, groups with ignore_groups, other event kinds */
  dropped: number;
  /** outbox rows a receipt or read watermark changed */
  receipts: number;
}

/**
 * Reads and applies one webhook call (see the file comment).
 * @param accountId the `account` query parameter (GET config lists a URL per account), or undefined
 *   to detect the account: the parsers of the tenant's accounts' providers are tried in
 *   configuration order; the payload's device number, page id or session picks the account of that
 *   provider, else its first enabled account
 * @param body the parsed JSON or form body
 * @throws ValidationFailed (422) for an unknown `account`, or when no parser of the tenant's
 *   providers reads the body
 */
export async function receiveInbound(
  knex: Knex,
  appKey: Buffer | undefined,
  at: InboundTenant,
  accountId: string | undefined,
  body: unknown,
  clock: Clock = systemClock,
  routed?: TenantScope,
): Promise<InboundResult> {
  // the tenant's database after its cutover (issue 15 item 4): the route's scope, else a fresh one
  const tenantScope = routed ?? (await tenantScopeOf(knex, at.tenant.id, appKey));
  const config = await loadChatSendConfig(knex, appKey, at.tenant.id, tenantScope);
  const accounts = config?.accounts ?? [];
  const record = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  let fixed: SendAccount | undefined;
  let parsed: InboundParse | null;
  if (accountId !== undefined) {
    fixed = accounts.find((a) => a.id === accountId);
    if (!fixed) throw new ValidationFailed({ account: ['The account is not configured for this tenant.'] });
    const items = INBOUND_PARSERS[fixed.provider](record);
    parsed = items ? { provider: fixed.provider, items } : null;
  } else {
    parsed = parseInboundWith([...new Set(accounts.map((a) => a.provider))], record);
  }
  if (!parsed) {
    const names = fixed ? fixed.provider : [...new Set(accounts.map((a) => a.provider))].join(', ') || 'none';
    throw new ValidationFailed({ body: [`No parser of this tenant's chat providers (${names}) reads this payload.`] });
  }
  const cc = config?.callingCode ?? '62';
  const candidates = accounts.filter((a) => a.provider === parsed.provider);
  const result: InboundResult = {
    provider: parsed.provider,
    account_id: '',
    stored: [],
    duplicates: 0,
    dropped: 0,
    receipts: 0,
  };
  const now = clock.now();
  await tenantScope.knex.transaction(async (trx) => {
    const scope = tenantScope.withTransaction(trx);
    for (const item of parsed.items) {
      const account = fixed ?? pickAccount(candidates, 'accountRef' in item ? item.accountRef : null, cc);
      result.account_id = account.id;
      if (item.kind === 'ignored') result.dropped += 1;
      else if (item.kind === 'message') await storeMessage(scope, at, account, item, cc, now, result);
      else if (item.kind === 'receipt') result.receipts += await applyReceipt(scope, account, item, now);
      else result.receipts += await applyReadWatermark(scope, item.chat, item.watermark, now);
    }
  });
  return result;
}

/** Digits of a phone, or null when it is none (normalizePhone's rules). */
function phoneOrNull(raw: string | null | undefined, cc: string): string | null {
  if (!raw) return null;
  try {
    return normalizePhone(raw, cc);
  } catch {
    return null;
  }
}

/**
 * The account a payload names: messenger by page id and waha by session (the secret key), the
 * others by their own number; else the provider's first enabled account, else its first.
 */
function pickAccount(candidates: SendAccount[], ref: string | null, cc: string): SendAccount {
  if (ref) {
    const byKey = candidates.find((a) => a.secret_key && a.secret_key.trim() === ref);
    if (byKey && (byKey.provider === 'messenger' || byKey.provider === 'waha')) return byKey;
    const digits = phoneOrNull(ref, cc);
    const byNumber = digits && candidates.find((a) => phoneOrNull(a.number, cc) === digits);
    if (byNumber) return byNumber;
  }
  return candidates.find((a) => a.enabled) ?? candidates[0];
}

/** Columns of an inbound row the route writes. */
type Channel = 'whatsapp' | 'messenger';
const channelOf = (account: SendAccount): Channel => (account.provider === 'messenger' ? 'messenger' : 'whatsapp');

/**
 * The message id stored: the provider's, else (when the payload has a time) a hash of provider,
 * chat, member, text and time, so a redelivery still dedupes; null without either.
 */
function messageIdOf(provider: ProviderName, m: InboundMessage): string | null {
  if (m.messageId) return m.messageId.slice(0, 998);
  if (!m.at) return null;
  const h = createHash('sha256').update(JSON.stringify([provider, m.chat, m.member, m.text, m.at.getTime()]));
  return `h:${h.digest('hex').slice(0, 40)}`;
}

/**
 * The customer whose phone is this number, when exactly one customer's phone normalises to it
 * (candidates found by their last 8 digits through an expression index, then compared in full).
 */
export async function customerByPhone(scope: TenantScope, digits: string, cc: string): Promise<number | null> {
  const tail = digits.slice(-8);
  const q = scope.table('customers').select('id', 'phone').limit(50);
  // the index customers_tenant_phone_tail serves the 8-digit tail; a shorter number is compared by suffix
  if (tail.length === 8) q.whereRaw(`right(regexp_replace(phone, '[^0-9]', '', 'g'), 8) = ?`, [tail]);
  else q.whereRaw(`regexp_replace(phone, '[^0-9]', '', 'g') LIKE ?`, [`%${tail}`]);
  const rows: { id: number; phone: string }[] = await q;
  const ids = rows.filter((r) => phoneOrNull(r.phone, cc) === digits).map((r) => r.id);
  return ids.length === 1 ? ids[0] : null;
}

async function storeMessage(
  scope: TenantScope,
  at: InboundTenant,
  account: SendAccount,
  m: InboundMessage,
  cc: string,
  now: Date,
  result: InboundResult,
): Promise<void> {
  const digits = m.chatKind === 'phone' ? phoneOrNull(m.chat, cc) : null;
  const own = digits !== null && digits === phoneOrNull(account.number, cc);
  if (m.fromMe || own || (m.chatKind === 'group' && at.settings.ignore_groups)) {
    result.dropped += 1;
    return;
  }
  const counterpart = (digits ?? m.chat).slice(0, 320);
  const member = m.member ? (phoneOrNull(m.member, cc) ?? m.member) : null;
  const messageId = messageIdOf(account.provider, m);
  const row = {
    tenant_id: scope.tenantId,
    channel: channelOf(account),
    direction: 'in',
    status: 'received',
    source: 'webhook',
    account_ref: account.id,
    customer_id: digits ? await customerByPhone(scope, digits, cc) : null,
    counterpart,
    recipient_kind: m.chatKind,
    is_group: m.chatKind === 'group',
    from_address: (member ?? counterpart).slice(0, 320),
    from_name: m.senderName?.slice(0, 190) ?? null,
    body_text: m.text,
    snippet: m.text.slice(0, 200),
    message_id: messageId,
    occurred_at: m.at ?? now,
    received_at: now,
    created_at: now,
    updated_at: now,
  };
  const trx = scope.knex as Knex.Transaction;
  const q = trx('communication_messages').insert(row);
  const inserted: { id: string | number }[] = await (messageId ? q.onConflict().ignore() : q).returning('id');
  if (!inserted.length) {
    result.duplicates += 1;
    return;
  }
  const id = Number(inserted[0].id);
  await publishEvent(trx, scope.tenantId, 'inbound_chat_message', { communication_id: id });
  result.stored.push(id);
}

/** Outbound statuses a receipt may move forward from (never backwards; `failed` only before delivery). */
const FROM: Record<InboundReceipt['status'], string[]> = {
  sent: ['queued', 'pending'],
  delivered: ['queued', 'pending', 'sent'],
  read: ['queued', 'pending', 'sent', 'delivered'],
  failed: ['queued', 'pending', 'sent'],
};

/** Applies a receipt to the outbound row with this message id; returns the rows changed (0 or 1). */
async function applyReceipt(scope: TenantScope, account: SendAccount, r: InboundReceipt, now: Date): Promise<number> {
  const when = r.at ?? now;
  const k = scope.knex;
  const set: Record<string, unknown> = { status: r.status, updated_at: now };
  if (r.status === 'failed') {
    Object.assign(set, {
      failed_at: when,
      error_code: 'provider_failed',
      error_message: r.error?.slice(0, 500) ?? null,
    });
  } else {
    set.sent_at = k.raw('coalesce(sent_at, ?)', [when]);
    if (r.status !== 'sent') set.delivered_at = k.raw('coalesce(delivered_at, ?)', [when]);
    if (r.status === 'read') set.read_at = k.raw('coalesce(read_at, ?)', [when]);
  }
  return scope
    .table('communication_messages')
    .where({ channel: channelOf(account), direction: 'out', message_id: r.messageId })
    .whereIn('status', FROM[r.status])
    .update(set);
}

/** Messenger's read watermark: the page's messages to that person sent up to it are read. */
async function applyReadWatermark(scope: TenantScope, psid: string, watermark: Date, now: Date): Promise<number> {
  return scope
    .table('communication_messages')
    .where({ channel: 'messenger', direction: 'out', counterpart: psid })
    .whereIn('status', ['pending', 'sent', 'delivered'])
    .where('sent_at', '<=', watermark)
    .update({
      status: 'read',
      read_at: watermark,
      delivered_at: scope.knex.raw('coalesce(delivered_at, ?)', [watermark]),
      updated_at: now,
    });
}
