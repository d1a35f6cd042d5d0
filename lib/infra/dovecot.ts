import { execa, type ResultPromise } from 'execa';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ensureDebianPackage } from './apt.js';
import { freePort, portOpen } from './free-port.js';
import { dovecotConfig } from './dovecot-config.js';

/** The Debian packages of the Dovecot this file runs (also in .ci/run's apt-get list). */
export const DOVECOT_PACKAGES = ['dovecot-imapd', 'dovecot-pop3d', 'dovecot-lmtpd'];
/** Protocol helpers the packages install, each checked on its own (the daemon alone is dovecot-core). */
const DOVECOT_HELPERS: [string, string][] = [
  ['/usr/lib/dovecot/imap', 'dovecot-imapd'],
  ['/usr/lib/dovecot/pop3', 'dovecot-pop3d'],
  ['/usr/lib/dovecot/lmtp', 'dovecot-lmtpd'],
];

/** Options of {@link startDovecot}. */
export interface DovecotOptions {
  /** instance directory (created): config, run dir, passwd-file, mail dir, logs */
  dir: string;
  /** IMAP port on 127.0.0.1 (default: a free port) */
  imapPort?: number;
  /** LMTP port on 127.0.0.1 (default: a free port) */
  lmtpPort?: number;
  /** POP3 port on 127.0.0.1 (default: a free port; issue 9: the sync reads POP3 accounts too) */
  pop3Port?: number;
  /** Dovecot's auth_failure_delay in seconds (Dovecot's default 2; tests use 0) */
  authFailureDelaySeconds?: number;
  /**
   * TLS (default off: `ssl = no`, plain IMAP only). When given: `ssl = yes` with this certificate and
   * key, STARTTLS offered on the IMAP port, and an implicit-TLS `imaps` listener on its own port.
   */
  tls?: DovecotTlsOptions;
  /** progress lines (apt install) */
  log?: (line: string) => void;
}

/** TLS of a Dovecot instance (see {@link DovecotOptions.tls}). */
export interface DovecotTlsOptions {
  /** PEM file of the server certificate (leaf first, then any intermediates); read by Dovecot at start */
  certFile: string;
  /** PEM file of its private key (unencrypted); read by Dovecot's config process (root) at start */
  keyFile: string;
  /** implicit-TLS IMAP port on 127.0.0.1 (default: a free port) */
  imapsPort?: number;
  /** implicit-TLS POP3 port on 127.0.0.1 (default: a free port) */
  pop3sPort?: number;
}

/** A Dovecot child process (IMAP + POP3 + LMTP on loopback) with its own base_dir and passwd-file. */
export interface LocalDovecot {
  host: '127.0.0.1';
  /** plain IMAP port; offers STARTTLS when the instance has TLS */
  imapPort: number;
  /** implicit-TLS IMAP port (null without TLS) */
  imapsPort: number | null;
  /** plain POP3 port; offers STLS when the instance has TLS */
  pop3Port: number;
  /** implicit-TLS POP3 port (null without TLS) */
  pop3sPort: number | null;
  lmtpPort: number;
  dir: string;
  /** the passwd-file (`user@domain:{PLAIN}password` lines) */
  usersFile: string;
  /** Dovecot's log file (log_path; logins appear as `imap-login: Login: user=<...>`) */
  logFile: string;
  /** true while the child runs */
  readonly running: boolean;
  /**
   * Adds a mailbox user (appends a passwd-file line; Dovecot re-reads the file when it changes,
   * checking at most once a second: resolves once the next second has begun, so the user can log in).
   * @throws Error when the e-mail or password cannot be written to a passwd-file (':' or line breaks) or the user
   *   exists
   */
  addUser(email: string, password: string): Promise<void>;
  /** Adds several users with one write (and one wait for Dovecot to see them, under a second). */
  addUsers(list: { email: string; password: string }[]): Promise<void>;
  /** True when the user exists (case-insensitive e-mail). */
  hasUser(email: string): Promise<boolean>;
  /** Checks a login against the passwd-file (constant-time password comparison). */
  checkPassword(email: string, password: string): Promise<boolean>;
  /**
   * Stops the child (SIGTERM; then SIGKILL for its session processes still alive, so every client
   * connection is dropped) and waits for the ports to close.
   */
  stop(): Promise<void>;
  /** Starts it again on the same ports and data (no-op when running). */
  start(): Promise<void>;
}

/**
 * Starts a real Dovecot (Debian dovecot-imapd + dovecot-pop3d + dovecot-lmtpd, installed with
 * apt-get when missing and root) as a child: `dovecot -F -c <dir>/dovecot.conf`, IMAP, POP3 and
 * LMTP on 127.0.0.1, plaintext auth against `<dir>/users`, maildirs under `<dir>/mail` owned by
 * nobody (DESIGN.md §2 and §7). Reuses an existing passwd-file and mail dir (persistent demo). With
 * `opts.tls` also STARTTLS and an imaps and a pop3s listener (see {@link DovecotOptions.tls}).
 * Resolves once every port accepts connections.
 * @throws Error when Dovecot is missing and cannot be installed, or does not come up in 15 s (with the log tail)
 */
export async function startDovecot(opts: DovecotOptions): Promise<LocalDovecot> {
  const bin = await ensureDebianPackage('dovecot', DOVECOT_PACKAGES, opts.log);
  // an older install may have the daemon without one of the protocol packages
  for (const [helper, pkg] of DOVECOT_HELPERS) await ensureDebianPackage(helper, [pkg], opts.log);
  const dir = path.resolve(opts.dir);
  const imapPort = opts.imapPort ?? (await freePort());
  const lmtpPort = opts.lmtpPort ?? (await freePort());
  const pop3Port = opts.pop3Port ?? (await freePort());
  const imapsPort = opts.tls ? (opts.tls.imapsPort ?? (await freePort())) : null;
  const pop3sPort = opts.tls ? (opts.tls.pop3sPort ?? (await freePort())) : null;
  const tls =
    opts.tls && imapsPort !== null && pop3sPort !== null
      ? { certFile: path.resolve(opts.tls.certFile), keyFile: path.resolve(opts.tls.keyFile), imapsPort, pop3sPort }
      : undefined;
  const ports = [imapPort, lmtpPort, pop3Port, ...(imapsPort === null ? [] : [imapsPort, pop3sPort!])];
  const anyOpen = async () => (await Promise.all(ports.map((p) => portOpen(p)))).some(Boolean);
  const allOpen = async () => (await Promise.all(ports.map((p) => portOpen(p)))).every(Boolean);
  const usersFile = path.join(dir, 'users');
  const logFile = path.join(dir, 'logs', 'dovecot.log');
  const confFile = path.join(dir, 'dovecot.conf');
  // base_dir holds unix sockets (path limit 108 bytes): a deep instance dir gets a short one in /tmp
  const runDir =
    path.join(dir, 'run').length <= 60
      ? path.join(dir, 'run')
      : path.join(os.tmpdir(), `dovecot-${crypto.createHash('sha256').update(dir).digest('hex').slice(0, 12)}`);
  await fs.mkdir(runDir, { recursive: true });
  await fs.mkdir(path.join(dir, 'logs'), { recursive: true });
  await fs.mkdir(path.join(dir, 'mail'), { recursive: true });
  // the mail processes run as nobody: they must reach and write the mail dir
  await fs.chmod(dir, 0o755);
  const root = process.getuid?.() === 0;
  if (root)
    await fs.chown(path.join(dir, 'mail'), await systemId('passwd', 'nobody'), await systemId('group', 'nogroup'));
  try {
    await fs.access(usersFile);
  } catch {
    await fs.writeFile(usersFile, '', { mode: 0o640 });
  }
  // Dovecot's auth process (user dovecot) reads the passwd-file
  if (root) await fs.chown(usersFile, 0, await systemId('group', 'dovecot'));
  await fs.writeFile(
    confFile,
    dovecotConfig({
      dir,
      runDir,
      imapPort,
      lmtpPort,
      pop3Port,
      authFailureDelaySeconds: opts.authFailureDelaySeconds ?? 2,
      tls,
    }),
  );

  let child: ResultPromise | null = null;
  const start = async () => {
    if (child) return;
    if (await anyOpen()) throw new Error(`dovecot: one of the ports ${ports.join(', ')} is already in use`);
    const c = execa(bin, ['-F', '-c', confFile], { reject: false, cleanup: true, stdin: 'ignore' });
    child = c;
    let exited: string | null = null;
    let stderr = '';
    c.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-2000);
    });
    c.then((r) => {
      exited = `exit ${r.exitCode ?? r.signal}`;
      if (child === c) child = null;
    });
    const deadline = Date.now() + 15_000;
    while (!(await allOpen())) {
      if (exited || Date.now() > deadline) {
        const tail = await fs
          .readFile(logFile, 'utf8')
          .then((s) => s.slice(-1500))
          .catch(() => '');
        if (!exited) {
          c.kill('SIGKILL');
          await c;
        }
        throw new Error(`dovecot did not start (${exited ?? 'timeout'}): ${stderr}${tail}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const stop = async () => {
    const c = child;
    if (!c) return;
    child = null;
    // the master's children, among them the IMAP/POP3 processes of open sessions: one that
    // outlives the master (it is busy, or its log pipe is gone) would keep serving its client
    const sessions = c.pid ? await childPids(c.pid) : [];
    c.kill('SIGTERM');
    // a login process still holding a client (e.g. after a failed login) delays the master's
    // exit by up to 30 s: after a grace second, end the master's remaining children by pid
    const exitedInTime = await Promise.race([
      c.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 1000)),
    ]);
    if (!exitedInTime && c.pid) {
      for (const pid of await childPids(c.pid)) killQuietly(pid);
    }
    const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
    await c;
    clearTimeout(t);
    for (const pid of sessions) if (await isDovecotProcess(pid)) killQuietly(pid);
    for (let i = 0; i < 250 && (await anyOpen()); i++) await new Promise((r) => setTimeout(r, 20));
  };
  await start();

  const readUsers = async () =>
    (await fs.readFile(usersFile, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const i = line.indexOf(':');
        const rest = line.slice(i + 1);
        return {
          user: line.slice(0, i).toLowerCase(),
          password: rest.startsWith('{PLAIN}') ? rest.slice(7).split(':')[0] : null,
        };
      });
  /*
   * Dovecot stats the passwd-file at most once per second (passwd_file_sync: last_sync_time ==
   * ioloop_time), then reloads it when mtime or size changed. A user appended in the second of a
   * lookup is therefore visible from the next second on: wait for that boundary.
   */
  const addUsers = async (list: { email: string; password: string }[]) => {
    const existing = new Set((await readUsers()).map((u) => u.user));
    const lines: string[] = [];
    for (const { email, password } of list) {
      const user = email.trim().toLowerCase();
      if (!/^[^\s:@]+@[^\s:@]+$/.test(user)) throw new Error('addUser: invalid e-mail address');
      if (!password || /[:\r\n]/.test(password))
        throw new Error('addUser: a password for the passwd-file must be non-empty without ":" or line breaks');
      if (existing.has(user)) throw new Error(`addUser: ${user} exists`);
      existing.add(user);
      lines.push(`${user}:{PLAIN}${password}\n`);
    }
    if (!lines.length) return;
    await fs.appendFile(usersFile, lines.join(''));
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 30));
  };
  return {
    host: '127.0.0.1',
    imapPort,
    imapsPort,
    pop3Port,
    pop3sPort,
    lmtpPort,
    dir,
    usersFile,
    logFile,
    get running() {
      return child !== null;
    },
    async addUser(email, password) {
      const user = email.trim().toLowerCase();
      await addUsers([{ email: user, password }]);
    },
    addUsers,
    async hasUser(email) {
      const user = email.trim().toLowerCase();
      return (await readUsers()).some((u) => u.user === user);
    },
    async checkPassword(email, password) {
      const user = email.trim().toLowerCase();
      const row = (await readUsers()).find((u) => u.user === user);
      const want = crypto
        .createHash('sha256')
        .update(row?.password ?? crypto.randomBytes(16))
        .digest();
      const got = crypto
        .createHash('sha256')
        .update(password ?? '')
        .digest();
      return crypto.timingSafeEqual(want, got) && row?.password != null;
    },
    stop,
    start,
  };
}

/** SIGKILL, ignoring a process that is already gone. */
function killQuietly(pid: number) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

/** True while `pid` is still a Dovecot process (its title starts with "dovecot"; guards against a reused pid). */
async function isDovecotProcess(pid: number): Promise<boolean> {
  const cmd = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  return cmd.startsWith('dovecot');
}

/** Pids of the direct children of `ppid` (from /proc/<pid>/stat). */
async function childPids(ppid: number): Promise<number[]> {
  const out: number[] = [];
  for (const name of await fs.readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await fs.readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid ...: comm may contain spaces, so parse after the last ')'
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) === ppid) out.push(Number(name));
  }
  return out;
}

/** Numeric id of a user (/etc/passwd) or group (/etc/group). @throws Error when unknown */
async function systemId(db: 'passwd' | 'group', name: string): Promise<number> {
  const line = (await fs.readFile(`/etc/${db}`, 'utf8')).split('\n').find((l) => l.startsWith(`${name}:`));
  const id = line ? Number(line.split(':')[2]) : NaN;
  if (!Number.isInteger(id))
    throw new Error(`dovecot: no ${db === 'passwd' ? 'user' : 'group'} ${name} on this system`);
  return id;
}
