import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { env } from '../helpers/env.js';
import { freePort } from '../../lib/infra/free-port.js';
import { STATE_MARKER } from '../../lib/infra/system-dirs.js';
import { ROOT, waitFor } from './support.js';

/**
 * Issue 7 items 1 and 2 on the real launcher: `npm start` (bin/dev.ts) in its own session and
 * process group, as a terminal or .ci/run starts it. Ctrl-C of the group -> npm exits 0 only once
 * web, worker, mail and redis-server are gone; redis-server or PostgreSQL killed under it -> it
 * stops everything, names the one that died, and exits non-zero.
 */

/** A running `npm start`. */
interface Launch {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function npmStart(vars: Record<string, string>): Launch {
  let out = '';
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    detached: true, // setsid: its own session and process group, like `setsid npm start`
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      NO_COLOR: '1',
      MAIL_DEMO: 'off',
      WABOT_DEMO: 'off',
      PROVISIONING_DEMO: 'off',
      SHUTDOWN_GRACE_MS: '5000',
      ...vars,
    },
  });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => out, exited };
}

/** Waits for the banner; fails early, with the output, when npm exits first. */
async function waitUp(l: Launch): Promise<void> {
  let gone = false;
  void l.exited.then(() => (gone = true));
  await waitFor(
    'the banner of npm start',
    async () => {
      if (gone) throw new Error(`npm start exited before its banner:\n${l.output().slice(-4000)}`);
      return l.output().includes('Stop with Ctrl-C');
    },
    240_000,
    200,
  );
}

/** The pids the launcher printed: web, worker, mail (and the servers it started). */
function pidsOf(output: string): Record<string, number> {
  const pids: Record<string, number> = {};
  const started = /started (.*)$/m.exec(output.replace(/^dev +\| /gm, ''));
  for (const m of (started?.[1] ?? '').matchAll(/(\w+) \(pid (\d+)\)/g)) pids[m[1]] = Number(m[2]);
  const redis = /Redis: redis:\/\/\S+ \(pid (\d+)\)/.exec(output);
  if (redis) pids.redis = Number(redis[1]);
  const postgres = /PostgreSQL: postgres:\/\/\S+ \(pid (\d+)\)/.exec(output);
  if (postgres) pids.postgres = Number(postgres[1]);
  return pids;
}

/** True while the process exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.replace(/^.*\) /s, '')[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('the launcher (npm start) stops cleanly and notices a dead server (real processes)', function () {
  this.timeout(300_000);
  const launches: Launch[] = [];
  const dirs: string[] = [];
  let dataDir = '';
  let databaseUrl = '';
  let dbName = '';

  before(async () => {
    dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'isp-launcher-'));
    dirs.push(dataDir);
    dbName = `launcher_${process.pid}`;
    const admin = new pg.Client({ connectionString: env.adminDatabaseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    await admin.end();
    const u = new URL(env.databaseUrl);
    u.pathname = `/${dbName}`;
    databaseUrl = u.toString();
  });

  after(async () => {
    for (const l of launches) {
      if (l.child.exitCode === null && l.child.signalCode === null) {
        try {
          process.kill(-l.child.pid!, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
    const admin = new pg.Client({ connectionString: env.adminDatabaseUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
    for (const d of dirs) {
      // as root the embedded cluster lives in a state directory named in the data directory's marker
      const marker = path.join(d, STATE_MARKER);
      const state = fs.existsSync(marker) ? (JSON.parse(fs.readFileSync(marker, 'utf8')).dir as string) : null;
      if (state && /isp-platform/.test(state)) await fsp.rm(state, { recursive: true, force: true });
      await fsp.rm(d, { recursive: true, force: true });
    }
  });

  const ports = async () => ({ PORT: String(await freePort()), MAIL_PORT: String(await freePort()) });

  /**
   * `npm start` on fresh ports, up to its banner. A port drawn free can be taken by another process
   * (the other test shard) before the launcher checks it: that launch exits "already in use" and
   * is made again on other ports (at most three times); any other early exit fails the test.
   */
  async function startUp(vars: Record<string, string>): Promise<Launch> {
    for (let attempt = 1; ; attempt++) {
      const l = npmStart({ ...(await ports()), ...vars });
      launches.push(l);
      try {
        await waitUp(l);
        return l;
      } catch (err) {
        if (attempt === 3 || !/PORT \d+ is already in use/.test(l.output())) throw err;
      }
    }
  }

  it('Ctrl-C (SIGINT to its process group): npm exits 0, only after web, worker, mail and Redis are gone', async () => {
    const l = await startUp({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl });
    const pids = pidsOf(l.output());
    expect(Object.keys(pids).sort()).to.deep.equal(['mail', 'redis', 'web', 'worker']);
    for (const pid of Object.values(pids)) expect(alive(pid)).to.equal(true);

    process.kill(-l.child.pid!, 'SIGINT');
    const exit = await l.exited;
    const left = Object.entries(pids).filter(([, pid]) => alive(pid));
    expect(exit, l.output().slice(-3000)).to.deep.equal({ code: 0, signal: null });
    expect(left, 'still running when npm returned').to.deep.equal([]);
    expect(l.output()).to.include('processes stopped (web: 0, worker: 0, mail: 0)');
    expect(l.output()).to.include('stopped cleanly');
  });

  it('redis-server killed under it: stops everything, names redis-server, exits non-zero', async () => {
    const l = await startUp({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl });
    const pids = pidsOf(l.output());
    expect(pids.redis).to.be.a('number');

    process.kill(pids.redis, 'SIGKILL');
    const exit = await l.exited;
    expect(exit.code, l.output().slice(-3000)).to.equal(1);
    expect(l.output()).to.match(/redis-server exited unexpectedly \(SIGKILL\): stopping everything/);
    const left = Object.entries(pids).filter(([, pid]) => alive(pid));
    expect(left, 'still running when npm returned').to.deep.equal([]);
  });

  it('PostgreSQL killed under it: stops everything, names PostgreSQL, exits non-zero', async () => {
    // the embedded PostgreSQL of its own data directory this time
    const own = await fsp.mkdtemp(path.join(os.tmpdir(), 'isp-launcher-pg-'));
    dirs.push(own);
    const l = await startUp({ DATA_DIR: own, DATABASE_URL: '' });
    const pids = pidsOf(l.output());
    expect(pids.postgres).to.be.a('number');

    process.kill(pids.postgres, 'SIGKILL');
    const exit = await l.exited;
    expect(exit.code, l.output().slice(-3000)).to.equal(1);
    expect(l.output()).to.match(/PostgreSQL exited unexpectedly \(SIGKILL\): stopping everything/);
    const left = Object.entries(pids).filter(([name, pid]) => name !== 'postgres' && alive(pid));
    expect(left, 'still running when npm returned').to.deep.equal([]);
  });
});
