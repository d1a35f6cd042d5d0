/**
 * Throw-away X.509 material for the TLS tests, made with the `openssl` CLI (OpenSSL 3) in a temp
 * directory of the run: never committed, removed by the run's cleanup. Keys are EC P-256 (fast to
 * make). Validity is relative to now (days), never a calendar date.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { registerCleanup } from './env.js';

/** A certificate authority: its certificate (PEM) and the files to sign with. */
export interface TestCa {
  name: string;
  /** the CA certificate, PEM */
  certPem: string;
  certFile: string;
  keyFile: string;
}

/** A server certificate with its key, as PEM text and as files (Dovecot reads files). */
export interface TestCert {
  certPem: string;
  keyPem: string;
  certFile: string;
  keyFile: string;
}

/** Runs openssl with arguments (no shell). @throws Error with openssl's stderr when it fails */
async function openssl(args: string[], cwd: string): Promise<void> {
  const r = await execa('openssl', args, { cwd, reject: false, stdin: 'ignore' });
  if (r.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${String(r.stderr).slice(-600)}`);
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/**
 * Creates a directory for certificates (mode 0700, removed after the run).
 * @returns its absolute path
 */
export async function makeCertDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-tls-'));
  registerCleanup(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Makes a self-signed CA certificate (basicConstraints CA:TRUE, keyCertSign), valid 2 days from now.
 * @param dir where `<name>-ca.pem` and `<name>-ca.key` are written
 * @param name a file-name-safe label, also the CA's common name suffix
 * @throws Error when openssl fails
 */
export async function makeCa(dir: string, name: string): Promise<TestCa> {
  const certFile = path.join(dir, `${name}-ca.pem`);
  const keyFile = path.join(dir, `${name}-ca.key`);
  await openssl(
    [
      'req',
      '-x509',
      '-new',
      ...EC_KEY,
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      `/CN=ISP test CA ${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  return { name, certPem: await fs.readFile(certFile, 'utf8'), certFile, keyFile };
}

/**
 * Issues a server certificate signed by `ca` (CA:FALSE, serverAuth).
 * @param o.dir where `<name>.pem` and `<name>.key` are written (the key with mode 0600)
 * @param o.name file-name-safe label
 * @param o.altNames subjectAltName entries, e.g. `['IP:127.0.0.1', 'DNS:localhost']`
 * @param o.days validity from now in days (default 2); -1 gives a certificate that expired a day ago
 * @throws Error when openssl fails
 */
export async function issueCert(
  ca: TestCa,
  o: { dir: string; name: string; altNames: string[]; days?: number },
): Promise<TestCert> {
  const certFile = path.join(o.dir, `${o.name}.pem`);
  const keyFile = path.join(o.dir, `${o.name}.key`);
  const csr = path.join(o.dir, `${o.name}.csr`);
  const ext = path.join(o.dir, `${o.name}.ext`);
  const cn = (o.altNames[0] ?? 'server').replace(/^[A-Z]+:/, '');
  await fs.writeFile(
    ext,
    [
      `subjectAltName = ${o.altNames.join(',')}`,
      'basicConstraints = CA:FALSE',
      'keyUsage = critical,digitalSignature',
      'extendedKeyUsage = serverAuth',
      '',
    ].join('\n'),
  );
  await openssl(['req', '-new', ...EC_KEY, '-keyout', keyFile, '-out', csr, '-subj', `/CN=${cn}`], o.dir);
  // `x509 -req -days -1` puts notAfter one day before now (OpenSSL 3.0 has no -not_after yet)
  const serial = `0x${crypto.randomBytes(12).toString('hex')}`;
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      ca.certFile,
      '-CAkey',
      ca.keyFile,
      '-set_serial',
      serial,
      '-days',
      String(o.days ?? 2),
      '-extfile',
      ext,
      '-out',
      certFile,
    ],
    o.dir,
  );
  await fs.chmod(keyFile, 0o600);
  const [certPem, keyPem] = await Promise.all([fs.readFile(certFile, 'utf8'), fs.readFile(keyFile, 'utf8')]);
  return { certPem, keyPem, certFile, keyFile };
}
