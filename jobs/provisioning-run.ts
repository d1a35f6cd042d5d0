import { FlowProducer, UnrecoverableError, type Job } from 'bullmq';
import type { Knex } from 'knex';
import { jobClock, jobDeps } from './deps.js';
import { QueueUnavailableError, type Queues } from './queues.js';
import { resolveRuntime, type ResolvedRuntime } from './provisioning/runtime.js';
import {
  cleanupStep,
  ensureDomainStep,
  failPendingDomain,
  isRetryable,
  mailboxStep,
  type RunRow,
} from './provisioning/steps.js';

/**
 * Queue `provisioning` (issue 13 item 8): a run is a BullMQ flow with fixed ids, parent
 * `prov-{run}-finish`, children `prov-{run}-dns` and (provision) `prov-{run}-mailbox`, `-r{n}` when
 * resumed. Both children carry ignoreDependencyOnFailure, so the parent runs after a failed child
 * and sets the run's status from the steps' results: dns failed -> failed; mailbox failed -> partial;
 * else succeeded. A step retries only network errors, 5xx and 429 (5 attempts, exponential
 * backoff); anything else fails it at once (UnrecoverableError). Job data: the run id only.
 */
export const QUEUE = 'provisioning' as const;

/** Job data of every job of a run. */
export interface RunJobData {
  run_id: number;
}

/** A step of a run. */
export type StepName = 'dns' | 'mailbox';

/** Attempts of a step (item 8). */
export const STEP_ATTEMPTS = 5;
/** First backoff of a step, in ms (doubles each attempt). */
export const STEP_BACKOFF_MS = 2000;

const producers = new WeakMap<Queues, FlowProducer>();

/** The FlowProducer over the queues' connection and prefix (one per Queues). */
function flowProducerOf(queues: Queues): FlowProducer {
  let fp = producers.get(queues);
  if (!fp) {
    fp = new FlowProducer({ connection: queues.get(QUEUE).opts.connection, prefix: queues.prefix });
    fp.on('error', () => {
      /* surfaced to the caller of add() */
    });
    producers.set(queues, fp);
  }
  return fp;
}

/** The job ids of a run's flow (fixed; `-r{n}` for the n-th resume). */
export function flowJobIds(runId: number, resumes: number) {
  const r = resumes > 0 ? `-r${resumes}` : '';
  return { finish: `prov-${runId}-finish${r}`, dns: `prov-${runId}-dns${r}`, mailbox: `prov-${runId}-mailbox${r}` };
}

/**
 * Adds a run's flow: the finish parent and the given steps as its children.
 * @param backoffMs the first retry delay of a step (default STEP_BACKOFF_MS; tests use less)
 * @throws QueueUnavailableError (503) when Redis does not take it within the queues' bound
 */
export async function enqueueRunFlow(
  queues: Queues,
  run: { id: number; resumes: number },
  steps: StepName[],
  backoffMs = STEP_BACKOFF_MS,
): Promise<void> {
  const ids = flowJobIds(run.id, run.resumes);
  const keep = { removeOnComplete: { age: 7 * 24 * 3600 }, removeOnFail: { age: 7 * 24 * 3600 } };
  const adding = flowProducerOf(queues).add({
    name: 'finish',
    queueName: QUEUE,
    data: { run_id: run.id } satisfies RunJobData,
    opts: { jobId: ids.finish, attempts: 3, backoff: { type: 'exponential', delay: backoffMs }, ...keep },
    children: steps.map((s) => ({
      name: s,
      queueName: QUEUE,
      data: { run_id: run.id } satisfies RunJobData,
      opts: {
        jobId: ids[s],
        attempts: STEP_ATTEMPTS,
        backoff: { type: 'exponential', delay: backoffMs },
        ignoreDependencyOnFailure: true,
        ...keep,
      },
    })),
  });
  adding.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Redis did not take the flow within ${queues.enqueueTimeoutMs} ms`)),
      queues.enqueueTimeoutMs,
    );
  });
  try {
    await Promise.race([adding, timeout]);
  } catch (err) {
    throw new QueueUnavailableError(QUEUE, err);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads a run. */
export async function loadRun(knex: Knex, id: number): Promise<RunRow | undefined> {
  const row = await knex('provisioning_runs').where({ id }).first();
  return row ? ({ ...row, id: Number(row.id) } as RunRow) : undefined;
}

/** Merges one step's state into the run's steps. */
async function setStep(knex: Knex, runId: number, step: string, state: Record<string, unknown>, now: Date) {
  await knex('provisioning_runs')
    .where({ id: runId })
    .update({
      steps: knex.raw('steps || jsonb_build_object(?::text, ?::jsonb)', [step, JSON.stringify(state)]),
      updated_at: now,
    });
}

/** The steps a run of this kind has. */
export const stepsOf = (kind: RunRow['kind']): StepName[] => (kind === 'provision' ? ['dns', 'mailbox'] : ['dns']);

/** A job as runJob reads it (a BullMQ Job, or a fake in tests). */
export type RunJob = Pick<Job<RunJobData>, 'name' | 'data' | 'attemptsMade'> & { opts: { attempts?: number } };

/**
 * Runs one job of a run: a step, or the finish. A step already succeeded (a resume) is not redone.
 * @param appKey seals the mailbox's initial password
 * @throws Error to retry (retryable failure, attempts left), UnrecoverableError otherwise
 */
export async function runJob(knex: Knex, rt: ResolvedRuntime, appKey: Buffer, job: RunJob, now: Date) {
  const run = await loadRun(knex, job.data.run_id);
  if (!run) throw new UnrecoverableError(`run ${job.data.run_id} not found`);
  if (job.name === 'finish') return finishRun(knex, run, now);
  const step = job.name as StepName;
  if (run.steps[step]?.status === 'succeeded') return run.steps[step].result;
  await knex('provisioning_runs')
    .where({ id: run.id, status: 'queued' })
    .update({ status: 'running', updated_at: now });
  const attempts = job.attemptsMade + 1;
  try {
    let result: unknown;
    if (step === 'mailbox') result = await mailboxStep(knex, rt, appKey, run, now);
    else if (run.kind === 'cleanup') result = await cleanupStep(knex, rt, run, now);
    else result = await ensureDomainStep(knex, rt, run, now);
    await setStep(knex, run.id, step, { status: 'succeeded', result, error: null, attempts }, now);
    return result;
  } catch (err) {
    const message = (err instanceof Error ? err.message : String(err)).slice(0, 500);
    if (isRetryable(err) && attempts < (job.opts.attempts ?? 1)) {
      await setStep(knex, run.id, step, { status: 'retrying', result: null, error: message, attempts }, now);
      throw new Error(message, { cause: err });
    }
    await setStep(knex, run.id, step, { status: 'failed', result: null, error: message, attempts }, now);
    if (step === 'dns' && run.kind !== 'cleanup') await failPendingDomain(knex, run, message, now);
    throw new UnrecoverableError(message);
  }
}

/**
 * The finish: the run's status from its steps (dns not succeeded: failed; mailbox not succeeded:
 * partial; else succeeded), its first error, finished_at, and a platform audit entry.
 */
export async function finishRun(knex: Knex, run: RunRow, now: Date) {
  const steps = stepsOf(run.kind).map((s) => [s, run.steps[s]] as const);
  const ok = (s: StepName) => run.steps[s]?.status === 'succeeded';
  const status = !ok('dns') ? 'failed' : steps.every(([s]) => ok(s)) ? 'succeeded' : 'partial';
  const error = steps.find(([, st]) => st && st.status !== 'succeeded')?.[1]?.error ?? null;
  await knex.transaction(async (trx) => {
    await trx('provisioning_runs').where({ id: run.id }).update({ status, error, finished_at: now, updated_at: now });
    await trx('platform_audit_log').insert({
      user_id: null,
      action: 'platform.provisioning_run_finished',
      subject_type: 'provisioning_run',
      subject_id: run.id,
      after: JSON.stringify({ tenant_id: run.tenant_id, kind: run.kind, status }),
    });
  });
  return { status };
}

/** BullMQ processor of `provisioning`. */
export async function process(job: Job<RunJobData>) {
  const deps = jobDeps();
  if (!deps.appKey) throw new UnrecoverableError('provisioning needs the APP_KEY');
  const rt = resolveRuntime(deps.knex, deps.appKey, deps.provisioning);
  return runJob(deps.knex, rt, deps.appKey, job, jobClock().now());
}
