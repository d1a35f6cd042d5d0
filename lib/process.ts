import type http from 'node:http';
import { pathToFileURL } from 'node:url';

/**
 * True when the module with this `import.meta.url` is the script node was started with
 * (`node --import tsx api/server.ts`), false when it is imported (tests, bin/dev.ts).
 */
export function isMainModule(importMetaUrl: string): boolean {
  return !!process.argv[1] && importMetaUrl === pathToFileURL(process.argv[1]).href;
}

/** Default grace period before the configuration is known (lib/config.ts SHUTDOWN_GRACE_MS default). */
export const DEFAULT_GRACE_MS = 25_000;
/** How long after the grace period runService still waits for close() before it exits 1 anyway, in ms. */
export const FORCE_EXIT_AFTER_GRACE_MS = 5_000;

/** The part of a logger runService writes to (pino's Logger fits). */
export interface ServiceLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** What a service's start function resolves to. */
export interface RunningService {
  /** Stops the service: drains in-flight work within the grace period, then closes connections. */
  close(): Promise<void>;
  /** The service's grace period in ms (SHUTDOWN_GRACE_MS); default DEFAULT_GRACE_MS. */
  graceMs?: number;
  /** Where the signal lines go (default: one JSON-free line on stderr). */
  logger?: ServiceLog;
}

/**
 * Runs a long-lived service as a Procfile process (issue 7 item 1, docs/decisions.md "Stopping
 * and jobs"): starts it; on the first SIGTERM or SIGINT calls close() and exits 0 when it resolves
 * (1 when it rejects). Every later SIGTERM/SIGINT is absorbed and logged: supervisors and wrappers
 * repeat the signal (a group kill reaches tsx and node, tsx relays it ~30 ms later; npm forwards
 * it too), and a repeated signal must not cut the drain short. When close() has not finished
 * `graceMs + FORCE_EXIT_AFTER_GRACE_MS` after the first signal the process exits 1 (last resort;
 * the service's own close() gives up on in-flight work at graceMs). A signal during start stops the
 * service as soon as it is up. A start failure (e.g. a ConfigError naming a variable) prints its
 * message, never a stack, and exits 1.
 * @param start starts the service and resolves to its close() (and optionally its grace period and logger)
 */
export function runService(start: () => Promise<RunningService>): void {
  let service: RunningService | null = null;
  let signalled: NodeJS.Signals | null = null;
  let stopping = false;
  const note = (level: 'info' | 'warn' | 'error', obj: object, msg: string) => {
    if (service?.logger) service.logger[level](obj, msg);
    else process.stderr.write(`${msg}\n`);
  };
  const stop = () => {
    if (!service || stopping) return;
    stopping = true;
    const graceMs = service.graceMs ?? DEFAULT_GRACE_MS;
    note('info', { signal: signalled, grace_ms: graceMs }, `${signalled}: stopping (grace ${graceMs} ms)`);
    const deadline = setTimeout(() => {
      note('error', { grace_ms: graceMs }, 'close() did not finish after the grace period: exiting anyway');
      process.exit(1);
    }, graceMs + FORCE_EXIT_AFTER_GRACE_MS);
    deadline.unref();
    service.close().then(
      () => process.exit(0),
      (err: unknown) => {
        note('error', { err: err instanceof Error ? err.message : String(err) }, 'close failed');
        process.exit(1);
      },
    );
  };
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) {
      note('warn', { signal: sig }, `${sig} again: already stopping, signal absorbed`);
      return;
    }
    signalled = sig;
    stop();
  };
  // process.on, never once: a second SIGTERM with no listener left would kill the process (exit 143)
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  start()
    .then((s) => {
      service = s;
      if (signalled) stop();
    })
    .catch((err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    });
}

/** Options of closeHttpServer. */
export interface CloseHttpOptions {
  /** How long in-flight requests may take, in ms; then every connection is closed. */
  graceMs: number;
  /** Told how many connections were cut at the end of the grace period (none: not called). */
  onForced?: (connections: number) => void;
}

/** Servers being closed by closeHttpServer (a second call returns the same promise). */
const closing = new WeakMap<http.Server, Promise<void>>();

/**
 * Stops an HTTP server without dropping a request it accepted: stops listening, answers every
 * request that is running or still arrives on an open connection (with `Connection: close`), closes
 * idle keep-alive connections as soon as they are idle (every 100 ms; Node's close() does it only
 * once), and after `graceMs` closes whatever is still open (a request slower than the grace period
 * is then cut). Idempotent.
 * @returns resolves when the server has closed (all connections gone)
 */
export function closeHttpServer(server: http.Server, opts: CloseHttpOptions): Promise<void> {
  let done = closing.get(server);
  if (done) return done;
  done = new Promise<void>((resolve) => {
    server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
      // a request on a keep-alive connection during the drain is served, then the connection closes
      if (!res.headersSent) res.setHeader('Connection', 'close');
    });
    const poll = setInterval(() => server.closeIdleConnections(), 100);
    const force = setTimeout(() => {
      server.getConnections((_err, open) => {
        server.closeAllConnections();
        if (open) opts.onForced?.(open);
      });
    }, opts.graceMs);
    server.close(() => {
      clearInterval(poll);
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
  closing.set(server, done);
  return done;
}

/** Options of listenUntilClosed. */
export interface ServeOptions {
  /** the port to listen on */
  port: number;
  /** the service's name in its log lines (`web`, `mail`) */
  name: string;
  /** the public URL logged with the listening line */
  url: string;
  /** how long in-flight requests may take at close, in ms (closeHttpServer) */
  graceMs: number;
  logger: ServiceLog;
  /** closes what the service holds (app, queues, Redis, database pool), after the last request */
  release(): Promise<void>;
}

/**
 * Starts a service's HTTP server and gives its close(): a `<name> listening` line now; at close,
 * closeHttpServer with the grace period (connections cut at its end are logged), then release(),
 * then a `<name> stopped` line. close() runs once; later calls return the same promise.
 * @returns close()
 */
export async function listenUntilClosed(server: http.Server, opts: ServeOptions): Promise<() => Promise<void>> {
  const { logger, graceMs } = opts;
  await new Promise<void>((resolve) => server.listen(opts.port, resolve));
  logger.info({ port: opts.port, url: opts.url }, `${opts.name} listening`);
  let closed: Promise<void> | null = null;
  return () =>
    (closed ??= (async () => {
      await closeHttpServer(server, {
        graceMs,
        onForced: (n) => logger.warn({ connections: n, grace_ms: graceMs }, 'requests cut after the grace period'),
      });
      await opts.release();
      logger.info({}, `${opts.name} stopped`);
    })());
}
