import type { Knex } from 'knex';

/** A platform admin's action for platform_audit_log (issue 13; tenant-less, so not audit_log). */
export interface PlatformAuditEntry {
  userId: number | null;
  /** `platform.<verb>`, e.g. `platform.tenant_create` */
  action: string;
  subject?: { type: string; id: number | null };
  /** Summaries before and after: never a secret (credentials appear masked as `has_*` flags). */
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  ip?: string | null;
}

/**
 * Records a platform admin's action; call it inside the action's transaction.
 * @param knex the database or the action's transaction
 */
export async function recordPlatformAudit(knex: Knex | Knex.Transaction, entry: PlatformAuditEntry): Promise<void> {
  await knex('platform_audit_log').insert({
    user_id: entry.userId,
    action: entry.action,
    subject_type: entry.subject?.type ?? null,
    subject_id: entry.subject?.id ?? null,
    before: entry.before === undefined || entry.before === null ? null : JSON.stringify(entry.before),
    after: entry.after === undefined || entry.after === null ? null : JSON.stringify(entry.after),
    ip: entry.ip ?? null,
  });
}
