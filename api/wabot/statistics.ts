import type { TenantScope } from '../../db/tenant-scope.js';
import { CommunicationMessage } from '../../db/models/index.js';
import { callingCodeOf } from '../../jobs/wabot/load-config.js';
import { addDays, daysBetween, todayIn } from '../../lib/clock.js';
import { ValidationFailed } from '../errors.js';
import { paginate, whereContains, type PageParams } from '../shared/list.js';
import { iso } from '../shared/schemas.js';
import { STATUSES } from '../communications/schemas.js';

/**
 * The chat bot's statistics and logs (issue 11 item 5; document 2 "Events": "chat statistics and
 * logs read the communication messages of the chat channel"): both read `communication_messages`
 * of the whatsapp and messenger channels, live rows only, days in the tenant's zone, with the same
 * day filter as GET /api/communications, so their counts agree with that list.
 */

/** Longest statistics range, in days (inclusive). */
export const MAX_RANGE_DAYS = 366;
/** The default range: the last 7 days, today included. */
export const DEFAULT_RANGE_DAYS = 7;

const CHAT = ['whatsapp', 'messenger'];

/** Counts of a slice of messages. */
export interface Counts {
  total: number;
  in: number;
  out: number;
  by_status: Record<string, number>;
}

const zero = (): Counts => ({ total: 0, in: 0, out: 0, by_status: Object.fromEntries(STATUSES.map((s) => [s, 0])) });

function add(c: Counts, direction: string, status: string, n: number) {
  c.total += n;
  if (direction === 'in') c.in += n;
  else c.out += n;
  c.by_status[status] = (c.by_status[status] ?? 0) + n;
}

/** Live chat messages `m` of the tenant between two days of its zone (inclusive). */
function inRange(scope: TenantScope, from: string | undefined, to: string | undefined, timeZone: string) {
  const q = scope.query(CommunicationMessage, { alias: 'm' }).whereNull('m.deleted_at').whereIn('m.channel', CHAT);
  if (from) q.whereRaw(`m.occurred_at >= (?::date)::timestamp AT TIME ZONE ?`, [from, timeZone]);
  if (to) q.whereRaw(`m.occurred_at < ((?::date) + 1)::timestamp AT TIME ZONE ?`, [to, timeZone]);
  return q;
}

/**
 * The range of a statistics query: both given, one given (the other 6 days away, to at most
 * today), or none (the last 7 days).
 * @throws ValidationFailed (422) when date_from is after date_to or the range exceeds 366 days
 */
export function statisticsRange(q: { date_from?: string; date_to?: string }, timeZone: string, now = new Date()) {
  const today = todayIn(timeZone, { now: () => now });
  const to = q.date_to ?? (q.date_from ? minDate(addDays(q.date_from, DEFAULT_RANGE_DAYS - 1), today) : today);
  const from = q.date_from ?? addDays(to, -(DEFAULT_RANGE_DAYS - 1));
  if (daysBetween(from, to) < 0)
    throw new ValidationFailed({ date_from: ['The date_from must not be after date_to.'] });
  if (daysBetween(from, to) + 1 > MAX_RANGE_DAYS)
    throw new ValidationFailed({ date_to: [`The range must be at most ${MAX_RANGE_DAYS} days.`] });
  return { from, to };
}

const minDate = (a: string, b: string) => (a < b ? a : b);

/**
 * GET /api/wabot/statistics: counts per status and direction, per account and per day (every day
 * of the range, zeros included) of the tenant's chat messages.
 * @throws ValidationFailed (422) for a bad range (statisticsRange)
 */
export async function chatStatistics(
  scope: TenantScope,
  q: { date_from?: string; date_to?: string },
  timeZone: string,
) {
  const { from, to } = statisticsRange(q, timeZone);
  const rows = (await inRange(scope, from, to, timeZone)
    .select(
      'm.direction',
      'm.status',
      'm.account_ref',
      scope.knex.raw(`to_char((m.occurred_at AT TIME ZONE ?)::date, 'YYYY-MM-DD') AS day`, [timeZone]),
      scope.knex.raw('count(*)::int AS n'),
    )
    // the select above names exactly these columns (Objection types the rows as models)
    .groupByRaw('1, 2, 3, 4')) as unknown as {
    direction: string;
    status: string;
    account_ref: string | null;
    day: string;
    n: number;
  }[];
  const totals = zero();
  const accounts = new Map<string, Counts>();
  const days = new Map<string, Counts>();
  for (let d = from; d <= to; d = addDays(d, 1)) days.set(d, zero());
  for (const r of rows) {
    const n = Number(r.n);
    add(totals, r.direction, r.status, n);
    const key = r.account_ref ?? '';
    if (!accounts.has(key)) accounts.set(key, zero());
    add(accounts.get(key)!, r.direction, r.status, n);
    if (days.has(r.day)) add(days.get(r.day)!, r.direction, r.status, n);
  }
  return {
    date_from: from,
    date_to: to,
    time_zone: timeZone,
    totals,
    accounts: [...accounts.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([account, c]) => ({ account_id: account === '' ? null : account, ...c })),
    days: [...days.entries()].map(([date, c]) => ({ date, ...c })),
  };
}

/** Validated query of GET /api/wabot/logs. */
export interface ChatLogQuery extends PageParams {
  status?: string;
  direction?: 'in' | 'out';
  account_id?: string;
  phone?: string;
  search?: string;
  date_from?: string;
  date_to?: string;
}

function logShape(r: CommunicationMessage) {
  const x = r as CommunicationMessage & Record<string, unknown>;
  return {
    id: Number(r.id),
    channel: r.channel,
    direction: r.direction,
    status: r.status,
    source: r.source,
    account_id: r.account_ref,
    customer_id: r.customer_id,
    counterpart: r.counterpart,
    is_group: r.is_group,
    from_name: r.from_name,
    text: (x.body_text as string | null) ?? null,
    message_id: (x.message_id as string | null) ?? null,
    error_code: r.error_code,
    error_message: (x.error_message as string | null) ?? null,
    occurred_at: iso(r.occurred_at)!,
    sent_at: iso(r.sent_at),
    delivered_at: iso(x.delivered_at as Date | null),
    read_at: iso(x.read_at as Date | null),
    failed_at: iso(x.failed_at as Date | null),
  };
}

const LOG_COLUMNS = [
  'm.id',
  'm.channel',
  'm.direction',
  'm.status',
  'm.source',
  'm.account_ref',
  'm.customer_id',
  'm.counterpart',
  'm.is_group',
  'm.from_name',
  'm.body_text',
  'm.message_id',
  'm.error_code',
  'm.error_message',
  'm.occurred_at',
  'm.sent_at',
  'm.delivered_at',
  'm.read_at',
  'm.failed_at',
];

/**
 * GET /api/wabot/logs: the chat messages newest first (occurred_at, id), per_page 20; filters
 * status, direction, account_id, phone (digits; a leading 0 is the tenant's calling code; matched
 * inside the counterpart), search (text, counterpart, sender name), date_from and date_to (days in
 * the tenant's zone, inclusive).
 * @param tenantSettings tenants.settings (calling code)
 */
export async function chatLogs(scope: TenantScope, q: ChatLogQuery, timeZone: string, tenantSettings: unknown) {
  const base = inRange(scope, q.date_from, q.date_to, timeZone);
  if (q.status) base.where('m.status', q.status);
  if (q.direction) base.where('m.direction', q.direction);
  if (q.account_id) base.where('m.account_ref', q.account_id);
  if (q.phone) {
    let digits = q.phone.replace(/\D/g, '');
    if (digits.startsWith('0')) digits = callingCodeOf(tenantSettings) + digits.slice(1);
    if (digits) base.where('m.counterpart', 'like', `%${digits}%`);
  }
  whereContains(base, ['m.body_text', 'm.counterpart', 'm.from_name'], q.search);
  return paginate(base, LOG_COLUMNS, ['m.occurred_at', 'm.id'], q, (r) => logShape(r as CommunicationMessage));
}
