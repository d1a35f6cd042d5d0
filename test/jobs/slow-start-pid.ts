import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Where test/jobs/sandboxed-slow-start.ts writes its process id: one file per worker process (the
 * child's parent), so the shards' test processes never share one.
 * @param workerPid the pid of the process running the worker
 */
export const slowStartPidFile = (workerPid: number): string =>
  path.join(tmpdir(), `isp-sandboxed-slow-start-${workerPid}.pid`);
