/**
 * Process configuration from the environment (12-factor), validated once at start. The only module
 * that reads process.env (issue 6 item 6); everything else receives a Config.
 * DESIGN.md §1: PORT, MAIL_PORT, PUBLIC_BASE_URL, MAIL_BASE_URL, DATABASE_URL, REDIS_URL, APP_KEY,
 * WORKER_QUEUES, LOG_LEVEL; plus EXTERNAL_RATE_LIMIT, MAIL_RATE_LIMIT, TRUST_PROXY, DATA_DIR,
 * MAIL_DEMO, MAIL_TLS_CA_FILE, SHUTDOWN_GRACE_MS, the fault and abuse bounds of FaultLimits and
 * AbuseLimits, and the S3_* storage settings (README "Configuration"). A malformed value stops the
 * process with a message naming it.
 * Read by the launchers and infrastructure helpers through the getters at the end of this file:
 * ISP_STATE_DIR, ISP_CACHE_DIR, PATH, NO_COLOR and bin/dev.ts's internal ISP_DEV_SUPERVISOR.
 * ESLint (no-restricted-properties) refuses `process.env` everywhere else but test/.
 */
import path from 'node:path';
import type { StorageConfig } from './storage/types.js';
import { ConfigError, flag, nonNegativeInt, port, positiveInt, positiveNumber, url } from './config-vars.js';

export { ConfigError } from './config-vars.js';

export interface Config {
  /** Web service port (default 3000). */
  port: number;
  /** Mailbox API port (default 3001). */
  mailPort: number;
  /** Origin the web service announces, e.g. http://127.0.0.1:3000 */
  publicBaseUrl: string;
  /** Origin the Mailbox API announces. */
  mailBaseUrl: string;
  /** postgres:// URL; undefined means "use the embedded default" (bin/dev.ts fills it in). */
  databaseUrl?: string;
  /** redis:// URL; undefined means "use the embedded default". */
  redisUrl?: string;
  /** 32-byte key for AES-256-GCM encryption at rest (base64 or 64 hex chars in the environment). */
  appKey?: Buffer;
  /** Queue names the worker process runs; empty = all. */
  workerQueues: string[];
  /**
   * BullMQ job lock of the workers, in ms (WORKER_LOCK_DURATION_MS, default 30000): a worker that
   * dies mid-job (kill -9) leaves its lock to expire after this, then the job counts as stalled.
   */
  workerLockDurationMs: number;
  /** How often workers look for stalled jobs, in ms (WORKER_STALLED_INTERVAL_MS, default 30000). */
  workerStalledIntervalMs: number;
  /** pino level. */
  logLevel: string;
  /** Per-token request limit of the external API per minute (EXTERNAL_RATE_LIMIT, default 600). */
  externalRateLimit: number;
  /** Per-API-key request limit of the Mailbox API per minute (MAIL_RATE_LIMIT, default 120). */
  mailRateLimit: number;
  /** Trust X-Forwarded-For/-Proto of a reverse proxy (TRUST_PROXY=1|true; default off). */
  trustProxy: boolean;
  /** Where the embedded default keeps its data (DATA_DIR, default `.data`, relative to the checkout). */
  dataDir: string;
  /** Start the demo mail server under `npm start` (MAIL_DEMO=off disables it). */
  mailDemo: boolean;
  /** Start the fake wablas gateway under `npm start` (WABOT_DEMO=off disables it; issue 10 item 6). */
  wabotDemo: boolean;
  /** Loopback port of the fake wablas gateway (WABOT_DEMO_PORT, default 3002). */
  wabotDemoPort: number;
  /** Start the provisioning fakes (Cloudflare, cPanel) under `npm start` (PROVISIONING_DEMO=off: not; issue 13). */
  provisioningDemo: boolean;
  /** Port of the fake Cloudflare API; the fake cPanel takes the next one (PROVISIONING_DEMO_PORT, default 3003). */
  provisioningDemoPort: number;
  /** Root mail domain of non-master tenants' mailboxes (PLATFORM_MAIL_DOMAIN; issue 13 item 6), if set. */
  platformMailDomain?: string;
  /** Default dns_target of a provisioning request (PROVISIONING_DNS_TARGET: IPv4 or hostname), if set. */
  provisioningDnsTarget?: string;
  /** PEM file of an extra CA the mailbox client trusts for IMAP/SMTP TLS (MAIL_TLS_CA_FILE), if any. */
  mailTlsCaFile?: string;
  /** How long a stopping process waits for in-flight requests and jobs, in ms (SHUTDOWN_GRACE_MS, default 25000). */
  shutdownGraceMs: number;
  /**
   * The file storage driver (DESIGN.md §10 "files"; lib/storage): S3 when S3_BUCKET is set (with
   * S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, optional S3_ENDPOINT and S3_FORCE_PATH_STYLE),
   * else local disk under `<DATA_DIR>/storage`.
   */
  storage: StorageConfig;
  /** Bounds that keep the web and mail services answering when Redis or PostgreSQL freeze (issue 7). */
  faults: FaultLimits;
  /** Limits against abusive clients of the web and mail services (issue 7 "Abuse"). */
  abuse: AbuseLimits;
  /**
   * WABOT_TIME_SCALE (tests and the benchmark; default 1): divides the chat send limiter's 60 s
   * window and its delays (jobs/wabot/limiter.ts).
   */
  wabotTimeScale: number;
  /** The Android app builder (issue 12; README "Mobile app builder"). */
  apk: ApkConfig;
}

/** Settings of the Android app builder (issue 12 items 3, 6, 10). */
export interface ApkConfig {
  /**
   * APK_TOOLCHAIN: `real` (Gradle with a JDK 17 and the Android SDK), `stub` (templates/android-stub,
   * labelled in health, rows and file names) or `auto` (default: real when Java and the SDK are
   * ready, the stub only under `npm start`).
   */
  toolchain: 'real' | 'stub' | 'auto';
  /** APK_BUILD_CONCURRENCY: builds one worker process runs at once (default 1). */
  concurrency: number;
  /** APK_BUILD_TIMEOUT_MS: the time limit of one build, in ms (default 1200000 = 20 min). */
  timeoutMs: number;
  /**
   * APK_FORCE_KILL_AFTER_MS: how long a stopped build's Gradle process group has after SIGTERM
   * before SIGKILL, in ms (default 10000; tests shorten it).
   */
  forceKillAfterMs: number;
  /** ANDROID_HOME (or ANDROID_SDK_ROOT): the Android SDK, if any. */
  androidHome?: string;
  /** JAVA_HOME: the JDK whose bin/ has java and keytool (else they are looked up on PATH). */
  javaHome?: string;
  /** True under `npm start` (bin/dev.ts sets ISP_DEV_LAUNCHER=1): `auto` may fall back to the stub. */
  devLauncher: boolean;
  /** APK_STUB_* variables (the stub toolchain's switches: fail, hang, ignore SIGTERM), passed to the stub only. */
  stubEnv: Record<string, string>;
}

/**
 * Time bounds of the web and mail services' Redis and PostgreSQL calls, in ms (docs/decisions.md
 * "Redis and PostgreSQL faults, abuse limits"). Workers and the CLI do not use them.
 */
export interface FaultLimits {
  /** One Redis command of a request (REDIS_COMMAND_TIMEOUT_MS, default 500); also the socket's silence bound. */
  redisCommandTimeoutMs: number;
  /** Opening a Redis connection (REDIS_CONNECT_TIMEOUT_MS, default 1000). */
  redisConnectTimeoutMs: number;
  /** Adding a job from a request (ENQUEUE_TIMEOUT_MS, default 1000); then 503 QUEUE_UNAVAILABLE. */
  enqueueTimeoutMs: number;
  /** One SQL statement (DB_QUERY_TIMEOUT_MS, default 3000): server-side statement_timeout and client-side bound. */
  dbQueryTimeoutMs: number;
  /** Opening a PostgreSQL connection (DB_CONNECT_TIMEOUT_MS, default 2000). */
  dbConnectTimeoutMs: number;
  /** Waiting for a pooled connection (DB_ACQUIRE_TIMEOUT_MS, default 3000); then 503 DATABASE_UNAVAILABLE. */
  dbAcquireTimeoutMs: number;
}

/** Per-client limits of the HTTP servers and sign-in forms (docs/decisions.md, issue 7). */
export interface AbuseLimits {
  /** Whole request (headers and body) must arrive within this (HTTP_REQUEST_TIMEOUT_MS, default 30000). */
  httpRequestTimeoutMs: number;
  /** Request headers must arrive within this (HTTP_HEADERS_TIMEOUT_MS, default 10000, at most the request timeout). */
  httpHeadersTimeoutMs: number;
  /** Idle keep-alive connections close after this (HTTP_KEEPALIVE_TIMEOUT_MS, default 5000). */
  httpKeepAliveTimeoutMs: number;
  /** Open connections per client IP (MAX_CONNECTIONS_PER_IP, default 64, 0 = no cap; default 0 with TRUST_PROXY). */
  maxConnectionsPerIp: number;
  /** Failed sign-ins per IP across all e-mails per 15 minutes, per sign-in form (LOGIN_IP_LIMIT, default 20). */
  loginIpLimit: number;
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Parses an APP_KEY value: 64 hex characters or base64 (optionally prefixed "base64:") of 32 bytes.
 * @throws ConfigError when it does not decode to exactly 32 bytes.
 */
export function parseAppKey(raw: string): Buffer {
  let key: Buffer;
  if (/^[0-9a-fA-F]{64}$/.test(raw)) key = Buffer.from(raw, 'hex');
  else key = Buffer.from(raw.replace(/^base64:/, ''), 'base64');
  if (key.length !== 32) throw new ConfigError('APP_KEY must be 32 bytes, given as 64 hex characters or base64');
  return key;
}

/**
 * The storage driver's configuration: S3 when S3_BUCKET is set, else local disk under
 * `<dataDir>/storage`.
 * @throws ConfigError when S3_BUCKET is set without S3_ACCESS_KEY_ID or S3_SECRET_ACCESS_KEY, or a
 *   value is malformed
 */
function storageConfig(env: NodeJS.ProcessEnv, dataDir: string): StorageConfig {
  const bucket = env.S3_BUCKET?.trim();
  if (!bucket) return { driver: 'local', root: path.join(dataDir, 'storage') };
  for (const name of ['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY']) {
    if (!env[name]) throw new ConfigError(`${name} is required when S3_BUCKET is set`);
  }
  const endpoint = url(env, 'S3_ENDPOINT', ['http:', 'https:']);
  return {
    driver: 's3',
    bucket,
    region: env.S3_REGION || 'us-east-1',
    ...(endpoint ? { endpoint } : {}),
    accessKeyId: env.S3_ACCESS_KEY_ID!,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY!,
    forcePathStyle: flag(env, 'S3_FORCE_PATH_STYLE', false),
  };
}

/**
 * Reads and validates the configuration.
 * @param env defaults to process.env
 * @throws ConfigError naming the first malformed variable
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const p = port(env, 'PORT', 3000);
  const mp = port(env, 'MAIL_PORT', 3001);
  const logLevel = env.LOG_LEVEL || 'info';
  const dataDir = dataDirSetting(env);
  if (!LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LEVELS.join(', ')}`);
  return {
    port: p,
    mailPort: mp,
    publicBaseUrl: (url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://127.0.0.1:${p}`).replace(/\/$/, ''),
    mailBaseUrl: (url(env, 'MAIL_BASE_URL', ['http:', 'https:']) ?? `http://127.0.0.1:${mp}`).replace(/\/$/, ''),
    databaseUrl: databaseUrlSetting(env),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    appKey: env.APP_KEY ? parseAppKey(env.APP_KEY) : undefined,
    workerQueues: (env.WORKER_QUEUES ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    workerLockDurationMs: positiveInt(env, 'WORKER_LOCK_DURATION_MS', 30_000),
    workerStalledIntervalMs: positiveInt(env, 'WORKER_STALLED_INTERVAL_MS', 30_000),
    logLevel,
    externalRateLimit: positiveInt(env, 'EXTERNAL_RATE_LIMIT', 600),
    mailRateLimit: positiveInt(env, 'MAIL_RATE_LIMIT', 120),
    trustProxy: flag(env, 'TRUST_PROXY', false),
    dataDir,
    mailDemo: flag(env, 'MAIL_DEMO', true),
    wabotDemo: flag(env, 'WABOT_DEMO', true),
    wabotDemoPort: port(env, 'WABOT_DEMO_PORT', 3002),
    provisioningDemo: flag(env, 'PROVISIONING_DEMO', true),
    provisioningDemoPort: port(env, 'PROVISIONING_DEMO_PORT', 3003),
    platformMailDomain: env.PLATFORM_MAIL_DOMAIN?.trim().toLowerCase() || undefined,
    provisioningDnsTarget: env.PROVISIONING_DNS_TARGET?.trim().toLowerCase() || undefined,
    mailTlsCaFile: env.MAIL_TLS_CA_FILE || undefined,
    shutdownGraceMs: positiveInt(env, 'SHUTDOWN_GRACE_MS', 25_000),
    storage: storageConfig(env, dataDir),
    faults: {
      redisCommandTimeoutMs: positiveInt(env, 'REDIS_COMMAND_TIMEOUT_MS', 500),
      redisConnectTimeoutMs: positiveInt(env, 'REDIS_CONNECT_TIMEOUT_MS', 1000),
      enqueueTimeoutMs: positiveInt(env, 'ENQUEUE_TIMEOUT_MS', 1000),
      dbQueryTimeoutMs: positiveInt(env, 'DB_QUERY_TIMEOUT_MS', 3000),
      dbConnectTimeoutMs: positiveInt(env, 'DB_CONNECT_TIMEOUT_MS', 2000),
      dbAcquireTimeoutMs: positiveInt(env, 'DB_ACQUIRE_TIMEOUT_MS', 3000),
    },
    abuse: abuseLimits(env),
    wabotTimeScale: positiveNumber(env, 'WABOT_TIME_SCALE', 1),
    apk: apkConfig(env),
  };
}

function apkConfig(env: NodeJS.ProcessEnv): ApkConfig {
  const toolchain = (env.APK_TOOLCHAIN || 'auto').trim();
  if (toolchain !== 'real' && toolchain !== 'stub' && toolchain !== 'auto')
    throw new ConfigError(`APK_TOOLCHAIN must be real, stub or auto, got "${env.APK_TOOLCHAIN}"`);
  return {
    toolchain,
    concurrency: positiveInt(env, 'APK_BUILD_CONCURRENCY', 1),
    timeoutMs: positiveInt(env, 'APK_BUILD_TIMEOUT_MS', 20 * 60_000),
    forceKillAfterMs: positiveInt(env, 'APK_FORCE_KILL_AFTER_MS', 10_000),
    androidHome: env.ANDROID_HOME || env.ANDROID_SDK_ROOT || undefined,
    javaHome: env.JAVA_HOME || undefined,
    devLauncher: env[DEV_LAUNCHER_VAR] === '1',
    stubEnv: Object.fromEntries(
      Object.entries(env).filter((e): e is [string, string] => e[0].startsWith('APK_STUB_') && e[1] !== undefined),
    ),
  };
}

/** Set to 1 by bin/dev.ts in the environment of the processes it starts (`npm start`). */
export const DEV_LAUNCHER_VAR = 'ISP_DEV_LAUNCHER';

function abuseLimits(env: NodeJS.ProcessEnv): AbuseLimits {
  const requestMs = positiveInt(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000);
  return {
    httpRequestTimeoutMs: requestMs,
    // Node refuses a headers timeout longer than the request timeout
    httpHeadersTimeoutMs: Math.min(positiveInt(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000), requestMs),
    httpKeepAliveTimeoutMs: positiveInt(env, 'HTTP_KEEPALIVE_TIMEOUT_MS', 5000),
    // behind a proxy every connection comes from the proxy's address: no cap unless asked for
    maxConnectionsPerIp: nonNegativeInt(env, 'MAX_CONNECTIONS_PER_IP', flag(env, 'TRUST_PROXY', false) ? 0 : 64),
    loginIpLimit: positiveInt(env, 'LOGIN_IP_LIMIT', 20),
  };
}

/**
 * Like loadConfig but also requires DATABASE_URL, REDIS_URL and APP_KEY (the server processes
 * started by the Procfile need them; bin/dev.ts sets them for the embedded default).
 * @throws ConfigError naming the missing variable
 */
export function loadServerConfig(
  env: NodeJS.ProcessEnv = process.env,
): Required<Pick<Config, 'databaseUrl' | 'redisUrl' | 'appKey'>> & Config {
  const c = loadConfig(env);
  for (const [k, v] of [
    ['DATABASE_URL', c.databaseUrl],
    ['REDIS_URL', c.redisUrl],
    ['APP_KEY', c.appKey],
  ] as const) {
    if (!v) throw new ConfigError(`${k} is required`);
  }
  return c as Required<Pick<Config, 'databaseUrl' | 'redisUrl' | 'appKey'>> & Config;
}

/**
 * Like loadServerConfig, for the `mail` process: MAIL_BASE_URL is required too (the Mailbox API
 * announces its own base URL, document 3).
 * @throws ConfigError naming the missing or malformed variable
 */
export function loadMailServerConfig(env: NodeJS.ProcessEnv = process.env): ReturnType<typeof loadServerConfig> {
  if (!env.MAIL_BASE_URL) throw new ConfigError('MAIL_BASE_URL is required');
  return loadServerConfig(env);
}

/**
 * The environment a launcher passes on to its child processes (bin/dev.ts, the Procfile runner,
 * initdb, apt-get, the benchmark's servers), and the environment handed to a function that takes
 * one to interpret (bin/cli.ts main, the resolvers of lib/infra/embedded.ts).
 * @returns a copy of process.env
 */
export function inheritedEnv(): NodeJS.ProcessEnv {
  return { ...process.env };
}

/**
 * DATA_DIR: where `npm start` and the CLI keep the embedded PostgreSQL, Redis and APP_KEY, relative to
 * the checkout unless absolute (default `.data`; empty counts as unset).
 * @param env defaults to process.env
 */
export function dataDirSetting(env: NodeJS.ProcessEnv = process.env): string {
  return env.DATA_DIR || '.data';
}

/**
 * ISP_STATE_DIR: the root of the per-data-directory state when running as root (lib/infra/system-dirs.ts).
 * @param env defaults to process.env
 * @returns the value, or undefined when unset or empty (the default root applies)
 */
export function stateDirSetting(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.ISP_STATE_DIR || undefined;
}

/**
 * ISP_CACHE_DIR: the root of the shared cache (the PostgreSQL binaries; lib/infra/system-dirs.ts).
 * @param env defaults to process.env
 * @returns the value, or undefined when unset or empty (the default root applies)
 */
export function cacheDirSetting(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.ISP_CACHE_DIR || undefined;
}

/**
 * PATH of this process: where lib/infra/apt.ts's which() looks, and the tail of a child's PATH when
 * the launcher's env for it has none.
 * @param env defaults to process.env
 * @returns the value, '' when unset
 */
export function searchPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.PATH ?? '';
}

/**
 * Whether launcher output is coloured: the stream is a terminal and NO_COLOR is unset or empty
 * (https://no-color.org).
 * @param stream defaults to process.stdout
 * @param env defaults to process.env
 */
export function colorWanted(
  stream: { isTTY?: boolean } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  return !!stream.isTTY && !env.NO_COLOR;
}

/** Internal variable by which bin/dev.ts tells its re-run self that it is the supervisor. */
export const DEV_SUPERVISOR_VAR = 'ISP_DEV_SUPERVISOR';

/**
 * Whether this process is bin/dev.ts's supervisor part (ISP_DEV_SUPERVISOR=1, set by its foreground part).
 * @param env defaults to process.env
 */
export function isDevSupervisor(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[DEV_SUPERVISOR_VAR] === '1';
}

/**
 * DATABASE_URL alone, validated like loadConfig does (for the knex CLI, which needs nothing else).
 * @param env defaults to process.env
 * @returns the URL, or undefined when unset or empty
 * @throws ConfigError when it is not a postgres:// or postgresql:// URL
 */
export function databaseUrlSetting(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
}
