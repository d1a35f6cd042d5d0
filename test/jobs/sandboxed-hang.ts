/**
 * A sandboxed processor for test/jobs/workers.test.ts: it never finishes and ignores every signal
 * (like a parse stuck in a native call), so only the worker's end-of-grace sweep can release its job.
 */
export default function hang(): Promise<never> {
  return new Promise<never>(() => undefined);
}
