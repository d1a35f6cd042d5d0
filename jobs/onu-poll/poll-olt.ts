import { UnrecoverableError } from 'bullmq';
import type { Knex } from 'knex';
import { Olt, Onu } from '../../db/models/index.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { tenantScopeOf } from '../../db/tenant-routing.js';
import { openCredentials } from '../../db/credentials.js';
import type { JobLike } from '../queues.js';
import { jobClock, jobDeps } from '../deps.js';
import { SCAN_BATCH_SIZE, tally } from '../platform-scan.js';
import {
  OltAuthError,
  OltUnreachableError,
  UnknownOltDriverError,
  oltAdapterFor,
  type OltTarget,
  type OnuReading,
  type OnuStatus,
} from '../adapters/olt/index.js';

/**
 * One OLT's poll for the `onu-poll` job (jobs/onu-poll.ts has the whole design and the sweep): the
 * OLT and its active ONUs read in the tenant's database, the driver's readings, the failure marks
 * (unreachable, refused credentials, unknown driver) and the batched ONU update under the OLT's row
 * lock, dropped when a newer poll was applied first.
 */

/** What one OLT's poll returns (bull-board shows it). */
export interface OnuPollOltResult {
  kind: 'olt';
  olt_id: number;
  tenant_id: number;
  /**
   * polled: readings applied; unreachable: OLT offline; stale: a newer poll was applied first;
   * skipped: the OLT is gone or inactive.
   */
  outcome: 'polled' | 'unreachable' | 'stale' | 'skipped';
  /** The poll's moment (ISO 8601). */
  polled_at: string;
  /** Active ONUs of the OLT. */
  onus: number;
  /** ONUs whose row changed. */
  changed: number;
  /** ONUs per status after the poll. */
  statuses: Partial<Record<OnuStatus, number>>;
  /** Serials the OLT reported that are not active ONUs of it (ignored). */
  unknown: number;
  /** Known ONUs the OLT did not report (set offline). */
  missing: number;
}

/** Marks the OLT after a failed poll, unless a newer poll was applied already. */
async function markFailed(
  scope: TenantScope,
  olt: Olt,
  polledAt: Date,
  error: string,
  status: 'offline' | null,
): Promise<boolean> {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Olt).findById(olt.id).forUpdate().select('id', 'status', 'last_polled_at');
    if (!row || (row.last_polled_at && row.last_polled_at > polledAt)) return false;
    const newStatus = status ?? row.status;
    await s
      .query(Olt)
      .findById(olt.id)
      .patch({
        status: newStatus,
        last_polled_at: polledAt,
        last_poll_error: error,
        ...(newStatus !== row.status || olt.last_poll_error !== error ? { updated_at: new Date() } : {}),
      });
    return true;
  });
}

const UPDATE_ONUS = `UPDATE onus AS o
  SET status = v.status, rx_power = v.rx, tx_power = v.tx, uptime = v.up,
      last_seen = CASE WHEN v.status = 'online' THEN v.seen ELSE o.last_seen END, updated_at = now()
  FROM (VALUES %VALUES%) AS v(id, status, rx, tx, up, seen)
  WHERE o.id = v.id AND o.tenant_id = ?
    AND ((o.status, o.rx_power, o.tx_power, o.uptime) IS DISTINCT FROM (v.status, v.rx, v.tx, v.up)
      OR (v.status = 'online' AND o.last_seen IS DISTINCT FROM v.seen))
  RETURNING o.id`;

/**
 * One OLT's poll (the per-OLT job, see jobs/onu-poll.ts): re-reads the OLT in its tenant's
 * database, asks its driver, and applies the readings unless a newer poll was applied first.
 * @throws UnrecoverableError for refused credentials or an unknown driver; the database error (retried)
 */
export async function pollOlt(
  job: JobLike<unknown>,
  oltId: number,
  tenantId: number,
  signal?: AbortSignal,
): Promise<OnuPollOltResult> {
  const deps = jobDeps();
  const { knex } = deps;
  const polledAt = jobClock().now();
  // the tenant's database after its cutover (issue 15 item 4), read fresh per run
  const scope = await tenantScopeOf(knex, tenantId, deps.appKey, 'job');
  const result: OnuPollOltResult = {
    kind: 'olt',
    olt_id: oltId,
    tenant_id: tenantId,
    outcome: 'skipped',
    polled_at: polledAt.toISOString(),
    onus: 0,
    changed: 0,
    statuses: {},
    unknown: 0,
    missing: 0,
  };
  const olt = await scope.query(Olt).findById(oltId);
  if (!olt || !olt.is_active) {
    await job.log(`OLT ${oltId} of tenant ${tenantId} ${olt ? 'is inactive' : 'no longer exists'}: nothing to poll`);
    return result;
  }
  const onus = await scope
    .query(Onu)
    .where({ olt_id: oltId, is_active: true })
    .orderBy('id')
    .select('id', 'serial_number');
  result.onus = onus.length;
  await job.log(
    `OLT ${olt.id} "${olt.name}" (tenant ${tenantId}, driver ${olt.driver}, ${olt.ip_address ?? 'no address'}): ` +
      `${onus.length} active ONU(s) to read`,
  );

  let readings: OnuReading[];
  try {
    const adapter = oltAdapterFor(olt.driver, deps.oltAdapters);
    const target: OltTarget = {
      id: olt.id,
      tenant_id: tenantId,
      name: olt.name,
      vendor: olt.vendor,
      model: olt.model,
      ip_address: olt.ip_address,
      pon_ports: olt.pon_ports,
      serials: onus.map((o) => o.serial_number),
      credentials: () => openOltCredentials(olt, deps.appKey),
    };
    readings = await adapter.poll(target, { now: polledAt, signal });
  } catch (err) {
    if (err instanceof OltUnreachableError) {
      const applied = await markFailed(scope, olt, polledAt, 'unreachable', 'offline');
      await job.log(
        applied
          ? `OLT ${olt.id} is unreachable: status offline; its ONUs keep their last readings`
          : `OLT ${olt.id} is unreachable, but a newer poll was applied already: nothing changed`,
      );
      await job.updateProgress(100);
      return { ...result, outcome: applied ? 'unreachable' : 'stale' };
    }
    if (err instanceof OltAuthError) {
      await markFailed(scope, olt, polledAt, 'authentication failed', null);
      await job.log(`OLT ${olt.id} refused the credentials (or they cannot be opened): giving up until they are fixed`);
      throw new UnrecoverableError(`OLT ${olt.id}: authentication failed`);
    }
    if (err instanceof UnknownOltDriverError) {
      await markFailed(scope, olt, polledAt, 'unknown driver', null);
      await job.log(`OLT ${olt.id} names driver "${olt.driver}", which this build does not have: giving up`);
      throw new UnrecoverableError(`OLT ${olt.id}: unknown driver ${olt.driver}`);
    }
    throw err;
  }
  await job.updateProgress(50);

  const bySerial = new Map<string, OnuReading>();
  for (const r of readings) bySerial.set(r.serial_number.toUpperCase(), r);
  const known = new Set(onus.map((o) => o.serial_number.toUpperCase()));
  result.unknown = [...bySerial.keys()].filter((s) => !known.has(s)).length;
  const rows = onus.map((o) => {
    const r = bySerial.get(o.serial_number.toUpperCase());
    if (!r) result.missing += 1;
    const status: OnuStatus = r?.status ?? 'offline';
    tally(result.statuses, status);
    const online = status === 'online';
    return {
      id: o.id,
      status,
      rx: online ? (r?.rx_power ?? null) : null,
      tx: online ? (r?.tx_power ?? null) : null,
      up: online ? (r?.uptime ?? null) : null,
    };
  });

  const applied = await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Olt).findById(olt.id).forUpdate().select('id', 'status', 'last_polled_at');
    if (!row || (row.last_polled_at && row.last_polled_at > polledAt)) return false;
    for (let i = 0; i < rows.length; i += SCAN_BATCH_SIZE) {
      const batch = rows.slice(i, i + SCAN_BATCH_SIZE);
      const values: Knex.RawBinding[] = [];
      for (const r of batch) values.push(r.id, r.status, r.rx, r.tx, r.up, polledAt);
      const sql = UPDATE_ONUS.replace(
        '%VALUES%',
        batch.map(() => '(?::int, ?::text, ?::numeric, ?::numeric, ?::bigint, ?::timestamptz)').join(', '),
      );
      const { rows: changed } = await trx.raw(sql, [...values, tenantId]);
      result.changed += changed.length;
    }
    const patch: Partial<Olt> = { status: 'online', last_polled_at: polledAt, last_poll_error: null };
    if (row.status !== 'online' || olt.last_poll_error !== null) patch.updated_at = new Date();
    await s.query(Olt).findById(olt.id).patch(patch);
    return true;
  });
  if (!applied) {
    await job.log(`a newer poll of OLT ${olt.id} was applied already: these readings are dropped`);
    await job.updateProgress(100);
    return { ...result, outcome: 'stale', changed: 0 };
  }
  const counts = Object.entries(result.statuses)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  await job.log(
    `OLT ${olt.id} online: ${readings.length} reading(s); ONUs ${counts || 'none'}; ${result.changed} row(s) changed` +
      (result.unknown ? `; ${result.unknown} unknown serial(s) ignored` : '') +
      (result.missing ? `; ${result.missing} known ONU(s) not reported, set offline` : ''),
  );
  await job.updateProgress(100);
  return { ...result, outcome: 'polled' };
}

/**
 * Opens an OLT's sealed credentials for its driver.
 * @returns null when none are stored
 * @throws OltAuthError when they cannot be opened (no APP_KEY in this process, another key, tampered)
 */
function openOltCredentials(olt: Olt, appKey: Buffer | undefined) {
  if (!olt.credentials_enc) return null;
  if (!appKey) throw new OltAuthError('APP_KEY is not configured in this worker: the credentials cannot be opened.');
  try {
    return openCredentials(appKey, 'olts', olt.tenant_id, olt.credentials_enc);
  } catch (cause) {
    throw new OltAuthError('The stored credentials cannot be opened with this APP_KEY.', { cause });
  }
}
