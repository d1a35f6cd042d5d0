import type { Job, Processor, Worker as BullWorker, WorkerOptions } from 'bullmq';
import { WaitingError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import type { QueueName } from '../jobs/queues.js';
import type { Logger } from '../lib/logger.js';
import { ChildStartExitError } from './child-start.js';

/**
 * The worker process's graceful shutdown (DESIGN.md §3, issue 7), split out of workers/main.ts:
 * the processor guard that tracks running jobs and moves a job stopped by the shutdown back to its
 * queue, the same for a sandboxed job whose child the stop ended while it was starting
 * (SandboxedWorker), the end-of-grace sweep, the wait for failure hooks still running, and a
 * bounded Redis QUIT.
 */

/** A job running in this process, as the processor guard saw it start. */
export interface RunningJob {
  job: Job;
  token: string | undefined;
}

/** The key of a running job in ShutdownState.running: `<queue>/<job id>` (bull-board's names). */
export const runningKey = (queue: string, jobId: string | undefined): string => `${queue}/${jobId}`;

/** Shared between close() and the processor guards of one startWorkers call. */
export interface ShutdownState {
  /** True once close() fired the AbortSignals near the end of the grace period. */
  aborting: boolean;
  /** `<queue>/<job id>` -> the running job. */
  running: Map<string, RunningJob>;
}

/**
 * Wraps an in-process processor: records the running job for close(), and when the job stops
 * because close() signalled it (it throws after its AbortSignal fired at shutdown) moves it back to
 * its queue instead of failing it, so the stop costs no attempt and the job runs again at once on
 * another worker (it goes to the head of the wait list). Any other outcome is the processor's own.
 */
export function guard(queue: QueueName, processor: Processor, state: ShutdownState, logger: Logger): Processor {
  return async (job, token, signal) => {
    const key = runningKey(queue, job.id);
    state.running.set(key, { job, token });
    try {
      return await processor(job, token, signal);
    } catch (err) {
      if (!(state.aborting && signal?.aborted && token)) throw err;
      return backToQueue(queue, job, token, err, logger);
    } finally {
      state.running.delete(key);
    }
  };
}

/**
 * A job the shutdown stopped goes back to its queue (the head of its wait list) without costing an
 * attempt: a job log line, `moveToWait(token)`, a warning, then WaitingError, which tells BullMQ
 * the job was moved (it neither fails nor completes it).
 * @param err what stopped the job (its message goes to the job log)
 * @throws WaitingError once moved; `err` itself when the move fails (logged; the job then fails and
 *   is retried as usual)
 */
async function backToQueue(queue: QueueName, job: Job, token: string, err: unknown, logger: Logger): Promise<never> {
  const why = err instanceof Error ? err.message : String(err);
  try {
    await job.log(`${new Date().toISOString()} worker shutdown: stopped (${why}); back to the queue`);
    await job.moveToWait(token);
  } catch (moveErr) {
    logger.error(
      { queue, job_id: job.id, err: (moveErr as Error).message },
      'could not move the stopped job back to its queue; it fails and is retried as usual',
    );
    throw err;
  }
  logger.warn({ queue, job_id: job.id }, 'job stopped by the shutdown and moved back to its queue');
  throw new WaitingError();
}

/**
 * How long a sandboxed job whose child exited while starting waits for its worker's close() to
 * begin, in ms: a stop of the process group (Ctrl-C of `npm start`) signals the worker and the
 * child at the same moment, and the child's exit can be seen first.
 */
export const CHILD_EXIT_STOP_SETTLE_MS = 250;

/**
 * The Worker of a sandboxed processor (a file BullMQ runs in a child process). It differs from
 * BullMQ's in one case: a job whose child exits while starting (ChildStartExitError) while the
 * worker is being stopped goes back to its queue instead of failing. A stop of the process group
 * reaches the child too: a Ctrl-C while the child loads its processor made BullMQ's child handler
 * exit it, and the job (attempts 1 for a supplier import) failed with a reason that had nothing to
 * do with its file; the preview was lost. Any other failure is BullMQ's as before.
 */
export class SandboxedWorker extends Worker {
  /**
   * @param name the queue
   * @param file the processor file (absolute path or file: URL)
   * @param opts BullMQ's worker options
   * @param shutdown the running jobs of this startWorkers call (trackSandboxed records them)
   * @param logger for the move's warning or error
   */
  constructor(
    name: QueueName,
    file: string | URL,
    opts: WorkerOptions,
    private readonly shutdown: ShutdownState,
    private readonly logger: Logger,
  ) {
    super(name, file, opts);
  }

  /** Runs the job in a child; see the class. */
  protected override async callProcessJob(job: Job, token: string, signal?: AbortSignal): Promise<unknown> {
    try {
      return await super.callProcessJob(job, token, signal);
    } catch (err) {
      if (!(err instanceof ChildStartExitError) || !token || !(await this.stopping())) throw err;
      this.shutdown.running.delete(runningKey(this.name, job.id)); // neither 'completed' nor 'failed' will forget it
      return backToQueue(this.name as QueueName, job, token, err, this.logger);
    }
  }

  /** Whether close() was called, now or within CHILD_EXIT_STOP_SETTLE_MS. */
  private async stopping(): Promise<boolean> {
    if (this.closing) return true;
    await sleep(CHILD_EXIT_STOP_SETTLE_MS);
    return this.closing !== undefined;
  }
}

/**
 * A sandboxed processor (a file BullMQ runs in a child process) cannot be wrapped by guard(), so its
 * jobs are tracked from the Worker's events instead: `active` records the job with its lock token,
 * `completed` and `failed` forget it. close() then names them in its "shutting down" line and, at
 * the end of the grace period, returnToQueue() moves them back to their queue at once instead of
 * leaving them locked until the stalled check of the next worker (lock duration, 30 s by default).
 */
export function trackSandboxed(queue: QueueName, worker: BullWorker, state: ShutdownState): void {
  const key = (job: Job | undefined) => runningKey(queue, job?.id);
  worker.on('active', (job) => {
    state.running.set(key(job), { job, token: job.token });
  });
  const forget = (job: Job | undefined) => {
    state.running.delete(key(job));
  };
  worker.on('completed', forget);
  worker.on('failed', forget);
}

/**
 * End of the grace period: the jobs still running did not stop. Each is moved back to its queue
 * (its lock is released, it runs again elsewhere; its processor may still finish here before the
 * process exits, which idempotent processors tolerate); a job that cannot be moved keeps its lock
 * until it expires and is then picked up by the stalled check of another worker. Never lost.
 */
export async function returnToQueue(state: ShutdownState, logger: Logger, graceMs: number): Promise<void> {
  const left = [...state.running.entries()];
  state.running.clear();
  await Promise.all(
    left.map(async ([key, { job, token }]) => {
      const moved = token
        ? await Promise.race([
            job.moveToWait(token).then(
              () => true,
              () => false,
            ),
            new Promise<boolean>((r) => setTimeout(() => r(false), 1000).unref()),
          ])
        : false;
      logger.warn(
        { job: key, grace_ms: graceMs },
        moved
          ? 'job still running at the end of the grace period: moved back to its queue'
          : 'job still running at the end of the grace period: left for the stalled check (runs again after its lock expires)',
      );
    }),
  );
}

/** QUIT, or a plain disconnect when Redis does not answer within `ms` (it may be the reason we stop). */
export async function quitWithin(connection: Redis, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([connection.quit().catch(() => undefined), timeout]);
  clearTimeout(timer);
  connection.disconnect();
}

/**
 * How long close() waits for failure hooks still running, in ms. A hook records a failure on the
 * job's own row (the supplier import's preview or import: `failed` with the reason); without the
 * wait, a job that failed as the worker stopped left its row `queued` for good, because the pool
 * closed under the hook.
 */
export const FAILURE_HOOKS_WAIT_MS = 5000;

/**
 * Waits until every promise of `hooks` settled, at most `ms`; logs the ones left after that.
 * @param hooks the failure hooks still running (each removes itself when it settles)
 * @param ms the longest wait, in ms
 */
export async function settleHooks(hooks: ReadonlySet<Promise<void>>, ms: number, logger: Logger): Promise<void> {
  if (!hooks.size) return;
  const left = await Promise.race([
    Promise.allSettled([...hooks]).then(() => 0),
    sleep(ms, undefined, { ref: false }).then(() => hooks.size),
  ]);
  if (left) logger.error({ hooks: left, wait_ms: ms }, 'failure hooks still running at the stop: not waited for');
}
