import type { TenantDbStatus } from './state.js';
import { writeLocationAfterCutover } from '../../../db/tenant-routing.js';

/**
 * Where a tenant's writes go (issue 14 item 8 `write-plan`; issue 13/15 reuse the table): per
 * module, now, in dual write and after cutover. A small routing table, exported, so the code that
 * routes writes and the report read the same rows.
 */

/** Where a write lands. */
export type WriteTarget = 'shared' | 'tenant_db' | 'shared+tenant_db';

/** The phases of a tenant's move. */
export type WritePhase = 'before_cutover' | 'dual_write' | 'after_cutover';

/** Modules whose rows move to the tenant database (the data copy's tables). */
export const ROUTED_MODULES = ['users', 'customers', 'invoices', 'tickets'] as const;
export type RoutedModule = (typeof ROUTED_MODULES)[number];

/**
 * The routing table (decision): before cutover every write goes to the shared database; in dual
 * write to the shared database first, then the tenant database (the shared one stays the truth);
 * after cutover to the tenant database only.
 */
export const WRITE_ROUTES: Record<RoutedModule, Record<WritePhase, WriteTarget>> = Object.fromEntries(
  ROUTED_MODULES.map((m) => [
    m,
    // issue 15: after cutover from the one routing table (db/tenant-routing.ts): users stay shared
    // and are mirrored, the other modules move
    { before_cutover: 'shared', dual_write: 'shared+tenant_db', after_cutover: writeLocationAfterCutover(m) },
  ]),
) as Record<RoutedModule, Record<WritePhase, WriteTarget>>;

/** The phase of a tenant database status: `production` is after cutover, anything else before. */
export function writePhaseOf(status: TenantDbStatus): WritePhase {
  return status === 'production' ? 'after_cutover' : 'before_cutover';
}

/**
 * Where a module's writes go in a phase.
 * @param module one of ROUTED_MODULES
 */
export function writeTarget(module: RoutedModule, phase: WritePhase): WriteTarget {
  return WRITE_ROUTES[module][phase];
}

/** The write-plan report: per module where writes go now, in dual write and after cutover. */
export function writePlan(status: TenantDbStatus) {
  const phase = writePhaseOf(status);
  return {
    status,
    phase,
    modules: ROUTED_MODULES.map((module) => ({
      module,
      now: writeTarget(module, phase),
      dual_write: writeTarget(module, 'dual_write'),
      after_cutover: writeTarget(module, 'after_cutover'),
    })),
  };
}
