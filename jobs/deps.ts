import type { Knex } from 'knex';
import type { Logger } from '../lib/logger.js';
import { systemClock, type Clock } from '../lib/clock.js';
import type { Queues } from './queues.js';
import type { OltAdapter } from './adapters/olt/types.js';
import type { NetworkAdapter } from './adapters/network/types.js';
import type { Storage } from '../lib/storage/index.js';
import type { Redis } from 'ioredis';
import type { ChatSendConfigSource } from './wabot/send-config.js';
import type { ApkSigningSource } from './apk/signing.js';
import type { ApkBuildOptions } from './apk/options.js';

/**
 * What processors need from their process: the knex instance, the logger, the APP_KEY and the clock. BullMQ
 * calls a processor as `process(job, token, signal)`, so these come from here rather than from
 * arguments.
 * workers/main.ts startWorkers() sets them before any Worker starts; tests that call a processor
 * directly set them with configureJobDeps(). Importing this file opens nothing.
 */
export interface JobDeps {
  knex: Knex;
  logger?: Logger;
  /**
   * The 32-byte APP_KEY (AES-256-GCM at rest), for processors that open sealed secrets
   * (mailbox-create: the sealed initial password and the domain's panel password). The worker
   * process sets it from its validated configuration; absent where no processor needs it.
   */
  appKey?: Buffer;
  /**
   * The clock processors read "now" and "today" from (invoice-overdue, ticket-sla). Default
   * systemClock; tests pass a ManualClock (lib/clock.ts) so they do not depend on the calendar.
   */
  clock?: Clock;
  /**
   * Producers of the process's queues, for processors that enqueue other jobs (the onu-poll sweep
   * adds one job per OLT). startWorkers sets it on its own prefix; absent where no processor needs it.
   */
  queues?: Queues;
  /** OLT drivers replacing the built-in ones by driver name (tests inject failing or counting adapters). */
  oltAdapters?: Readonly<Record<string, OltAdapter>>;
  /** NAS drivers replacing the built-in ones by driver name (customer-network; tests inject failing adapters). */
  networkAdapters?: Readonly<Record<string, NetworkAdapter>>;
  /** The file storage driver, for processors that store files (imap-sync: e-mail attachments). */
  storage?: Storage;
  /**
   * A Redis client for processors' own scripts (wabot-send: the routing and the per-account
   * limiter). startWorkers sets it to the workers' connection.
   */
  redis?: Redis;
  /**
   * Loads a tenant's chat-bot configuration with its secrets opened (wabot-send; issue 10 items 2,
   * 3). startWorkers sets the real loader; tests pass in-memory configurations.
   */
  chatConfig?: ChatSendConfigSource;
  /**
   * The send path's knobs for tests and the benchmark: `timeScale` divides the limiter's window and
   * delays (default WABOT_TIME_SCALE, else 1); `keyPrefix` of its Redis keys (default `wabot`);
   * `grantLog` keeps that many grant-log entries per account (default 0); `timeoutMs` of a
   * provider call (default 10000); `rootOverride` replaces every provider's API root (never from
   * tenant settings).
   */
  chatSend?: {
    timeScale?: number;
    keyPrefix?: string;
    grantLog?: number;
    timeoutMs?: number;
    rootOverride?: string;
  };
  /**
   * imap-sync: longest wait for a mail server to connect, greet or answer, in ms (default 10 s);
   * tests use a short one for a server that accepts TCP and never answers.
   */
  mailTimeoutMs?: number;
  /**
   * apk-build (issue 12): where the build's signing key comes from (the keystore store of item 8;
   * tests pass an in-memory source whose keystore keytool made).
   */
  apkSigning?: ApkSigningSource;
  /** apk-build's settings: toolchain, time limit, kill delay, template and work directories (jobs/apk/options.ts). */
  apkBuild?: ApkBuildOptions;
  /**
   * Provisioning runs (issue 13 items 6-9): the credentials source, the DNS provider and mail panel
   * factories (tests pass in-memory fakes); default the sealed store, Cloudflare and the real panel.
   */
  provisioning?: import('./provisioning/runtime.js').ProvisioningRuntime;
}

let current: JobDeps | null = null;

/** Sets the dependencies every processor of this process uses (last call wins). */
export function configureJobDeps(deps: JobDeps): void {
  current = deps;
}

/**
 * The dependencies set by configureJobDeps.
 * @throws Error when nothing configured them (a processor run outside startWorkers or a test setup)
 */
export function jobDeps(): JobDeps {
  if (!current) throw new Error('Job dependencies are not configured: call configureJobDeps() (startWorkers does).');
  return current;
}

/**
 * The clock of the configured dependencies, systemClock when none was given.
 * @throws Error when nothing configured the dependencies (as jobDeps)
 */
export function jobClock(): Clock {
  return jobDeps().clock ?? systemClock;
}
