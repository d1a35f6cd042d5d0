import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { accessActor } from '../roles/routes.js';
import { modulesOne, modulesUpdateBody, settingsOne, settingsUpdateBody } from './schemas.js';
import { getModules, getSettings, updateModules, updateSettings, type SettingsInput } from './service.js';

/** Guards every settings route shares: a login token of a tenant user. */
const base = { tag: 'settings', auth: 'login', tenant: true } as const;

/**
 * Tenant settings and module switches (issue 8 item 1): reads need settings.view; settings writes
 * settings.manage; module switches settings.manage and the Super Admin role, and are refused on a
 * demo tenant.
 */
export const settingsRoutes: AnyWebRoute[] = [
  webRoute({
    ...base,
    method: 'get',
    path: '/api/settings',
    permission: 'settings.view',
    summary:
      'The tenant settings: timezone, currency, invoice_due_days, isolation_grace_days, ticket_reopen_enabled, sla',
    responses: { 200: { description: 'The settings with defaults filled in', schema: settingsOne } },
    async handler(ctx) {
      ctx.body = { data: await getSettings(ctx.state.scope!) };
    },
  }),
  webRoute<Input, Record<string, never>, SettingsInput>({
    ...base,
    method: 'put',
    path: '/api/settings',
    permission: 'settings.manage',
    body: settingsUpdateBody,
    summary: 'Change the settings given (SLA targets per priority and field)',
    responses: { 200: { description: 'The settings after the change', schema: settingsOne } },
    async handler(ctx) {
      ctx.body = { data: await updateSettings(ctx.state.scope!, accessActor(ctx), ctx.state.body) };
    },
  }),
  webRoute({
    ...base,
    method: 'get',
    path: '/api/settings/modules',
    permission: 'settings.view',
    summary: 'Which tenant modules are switched on: {<module>: true|false}',
    responses: { 200: { description: 'Every module with its switch', schema: modulesOne } },
    async handler(ctx) {
      ctx.body = { data: await getModules(ctx.state.scope!) };
    },
  }),
  webRoute<Input, Record<string, never>, Record<string, boolean>>({
    ...base,
    method: 'put',
    path: '/api/settings/modules',
    permission: 'settings.manage',
    demoAction: 'settings.modules.update',
    body: modulesUpdateBody,
    summary: 'Switch modules on or off (Super Admin only): {<module>: true|false}; the others are kept',
    responses: {
      200: { description: 'Every module with its switch after the change', schema: modulesOne },
      403: { description: 'The caller is not a Super Admin (FORBIDDEN)' },
    },
    async handler(ctx) {
      ctx.body = { data: await updateModules(ctx.state.scope!, accessActor(ctx), ctx.state.body) };
    },
  }),
];
