import type { Knex } from 'knex';
import { open, seal } from '../../lib/crypto.js';
import type { MailPanelConfig } from '../adapters/mail-panel/types.js';
import type { ProvisioningCredentialSource, ProvisioningCredentials, ProvisioningLock } from './contract.js';

/**
 * The provisioning credentials store (issue 13 items 3-4; DESIGN.md §3): one provisioning_credentials
 * row per section, the non-secret settings in `settings`, the secrets sealed with APP_KEY
 * (AES-256-GCM, lib/crypto.ts) in `secret_enc`, bound to the table and section (associated data), so
 * a value copied into another section does not open.
 */

/** The credential sections, in readiness order. */
export const PROVISIONING_SECTIONS = ['tenant_db', 'cloudflare', 'mail_panel', 'storage'] as const;
export type ProvisioningSection = (typeof PROVISIONING_SECTIONS)[number];

/** The write-only (secret) field of each section. */
export const SECRET_FIELDS: Record<ProvisioningSection, string> = {
  tenant_db: 'admin_password',
  cloudflare: 'api_token',
  mail_panel: 'password',
  storage: 'secret_key',
};

/** A stored section row. */
export interface SectionRow {
  section: ProvisioningSection;
  settings: Record<string, unknown>;
  secret_enc: string | null;
  fake: boolean;
  changed_at: Date;
  last_test: { ok: boolean; at: string; message: string } | null;
}

const aad = (section: ProvisioningSection) => `provisioning_credentials:${section}`;

/**
 * Seals a section's secret for provisioning_credentials.secret_enc.
 * @param appKey the 32-byte APP_KEY
 */
export function sealSectionSecret(appKey: Buffer, section: ProvisioningSection, secret: string): string {
  return seal(appKey, secret, aad(section));
}

/**
 * Opens what sealSectionSecret produced.
 * @throws Error when the key or section differ or the value was tampered with
 */
export function openSectionSecret(appKey: Buffer, section: ProvisioningSection, sealed: string): string {
  return open(appKey, sealed, aad(section));
}

/** Reads the switches row (defaults when never saved) and the section rows by section. */
export async function readProvisioningRows(knex: Knex) {
  const settings = ((await knex('provisioning_settings').where({ id: 1 }).first()) ?? {
    enabled: false,
    backup_ready: false,
    backup_last_test: null,
    updated_at: null,
  }) as {
    enabled: boolean;
    backup_ready: boolean;
    backup_last_test: SectionRow['last_test'];
    updated_at: Date | null;
  };
  const rows = (await knex('provisioning_credentials').select('*')) as SectionRow[];
  return { settings, sections: new Map(rows.map((r) => [r.section, r])) };
}

/**
 * The lock of issue 13 item 4 (decision on "stays locked"): runs are refused until `enabled` and
 * `backup_ready` are true and `cloudflare` and `mail_panel` passed a test since their last change
 * (a change resets last_test, so saving never unlocks).
 * @returns reasons: `enabled`, `backup`, `cloudflare`, `mail_panel` (each keeping it locked)
 */
export function lockOf(rows: Awaited<ReturnType<typeof readProvisioningRows>>): ProvisioningLock {
  const reasons: string[] = [];
  if (!rows.settings.enabled) reasons.push('enabled');
  if (!rows.settings.backup_ready) reasons.push('backup');
  for (const s of ['cloudflare', 'mail_panel'] as const) if (!rows.sections.get(s)?.last_test?.ok) reasons.push(s);
  return { locked: reasons.length > 0, reasons };
}

/**
 * Opens the sealed secrets of rows read by readProvisioningRows into the contract's shape.
 * @param appKey the 32-byte APP_KEY
 * @throws Error when a sealed value does not open (wrong APP_KEY, tampered row)
 */
export function openCredentials(
  rows: Awaited<ReturnType<typeof readProvisioningRows>>,
  appKey: Buffer,
): ProvisioningCredentials {
  const get = (s: ProvisioningSection) => {
    const r = rows.sections.get(s);
    if (!r) return null;
    const secret = r.secret_enc ? openSectionSecret(appKey, s, r.secret_enc) : '';
    return { ...r.settings, [SECRET_FIELDS[s]]: secret } as Record<string, unknown>;
  };
  const cf = get('cloudflare');
  const mp = get('mail_panel');
  const db = get('tenant_db');
  const st = get('storage');
  return {
    enabled: rows.settings.enabled,
    backupReady: rows.settings.backup_ready,
    cloudflare: cf
      ? {
          apiToken: String(cf.api_token),
          zoneId: String(cf.zone_id),
          ...(cf.base_url ? { baseUrl: String(cf.base_url) } : {}),
        }
      : null,
    // the mail_panel section stores exactly MailPanelConfig's fields (validated on PUT) plus its password
    mailPanel: mp ? (mp as unknown as MailPanelConfig) : null,
    tenantDb: db
      ? {
          host: String(db.host),
          port: Number(db.port),
          adminUser: String(db.admin_user),
          adminPassword: String(db.admin_password),
        }
      : null,
    storage: st
      ? {
          endpoint: String(st.endpoint),
          region: String(st.region),
          bucket: String(st.bucket),
          accessKey: String(st.access_key),
          secretKey: String(st.secret_key),
        }
      : null,
  };
}

/**
 * The ProvisioningCredentialSource of jobs/provisioning/contract.ts over the database: opens the
 * sealed secrets on each load (nothing cached; secrets never leave the returned object).
 * @param appKey the 32-byte APP_KEY
 * @throws from load(): Error when a sealed value does not open (wrong APP_KEY, tampered row)
 */
export function createProvisioningCredentialSource(knex: Knex, appKey: Buffer): ProvisioningCredentialSource {
  return {
    async load(): Promise<ProvisioningCredentials> {
      return openCredentials(await readProvisioningRows(knex), appKey);
    },
    async lock() {
      return lockOf(await readProvisioningRows(knex));
    },
  };
}
