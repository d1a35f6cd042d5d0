import { portOpen } from '../lib/infra/free-port.js';

/**
 * Waiting helpers of the launcher (bin/dev.ts, `npm start`): poll until the web process answers
 * HTTP or a server accepts TCP, bounded in time and cancellable (Ctrl-C while starting).
 */

/** Polls `url` until it answers at all (the health endpoint answers 401 without a token). */
export async function waitForHttp(url: string, cancelled: () => boolean, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cancelled()) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(2000) });
      return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > until) throw new Error(`web did not answer ${url} within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Polls until something accepts TCP connections on 127.0.0.1:port. */
export async function waitForPort(port: number, cancelled: () => boolean, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cancelled() && !(await portOpen(port))) {
    if (Date.now() > until) throw new Error(`nothing listens on port ${port} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A connection URL with its password replaced by `***` (for the banner and logs). */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}
