import { pino, type Logger, type DestinationStream } from 'pino';

/**
 * Paths pino censors in every log line: credentials never reach the logs (DESIGN.md §3).
 */
export const REDACT_PATHS = [
  'password',
  '*.password',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers["x-mailbox-password"]',
  'mailbox_password',
  '*.mailbox_password',
  'api_key',
  '*.api_key',
  'secret',
  '*.secret',
  'confirm_phrase',
  'cookie',
  '*.cookie',
  'req.headers.cookie',
];

/**
 * Creates the JSON logger. One per process; tests pass a destination to capture lines.
 * @param level pino level name (the processes pass LOG_LEVEL from lib/config.ts)
 * @param dest optional destination stream (default stdout)
 */
export function createLogger(level = 'info', dest?: DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { pid: process.pid } }, dest);
}

/** pino's Logger, re-exported so modules depend on lib/logger only. */
export type { Logger };
