import type { Knex } from 'knex';
import { sealSectionSecret, type ProvisioningSection } from '../../jobs/provisioning/credentials.js';

/**
 * Issue 13 item 10: the provisioning credentials of `npm start`, pointing at the local fakes of
 * bin/dev-provisioning.ts: `cloudflare` (the fake zone, its API root in `base_url`) and
 * `mail_panel` (cPanel over HTTP on loopback), saved sealed, `fake: true` and untested (so
 * provisioning stays locked until a platform admin tests them and switches it on). Real
 * credentials saved by a platform admin are left alone; a fake row from an earlier start is
 * updated only when the fakes' address changed. Issue 14 item 9: with `tenantDb`, also `tenant_db`
 * (the embedded PostgreSQL's superuser, a real server: `fake: false`, untested), saved once.
 */

/** Where the fakes listen, and their demo identifiers. */
export interface DemoProvisioningTarget {
  /** the fake's API root, e.g. http://127.0.0.1:3003/client/v4 */
  cloudflareUrl: string;
  zoneId: string;
  cloudflareToken: string;
  cpanelPort: number;
  cpanelUser: string;
  cpanelToken: string;
  /**
   * Issue 14 item 9: the embedded PostgreSQL's superuser as the `tenant_db` credential (null or
   * absent: DATABASE_URL is the user's own server, nothing is saved for it)
   */
  tenantDb?: { host: string; port: number; adminUser: string; adminPassword: string } | null;
}

/**
 * The `tenant_db` credential of a demo database URL (issue 14 item 9): its host, port, user and
 * password (the embedded server's superuser).
 * @param url a postgres:// URL with user and password
 */
export function demoTenantDbOf(url: string): NonNullable<DemoProvisioningTarget['tenantDb']> {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 5432),
    adminUser: decodeURIComponent(u.username),
    adminPassword: decodeURIComponent(u.password),
  };
}

/**
 * Saves the fake credentials where none are saved.
 * @param appKey the 32-byte APP_KEY sealing the tokens
 * @param now changed_at of the new rows
 * @returns the sections written (empty: all were there)
 */
export async function seedDemoProvisioning(
  knex: Knex,
  appKey: Buffer,
  t: DemoProvisioningTarget,
  now: Date,
): Promise<ProvisioningSection[]> {
  const rows: { section: ProvisioningSection; settings: Record<string, unknown>; secret: string; fake: boolean }[] = [
    {
      fake: true,
      section: 'cloudflare',
      settings: { zone_id: t.zoneId, base_url: t.cloudflareUrl },
      secret: t.cloudflareToken,
    },
    {
      fake: true,
      section: 'mail_panel',
      settings: { type: 'cpanel', host: '127.0.0.1', port: t.cpanelPort, user: t.cpanelUser, ssl: false },
      secret: t.cpanelToken,
    },
  ];
  // a real server (the embedded PostgreSQL), so fake: false; untested like the others
  if (t.tenantDb)
    rows.push({
      fake: false,
      section: 'tenant_db',
      settings: { host: t.tenantDb.host, port: t.tenantDb.port, admin_user: t.tenantDb.adminUser },
      secret: t.tenantDb.adminPassword,
    });
  const written: ProvisioningSection[] = [];
  for (const r of rows) {
    const inserted = await knex('provisioning_credentials')
      .insert({
        section: r.section,
        settings: JSON.stringify(r.settings),
        secret_enc: sealSectionSecret(appKey, r.section, r.secret),
        fake: r.fake,
        changed_at: now,
        last_test: null,
      })
      .onConflict('section')
      // a fake row of an earlier start on other ports follows the fakes; real credentials stay
      .merge(['settings', 'secret_enc', 'changed_at', 'last_test'])
      .whereRaw(
        'provisioning_credentials.fake AND provisioning_credentials.settings IS DISTINCT FROM excluded.settings',
      )
      .returning('section');
    if (inserted.length) written.push(r.section);
  }
  return written;
}
