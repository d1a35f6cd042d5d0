import type { JobLike } from '../../jobs/queues.js';

/** A fake BullMQ Job for processor tests: records every updateProgress and log call. */
export interface FakeJob<D> {
  job: JobLike<D>;
  progress: (number | object)[];
  logs: string[];
}

/**
 * Builds a fake job around `data`.
 * @param onProgress called after each updateProgress (e.g. to abort a controller mid-run)
 */
export function fakeJob<D>(data: D, onProgress?: (p: number | object) => void): FakeJob<D> {
  const progress: (number | object)[] = [];
  const logs: string[] = [];
  const job: JobLike<D> = {
    id: 'fake-1',
    name: 'fake',
    data,
    async updateProgress(p) {
      progress.push(p);
      onProgress?.(p);
    },
    async log(line) {
      logs.push(line);
      return logs.length;
    },
  };
  return { job, progress, logs };
}
