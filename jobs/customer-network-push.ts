import { UnrecoverableError } from 'bullmq';
import type { Knex } from 'knex';
import type { PartialModelObject } from 'objection';
import { Customer, Nas, Package } from '../db/models/index.js';
import { tenantScopeOf } from '../db/tenant-routing.js';
import { openCredentials } from '../db/credentials.js';
import type { JobLike } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import {
  classifyNetworkError,
  networkAdapterFor,
  NetworkAuthError,
  type NasTarget,
  type NetworkAdapter,
  type NetworkFailure,
  type SessionSpec,
} from './adapters/network/index.js';

/**
 * The push of job `customer-network` (issue 8 item 2; jobs/customer-network.ts has the queue): puts
 * one customer's latest network state on its NAS through the NAS's NetworkAdapter.
 *
 * 1. Waits for the change that asked for this version: `SELECT ... FOR UPDATE` on the customer
 *    blocks until the enqueuing transaction ends, then the lock is let go at once.
 * 2. Skips when the row's network_version is newer (a newer job carries the newer state) or older
 *    (the change that took this version was rolled back: versions come from a sequence and are never
 *    handed out twice), or the customer is gone.
 * 3. Under a per-customer advisory lock (so two pushes of one customer never interleave, and one
 *    that waited re-reads the version before it acts): removes the session the last push left when
 *    the NAS or the username changed or the customer is to be removed, then applies the state:
 *    active (the package's name as profile), suspended -> isolated (the NAS's isolation_profile),
 *    terminated or no NAS -> removed. The PPPoE password is unsealed here and nowhere else; it never
 *    reaches job data, a log line, a return value or an error text.
 * 4. Records the outcome on the row: what the NAS now holds (network_state and the session's NAS and
 *    username) always, since a newer push that waited for this one must know it; the sync status
 *    (synced and synced_at, or the failure's fixed text) only while the row still has this version.
 *    Timeouts and server errors throw a plain Error (BullMQ retries with backoff; sync_status stays
 *    pending until the last attempt, then failed); refused credentials, unknown profiles, unknown
 *    drivers, no isolation profile, a password that cannot be opened: sync_status failed and
 *    UnrecoverableError.
 * Every step is a job.log line (bull-board). "Now" is the job clock.
 */

/** Job data of a push: ids and the version only (DESIGN.md §3). */
export interface CustomerNetworkData {
  tenant_id?: number;
  customer_id?: number;
  /** customers.network_version this job pushes. */
  version?: number;
}

/** A job as the push reads it: the JobLike part plus BullMQ's attempt counters (absent in some fakes). */
export type PushJob = JobLike<CustomerNetworkData> & { attemptsMade?: number; opts?: { attempts?: number } };

/** What a push returns (bull-board shows it). */
export interface CustomerNetworkPushResult {
  kind: 'push';
  tenant_id: number;
  customer_id: number;
  version: number;
  /** synced: the NAS holds the state; newer / rolled_back / gone: skipped (see the file comment). */
  outcome: 'synced' | 'newer' | 'rolled_back' | 'gone';
  /** The state the NAS holds afterwards (synced only). */
  state: 'active' | 'isolated' | 'removed' | null;
}

/** Namespace (first key) of the per-customer advisory lock of pushes: 'CN' + 'P'. */
export const PUSH_LOCK_CLASS = 0x434e50;

/** The state a customer should have on the NAS: terminated or without NAS removed, suspended isolated. */
export function desiredState(c: Pick<Customer, 'status' | 'nas_id'>): 'active' | 'isolated' | 'removed' {
  if (c.status === 'terminated' || c.nas_id === null) return 'removed';
  return c.status === 'suspended' ? 'isolated' : 'active';
}

/** The session key on the NAS: the MAC for dhcp and static customers, else the PPPoE username. */
export function sessionKey(c: Pick<Customer, 'service_type' | 'pppoe_username' | 'mac_address'>): string | null {
  return c.service_type === 'dhcp' || c.service_type === 'static' ? c.mac_address : c.pppoe_username;
}

/** A push the platform itself refuses (nothing to retry); the message is a fixed, safe text. */
class PushRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PushRefused';
  }
}

function classify(err: unknown): NetworkFailure {
  if (err instanceof PushRefused) return { retry: false, text: err.message };
  return classifyNetworkError(err);
}

type Verdict = 'current' | 'newer' | 'rolled_back' | 'gone';
/** What the locked part of a push ends with. */
type Outcome =
  | { skipped: Exclude<Verdict, 'current'> }
  | { failure: NetworkFailure; final: boolean }
  | { state: 'active' | 'isolated' | 'removed' | null };
function verdictOf(row: { network_version: string | number } | undefined, version: number): Verdict {
  if (!row) return 'gone';
  const v = Number(row.network_version);
  return v === version ? 'current' : v > version ? 'newer' : 'rolled_back';
}

const SKIP_TEXT: Record<Exclude<Verdict, 'current'>, string> = {
  newer: 'the customer has a newer network version: the job carrying it pushes it; skipped',
  rolled_back: 'this version was never committed (the change was rolled back): skipped',
  gone: 'the customer no longer exists: skipped',
};

/** The NAS as its driver sees it; the credentials are opened only if the driver asks. */
function targetOf(nas: Nas, appKey: Buffer | undefined): NasTarget {
  return {
    id: nas.id,
    tenant_id: nas.tenant_id,
    name: nas.name,
    nas_key: nas.nas_key,
    host: nas.host,
    port: nas.port,
    credentials() {
      if (!nas.credentials_enc) return null;
      if (!appKey) throw new NetworkAuthError('APP_KEY is not configured in this worker.');
      try {
        return openCredentials(appKey, 'nas', nas.tenant_id, nas.credentials_enc);
      } catch (cause) {
        throw new NetworkAuthError('The stored NAS credentials cannot be opened with this APP_KEY.', { cause });
      }
    },
  };
}

/** Opens the customer's PPPoE password (null when none is stored). */
function pppoePassword(c: Customer, appKey: Buffer | undefined): string | null {
  if (!c.pppoe_password_enc) return null;
  try {
    if (!appKey) throw new Error('no APP_KEY');
    return openCredentials(appKey, 'customers', c.tenant_id, c.pppoe_password_enc).password ?? null;
  } catch {
    throw new PushRefused('The PPPoE password cannot be opened with this APP_KEY.');
  }
}

/**
 * Runs one push (see the file comment).
 * @param signal passed to the adapter; an abort (worker shutdown) is rethrown without recording a failure
 * @throws Error (retry) or UnrecoverableError (give up) after recording the failure on the row
 */
export async function pushCustomerNetwork(
  job: PushJob,
  data: Required<CustomerNetworkData>,
  signal?: AbortSignal,
): Promise<CustomerNetworkPushResult> {
  const deps = jobDeps();
  const { knex } = deps;
  const { tenant_id: tenantId, customer_id: customerId, version } = data;
  const tag = `customer ${customerId} (tenant ${tenantId}) v${version}`;
  const result: CustomerNetworkPushResult = {
    kind: 'push',
    tenant_id: tenantId,
    customer_id: customerId,
    version,
    outcome: 'gone',
    state: null,
  };
  // the tenant's database after its cutover (issue 15 item 4), read fresh per run
  const scope = await tenantScopeOf(knex, tenantId, deps.appKey, 'job');
  await job.log(`${tag}: waiting for the change that asked for this version to commit`);
  const first = await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    return s.query(Customer).findById(customerId).forUpdate().select('id', 'network_version');
  });
  const early = verdictOf(first, version);
  if (early !== 'current') {
    await job.log(`${tag}: ${SKIP_TEXT[early]}`);
    await job.updateProgress(100);
    return { ...result, outcome: early };
  }
  await job.updateProgress(10);

  const attempt = (job.attemptsMade ?? 0) + 1;
  const attempts = job.opts?.attempts ?? 1;
  const outcome = await scope.knex.transaction(async (trx): Promise<Outcome> => {
    await trx.raw('SELECT pg_advisory_xact_lock(?, ?)', [PUSH_LOCK_CLASS, customerId]);
    const s = scope.withTransaction(trx);
    const row = await s.query(Customer).findById(customerId);
    const verdict = verdictOf(row, version);
    if (verdict !== 'current' || !row) return { skipped: verdict as Exclude<Verdict, 'current'> };
    const now = jobClock().now();
    const want = desiredState(row);
    const key = sessionKey(row);
    /** The sync status belongs to this version only; a newer one is pending. */
    const guard = () => s.query(Customer).where({ id: customerId, network_version: version });
    /** What the NAS holds (state, session's NAS and username) is written whatever the version. */
    const fact = () => s.query(Customer).where({ id: customerId });
    let removedOld = false;
    try {
      const adapterOf = (nas: Nas): NetworkAdapter =>
        networkAdapterFor(nas.driver, { knex: scope.knex as Knex }, deps.networkAdapters);
      const nas = row.nas_id === null ? undefined : await s.query(Nas).findById(row.nas_id);
      const old = row.network_nas_id === null ? undefined : await s.query(Nas).findById(row.network_nas_id);
      const opts = { now, signal };
      const moved = !nas || old?.id !== nas.id || row.network_username !== key;
      if (old && row.network_username && (want === 'removed' || moved)) {
        await job.log(`${tag}: removing session ${row.network_username} from NAS ${old.id} "${old.nas_key}"`);
        await adapterOf(old).remove(targetOf(old, deps.appKey), row.network_username, opts);
        removedOld = true;
        await job.log(`${tag}: session ${row.network_username} removed from NAS ${old.id}`);
      }
      if (want !== 'removed' && nas) {
        if (!key) throw new PushRefused('The customer has no PPPoE username or MAC address for the NAS.');
        let profile: string | null;
        if (want === 'isolated') {
          if (!nas.isolation_profile) throw new PushRefused('The NAS has no isolation profile.');
          profile = nas.isolation_profile;
        } else {
          const pkg = row.package_id === null ? undefined : await s.query(Package).findById(row.package_id);
          profile = pkg?.name ?? null;
        }
        const session: SessionSpec = {
          username: key,
          password: pppoePassword(row, deps.appKey),
          mac_address: row.mac_address,
          service_type: row.service_type,
          state: want,
          profile,
          version,
        };
        await job.log(
          `${tag}: applying ${want} (profile ${profile ?? 'none'}) for ${key} on NAS ${nas.id} "${nas.nas_key}" ` +
            `(driver ${nas.driver}, attempt ${attempt} of ${attempts})`,
        );
        await adapterOf(nas).apply(targetOf(nas, deps.appKey), session, opts);
      }
    } catch (err) {
      if (signal?.aborted) throw err;
      const failure = classify(err);
      const final = !failure.retry || attempt >= attempts;
      const patch: PartialModelObject<Customer> = {
        network_sync_status: final ? 'failed' : 'pending',
        network_error: final ? failure.text : `${failure.text} Retrying (attempt ${attempt} of ${attempts}).`,
      };
      // what the NAS holds is a fact whatever the version: a newer push must see it
      if (removedOld) await fact().patch({ network_nas_id: null, network_username: null, network_state: 'removed' });
      await guard().patch(patch);
      return { failure, final };
    }
    const placed = want !== 'removed' && row.nas_id !== null;
    const nothing = !placed && row.network_nas_id === null && row.network_state === null;
    const state = nothing ? null : want;
    await fact().patch({
      network_state: state,
      network_nas_id: placed ? row.nas_id : null,
      network_username: placed ? key : null,
    });
    await guard().patch({
      network_sync_status: nothing ? 'none' : 'synced',
      network_error: null,
      network_synced_at: now,
    });
    return { state };
  });

  if ('skipped' in outcome) {
    await job.log(`${tag}: ${SKIP_TEXT[outcome.skipped]}`);
    await job.updateProgress(100);
    return { ...result, outcome: outcome.skipped };
  }
  if ('failure' in outcome) {
    const { failure, final } = outcome;
    await job.log(
      `${tag}: ${failure.text} ` +
        (failure.retry
          ? final
            ? `Last attempt (${attempt} of ${attempts}): sync failed.`
            : `Retrying with backoff (attempt ${attempt} of ${attempts}).`
          : 'Giving up: sync failed until someone fixes it and asks for a network sync.'),
    );
    if (!failure.retry) throw new UnrecoverableError(`${tag}: ${failure.text}`);
    throw new Error(`${tag}: ${failure.text}`);
  }
  await job.log(`${tag}: synced, the NAS holds ${outcome.state ?? 'nothing'}`);
  await job.updateProgress(100);
  return { ...result, outcome: 'synced', state: outcome.state };
}
