import type { Knex } from 'knex';
import { lockOf, readProvisioningRows, type SectionRow } from '../../jobs/provisioning/credentials.js';
import { AppError } from '../errors.js';

/**
 * GET /api/platform/provisioning/readiness (issue 13 item 4; admin-api.md "global checklist") and
 * the lock's HTTP error.
 */

/**
 * The tables provisioning needs (the `metadata_tables` check). APPEND-ONLY: the runs half adds its
 * tables (runs, drafts, subscriber domains) here.
 */
export const PROVISIONING_METADATA_TABLES: string[] = [
  'tenants',
  'platform_audit_log',
  'provisioning_settings',
  'provisioning_credentials',
  'provisioning_runs',
  'provisioning_drafts',
  'tenant_subscriber_domains',
  'provisioning_mailboxes',
  'tenant_databases',
  'tenant_db_runs',
];

/** A readiness check's status. */
export type CheckStatus = 'ok' | 'missing' | 'untested' | 'failed';

/** One line of the checklist. */
export interface ReadinessCheck {
  key: 'metadata_tables' | 'tenant_db' | 'cloudflare' | 'mail_panel' | 'storage' | 'backup';
  status: CheckStatus;
  message: string;
}

/** The status of a tested thing from its last_test. */
function testedStatus(test: SectionRow['last_test'], what: string): Pick<ReadinessCheck, 'status' | 'message'> {
  if (!test) return { status: 'untested', message: `${what} is saved but not tested since its last change.` };
  if (!test.ok) return { status: 'failed', message: `${what}: the last test failed: ${test.message}` };
  return { status: 'ok', message: `${what}: tested ok at ${test.at}.` };
}

const LABELS = {
  tenant_db: 'The tenant database admin credential',
  cloudflare: 'The Cloudflare DNS credential',
  mail_panel: 'The mail panel credential',
  storage: 'The storage credential',
} as const;

/**
 * The checklist, `ready` (every check ok) and the lock (jobs/provisioning/credentials.ts lockOf).
 * @param knex the database
 * @returns `{ready, locked, lock_reasons, checks}`; checks in the order metadata_tables, tenant_db,
 *   cloudflare, mail_panel, storage, backup
 */
export async function readiness(knex: Knex) {
  const checks: ReadinessCheck[] = [];
  const found = await knex.raw<{ rows: { t: string; r: string | null }[] }>(
    'SELECT t, to_regclass(t)::text AS r FROM unnest(?::text[]) AS t',
    [PROVISIONING_METADATA_TABLES],
  );
  const absent = found.rows.filter((r) => r.r === null).map((r) => r.t);
  checks.push(
    absent.length
      ? { key: 'metadata_tables', status: 'missing', message: `Tables missing (migrate): ${absent.join(', ')}.` }
      : { key: 'metadata_tables', status: 'ok', message: 'The provisioning tables are migrated.' },
  );
  if (absent.some((t) => t.startsWith('provisioning_'))) {
    for (const key of ['tenant_db', 'cloudflare', 'mail_panel', 'storage', 'backup'] as const)
      checks.push({ key, status: 'missing', message: 'The provisioning tables are missing.' });
    return { ready: false, locked: true, lock_reasons: ['metadata_tables'], checks };
  }
  const rows = await readProvisioningRows(knex);
  for (const key of ['tenant_db', 'cloudflare', 'mail_panel', 'storage'] as const) {
    const r = rows.sections.get(key);
    const fake = r?.fake ? ' (a local demo fake)' : '';
    if (!r) checks.push({ key, status: 'missing', message: `${LABELS[key]} is not saved.` });
    else {
      const s = testedStatus(r.last_test, LABELS[key] + fake);
      checks.push({ key, ...s });
    }
  }
  if (!rows.settings.backup_ready)
    checks.push({ key: 'backup', status: 'missing', message: 'backup_ready is off: confirm backups first.' });
  else checks.push({ key: 'backup', ...testedStatus(rows.settings.backup_last_test, 'The backup') });
  const lock = lockOf(rows);
  return {
    ready: checks.every((c) => c.status === 'ok'),
    locked: lock.locked,
    lock_reasons: lock.reasons,
    checks,
  };
}

/**
 * 422 `provisioning_locked` (issue 13 item 4): runs and customer mailboxes are refused while the
 * lock holds. `errors.provisioning` names the reasons.
 */
export class ProvisioningLocked extends AppError {
  /** @param reasons the lock's reasons (ProvisioningLock.reasons) */
  constructor(reasons: readonly string[]) {
    const message = `Provisioning is locked (${reasons.join(', ')}): enable it, confirm backups and test Cloudflare and the mail panel.`;
    super(422, 'provisioning_locked', message, { errors: { provisioning: [message] } });
  }
}

/**
 * Throws ProvisioningLocked when the lock holds (for the runs half and the customer mailbox route).
 * @param source anything with the contract's lock()
 * @throws ProvisioningLocked (422 provisioning_locked)
 */
export async function assertUnlocked(source: {
  lock(): Promise<{ locked: boolean; reasons: string[] }>;
}): Promise<void> {
  const l = await source.lock();
  if (l.locked) throw new ProvisioningLocked(l.reasons);
}
