import type { Knex } from 'knex';
import { AppError, ValidationFailed, type FieldErrors } from '../../errors.js';
import { DnsProviderError, type DnsProvider } from '../../../jobs/provisioning/contract.js';
import { planRecord, type RecordPlan } from '../../../jobs/provisioning/records.js';
import { tenantDatabaseName, type ResolvedRuntime } from '../../../jobs/provisioning/runtime.js';
import type { RunPlan, RunRequest } from '../../../jobs/provisioning/steps.js';
import type { PlatformTenantRow } from '../tenant-param.js';

/**
 * The provisioning request (issue 13 item 6) with its defaults, and the plan read live
 * (record, mailbox, database name; create, unchanged, conflict). Saves nothing.
 */

/** Settings of the runs from the configuration (AppDeps.config.provisioning). */
export interface RunsConfig {
  /** PLATFORM_MAIL_DOMAIN: the root mail domain of non-master tenants' mailboxes */
  mailDomain?: string;
  /** PROVISIONING_DNS_TARGET: the default dns_target */
  dnsTarget?: string;
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const HOST = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** 422 INVALID_TRANSITION with our own reason (issue 13 item 7's state rules). */
export class RefusedTransition extends AppError {
  constructor(message: string) {
    super(422, 'INVALID_TRANSITION', message, { errors: { status: [message] } });
  }
}

/** 422 provisioning_dns_failed: Cloudflare could not be read for a preview (the reason, never the token). */
export class DnsUnavailable extends AppError {
  constructor(reason: string) {
    super(422, 'provisioning_dns_failed', `Cloudflare could not be read: ${reason}`, {
      errors: { cloudflare: [reason] },
    });
  }
}

/**
 * The saved Cloudflare DNS provider and its zone's name.
 * @throws ValidationFailed when Cloudflare is not saved; DnsUnavailable when the zone cannot be read
 */
export async function zoneOf(rt: ResolvedRuntime): Promise<{ dns: DnsProvider; zone: string }> {
  const creds = await rt.source.load();
  if (!creds.cloudflare) throw new ValidationFailed({ cloudflare: ['Save the Cloudflare credentials first.'] });
  const dns = rt.dns(creds.cloudflare);
  try {
    return { dns, zone: (await dns.zone()).name.toLowerCase() };
  } catch (err) {
    if (err instanceof DnsProviderError) throw new DnsUnavailable(err.message);
    throw err;
  }
}

/**
 * Fills in the defaults and checks the fields against each other (the schema checked each alone).
 * @param body the validated body (request fields)
 * @param zone the Cloudflare zone's name
 * @throws ValidationFailed (422) naming each bad field: domain outside the zone, a CNAME to an IP, an
 *   A to a hostname, no dns_target and no PROVISIONING_DNS_TARGET, no PLATFORM_MAIL_DOMAIN
 */
export function normalizeRequest(
  tenant: Pick<PlatformTenantRow, 'slug'>,
  body: Partial<RunRequest>,
  zone: string,
  cfg: RunsConfig,
): RunRequest {
  const errors: FieldErrors = {};
  const domain = (body.domain ?? zone).toLowerCase();
  if (domain !== zone && !domain.endsWith(`.${zone}`)) errors.domain = [`The domain must be ${zone} or below it.`];
  const type = body.record_type ?? 'A';
  const target = (body.dns_target ?? cfg.dnsTarget ?? '').toLowerCase();
  if (!target) errors.dns_target = ['No dns_target given and PROVISIONING_DNS_TARGET is not configured.'];
  else if (type === 'A' && !IPV4.test(target)) errors.dns_target = ['An A record points to an IPv4 address.'];
  else if (type === 'CNAME' && IPV4.test(target))
    errors.dns_target = ['A CNAME points to a hostname, not an IP address.'];
  else if (type === 'CNAME' && !HOST.test(target)) errors.dns_target = ['A CNAME points to a hostname.'];
  const subdomain = body.subdomain ?? tenant.slug;
  if (`${subdomain}.${domain}`.length > 253) errors.subdomain = ['The full name is longer than 253 characters.'];
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return {
    subdomain,
    domain,
    dns_target: target,
    record_type: type,
    proxied: body.proxied ?? true,
    mailbox_local_part: body.mailbox_local_part ?? tenant.slug,
    mailbox_quota_mb: body.mailbox_quota_mb ?? 1024,
  };
}

/**
 * The mailbox of a request: at PLATFORM_MAIL_DOMAIN for non-master tenants, at `domain` for the
 * master (admin-api.md "For non-master tenants the mailbox defaults to the fixed root mail domain").
 * @throws ValidationFailed when a non-master tenant's mailbox has no PLATFORM_MAIL_DOMAIN
 */
export function mailboxOf(tenant: Pick<PlatformTenantRow, 'is_master'>, req: RunRequest, cfg: RunsConfig) {
  const domain = tenant.is_master ? req.domain : cfg.mailDomain?.toLowerCase();
  if (!domain) throw new ValidationFailed({ mailbox_local_part: ['PLATFORM_MAIL_DOMAIN is not configured.'] });
  return {
    address: `${req.mailbox_local_part}@${domain}`,
    local_part: req.mailbox_local_part,
    domain,
    quota_mb: req.mailbox_quota_mb,
  };
}

/** The run's plan (what the job does) from a normalized request. */
export function runPlanOf(tenant: PlatformTenantRow, req: RunRequest, cfg: RunsConfig, withMailbox: boolean): RunPlan {
  return {
    record: {
      name: `${req.subdomain}.${req.domain}`,
      type: req.record_type,
      content: req.dns_target,
      proxied: req.proxied,
    },
    mailbox: withMailbox ? mailboxOf(tenant, req, cfg) : null,
    database: { name: tenantDatabaseName(req.subdomain) },
  };
}

/** A live plan: the record's and mailbox's actions. */
export interface LivePlan {
  record: RecordPlan;
  mailbox:
    | (NonNullable<RunPlan['mailbox']> & { action: 'create' | 'unchanged' | 'conflict' | 'unknown'; reason?: string })
    | null;
  database: { name: string; action: 'deferred'; reason: string };
}

/**
 * Reads the plan live: the records at the name, the domain's owner, the mailbox at the panel.
 * @throws DnsUnavailable when Cloudflare cannot be read
 */
export async function livePlan(
  knex: Knex,
  rt: ResolvedRuntime,
  dns: DnsProvider,
  tenant: PlatformTenantRow,
  plan: RunPlan,
): Promise<LivePlan> {
  let record: RecordPlan;
  try {
    record = await planRecord(knex, dns, tenant.id, plan.record!);
  } catch (err) {
    if (err instanceof DnsProviderError) throw new DnsUnavailable(err.message);
    throw err;
  }
  let mailbox: LivePlan['mailbox'] = null;
  if (plan.mailbox) {
    const mb = plan.mailbox;
    const row = await knex('provisioning_mailboxes').whereRaw('lower(address) = lower(?)', [mb.address]).first();
    if (row && Number(row.tenant_id) !== tenant.id)
      mailbox = { ...mb, action: 'conflict', reason: 'The address belongs to another tenant.' };
    else if (row?.created) mailbox = { ...mb, action: 'unchanged' };
    else {
      const creds = await rt.source.load();
      if (!creds.mailPanel) mailbox = { ...mb, action: 'unknown', reason: 'The mail panel is not saved.' };
      else
        try {
          const exists = await rt.panel(creds.mailPanel).mailboxExists(mb.domain, mb.local_part);
          mailbox = { ...mb, action: exists ? 'unchanged' : 'create' };
        } catch (err) {
          mailbox = { ...mb, action: 'unknown', reason: err instanceof Error ? err.message.slice(0, 300) : 'unknown' };
        }
    }
  }
  return {
    record,
    mailbox,
    database: {
      name: plan.database!.name,
      action: 'deferred',
      reason: "The tenant's own database is created by the database pilot (issue 14), not by this run.",
    },
  };
}
