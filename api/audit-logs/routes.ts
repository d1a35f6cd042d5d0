import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { auditLogList, auditLogQuery } from './schemas.js';
import { listAuditLogs, type AuditLogQuery } from './service.js';
import { DEFAULT_TIMEZONE } from '../tenants/catalog.js';

/**
 * The audit log (DESIGN.md §10 "audit"): the first admin route built the new way — login token,
 * permission settings.view, typed query, logic in the service, tenant confined by the scope.
 */
export const auditLogRoutes: AnyWebRoute[] = [
  webRoute<Input, AuditLogQuery>({
    method: 'get',
    path: '/api/audit-logs',
    tag: 'audit',
    auth: 'login',
    tenant: true,
    permission: 'settings.view',
    query: auditLogQuery,
    summary: "List the tenant's audit entries; filters user_id, action, subject_type/subject_id, date_from/date_to",
    description: "Money, provisioning, permission and file actions, newest first. Days are in the tenant's time zone.",
    responses: { 200: { description: 'Page of audit entries', schema: auditLogList } },
    async handler(ctx) {
      ctx.body = await listAuditLogs(ctx.state.scope!, ctx.state.query, ctx.state.tenant!.timezone ?? DEFAULT_TIMEZONE);
    },
  }),
];
