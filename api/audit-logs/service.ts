import { AuditLog } from '../../db/models/index.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { envelope, iso } from '../shared/schemas.js';

/** One audit entry as a service records it (DESIGN.md §10 "audit"). */
export interface AuditEntry {
  /** Who acted (null for system jobs). */
  userId: number | null;
  /** `<module>.<verb>` in snake_case, e.g. `integrations.token_created`. */
  action: string;
  /** The record acted on: its type (table or resource name) and id. */
  subject?: { type: string; id: number } | null;
  /** A short summary of the state before and after (never a secret, a password or a token). */
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  /** The caller's IP address (ctx.ip), if the action came over HTTP. */
  ip?: string | null;
}

/**
 * Records one audit entry for the scope's tenant. Call it inside the transaction of the action
 * (pass the scope bound to it with scope.withTransaction(trx)) so that the entry commits or rolls
 * back with the action.
 * @param scope the tenant (bound to the action's transaction)
 * @returns the new row's id
 * @throws the database error for an action name not of the form `module.verb` (check constraint)
 */
export async function recordAudit(scope: TenantScope, entry: AuditEntry): Promise<number> {
  const row = await scope.create(AuditLog, {
    user_id: entry.userId,
    action: entry.action,
    subject_type: entry.subject?.type ?? null,
    subject_id: entry.subject?.id ?? null,
    before: entry.before ?? null,
    after: entry.after ?? null,
    ip: entry.ip ?? null,
  });
  return Number(row.id);
}

/** Validated query of GET /api/audit-logs (api/audit-logs/schemas.ts). */
export interface AuditLogQuery {
  page: number;
  per_page: number;
  user_id?: number;
  /** Exact action, or a module prefix ending in `.` (e.g. `integrations.`). */
  action?: string;
  subject_type?: string;
  subject_id?: number;
  /** First and last day (YYYY-MM-DD) in the tenant's time zone, both included. */
  date_from?: string;
  date_to?: string;
}

/** Row -> read shape of GET /api/audit-logs. */
export function auditLogShape(r: AuditLog & { user?: { id: number; name: string; email: string } | null }) {
  return {
    id: Number(r.id),
    action: r.action,
    user: r.user ? { id: r.user.id, name: r.user.name, email: r.user.email } : null,
    subject: r.subject_type ? { type: r.subject_type, id: r.subject_id === null ? null : Number(r.subject_id) } : null,
    before: r.before,
    after: r.after,
    ip: r.ip,
    at: iso(r.at),
  };
}

/**
 * GET /api/audit-logs: the tenant's audit entries, newest first (id as tie breaker), filtered by
 * user, action (exact or `module.` prefix), subject and a date range of days in the tenant's time
 * zone, in the list envelope of DESIGN.md §4 with an exact total.
 * @param scope the caller's tenant
 * @param q the validated query
 * @param timeZone the tenant's IANA zone (tenants.timezone), e.g. Asia/Jakarta
 */
export async function listAuditLogs(scope: TenantScope, q: AuditLogQuery, timeZone: string) {
  const base = scope.query(AuditLog);
  if (q.user_id !== undefined) base.where('audit_log.user_id', q.user_id);
  if (q.action !== undefined) {
    if (q.action.endsWith('.')) base.where('audit_log.action', 'like', `${q.action.replace(/[\\%_]/g, '\\$&')}%`);
    else base.where('audit_log.action', q.action);
  }
  if (q.subject_type !== undefined) base.where('audit_log.subject_type', q.subject_type);
  if (q.subject_id !== undefined) base.where('audit_log.subject_id', q.subject_id);
  // a day of the tenant's zone: [day 00:00 in zone, next day 00:00 in zone)
  if (q.date_from) base.whereRaw(`audit_log.at >= (?::date)::timestamp AT TIME ZONE ?`, [q.date_from, timeZone]);
  if (q.date_to) base.whereRaw(`audit_log.at < ((?::date) + 1)::timestamp AT TIME ZONE ?`, [q.date_to, timeZone]);
  const total = await base.clone().resultSize();
  const rows = await base
    .withGraphFetched('user(brief)')
    .modifiers({ brief: (b) => b.select('users.id', 'users.name', 'users.email') })
    .orderBy([
      { column: 'audit_log.at', order: 'desc' },
      { column: 'audit_log.id', order: 'desc' },
    ])
    .limit(q.per_page)
    .offset((q.page - 1) * q.per_page);
  return envelope(rows.map(auditLogShape), q.page, q.per_page, total);
}
