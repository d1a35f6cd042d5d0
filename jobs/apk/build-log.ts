import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import type { JobLike } from '../queues.js';

/**
 * The output of one build (issue 12 item 6): every line redacted, then
 * - sent to `job.log` (bull-board) up to {@link JOB_LOG_LIMIT} lines, then one "truncated" line;
 * - kept in a ring of the last {@link TAIL_LINES} lines (apk_builds.log_tail);
 * - appended to a file that is stored with the build (GET /api/android-apk/builds/{id}/log);
 * - counted for `> Task` lines (the progress).
 */

/** Lines sent to job.log at most. */
export const JOB_LOG_LIMIT = 5000;
/** Lines kept in apk_builds.log_tail. */
export const TAIL_LINES = 60;
/** Longest line kept, in characters (longer ones are cut). */
const MAX_LINE = 2000;

/** Patterns redacted whatever the secrets are: `password=...`, `-storepass ...`, `Authorization: ...`. */
const GENERIC: RegExp[] = [
  /((?:pass(?:word)?|secret|token|storepass|keypass)["']?\s*[=:]\s*["']?)[^\s"',;]+/gi,
  /(-(?:storepass|keypass|srcstorepass|deststorepass)\s+)(?!:env)\S+/gi,
  /(authorization:\s*\w+\s+)\S+/gi,
];

/**
 * Replaces every occurrence of the given secrets, and the generic password patterns, with `***`.
 * @param secrets exact strings to hide (empty ones are ignored)
 */
export function redact(line: string, secrets: readonly string[]): string {
  let out = line;
  for (const s of secrets) if (s) out = out.split(s).join('***');
  for (const re of GENERIC) out = out.replace(re, '$1***');
  return out;
}

/** Whether a Gradle output line starts a task (`> Task :app:compileDebugKotlin`). */
export function isTaskLine(line: string): boolean {
  return /^> Task :\S+/.test(line);
}

/** Collects a build's output; see the file comment. */
export class BuildLog {
  private readonly tail: string[] = [];
  private jobLines = 0;
  private file: WriteStream | null = null;
  private pending: Promise<unknown> = Promise.resolve();
  /** `> Task` lines seen so far. */
  tasks = 0;
  /** Lines seen so far. */
  lines = 0;

  /**
   * @param job where lines go for bull-board
   * @param secrets strings never to show (the signing passwords)
   * @param filePath where the full (redacted) log is written, if anywhere
   */
  constructor(
    private readonly job: Pick<JobLike<unknown>, 'log'>,
    private readonly secrets: string[] = [],
    filePath?: string,
  ) {
    if (filePath) {
      this.file = createWriteStream(filePath, { flags: 'a', mode: 0o600 });
      this.file.on('error', () => {
        /* the stored log is best effort; the tail and job.log still have the lines */
      });
    }
  }

  /** Adds strings that must be redacted from here on. */
  addSecrets(...s: string[]): void {
    this.secrets.push(...s.filter(Boolean));
  }

  /** Records one output line (redacted); resolves once job.log took it. */
  add(raw: string): Promise<void> {
    const line = redact(raw.length > MAX_LINE ? raw.slice(0, MAX_LINE) + ' …' : raw, this.secrets);
    this.lines += 1;
    if (isTaskLine(line)) this.tasks += 1;
    this.tail.push(line);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
    this.file?.write(line + '\n');
    this.jobLines += 1;
    if (this.jobLines < JOB_LOG_LIMIT) return this.send(line);
    if (this.jobLines === JOB_LOG_LIMIT)
      return this.send(`… job log truncated after ${JOB_LOG_LIMIT} lines; the stored build log has every line`);
    return Promise.resolve();
  }

  /** A line of our own (steps, outcome), also in the tail and the stored log. */
  note(line: string): Promise<void> {
    return this.add(`[app-builder] ${line}`);
  }

  private send(line: string): Promise<void> {
    this.pending = this.pending.then(() => this.job.log(line).catch(() => undefined));
    return this.pending.then(() => undefined);
  }

  /** The last lines, newline-joined. */
  tailText(): string {
    return this.tail.join('\n');
  }

  /** Waits for job.log and closes the file. */
  async close(): Promise<void> {
    await this.pending;
    if (this.file) {
      const f = this.file;
      this.file = null;
      f.end();
      if (!f.closed) await once(f, 'close').catch(() => undefined);
    }
  }
}
