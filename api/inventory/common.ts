import type { TenantScope } from '../../db/tenant-scope.js';
import { InventoryItem, InventoryLocation } from '../../db/models/index.js';
import type { FieldErrors } from '../errors.js';
import { toNumber } from '../../lib/money.js';
import { recordAudit, type AuditEntry } from '../audit-logs/service.js';

/** Shared pieces of the inventory services (issue 16). */

/** Who acts: the user and the caller's IP, for the audit log and the ledger. */
export interface Actor {
  userId: number | null;
  ip?: string | null;
  /** false: write no audit entry (the demo seed's opening stock is not a user's action). */
  audit?: boolean;
}

/** recordAudit unless the actor says `audit: false` (the demo seed). */
export async function auditFor(s: TenantScope, actor: Actor, entry: Omit<AuditEntry, 'userId' | 'ip'>) {
  if (actor.audit === false) return;
  await recordAudit(s, { ...entry, userId: actor.userId, ip: actor.ip ?? null });
}

/** numeric(14,2) from pg (a string) -> JSON number with at most 2 decimals. */
export const num = (v: string | number | null | undefined): number => (v == null ? 0 : toNumber(v));

/**
 * Loads locations of the tenant by id; a missing or foreign id adds `path: ["The selected ... is
 * invalid."]` to `errors` (422 in a body, DESIGN.md §5).
 * @param wanted `[path, id]` pairs (null ids skipped)
 * @param opts.active also refuse inactive locations
 * @returns the rows found, by id
 */
export async function locationsById(
  s: TenantScope,
  wanted: [string, number | null | undefined][],
  errors: FieldErrors,
  opts: { active?: boolean } = {},
): Promise<Map<number, InventoryLocation>> {
  const ids = [...new Set(wanted.map(([, id]) => id).filter((id): id is number => id != null))];
  const rows = ids.length ? await s.query(InventoryLocation).whereIn('id', ids) : [];
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const [path, id] of wanted) {
    if (id == null) continue;
    const r = byId.get(id);
    if (!r) errors[path] = ['The selected location is invalid.'];
    else if (opts.active && !r.is_active) errors[path] = ['The selected location is inactive.'];
  }
  return byId;
}

/**
 * Loads items of the tenant by id; a missing or foreign id adds `path: [...]` to `errors`.
 * @param wanted `[path, id]` pairs
 * @param opts.active also refuse inactive items
 */
export async function itemsById(
  s: TenantScope,
  wanted: [string, number][],
  errors: FieldErrors,
  opts: { active?: boolean } = {},
): Promise<Map<number, InventoryItem>> {
  const ids = [...new Set(wanted.map(([, id]) => id))];
  const rows = ids.length ? await s.query(InventoryItem).whereIn('id', ids) : [];
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const [path, id] of wanted) {
    const r = byId.get(id);
    if (!r) errors[path] = ['The selected item is invalid.'];
    else if (opts.active && !r.is_active) errors[path] = ['The selected item is inactive.'];
  }
  return byId;
}
