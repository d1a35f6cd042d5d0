import { pathToFileURL } from 'node:url';

/**
 * True when the module with this `import.meta.url` is the script node was started with
 * (`tsx api/server.ts`), false when it is imported (tests, bin/dev.ts).
 */
export function isMainModule(importMetaUrl: string): boolean {
  return !!process.argv[1] && importMetaUrl === pathToFileURL(process.argv[1]).href;
}

/**
 * Runs a long-lived service as a Procfile process: starts it, closes it on SIGTERM or SIGINT and
 * exits 0 (1 when closing fails). A start failure (e.g. a ConfigError naming a variable) prints
 * its message, never a stack, and exits 1.
 * @param start starts the service and resolves to its close()
 */
export function runService(start: () => Promise<{ close(): Promise<void> }>): void {
  start()
    .then(({ close }) => {
      const stop = () => {
        close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    })
    .catch((err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    });
}
