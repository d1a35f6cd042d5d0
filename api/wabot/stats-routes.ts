import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';
import { DIRECTIONS, STATUSES } from '../communications/schemas.js';
import { DEFAULT_TIMEZONE } from '../tenants/catalog.js';
import { chatLogs, chatStatistics, type ChatLogQuery } from './statistics.js';
import { ACCOUNT_ID_PATTERN } from './schemas.js';

/**
 * Issue 11 item 5 (document 2 "Events": chat statistics and logs read the communication messages):
 * GET /api/wabot/statistics and GET /api/wabot/logs. Login, wabot.manage, module wabot.
 */
const base = { tag: 'wabot', auth: 'login', tenant: true, permission: 'wabot.manage', module: 'wabot' } as const;

const DAY = { type: 'string', format: 'date', description: "A day (YYYY-MM-DD) in the tenant's time zone; inclusive." };

const statsQuery: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { date_from: DAY, date_to: DAY },
};

const counts: Schema = {
  type: 'object',
  properties: {
    total: { type: 'integer' },
    in: { type: 'integer' },
    out: { type: 'integer' },
    by_status: { type: 'object', additionalProperties: { type: 'integer' } },
  },
};

const statsResult: Schema = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: {
        date_from: { type: 'string', format: 'date' },
        date_to: { type: 'string', format: 'date' },
        time_zone: { type: 'string' },
        totals: counts,
        accounts: {
          type: 'array',
          items: { allOf: [counts, { type: 'object', properties: { account_id: { type: ['string', 'null'] } } }] },
        },
        days: {
          type: 'array',
          items: { allOf: [counts, { type: 'object', properties: { date: { type: 'string', format: 'date' } } }] },
        },
      },
    },
  },
};

const logsQuery = pageQuery(20, {
  status: { type: 'string', enum: [...STATUSES] },
  direction: { type: 'string', enum: [...DIRECTIONS] },
  account_id: { type: 'string', pattern: ACCOUNT_ID_PATTERN },
  phone: {
    type: 'string',
    pattern: '^[0-9 +().-]{3,32}$',
    description: 'Digits of the other party (a leading 0 is the tenant calling code), matched inside it.',
  },
  search: {
    type: 'string',
    maxLength: 100,
    ...singleLine,
    description: 'Case-insensitive substring of text, counterpart or sender name.',
  },
  date_from: DAY,
  date_to: DAY,
});

const str = { type: ['string', 'null'] };
const time = { type: ['string', 'null'], format: 'date-time' };
const logItem: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    channel: { type: 'string' },
    direction: { type: 'string' },
    status: { type: 'string' },
    source: { type: 'string' },
    account_id: str,
    customer_id: { type: ['integer', 'null'] },
    counterpart: str,
    is_group: { type: 'boolean' },
    from_name: str,
    text: str,
    message_id: str,
    error_code: str,
    error_message: str,
    occurred_at: { type: 'string', format: 'date-time' },
    sent_at: time,
    delivered_at: time,
    read_at: time,
    failed_at: time,
  },
};

export const wabotStatsRoutes: AnyWebRoute[] = [
  webRoute<Input, { date_from?: string; date_to?: string }>({
    ...base,
    method: 'get',
    path: '/api/wabot/statistics',
    query: statsQuery,
    summary:
      "Chat message counts (whatsapp, messenger) per status and direction, per account and per day, days in the tenant's zone; default the last 7 days, at most 366",
    responses: {
      200: { description: 'The counts', schema: statsResult },
      422: { description: 'date_from after date_to, or more than 366 days' },
    },
    async handler(ctx) {
      const tz = ctx.state.tenant!.timezone ?? DEFAULT_TIMEZONE;
      ctx.body = { data: await chatStatistics(ctx.state.scope!, ctx.state.query, tz) };
    },
  }),
  webRoute<Input, ChatLogQuery>({
    ...base,
    method: 'get',
    path: '/api/wabot/logs',
    query: logsQuery,
    summary:
      'The chat messages (whatsapp, messenger), newest first; filters status, direction, account_id, phone, search, date_from, date_to',
    responses: { 200: { description: 'Page of chat messages', schema: listEnvelope(logItem) } },
    async handler(ctx) {
      const t = ctx.state.tenant!;
      ctx.body = await chatLogs(ctx.state.scope!, ctx.state.query, t.timezone ?? DEFAULT_TIMEZONE, t.settings);
    },
  }),
];
