import { X509Certificate } from 'node:crypto';
import { execa } from 'execa';

/**
 * The JDK's keytool as a subprocess (issue 12 item 8): checks an uploaded keystore and generates new
 * ones. Passwords reach keytool only through its environment (`-storepass:env`, `-keypass:env`),
 * never its command line, and are never part of an error message. keytool runs in English and UTC
 * (`-J-Duser.language=en -J-Duser.timezone=UTC`), so its messages and dates parse the same
 * everywhere. At most KEYTOOL_CONCURRENCY runs per process at a time (a JVM each); the others wait.
 */

/** Store types the app builder accepts (what Gradle's signingConfig storeType names). */
export type KeystoreType = 'JKS' | 'PKCS12';

/** keytool runs per process at once; more wait their turn (2 cores: a JVM start costs ~0.4 s of CPU). */
export const KEYTOOL_CONCURRENCY = 2;

/** Default bound of one keytool run, in ms; beyond it the run is killed (KeytoolFailed). */
export const KEYTOOL_TIMEOUT_MS = 30_000;

/** Where keytool is and how long a run may take. */
export interface KeytoolOptions {
  /** the keytool binary (default `keytool` on PATH) */
  path?: string;
  /** bound of one run in ms (default KEYTOOL_TIMEOUT_MS) */
  timeoutMs?: number;
}

/** The field of an upload a refusal is about. */
export type KeystoreField = 'file' | 'store_password' | 'key_alias' | 'key_password';

/** The keystore or a password does not open: the caller answers 422 on `field`. */
export class KeystoreRejected extends Error {
  constructor(
    readonly field: KeystoreField,
    message: string,
  ) {
    super(message);
    this.name = 'KeystoreRejected';
  }
}

/** keytool is missing, timed out or failed in a way that is not the input's fault. The message holds no secret. */
export class KeytoolFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeytoolFailed';
  }
}

/** What keytool reports of a key entry. */
export interface KeystoreInfo {
  storeType: KeystoreType;
  /** the alias as the caller named it */
  alias: string;
  /** SHA-256 of the entry's certificate: 32 upper-case hex pairs joined by `:` (keytool's form) */
  sha256Fingerprint: string;
  /** the certificate's notAfter */
  validUntil: Date;
}

/** Passwords and alias of a keystore entry. */
export interface KeystoreSecrets {
  storePassword: string;
  keyAlias: string;
  keyPassword: string;
}

/** Subject of a generated certificate (keytool `-dname`). */
export interface DistinguishedName {
  commonName: string;
  organization: string;
  /** ISO 3166 alpha-2, upper case */
  country: string;
}

/**
 * The store type of a keystore file by its first bytes: JKS (`FE ED FE ED`), PKCS12 (a DER
 * SEQUENCE, `30`), else null (JCEKS, BKS and anything else are not accepted).
 */
export function keystoreTypeOf(bytes: Buffer): KeystoreType | null {
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === 0xfeedfeed) return 'JKS';
  if (bytes.length >= 4 && bytes[0] === 0x30) return 'PKCS12';
  return null;
}

/**
 * Escapes one value of a distinguished name for keytool's `-dname` (RFC 2253 style): a backslash
 * before `\ , + = " < > ; #`.
 */
export function escapeDnValue(value: string): string {
  return value.replace(/[\\,+="<>;#]/g, (c) => `\\${c}`);
}

let running = 0;
const waiting: (() => void)[] = [];

async function slot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= KEYTOOL_CONCURRENCY) await new Promise<void>((r) => waiting.push(r));
  else running++;
  try {
    return await fn();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

const STORE_ENV = 'ISP_KEYTOOL_STOREPASS';
const KEY_ENV = 'ISP_KEYTOOL_KEYPASS';

const binary = (opts: KeytoolOptions) => opts.path ?? 'keytool';

/**
 * JVM options for a short keytool run: the client compiler only, one compiler thread and the serial
 * collector. keytool runs for about a second; the default tiered JIT and parallel GC threads spend
 * more CPU than the work itself (measured here: `-list` 1.0 -> 0.6 s, `-genkeypair` RSA 2048
 * 1.7 -> 1.0 s of CPU).
 */
export const KEYTOOL_JVM_FLAGS = ['-J-XX:TieredStopAtLevel=1', '-J-XX:CICompilerCount=1', '-J-XX:+UseSerialGC'];

/** Output of one keytool run. */
interface Run {
  ok: boolean;
  /** stdout and stderr together */
  output: string;
}

/**
 * Runs keytool with `args` (never a secret) and the passwords in its environment.
 * @throws KeytoolFailed when it cannot start or exceeds the time bound
 */
async function keytool(args: string[], passwords: { store: string; key?: string }, opts: KeytoolOptions): Promise<Run> {
  return slot(async () => {
    const r = await execa(
      binary(opts),
      [...KEYTOOL_JVM_FLAGS, '-J-Duser.language=en', '-J-Duser.country=US', '-J-Duser.timezone=UTC', ...args],
      {
        env: { [STORE_ENV]: passwords.store, [KEY_ENV]: passwords.key ?? passwords.store, LC_ALL: 'C' },
        reject: false,
        all: true,
        stdin: 'ignore',
        timeout: opts.timeoutMs ?? KEYTOOL_TIMEOUT_MS,
        forceKillAfterDelay: 2000,
      },
    );
    if (r.timedOut) throw new KeytoolFailed('keytool did not finish in time');
    if (r.failed && r.exitCode === undefined)
      throw new KeytoolFailed(`keytool could not be run (${(r as { code?: string }).code ?? 'unknown error'})`);
    return { ok: r.exitCode === 0, output: String(r.all ?? '') };
  });
}

const storeArgs = (file: string, type: KeystoreType) => [
  '-keystore',
  file,
  '-storetype',
  type,
  `-storepass:env`,
  STORE_ENV,
];

/** The refusal a failed keytool run stands for, by its message. */
function refusal(output: string): KeystoreRejected | null {
  if (/password was incorrect|tampered with|Given final block|mac check failed|Integrity check failed/i.test(output))
    return new KeystoreRejected('store_password', 'The store password does not open this keystore.');
  if (/Alias <.*> does not exist/i.test(output))
    return new KeystoreRejected('key_alias', 'The keystore has no entry with this alias.');
  if (/Cannot recover key|Get Key failed/i.test(output))
    return new KeystoreRejected('key_password', 'The key password does not open the key of this alias.');
  if (/keystore format|Invalid keystore|DerInputStream|IOException|EOFException|parse/i.test(output))
    return new KeystoreRejected('file', 'The file is not a readable JKS or PKCS12 keystore.');
  return null;
}

/** Throws the refusal or a KeytoolFailed naming the step (never keytool's raw output, which may name a path). */
function fail(step: string, output: string): never {
  throw refusal(output) ?? new KeytoolFailed(`keytool ${step} failed`);
}

/** The certificate of `alias` (PEM from `-list -rfc`), after checking it is a private-key entry. */
async function certificateOf(
  file: string,
  type: KeystoreType,
  storePassword: string,
  alias: string,
  opts: KeytoolOptions,
): Promise<X509Certificate> {
  const r = await keytool(['-list', '-rfc', '-alias', alias, ...storeArgs(file, type)], { store: storePassword }, opts);
  if (!r.ok) fail('-list', r.output);
  if (!/Entry type:\s*PrivateKeyEntry/.test(r.output))
    throw new KeystoreRejected('key_alias', 'The entry of this alias holds no private key.');
  const pem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(r.output);
  if (!pem) throw new KeytoolFailed('keytool -list printed no certificate');
  return new X509Certificate(pem[0]);
}

function infoOf(type: KeystoreType, alias: string, cert: X509Certificate): KeystoreInfo {
  return {
    storeType: type,
    alias,
    sha256Fingerprint: cert.fingerprint256.toUpperCase(),
    validUntil: new Date(cert.validTo),
  };
}

/**
 * Checks a keystore file the way a build will use it: the store password opens it, the alias names
 * a private-key entry, the key password recovers that key (`keytool -certreq`, which signs with it).
 * PKCS12 (decision, docs/decisions.md): the key password must be the store password (keytool and
 * most tools write PKCS12 that way and ignore a separate key password).
 * @param file path of the keystore (mode 0600, the caller removes it)
 * @param type the store type by content (keystoreTypeOf)
 * @returns the entry's certificate data
 * @throws KeystoreRejected naming the field at fault; KeytoolFailed when keytool cannot run
 */
export async function inspectKeystore(
  file: string,
  type: KeystoreType,
  secrets: KeystoreSecrets,
  opts: KeytoolOptions = {},
): Promise<KeystoreInfo> {
  if (type === 'PKCS12' && secrets.keyPassword !== secrets.storePassword)
    throw new KeystoreRejected(
      'key_password',
      'A PKCS12 keystore uses the store password for its key: send the same value.',
    );
  const cert = await certificateOf(file, type, secrets.storePassword, secrets.keyAlias, opts);
  const r = await keytool(
    ['-certreq', '-alias', secrets.keyAlias, ...storeArgs(file, type), '-keypass:env', KEY_ENV, '-file', '/dev/null'],
    { store: secrets.storePassword, key: secrets.keyPassword },
    opts,
  );
  if (!r.ok) {
    const why = refusal(r.output);
    // a PKCS12 key sealed under another password than the store's shows up as an unrecoverable key
    if (why?.field === 'key_password' || why?.field === 'store_password')
      throw new KeystoreRejected('key_password', 'The key password does not open the key of this alias.');
    fail('-certreq', r.output);
  }
  return infoOf(type, secrets.keyAlias, cert);
}

/** What generateKeystore needs. */
export interface GenerateKeystoreInput {
  /** the file to create (must not exist) */
  file: string;
  alias: string;
  /** store and key password (PKCS12: one password for both) */
  password: string;
  dname: DistinguishedName;
  /** the certificate's notBefore (the caller's clock) */
  start: Date;
  /** validity in whole days from `start` */
  validityDays: number;
}

const pad = (n: number) => String(n).padStart(2, '0');
/** `yyyy/MM/dd HH:mm:ss` in UTC, keytool's `-startdate` form (keytool runs in UTC here). */
function startDate(d: Date): string {
  return `${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(
    d.getUTCMinutes(),
  )}:${pad(d.getUTCSeconds())}`;
}

/**
 * Generates a PKCS12 keystore with one RSA 2048 key pair and a self-signed SHA256withRSA
 * certificate valid from `start` for `validityDays` days (`keytool -genkeypair`).
 * @returns the new entry's certificate data
 * @throws KeytoolFailed when keytool cannot run or refuses (e.g. the file exists)
 */
export async function generateKeystore(input: GenerateKeystoreInput, opts: KeytoolOptions = {}): Promise<KeystoreInfo> {
  const dn = input.dname;
  const dname = `CN=${escapeDnValue(dn.commonName)},O=${escapeDnValue(dn.organization)},C=${escapeDnValue(dn.country)}`;
  const r = await keytool(
    [
      '-genkeypair',
      '-alias',
      input.alias,
      '-keyalg',
      'RSA',
      '-keysize',
      '2048',
      '-sigalg',
      'SHA256withRSA',
      '-validity',
      String(input.validityDays),
      '-startdate',
      startDate(input.start),
      '-dname',
      dname,
      ...storeArgs(input.file, 'PKCS12'),
      '-keypass:env',
      KEY_ENV,
    ],
    { store: input.password },
    opts,
  );
  if (!r.ok) throw new KeytoolFailed('keytool -genkeypair failed');
  const cert = await certificateOf(input.file, 'PKCS12', input.password, input.alias, opts);
  return infoOf('PKCS12', input.alias, cert);
}
