import { spawn } from 'node:child_process';
import { createHash, generateKeyPairSync, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import ssh2 from 'ssh2';
import type { Connection, ServerChannel } from 'ssh2';

const { Server, utils } = ssh2;

/**
 * An in-process SSH server (ssh2's Server) in front of a fake HestiaCP: every exec request is run
 * by the local POSIX shell (`sh -c <command>` in the fake's temp dir, as sshd runs it through the
 * login shell), with stdin, stdout, stderr and the exit code relayed over the channel. The Hestia
 * install dir holds stub `v-add-mail-account`, `v-list-mail-account` and `v-list-user` scripts that
 * behave like Hestia's
 * (same exit codes and "Error: ..." lines, state kept in files), record the argv they received
 * (NUL-separated) and copy the password file Hestia would read.
 */

const STUB_HEAD = `#!/bin/sh
d=$(cd "$(dirname "$0")/.." && pwd)
`;

const V_ADD_MAIL_ACCOUNT = `${STUB_HEAD}printf '%s\\0' "$@" > "$d/log/add-args"
case "$4" in /tmp/*) if [ -f "$4" ]; then cp "$4" "$d/log/add-password"; stat -c %a "$4" > "$d/log/add-password-mode"; fi;; esac
if [ -f "$d/force-exit" ]; then code=$(cat "$d/force-exit"); echo "Error: forced failure for $(head -n1 "$4")"; exit "$code"; fi
[ -d "$d/data/$1" ] || { echo "Error: user $1 doesn't exist"; exit 3; }
grep -qxF "$2" "$d/data/$1/domains" || { echo "Error: mail domain $2 doesn't exist"; exit 3; }
if grep -qxF "$3@$2" "$d/data/$1/accounts" 2>/dev/null; then echo "Error: mail account $3 already exists"; exit 4; fi
echo "$3@$2" >> "$d/data/$1/accounts"
`;

const V_LIST_MAIL_ACCOUNT = `${STUB_HEAD}printf '%s\\0' "$@" > "$d/log/list-args"
[ -d "$d/data/$1" ] || { echo "Error: user $1 doesn't exist"; exit 3; }
grep -qxF "$2" "$d/data/$1/domains" || { echo "Error: mail domain $2 doesn't exist"; exit 3; }
grep -qxF "$3@$2" "$d/data/$1/accounts" 2>/dev/null || { echo "Error: $2 account $3 doesn't exist"; exit 3; }
printf '{\\n    "%s": {\\n        "QUOTA": "unlimited"\\n    }\\n}\\n' "$3"
`;

const V_LIST_USER = `${STUB_HEAD}[ -d "$d/data/$1" ] || { echo "Error: user $1 doesn't exist"; exit 3; }
printf '{\\n    "%s": {\\n        "NAME": "Admin"\\n    }\\n}\\n' "$1"
`;

export type ExecMode = 'shell' | 'hang' | 'record';

export interface FakeHestia {
  port: number;
  dir: string;
  hestiaDir: string;
  /** client private key file (PEM) the server accepts for `root` and `admin` */
  keyPath: string;
  /** a key file the server does not know */
  strangerKeyPath: string;
  /** password the server accepts for password authentication */
  loginPassword: string;
  /** OpenSSH-style fingerprint of the server's host key */
  hostKeySha256: string;
  /** exec commands received, in order */
  commands: string[];
  /** number of TCP connections the server saw */
  connections: number;
  /** shell: run the command; hang: accept the exec and never answer; record: exit 0 without running */
  mode: ExecMode;
  /** resolves when the next exec request arrives */
  nextExec(): Promise<string>;
  /** resolves when the next client connection closes */
  nextClose(): Promise<void>;
  /** argv recorded by a stub ('add' or 'list') */
  recordedArgs(which: 'add' | 'list'): Promise<string[]>;
  readLog(name: string): Promise<string | null>;
  forceExit(code: number | null): Promise<void>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

function rsaPem(): string {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'pkcs1', format: 'pem' },
  }).privateKey;
}

function parsed(pem: string) {
  const k = utils.parseKey(pem);
  if (k instanceof Error) throw k;
  return Array.isArray(k) ? k[0]! : k;
}

/** Starts the fake server on a loopback port with Hestia user `admin` owning example.com. */
export async function startFakeHestia(): Promise<FakeHestia> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fake-hestia-'));
  const hestiaDir = path.join(dir, 'hestia');
  await fs.mkdir(path.join(hestiaDir, 'bin'), { recursive: true });
  for (const [name, body] of [
    ['v-add-mail-account', V_ADD_MAIL_ACCOUNT],
    ['v-list-mail-account', V_LIST_MAIL_ACCOUNT],
    ['v-list-user', V_LIST_USER],
  ] as const) {
    await fs.writeFile(path.join(hestiaDir, 'bin', name), body, { mode: 0o755 });
  }
  const hostPem = rsaPem();
  const clientPem = rsaPem();
  const keyPath = path.join(dir, 'id_rsa');
  const strangerKeyPath = path.join(dir, 'stranger_rsa');
  await fs.writeFile(keyPath, clientPem, { mode: 0o600 });
  await fs.writeFile(strangerKeyPath, rsaPem(), { mode: 0o600 });
  const allowed = parsed(clientPem);
  const allowedPub = allowed.getPublicSSH();
  const hostKeySha256 = `SHA256:${createHash('sha256').update(parsed(hostPem).getPublicSSH()).digest('base64').replace(/=+$/, '')}`;

  let execWaiters: ((cmd: string) => void)[] = [];
  let closeWaiters: (() => void)[] = [];

  const runShell = (command: string, ch: ServerChannel) => {
    const child = spawn('sh', ['-c', command], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
    ch.on('data', (d: Buffer) => child.stdin.write(d));
    ch.on('end', () => child.stdin.end());
    child.stdin.on('error', () => {
      /* the command may exit before reading stdin */
    });
    child.stdout.on('data', (d: Buffer) => ch.write(d));
    child.stderr.on('data', (d: Buffer) => ch.stderr.write(d));
    child.on('close', (code) => {
      ch.exit(code ?? 255);
      ch.end();
    });
    ch.on('close', () => {
      if (child.exitCode === null) child.kill('SIGTERM');
    });
  };

  const fake: FakeHestia = {
    port: 0,
    dir,
    hestiaDir,
    keyPath,
    strangerKeyPath,
    loginPassword: 'panel-login-pass',
    hostKeySha256,
    commands: [],
    connections: 0,
    mode: 'shell',
    nextExec: () =>
      new Promise((resolve) => {
        execWaiters.push(resolve);
      }),
    nextClose: () =>
      new Promise((resolve) => {
        closeWaiters.push(resolve);
      }),
    async recordedArgs(which) {
      const raw = await fs.readFile(path.join(hestiaDir, 'log', `${which}-args`), 'utf8');
      return raw.split('\0').slice(0, -1);
    },
    async readLog(name) {
      try {
        return await fs.readFile(path.join(hestiaDir, 'log', name), 'utf8');
      } catch {
        return null;
      }
    },
    async forceExit(code) {
      const f = path.join(hestiaDir, 'force-exit');
      if (code === null) await fs.rm(f, { force: true });
      else await fs.writeFile(f, String(code));
    },
    async reset() {
      fake.mode = 'shell';
      fake.commands = [];
      await fs.rm(path.join(hestiaDir, 'data'), { recursive: true, force: true });
      await fs.rm(path.join(hestiaDir, 'log'), { recursive: true, force: true });
      await fs.rm(path.join(hestiaDir, 'force-exit'), { force: true });
      await fs.mkdir(path.join(hestiaDir, 'data', 'admin'), { recursive: true });
      await fs.mkdir(path.join(hestiaDir, 'log'), { recursive: true });
      await fs.writeFile(path.join(hestiaDir, 'data', 'admin', 'domains'), 'example.com\n');
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await fs.rm(dir, { recursive: true, force: true });
    },
  };

  const server = new Server({ hostKeys: [hostPem] }, (client: Connection) => {
    fake.connections++;
    client.on('error', () => {
      /* the adapter closes connections abruptly on abort */
    });
    client.on('close', () => {
      const w = closeWaiters;
      closeWaiters = [];
      w.forEach((f) => f());
    });
    client.on('authentication', (ctx) => {
      if (ctx.username !== 'root' && ctx.username !== 'admin') return ctx.reject();
      if (ctx.method === 'password') return ctx.password === fake.loginPassword ? ctx.accept() : ctx.reject();
      if (ctx.method === 'publickey') {
        const same = ctx.key.data.length === allowedPub.length && timingSafeEqual(ctx.key.data, allowedPub);
        if (!same) return ctx.reject();
        if (ctx.signature && ctx.blob && allowed.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true)
          return ctx.reject();
        return ctx.accept();
      }
      return ctx.reject(['publickey', 'password']);
    });
    client.on('ready', () => {
      client.on('session', (acceptSession) => {
        const session = acceptSession();
        session.on('exec', (acceptExec, _reject, info) => {
          fake.commands.push(info.command);
          const ch = acceptExec();
          const w = execWaiters;
          execWaiters = [];
          w.forEach((f) => f(info.command));
          if (fake.mode === 'shell') runShell(info.command, ch);
          else if (fake.mode === 'record') {
            ch.resume();
            ch.exit(0);
            ch.end();
          } else ch.resume();
        });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  fake.port = (server.address() as AddressInfo).port;
  await fake.reset();
  return fake;
}
