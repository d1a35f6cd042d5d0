import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import type { Schema } from '../http/validation.js';
import { idParams } from '../shared/schemas.js';
import { createGroup, deleteGroup, listGroups, testGroup, updateGroup, type GroupInput } from './groups.js';
import {
  EVENT_CATALOGUE_DATA,
  eventCatalogue,
  groupBody,
  groupList,
  groupOne,
  groupTestResult,
} from './group-schemas.js';
import { runSyncDevice, runSyncStatus } from './status.js';

/**
 * Issue 11 items 3 and 4 (document 2 "Chat bot", "Events"): the delivery-report and device-status
 * syncs, the chat groups and their test, the event catalogue. Guards as every chat-bot route:
 * login, wabot.manage, module wabot.
 */
const base = { tag: 'wabot', auth: 'login', tenant: true, permission: 'wabot.manage', module: 'wabot' } as const;
const notFound = { 404: { description: 'Unknown or foreign group (nothing changed)' } };
const actorOf = (ctx: { state: { auth?: { userId: number | null } }; ip: string }) => ({
  userId: ctx.state.auth?.userId ?? null,
  ip: ctx.ip,
});

const syncBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50, description: 'Outbox rows to check (1-200).' },
  },
};
const syncResult: Schema = {
  type: 'object',
  properties: {
    ok: { type: 'boolean' },
    warning: { type: 'boolean' },
    message: { type: 'string' },
    checked: { type: 'integer' },
    updated: { type: 'integer' },
  },
};
const deviceResult: Schema = {
  type: 'object',
  properties: {
    ok: { type: 'boolean' },
    warning: { type: 'boolean' },
    message: { type: 'string' },
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          account_id: { type: 'string' },
          label: { type: 'string' },
          status: { type: 'string', enum: ['connected', 'disconnected', 'unknown', 'error'] },
          detail: { type: 'string' },
          checked_at: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
};
const noWablas = { 422: { description: 'No enabled wablas account (or a bad limit)' } };

export const wabotGroupRoutes: AnyWebRoute[] = [
  webRoute<Input, Input, { limit: number }>({
    ...base,
    method: 'post',
    path: '/api/wabot/sync-status',
    demoAction: 'wabot.sync_status',
    body: syncBody,
    summary:
      "Check Wablas's realtime report for outbox items with a message id in pending or sent (oldest first, last 7 days): sets sent, delivered, read or failed; never resends",
    description:
      'Runs a `wabot-status` job and waits for it at most 30 s. A temporary provider error (or a job still running after 30 s) answers 200 with `ok: false, warning: true, message`.',
    responses: {
      200: { description: '`{ok, checked, updated}` or `{ok: false, warning: true, message}`', schema: syncResult },
      ...noWablas,
    },
    async handler(ctx) {
      ctx.body = await runSyncStatus(ctx.state.scope!, ctx.deps.queues, ctx.state.body.limit ?? 50);
    },
  }),
  webRoute<Input, Input, Input>({
    ...base,
    method: 'post',
    path: '/api/wabot/sync-device-status',
    demoAction: 'wabot.sync_device_status',
    summary:
      "Check each enabled Wablas account's device status (Device Info) and store it per account (shown in GET config)",
    responses: { 200: { description: '`{ok: true, data: [per account]}`', schema: deviceResult }, ...noWablas },
    async handler(ctx) {
      ctx.body = await runSyncDevice(ctx.state.scope!, ctx.deps.queues);
    },
  }),
  webRoute({
    ...base,
    method: 'get',
    path: '/api/wabot/events',
    summary: 'The events a chat group can receive notices of, with their labels',
    responses: { 200: { description: 'The catalogue', schema: eventCatalogue } },
    async handler(ctx) {
      ctx.body = { data: EVENT_CATALOGUE_DATA };
    },
  }),
  webRoute({
    ...base,
    method: 'get',
    path: '/api/wabot/groups',
    summary: 'The chat groups that receive event notices',
    responses: { 200: { description: 'Every group, oldest first', schema: groupList } },
    async handler(ctx) {
      ctx.body = { data: await listGroups(ctx.state.scope!) };
    },
  }),
  webRoute<Input, Input, GroupInput>({
    ...base,
    method: 'post',
    path: '/api/wabot/groups',
    body: groupBody,
    summary: 'Add a chat group (name, kind, sending account, provider group id, events ticked, enabled)',
    responses: {
      201: { description: 'The new group', schema: groupOne },
      422: { description: 'Unknown event or account, a messenger account, bounds' },
    },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = { data: await createGroup(ctx.state.scope!, actorOf(ctx), ctx.state.body) };
    },
  }),
  webRoute<{ id: number }, Input, GroupInput>({
    ...base,
    method: 'put',
    path: '/api/wabot/groups/:id',
    params: idParams,
    body: groupBody,
    summary: 'Replace a chat group (fields left out take their defaults)',
    responses: {
      200: { description: 'The saved group', schema: groupOne },
      ...notFound,
      422: { description: 'Unknown event or account, a messenger account, bounds' },
    },
    async handler(ctx) {
      ctx.body = { data: await updateGroup(ctx.state.scope!, actorOf(ctx), ctx.state.params.id, ctx.state.body) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'delete',
    path: '/api/wabot/groups/:id',
    params: idParams,
    summary: 'Delete a chat group',
    responses: { 204: { description: 'Deleted' }, ...notFound },
    async handler(ctx) {
      await deleteGroup(ctx.state.scope!, actorOf(ctx), ctx.state.params.id);
      ctx.status = 204;
    },
  }),
  webRoute<{ id: number }, Input, Input>({
    ...base,
    method: 'post',
    path: '/api/wabot/groups/:id/test',
    params: idParams,
    demoAction: 'wabot.send',
    summary:
      'Send a sample "[TES] Incident Massal" notice to the group through its account; waits for the send at most 15 s',
    responses: {
      200: { description: '`{ok, data: {communication_id, status, message_id, error}}`', schema: groupTestResult },
      ...notFound,
    },
    async handler(ctx) {
      const t = ctx.state.tenant!;
      ctx.body = await testGroup(ctx.state.scope!, actorOf(ctx), ctx.state.params.id, {
        knex: ctx.deps.knex,
        redis: ctx.deps.redis,
        queues: ctx.deps.queues,
        appKey: ctx.deps.config.appKey,
        timeZone: t.timezone,
      });
    },
  }),
];
