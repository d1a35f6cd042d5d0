/**
 * The sandboxed processor of the `supplier-import` queue (issue 16 item 6; DESIGN.md §3
 * workers/sandboxed): BullMQ forks this child with `--max-old-space-size=256` (workers/registry.ts)
 * and calls the default export for each job, so a hostile price list can exhaust at most this
 * child, never the worker. It builds its own knex (pool of two) and storage driver from the
 * environment it inherits (DATABASE_URL, DATA_DIR or S3_*).
 *
 * `parse` is limited in time (60 s; SUPPLIER_IMPORT_TIME_LIMIT_MS): a timer ends the child with
 * exit code 124, and a watchdog thread (which runs even while the main thread is busy in a
 * synchronous loop) kills it with SIGKILL 2 s later. The heap cap ends it with SIGABRT. The worker
 * then fails the job (attempts 1: no retry) and the failure hook records the reason.
 *
 * SUPPLIER_IMPORT_FAULT (tests only): `heap` allocates until the heap cap kills the child, `hang`
 * waits forever, `spin` loops synchronously forever; SUPPLIER_IMPORT_FAULT_FILE names a file whose
 * content is read as that switch at the start of each `parse` (one test worker, several faults).
 */
import { readFile } from 'node:fs/promises';
import { Worker as Thread } from 'node:worker_threads';
import { createKnex } from '../../db/knex.js';
import { inheritedEnv, loadConfig } from '../../lib/config.js';
import { createStorage } from '../../lib/storage/index.js';
import type { JobLike } from '../../jobs/queues.js';
import { warmUpPdf, warmUpXlsx } from '../../jobs/supplier-import/readers.js';
import { EXIT_TIME_LIMIT, PARSE_JOB, APPLY_JOB, parseTimeLimitMs } from '../../jobs/supplier-import.js';
import {
  runApply,
  runParse,
  type ApplyJobData,
  type ParseJobData,
  type RunDeps,
} from '../../jobs/supplier-import/runs.js';

let deps: RunDeps | null = null;

function depsOnce(): RunDeps {
  if (deps) return deps;
  const config = loadConfig();
  if (!config.databaseUrl) throw new Error('DATABASE_URL is required');
  deps = {
    knex: createKnex(config.databaseUrl, { min: 0, max: 2 }),
    appKey: config.appKey,
    storage: createStorage(config.storage),
  };
  return deps;
}

// Without a parent, BullMQ's child loops on refused sends (see workers/sandboxed/apk-build.ts) and
// never reaches the exit below: such rejections are dropped then, uncaught exceptions otherwise.
process.on('unhandledRejection', (reason) => {
  if (process.connected) throw reason;
});
process.on('disconnect', () => {
  const exit = () => process.exit(0);
  setTimeout(exit, 5_000).unref();
  void (deps?.knex.destroy() ?? Promise.resolve()).finally(exit);
});

/**
 * The child lives on between jobs (BullMQ's child pool), so it loads exceljs once while idle, a
 * second after it starts, instead of in the first XLSX preview (an XLSX arriving sooner loads it
 * itself). The timer does not keep the child alive.
 */
const XLSX_WARM_UP_DELAY_MS = 1_000;
setTimeout(warmUpXlsx, XLSX_WARM_UP_DELAY_MS).unref();

/** A thread that SIGKILLs this process after `ms` unless terminated first. */
function watchdog(ms: number): Thread {
  const t = new Thread(
    `const { workerData } = require('node:worker_threads');
     setTimeout(() => process.kill(workerData.pid, 'SIGKILL'), workerData.ms);`,
    { eval: true, workerData: { pid: process.pid, ms }, execArgv: [] },
  );
  t.unref();
  return t;
}

/** Test switches (SUPPLIER_IMPORT_FAULT): a child that dies of its heap cap or outlives its time limit. */
async function fault(): Promise<void> {
  const env = inheritedEnv();
  const file = env.SUPPLIER_IMPORT_FAULT_FILE;
  const kind = file ? (await readFile(file, 'utf8').catch(() => '')).trim() : env.SUPPLIER_IMPORT_FAULT;
  if (kind === 'heap') {
    const hog: number[][] = [];
    for (;;) hog.push(new Array<number>(1_000_000).fill(hog.length));
  }
  if (kind === 'hang') await new Promise(() => undefined);
  if (kind === 'spin') for (;;);
}

/** BullMQ's entry: `(job)`; dispatches on the job name. @see runParse @see runApply */
export default async function supplierImportSandboxed(job: JobLike<ParseJobData | ApplyJobData>) {
  if (job.name === APPLY_JOB) return runApply(job as JobLike<ApplyJobData>, depsOnce());
  if (job.name !== PARSE_JOB) throw new Error(`unknown job ${job.name}`);
  let soft: NodeJS.Timeout | undefined;
  let hard: Thread | undefined;
  // the limit starts once the file is copied and its reader loaded (pdfjs takes seconds to load on
  // a busy machine: not the file's time)
  const beforeRead = async (kind: string) => {
    if (kind === 'pdf') await warmUpPdf();
    const limit = parseTimeLimitMs();
    soft = setTimeout(() => process.exit(EXIT_TIME_LIMIT), limit);
    hard = watchdog(limit + 2_000);
    await fault();
  };
  try {
    return await runParse(job as JobLike<ParseJobData>, { ...depsOnce(), beforeRead });
  } finally {
    clearTimeout(soft);
    await hard?.terminate();
  }
}
