import pg from 'pg';
import type * as S3Sdk from '@aws-sdk/client-s3';
import { lazyRequire } from '../../lib/lazy-require.js';
import { createMailPanel, PanelError } from '../adapters/mail-panel/index.js';
import { createCloudflareDns } from '../adapters/dns/cloudflare.js';
import { DnsProviderError, type ProvisioningCredentials } from './contract.js';

const s3Sdk = lazyRequire<typeof S3Sdk>('@aws-sdk/client-s3');

/**
 * The read-only credential checks of issue 13 item 5. Each answers `{ok, message, details}` and
 * never throws; nothing is written anywhere by a check. Messages and details never hold a secret.
 */

/** A check's outcome (details: safe facts, e.g. the server version, the zone name). */
export interface CheckOutcome {
  ok: boolean;
  message: string;
  details: Record<string, unknown>;
}

/** Knobs of the checks (tests shorten the timeouts). */
export interface CheckOptions {
  /** per network step, in ms (default 10000) */
  timeoutMs?: number;
  /** fetch for Cloudflare and the HTTP panels (default global fetch) */
  fetch?: typeof fetch;
}

const fail = (message: string, details: Record<string, unknown> = {}): CheckOutcome => ({
  ok: false,
  message,
  details,
});
const missing = (what: string) => fail(`${what} is not saved.`);
/** Removes every given secret from a text. */
const scrub = (s: string, secrets: (string | null | undefined)[]) =>
  secrets.reduce<string>((acc, x) => (x ? acc.split(x).join('[redacted]') : acc), s);

/**
 * tenant_db: connects to the `postgres` database as the admin user, reads the version and whether
 * the role may CREATEDB and CREATEROLE (a superuser may both).
 */
export async function checkTenantDb(c: ProvisioningCredentials, o: CheckOptions = {}): Promise<CheckOutcome> {
  const db = c.tenantDb;
  if (!db) return missing('The tenant database credential');
  const client = new pg.Client({
    host: db.host,
    port: db.port,
    user: db.adminUser,
    password: db.adminPassword,
    database: 'postgres',
    connectionTimeoutMillis: o.timeoutMs ?? 10_000,
    statement_timeout: o.timeoutMs ?? 10_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{
      version: string;
      createdb: boolean;
      createrole: boolean;
      superuser: boolean;
    }>(
      `SELECT current_setting('server_version') AS version, rolcreatedb AS createdb, rolcreaterole AS createrole,
              rolsuper AS superuser FROM pg_roles WHERE rolname = current_user`,
    );
    const r = rows[0];
    const details = {
      version: r?.version ?? null,
      createdb: Boolean(r?.createdb || r?.superuser),
      createrole: Boolean(r?.createrole || r?.superuser),
      superuser: Boolean(r?.superuser),
    };
    if (!details.createdb || !details.createrole) {
      const lacking = [!details.createdb && 'CREATEDB', !details.createrole && 'CREATEROLE'].filter(Boolean);
      return fail(`The role ${db.adminUser} lacks ${lacking.join(' and ')}.`, details);
    }
    return { ok: true, message: `Connected to PostgreSQL ${details.version}; CREATEDB and CREATEROLE.`, details };
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    return fail(`Could not connect: ${scrub(msg, [db.adminPassword]).slice(0, 300)}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** cloudflare: token verify (active), then the zone (status active). */
export async function checkCloudflare(c: ProvisioningCredentials, o: CheckOptions = {}): Promise<CheckOutcome> {
  if (!c.cloudflare) return missing('The Cloudflare credential');
  const dns = createCloudflareDns(c.cloudflare, { fetch: o.fetch, timeoutMs: o.timeoutMs });
  try {
    const token = await dns.verifyToken();
    if (!token.ok) return fail(token.message, { token: 'inactive' });
    const zone = await dns.zone();
    const details = { token: 'active', zone_name: zone.name, zone_status: zone.status };
    if (zone.status !== 'active') return fail(`The zone ${zone.name} is ${zone.status}, not active.`, details);
    return { ok: true, message: `The token is active; the zone ${zone.name} is active.`, details };
  } catch (err) {
    if (err instanceof DnsProviderError) return fail(err.message, { status: err.status ?? null, kind: err.kind });
    return fail('Cloudflare could not be checked.');
  }
}

/** mail_panel: one authenticated call through the panel's adapter (testConnection). */
export async function checkMailPanel(c: ProvisioningCredentials, o: CheckOptions = {}): Promise<CheckOutcome> {
  const cfg = c.mailPanel;
  if (!cfg) return missing('The mail panel credential');
  const details = { type: cfg.type, host: cfg.host, port: cfg.port };
  try {
    const panel = createMailPanel(cfg, { fetch: o.fetch, timeoutMs: o.timeoutMs, connectTimeoutMs: o.timeoutMs });
    await panel.testConnection();
    return { ok: true, message: `Logged in to ${cfg.type} at ${cfg.host}.`, details };
  } catch (err) {
    if (err instanceof PanelError)
      return fail(scrub(`The panel refused or failed (${err.kind}): ${err.message}`, [cfg.password]), details);
    return fail('The panel could not be checked.', details);
  }
}

/** storage: HeadBucket with the AWS SDK v3 S3 client (path-style, for S3-compatible endpoints). */
export async function checkStorage(c: ProvisioningCredentials, o: CheckOptions = {}): Promise<CheckOutcome> {
  const st = c.storage;
  if (!st) return missing('The storage credential');
  const { HeadBucketCommand, S3Client } = s3Sdk();
  const s3 = new S3Client({
    endpoint: st.endpoint,
    region: st.region,
    forcePathStyle: true,
    credentials: { accessKeyId: st.accessKey, secretAccessKey: st.secretKey },
    maxAttempts: 1,
  });
  const details = { endpoint: st.endpoint, bucket: st.bucket };
  try {
    await s3.send(new HeadBucketCommand({ Bucket: st.bucket }), {
      abortSignal: AbortSignal.timeout(o.timeoutMs ?? 10_000),
    });
    return { ok: true, message: `The bucket ${st.bucket} is reachable.`, details };
  } catch (err) {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
    const status = e.$metadata?.httpStatusCode;
    const why =
      status === 404 ? 'no such bucket' : status === 403 ? 'access denied' : status ? `HTTP ${status}` : 'unreachable';
    return fail(`HeadBucket ${st.bucket}: ${why}.`, { ...details, status: status ?? null });
  } finally {
    s3.destroy();
  }
}

/** backup: the `backup_ready` flag and a live storage check. */
export async function checkBackup(c: ProvisioningCredentials, o: CheckOptions = {}): Promise<CheckOutcome> {
  if (!c.backupReady) return fail('backup_ready is off: confirm that backups are in place first.');
  const st = await checkStorage(c, o);
  if (!st.ok) return fail(`The backup storage is not usable: ${st.message}`, st.details);
  return { ok: true, message: 'backup_ready is on and the backup storage is reachable.', details: st.details };
}

/** The checks by provider name. */
export const CHECKS = {
  tenant_db: checkTenantDb,
  cloudflare: checkCloudflare,
  mail_panel: checkMailPanel,
  storage: checkStorage,
  backup: checkBackup,
} as const;
/** A provider of POST .../credentials/test/{provider}. */
export type CheckProvider = keyof typeof CHECKS;
