import { Child } from 'bullmq';
import type { ChildProcess } from 'node:child_process';
import type { Worker as ThreadWorker } from 'node:worker_threads';

/**
 * A sandboxed child that dies while it starts fails its job instead of hanging it.
 *
 * BullMQ 6.7's `Child.init()` removes every listener of the child when the child process exits,
 * among them the 'close' listener with which `initChild()` waits for "init completed": a child
 * that exits after it was sent its processor file and before it reported back (its processor
 * module calls process.exit, the heap cap strikes while it loads, a signal of the whole process
 * group) leaves `ChildPool.retain()` waiting forever, and its job stays active until the worker
 * stops (then it is moved back and runs again). workers/sandboxed/early-signals.mjs covers the
 * signals; this covers the rest.
 *
 * The wrapper listens for the process's own 'exit' too (the raw child process, whose listeners an
 * 'exit' in progress still calls) and rejects with "exited while starting (exit code: N, signal:
 * S)", the words jobs/supplier-import.ts failureReason reads. ChildPool.retain() then kills and
 * forgets the child (6.7 already does so for a failed init) and the job fails with that message.
 * Idempotent: a second call changes nothing.
 */
export function watchChildStarts(): void {
  // safe: BullMQ's typings mark initChild, childProcess and worker private; the checks below
  // step aside when a BullMQ version lacks them
  const proto = Child.prototype as unknown as ChildInternals & { [WATCHED]?: true };
  if (proto[WATCHED]) return;
  const initChild = proto.initChild;
  if (typeof initChild !== 'function') return; // a BullMQ without it: nothing to mend
  proto.initChild = function (this: ChildInternals): Promise<void> {
    const proc = this.childProcess ?? this.worker;
    if (!proc) return initChild.call(this);
    return new Promise<void>((resolve, reject) => {
      const onExit = (code: number | null, signal?: NodeJS.Signals | null) =>
        reject(new ChildStartExitError(code, signal ?? null));
      proc.once('exit', onExit);
      initChild
        .call(this)
        .then(resolve, reject)
        .finally(() => proc.off('exit', onExit));
    });
  };
  Object.defineProperty(proto, WATCHED, { value: true });
}

const WATCHED = Symbol.for('isp.watchChildStarts');

/**
 * A sandboxed child exited after it was forked and before it reported "init completed". Its
 * message is the job's failure reason ("the sandboxed child exited while starting (exit code: N,
 * signal: S)"); a worker that is being stopped moves the job back to its queue instead
 * (workers/shutdown.ts SandboxedWorker), since a stop of the process group reaches the child too.
 */
export class ChildStartExitError extends Error {
  /**
   * @param code the child's exit code (null when a signal ended it)
   * @param signal the signal that ended it, or null
   */
  constructor(
    readonly code: number | null,
    readonly signal: NodeJS.Signals | null,
  ) {
    super(`the sandboxed child exited while starting (exit code: ${code}, signal: ${signal})`);
    this.name = 'ChildStartExitError';
  }
}

/** The parts of BullMQ's Child the wrapper uses (private in its typings). */
interface ChildInternals {
  childProcess?: ChildProcess;
  worker?: ThreadWorker;
  initChild(): Promise<void>;
}
