import { Redis } from 'ioredis';
import { freePort } from '../../lib/infra/free-port.js';
import { startProcfile, type Proc } from '../faults/support.js';
import { registry } from '../../workers/registry.js';
import { env } from './env.js';

/**
 * Reading the README's walk-throughs for the tests that run them (test/integration/readme-*.test.ts):
 * a walk-through is the first ```sh block under a heading, and its "What you see" block the first
 * plain ``` block after it. Each line of that block must match the output's line, where `...` inside
 * a line stands for any text and a line that is just `...` for any number of lines.
 */

/** The first ```sh block after `heading` and the first plain ``` block after that. */
export function walkThrough(readme: string, heading: string): { script: string; expected: string } {
  const at = readme.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`README has no "${heading}"`);
  const rest = readme.slice(at);
  const sh = rest.match(/```sh\n([\s\S]*?)```/);
  if (!sh) throw new Error(`no sh block under "${heading}"`);
  const afterSh = rest.slice(sh.index! + sh[0].length);
  const out = afterSh.match(/```\n([\s\S]*?)```/);
  if (!out) throw new Error(`no output block under "${heading}"`);
  return { script: sh[1], expected: out[1] };
}

/**
 * A regular expression for a "What you see" block (see the file comment), anchored at both ends.
 * @param expected the block's text
 */
export function outputPattern(expected: string): RegExp {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const lines = expected.replace(/\n$/, '').split('\n');
  const body = lines
    .map((l) => (l.trim() === '...' ? '(?:[^\\n]*\\n)*?' : `${esc(l).split(esc('...')).join('[^\\n]*?')}\\n`))
    .join('');
  return new RegExp(`^${body}$`);
}

/**
 * Starts the real `web` and `worker` processes (the Procfile's) for a README test, as every
 * readme-*.test.ts did: its own Redis database emptied first, a free port, both processes ready
 * ("web listening", "workers started", the start-up runs of the `immediately` schedulers done).
 * They are pushed on `procs`: the caller's after() kills them (killAll), also when this throws.
 * @param redisDb the test file's Redis database number (REDIS_URL is that database of env.redisUrl)
 * @param vars the processes' environment besides REDIS_URL and PORT (DATABASE_URL, APP_KEY, ...)
 * @returns the web process's base URL and the environment both processes got
 */
export async function startWebAndWorker(
  procs: Proc[],
  redisDb: number,
  vars: Record<string, string>,
): Promise<{ base: string; vars: Record<string, string> }> {
  const redisUrl = `${env.redisUrl}/${redisDb}`;
  const r = new Redis(redisUrl);
  await r.flushdb();
  r.disconnect();
  const port = await freePort();
  const all: Record<string, string> = { ...vars, REDIS_URL: redisUrl, PORT: String(port) };
  const web = startProcfile('web', all);
  const worker = startProcfile('worker', all);
  procs.push(web, worker);
  await web.waitForLine(/web listening/, 'the web process to listen');
  await worker.waitForLine(/workers started/, 'the workers to start');
  // the start-up catch-up runs (invoice-overdue marks the demo's due invoices overdue) finish before
  // the walk-through reads or copies rows: under load they could land in the middle of it
  const only = all.WORKER_QUEUES?.split(',').map((q) => q.trim());
  for (const [queue, reg] of Object.entries(registry)) {
    if (!reg?.scheduler?.repeat.immediately || (only && !only.includes(queue))) continue;
    await worker.waitForLine(
      new RegExp(`"queue":"${queue}"[^\\n]*"msg":"job (?:completed|failed)"`),
      `the worker's start-up ${queue} run`,
    );
  }
  return { base: `http://127.0.0.1:${port}`, vars: all };
}
