import type { MailPanelConfig } from '../adapters/mail-panel/types.js';

/**
 * The contract between the two halves of issue 13 (tenant provisioning), built in parallel:
 * - the platform half (items 1-5, 10): tenants, the credentials store, readiness and the lock, the
 *   read-only checks, the Cloudflare adapter and the demo fakes; it implements
 *   {@link ProvisioningCredentialSource} and {@link DnsProvider} (jobs/adapters/dns/cloudflare.ts);
 * - the runs half (items 6-9): preview, draft, the provisioning flows, the subscriber-domain state
 *   rules and customer mailboxes; it reads credentials and the lock through the source and writes
 *   DNS through a DnsProvider made from them (injected, so its tests use in-memory fakes).
 * Secrets live only inside these objects: never in job data, logs, run records or answers.
 */

/** Cloudflare API v4 credentials (the spec's DNS provider {api_token, zone_id}). */
export interface CloudflareCredentials {
  apiToken: string;
  zoneId: string;
  /** API root, default `https://api.cloudflare.com/client/v4` (the demo fake and tests replace it) */
  baseUrl?: string;
}

/** Credentials of every section, opened (decrypted); a section not saved is null. */
export interface ProvisioningCredentials {
  enabled: boolean;
  backupReady: boolean;
  cloudflare: CloudflareCredentials | null;
  /** the mail panel (jobs/adapters/mail-panel), as its adapters take it */
  mailPanel: MailPanelConfig | null;
  tenantDb: { host: string; port: number; adminUser: string; adminPassword: string } | null;
  storage: { endpoint: string; region: string; bucket: string; accessKey: string; secretKey: string } | null;
}

/** Why runs are refused (issue 13 item 4): empty when unlocked. */
export interface ProvisioningLock {
  locked: boolean;
  /** readiness check keys that keep it locked, e.g. `cloudflare` (untested since its last change) */
  reasons: string[];
}

/** What the runs half needs from the credentials store. */
export interface ProvisioningCredentialSource {
  /** The saved credentials, opened. */
  load(): Promise<ProvisioningCredentials>;
  /** The lock as item 4 defines it (enabled, backup_ready, cloudflare and mail_panel tested since their change). */
  lock(): Promise<ProvisioningLock>;
}

/** A DNS record as Cloudflare v4 answers it (the fields the runs use). */
export interface DnsRecord {
  id: string;
  type: 'A' | 'AAAA' | 'CNAME' | 'TXT' | string;
  /** fully qualified, no trailing dot */
  name: string;
  content: string;
  proxied: boolean;
  /** Cloudflare's record comment; our records carry a marker here (decision of the runs half) */
  comment?: string | null;
}

/**
 * Thrown by a DnsProvider: `retry` for network errors, 5xx and 429 (retryAfterMs when given),
 * `permanent` for everything else (bad token 403, invalid record 400, ...). Messages never carry
 * the token.
 */
export class DnsProviderError extends Error {
  constructor(
    readonly kind: 'retry' | 'permanent',
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'DnsProviderError';
  }
}

/** One zone's DNS, as the runs use it. Every method throws DnsProviderError. */
export interface DnsProvider {
  /** Token verify (`GET /user/tokens/verify`): ok when the token is active. */
  verifyToken(): Promise<{ ok: boolean; message: string }>;
  /** The zone (`GET /zones/{zone_id}`): its name (e.g. `example.net`) and status (`active`, ...). */
  zone(): Promise<{ name: string; status: string }>;
  /** Records of the zone with this exact name (and type, when given). */
  listRecords(query: { name: string; type?: string }): Promise<DnsRecord[]>;
  /** Creates a record; answers it with its id. */
  createRecord(record: Omit<DnsRecord, 'id'>): Promise<DnsRecord>;
  /** Deletes a record by id (already gone: resolves). */
  deleteRecord(id: string): Promise<void>;
}
