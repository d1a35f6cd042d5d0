import type { Knex } from 'knex';
import { createCloudflareDns } from '../adapters/dns/cloudflare.js';
import { createMailPanel } from '../adapters/mail-panel/index.js';
import type { MailPanel, MailPanelConfig } from '../adapters/mail-panel/types.js';
import { createProvisioningCredentialSource } from './credentials.js';
import type { CloudflareCredentials, DnsProvider, ProvisioningCredentialSource } from './contract.js';

/**
 * What the provisioning runs (issue 13 items 6-9) use to reach the outside world. Injected through
 * AppDeps.config.provisioning and JobDeps.provisioning so tests use in-memory fakes; the defaults
 * read the sealed credentials store and speak to Cloudflare and the real mail panel.
 */
export interface ProvisioningRuntime {
  /** the credentials store and the lock */
  source?: ProvisioningCredentialSource;
  /** a DnsProvider for the saved Cloudflare credentials */
  dns?: (creds: CloudflareCredentials) => DnsProvider;
  /** a MailPanel for the saved mail panel credentials */
  panel?: (cfg: MailPanelConfig) => MailPanel;
}

/** The runtime with its defaults filled in. */
export interface ResolvedRuntime {
  source: ProvisioningCredentialSource;
  dns: (creds: CloudflareCredentials) => DnsProvider;
  panel: (cfg: MailPanelConfig) => MailPanel;
}

/**
 * Fills in the defaults of a runtime.
 * @param appKey the 32-byte APP_KEY (needed unless `source` is given)
 * @throws Error when neither a source nor the APP_KEY is there
 */
export function resolveRuntime(knex: Knex, appKey: Buffer | undefined, rt: ProvisioningRuntime = {}): ResolvedRuntime {
  let source = rt.source;
  if (!source) {
    if (!appKey) throw new Error('provisioning needs the APP_KEY');
    source = createProvisioningCredentialSource(knex, appKey);
  }
  return {
    source,
    dns: rt.dns ?? ((c) => createCloudflareDns(c)),
    panel: rt.panel ?? ((c) => createMailPanel(c)),
  };
}

/** The PostgreSQL database name planned for a tenant's own database (issue 14 creates it): `isp_t_<subdomain>`. */
export const tenantDatabaseName = (subdomain: string) => `isp_t_${subdomain.replace(/-/g, '_')}`;
