import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type * as Ssh2 from 'ssh2';
import { lazyRequire } from '../../../lib/lazy-require.js';
import type { Client, ConnectConfig } from 'ssh2';
import { classifyHestiaExit, classifyNetworkError, HESTIA_EXIT, redactSecrets } from './classify.js';
import {
  hestiaAddMailAccountCommand,
  hestiaListMailAccountCommand,
  hestiaListUserCommand,
  type HestiaCommandOptions,
} from './shell.js';
import { assertValidAddress, assertValidCreateInput, quotaToMegabytes } from './validate.js';
import { PanelError, type MailPanel, type MailPanelConfig } from './types.js';

const ssh2 = lazyRequire<typeof Ssh2>('ssh2');

/**
 * HestiaCP adapter over SSH (ssh2): runs Hestia's CLI (`v-add-mail-account`, `v-list-mail-account`,
 * `v-list-user`) as `<hestiaDir>/bin/v-...`, through `sudo -n` when the login user is not root.
 * Exit codes are Hestia's (func/main.sh: 3 E_NOTEXIST, 4 E_EXISTS, 8 E_LIMIT, 14 E_LA, ...) and are
 * classified by classifyHestiaExit. The mailbox password travels on the channel's stdin into a
 * private temp file (see shell.ts), never on a command line. One connection per call, closed
 * afterwards, on error, on timeout and when the caller's AbortSignal fires. Requires Hestia >= 1.4
 * (the commands find their own config) and a POSIX login shell.
 */

/** Opens an authenticated ssh2 connection; rejects with the ssh2 error. Injected by tests if needed. */
export type SshConnect = (config: ConnectConfig, signal?: AbortSignal) => Promise<Client>;

/** What the SSH adapter needs from createMailPanel. */
export interface HestiaSshDeps {
  sshConnect: SshConnect;
  /** per command once connected, in ms */
  timeoutMs: number;
  /** handshake and authentication, in ms */
  connectTimeoutMs: number;
  /** Hestia's install dir (default /usr/local/hestia) */
  hestiaDir: string;
  /** run the commands through `sudo -n` (default: when the login user is not root) */
  sudo?: boolean;
}

/** Output of a remote command (each stream capped at 64 KiB). */
export interface RemoteResult {
  /** exit code; null when the command ended without one (signal, dropped connection) */
  code: number | null;
  stdout: string;
  stderr: string;
}

const OUTPUT_CAP = 64 * 1024;

/** The default SshConnect: a new ssh2 Client, resolved on 'ready', destroyed when `signal` fires first. */
export const defaultSshConnect: SshConnect = (config, signal) =>
  new Promise<Client>((resolve, reject) => {
    const client = new (ssh2().Client)();
    const onAbort = () => {
      client.destroy();
      reject(signal?.reason ?? new Error('aborted'));
    };
    client.once('ready', () => {
      signal?.removeEventListener('abort', onAbort);
      resolve(client);
    });
    client.on('error', (err) => {
      signal?.removeEventListener('abort', onAbort);
      reject(err);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      client.connect(config);
    } catch (err) {
      // ssh2 throws synchronously for a key it cannot parse
      signal?.removeEventListener('abort', onAbort);
      reject(
        Object.assign(new Error(`cannot use the SSH key: ${(err as Error).message}`), {
          code: 'ERR_INVALID_ARG_VALUE',
        }),
      );
    }
  });

/** OpenSSH's fingerprint of a host key: base64 SHA-256 without padding. */
export function sshFingerprint(key: Buffer): string {
  return createHash('sha256').update(key).digest('base64').replace(/=+$/, '');
}

/**
 * Creates the Hestia SSH adapter. `cfg` was validated by createMailPanel.
 */
export function createHestiaSshPanel(cfg: MailPanelConfig, deps: HestiaSshDeps): MailPanel {
  const hestiaUser = cfg.panel_user || cfg.user;
  const cmdOpts: HestiaCommandOptions = { hestiaDir: deps.hestiaDir, sudo: deps.sudo ?? cfg.user !== 'root' };
  const expectedHostKey = cfg.host_key_sha256 ? cfg.host_key_sha256.replace(/^SHA256:/, '').replace(/=+$/, '') : null;

  const fail = (
    kind: ConstructorParameters<typeof PanelError>[0],
    msg: string,
    extra: { cause?: unknown; exitCode?: number } = {},
    secrets: string[] = [],
  ) => new PanelError(kind, redactSecrets(`hestia: ${msg}`, [cfg.password, ...secrets]), { ...extra, panel: 'hestia' });

  async function connectConfig(): Promise<ConnectConfig> {
    const config: ConnectConfig = {
      host: cfg.host,
      port: cfg.port,
      username: cfg.user,
      readyTimeout: deps.connectTimeoutMs,
      keepaliveInterval: 0,
    };
    const methods: ('publickey' | 'password')[] = [];
    if (cfg.ssh_key_path) {
      try {
        config.privateKey = await readFile(cfg.ssh_key_path);
      } catch (err) {
        throw fail(
          'permanent',
          `cannot read the SSH key file ${cfg.ssh_key_path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
          { cause: err },
        );
      }
      methods.push('publickey');
    }
    if (cfg.password) {
      config.password = cfg.password;
      methods.push('password');
    }
    config.authHandler = methods;
    if (expectedHostKey) config.hostVerifier = (key: Buffer) => sshFingerprint(key) === expectedHostKey;
    return config;
  }

  /**
   * Runs one command on a fresh connection, writes `stdin` (then EOF) and collects the result.
   * @throws PanelError for connection, authentication, timeout and abort failures
   */
  async function run(
    what: string,
    command: string,
    stdin: string | null,
    signal: AbortSignal | undefined,
    secrets: string[] = [],
  ): Promise<RemoteResult> {
    if (signal?.aborted) throw fail('transient', `${what}: aborted`, { cause: signal.reason });
    const config = await connectConfig();
    let client: Client;
    try {
      client = await deps.sshConnect(config, signal);
    } catch (err) {
      if (signal?.aborted) throw fail('transient', `${what}: aborted`, { cause: signal.reason });
      const kind = classifyNetworkError(err);
      const detail =
        kind === 'auth'
          ? 'the server refused the credentials'
          : ((err as { code?: string }).code ?? (err as Error).message);
      throw fail(kind, `${what}: cannot connect to ${cfg.host}:${cfg.port}: ${detail}`, { cause: err }, secrets);
    }
    return await new Promise<RemoteResult>((resolve, reject) => {
      let settled = false;
      let code: number | null = null;
      let stdout = '';
      let stderr = '';
      const finish = (err: PanelError | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        client.end();
        client.destroy();
        if (err) reject(err);
        else resolve({ code, stdout, stderr });
      };
      const onAbort = () => finish(fail('transient', `${what}: aborted`, { cause: signal?.reason }));
      const timer = setTimeout(
        () => finish(fail('transient', `${what}: timed out after ${deps.timeoutMs} ms`)),
        deps.timeoutMs,
      );
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      client.on('error', (err) =>
        finish(fail(classifyNetworkError(err), `${what}: connection error: ${err.message}`, { cause: err }, secrets)),
      );
      client.on('close', () => finish(fail('transient', `${what}: the connection closed before the command ended`)));
      client.exec(command, (err, stream) => {
        if (err) return finish(fail('transient', `${what}: cannot start the command: ${err.message}`, { cause: err }));
        stream.on('data', (d: Buffer) => {
          if (stdout.length < OUTPUT_CAP) stdout += d.toString('utf8');
        });
        stream.stderr.on('data', (d: Buffer) => {
          if (stderr.length < OUTPUT_CAP) stderr += d.toString('utf8');
        });
        stream.on('exit', (c: number | null) => {
          code = typeof c === 'number' ? c : null;
        });
        stream.on('close', () => finish(null));
        stream.on('error', (e: Error) =>
          finish(fail('transient', `${what}: channel error: ${e.message}`, { cause: e })),
        );
        stream.end(stdin ?? undefined);
      });
    });
  }

  /** The first "Error: ..." line Hestia printed, or the first output line, for messages. */
  const hestiaMessage = (r: RemoteResult) => {
    const lines = `${r.stdout}\n${r.stderr}`
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    return (lines.find((l) => /^Error:/i.test(l)) ?? lines[0] ?? '').slice(0, 300);
  };

  const failed = (what: string, r: RemoteResult, secrets: string[] = []) =>
    fail(
      classifyHestiaExit(r.code),
      `${what} failed (exit ${r.code ?? 'none'})${hestiaMessage(r) ? `: ${hestiaMessage(r)}` : ''}`,
      r.code === null ? {} : { exitCode: r.code },
      secrets,
    );

  return {
    async createMailbox(input, signal) {
      const v = assertValidCreateInput(input, 'hestia');
      const command = hestiaAddMailAccountCommand(
        cmdOpts,
        hestiaUser,
        v.domain,
        v.local_part,
        quotaToMegabytes(v.quota),
      );
      const r = await run('v-add-mail-account', command, `${input.password}\n`, signal, [input.password]);
      if (r.code !== HESTIA_EXIT.OK) throw failed('v-add-mail-account', r, [input.password]);
    },

    async mailboxExists(domain, localPart, signal) {
      const a = assertValidAddress(domain, localPart, 'hestia');
      const r = await run(
        'v-list-mail-account',
        hestiaListMailAccountCommand(cmdOpts, hestiaUser, a.domain, a.local_part),
        null,
        signal,
      );
      if (r.code === HESTIA_EXIT.OK) return true;
      // E_NOTEXIST names what is missing: the account or the mail domain -> no such mailbox; the
      // Hestia user itself -> the panel configuration is wrong.
      if (r.code === HESTIA_EXIT.E_NOTEXIST && !/^Error: user\b/i.test(hestiaMessage(r))) return false;
      throw failed('v-list-mail-account', r);
    },

    async testConnection(signal) {
      const r = await run('v-list-user', hestiaListUserCommand(cmdOpts, hestiaUser), null, signal);
      if (r.code !== HESTIA_EXIT.OK) throw failed('v-list-user', r);
    },
  };
}
