import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { idParams } from '../shared/schemas.js';
import { DEFAULT_TIMEZONE } from '../tenants/catalog.js';
import {
  scheduleCreateBody,
  scheduleList,
  scheduleListQuery,
  scheduleOne,
  scheduleStatusBody,
  scheduleUpdateBody,
} from './schemas.js';
import {
  changeScheduleStatus,
  createSchedule,
  listSchedules,
  scheduleById,
  updateSchedule,
  type ScheduleInput,
  type ScheduleListQuery,
  type ScheduleTarget,
} from './service.js';

/** Guards every schedule route shares: a login token of a tenant user. */
const base = { tag: 'schedules', auth: 'login', tenant: true } as const;
const notFound = { 404: { description: 'Not a schedule of the tenant' } };

/**
 * Technician schedules (issue 8 item 5; document 2 "technician schedule"): reads need
 * schedules.view, writes schedules.manage. Status changes have their own endpoint.
 */
export const scheduleRoutes: AnyWebRoute[] = [
  webRoute<Input, ScheduleListQuery>({
    ...base,
    method: 'get',
    path: '/api/schedules',
    permission: 'schedules.view',
    query: scheduleListQuery,
    summary: 'List schedules by time ascending; filters from, to (days), technician_id, status',
    responses: { 200: { description: 'Page of schedules', schema: scheduleList } },
    async handler(ctx) {
      const tz = ctx.state.tenant!.timezone ?? DEFAULT_TIMEZONE;
      ctx.body = await listSchedules(ctx.state.scope!, ctx.state.query, tz);
    },
  }),
  webRoute<Input, Record<string, never>, ScheduleInput>({
    ...base,
    method: 'post',
    path: '/api/schedules',
    permission: 'schedules.manage',
    body: scheduleCreateBody,
    summary: 'Create a schedule (status scheduled)',
    responses: { 201: { description: 'The new schedule', schema: scheduleOne } },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const id = await createSchedule(scope, { userId: ctx.state.auth!.userId, ip: ctx.ip }, ctx.state.body);
      ctx.status = 201;
      ctx.body = { data: await scheduleById(scope, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/schedules/:id',
    permission: 'schedules.view',
    params: idParams,
    summary: 'Show a schedule',
    responses: { 200: { description: 'The schedule', schema: scheduleOne }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await scheduleById(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, ScheduleInput>({
    ...base,
    method: 'put',
    path: '/api/schedules/:id',
    permission: 'schedules.manage',
    params: idParams,
    body: scheduleUpdateBody,
    summary: 'Replace the fields of a scheduled or in-progress schedule (not its status)',
    responses: { 200: { description: 'The updated schedule', schema: scheduleOne }, ...notFound },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const { id } = ctx.state.params;
      await updateSchedule(scope, { userId: ctx.state.auth!.userId, ip: ctx.ip }, id, ctx.state.body);
      ctx.body = { data: await scheduleById(scope, id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, { status: ScheduleTarget }>({
    ...base,
    method: 'post',
    path: '/api/schedules/:id/status',
    permission: 'schedules.manage',
    params: idParams,
    body: scheduleStatusBody,
    summary: 'Move a schedule: scheduled -> in_progress -> done, or scheduled / in_progress -> cancelled',
    responses: { 200: { description: 'The schedule in its new status', schema: scheduleOne }, ...notFound },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const { id } = ctx.state.params;
      await changeScheduleStatus(scope, { userId: ctx.state.auth!.userId, ip: ctx.ip }, id, ctx.state.body.status);
      ctx.body = { data: await scheduleById(scope, id) };
    },
  }),
];
