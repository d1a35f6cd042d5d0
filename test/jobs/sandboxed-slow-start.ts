import { writeFileSync } from 'node:fs';
import { slowStartPidFile } from './slow-start-pid.js';

/**
 * A sandboxed processor for test/jobs/workers.test.ts that loads slowly: as it starts it writes its
 * process id to slowStartPidFile(<the worker's pid>) and then waits a minute before it exports its
 * processor, so the test can stop the worker and signal the child while it is still starting.
 */
writeFileSync(slowStartPidFile(process.ppid), String(process.pid));
await new Promise((resolve) => setTimeout(resolve, 60_000));

export default function slowStarter(): Promise<string> {
  return Promise.resolve('started');
}
