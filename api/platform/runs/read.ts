import type { Knex } from 'knex';
import type { AppContext } from '../../context.js';
import { open } from '../../../lib/crypto.js';
import { systemClock } from '../../../lib/clock.js';
import { DnsProviderError, type DnsProvider } from '../../../jobs/provisioning/contract.js';
import { domainTakenBy, isOurs } from '../../../jobs/provisioning/records.js';
import { tenantDatabaseName } from '../../../jobs/provisioning/runtime.js';
import { mailboxPasswordAad, type RunRequest, type RunRow } from '../../../jobs/provisioning/steps.js';
import { recordPlatformAudit } from '../audit.js';
import { resolvePlatformTenant, type PlatformTenantRow } from '../tenant-param.js';
import { platformActorOf } from '../tenants-routes.js';
import { DnsUnavailable, livePlan, normalizeRequest, runPlanOf, zoneOf } from './request.js';
import { activeDomain, cleanupRefusal, runView, runsDeps } from './service.js';
import { tenantDatabaseSummary } from '../tenant-db/runs.js';

/**
 * The read side of tenant provisioning (issue 13 item 6): the tenant's provisioning state, the
 * preview, drafts, the regenerate and change previews. Nothing here writes DNS or the panel.
 */

/** How long a provisioned mailbox's initial password is shown (once), in ms. */
export const PASSWORD_SHOWN_MS = 15 * 60_000;

/**
 * GET .../provisioning: the tenant's database (issue 14: its state, name and last 20 runs), subscriber
 * domains, mailboxes (a new one's initial password once, within 15 minutes), drafts and the last 20
 * runs. Exported for issue 14.
 * @param appKey opens a new mailbox's initial password (absent: never shown)
 * @param now the clock's now
 */
export async function provisioningState(knex: Knex, tenant: PlatformTenantRow, appKey: Buffer | undefined, now: Date) {
  const domains = await knex('tenant_subscriber_domains').where({ tenant_id: tenant.id }).orderBy('id', 'desc');
  const mailboxes = await knex('provisioning_mailboxes').where({ tenant_id: tenant.id }).orderBy('id');
  const drafts = await knex('provisioning_drafts').where({ tenant_id: tenant.id }).orderBy('id', 'desc').limit(20);
  const runs = await knex('provisioning_runs').where({ tenant_id: tenant.id }).orderBy('id', 'desc').limit(20);
  const tdb = await tenantDatabaseSummary(knex, tenant.id);
  const active = domains.find((d) => d.status === 'active');
  const shown: { id: number; password: string }[] = [];
  for (const m of mailboxes)
    if (
      appKey &&
      m.created &&
      m.password_enc &&
      now.getTime() - new Date(m.created_at).getTime() <= PASSWORD_SHOWN_MS
    ) {
      const n = await knex('provisioning_mailboxes')
        .where({ id: m.id, password_enc: m.password_enc })
        .update({ password_enc: null });
      if (n) shown.push({ id: Number(m.id), password: open(appKey, m.password_enc, mailboxPasswordAad(m.address)) });
    }
  return {
    tenant: { id: tenant.id, slug: tenant.slug, is_master: tenant.is_master, primary_domain: tenant.primary_domain },
    // issue 14: the tenant database's state (no secret) and its last 20 runs
    database: {
      ...tdb.database,
      name:
        tdb.database.database_name ??
        tenantDatabaseName(
          String((runs.find((r) => r.kind === 'provision')?.request as RunRequest)?.subdomain ?? tenant.slug),
        ),
      runs: tdb.runs,
    },
    domains: domains.map((d) => ({
      id: Number(d.id),
      domain: d.domain,
      status: d.status,
      record_type: d.record_type,
      dns_target: d.dns_target,
      proxied: d.proxied,
      dns_managed: (d.dns_record_ids as unknown[]).length > 0,
      dns_record_ids: d.dns_record_ids,
      verified_at: d.verified_at,
      replaced_by_id: d.replaced_by_id === null ? null : Number(d.replaced_by_id),
      error: d.error,
      created_at: d.created_at,
      updated_at: d.updated_at,
    })),
    active_domain: active?.domain ?? null,
    mailbox: mailboxes.map((m) => ({
      id: Number(m.id),
      address: m.address,
      quota_mb: m.quota_mb,
      created: m.created,
      created_at: m.created_at,
      initial_password: shown.find((s) => s.id === Number(m.id))?.password ?? null,
    })),
    drafts: drafts.map((d) => ({
      id: Number(d.id),
      request: d.request,
      created_by: d.created_by,
      created_at: d.created_at,
    })),
    runs: runs.map((r) => runView({ ...r, id: Number(r.id) } as RunRow & Record<string, unknown>)),
  };
}

/** GET .../provisioning for a `{tenant}` path segment. */
export async function getProvisioning(ctx: AppContext, ref: string) {
  const tenant = await resolvePlatformTenant(ctx.deps.knex, ref);
  return provisioningState(ctx.deps.knex, tenant, ctx.deps.config.appKey, systemClock.now());
}

/**
 * POST .../preview: the plan read live (record, mailbox, database name), saving nothing.
 * @throws NotFound, ValidationFailed (fields), DnsUnavailable (422: Cloudflare could not be read)
 */
export async function preview(ctx: AppContext, ref: string, body: Partial<RunRequest>) {
  const knex = ctx.deps.knex;
  const tenant = await resolvePlatformTenant(knex, ref);
  const { rt, cfg } = runsDeps(ctx);
  const { dns, zone } = await zoneOf(rt);
  const request = normalizeRequest(tenant, body, zone, cfg);
  const live = await livePlan(knex, rt, dns, tenant, runPlanOf(tenant, request, cfg, true));
  const active = await activeDomain(knex, tenant.id);
  return { tenant: tenant.slug, zone, request, ...live, active_domain: active?.domain ?? null };
}

/**
 * POST .../draft: saves the request (fields checked by the schema; defaults filled in when it runs).
 * @returns the draft (201); runs nothing
 */
export async function saveDraft(ctx: AppContext, ref: string, body: Partial<RunRequest>) {
  const knex = ctx.deps.knex;
  const tenant = await resolvePlatformTenant(knex, ref);
  const actor = platformActorOf(ctx);
  return knex.transaction(async (trx) => {
    const [row] = await trx('provisioning_drafts')
      .insert({ tenant_id: tenant.id, request: JSON.stringify(body), created_by: actor.userId })
      .returning('*');
    await recordPlatformAudit(trx, {
      userId: actor.userId,
      action: 'platform.provisioning_draft_create',
      subject: { type: 'provisioning_draft', id: Number(row.id) },
      after: { tenant: tenant.slug, request: body },
      ip: actor.ip,
    });
    return { id: Number(row.id), tenant_id: tenant.id, request: row.request, created_at: row.created_at };
  });
}

/** Records at a name, by type (TXT, A, CNAME, other), each with `ours`. */
async function recordsAt(dns: DnsProvider, name: string) {
  try {
    const found = await dns.listRecords({ name });
    const of = (t: string) =>
      found
        .filter((r) => r.type === t)
        .map((r) => ({ id: r.id, content: r.content, proxied: r.proxied, ours: isOurs(r) }));
    return { TXT: of('TXT'), A: of('A'), CNAME: of('CNAME') };
  } catch (err) {
    if (err instanceof DnsProviderError) throw new DnsUnavailable(err.message);
    throw err;
  }
}

/**
 * POST .../subscriber-domain/regenerate-preview: `{slug}.{zone}`, else `{slug}-2.{zone}` ... up to
 * -20, the first free of other tenants and of DNS records (the tenant's own active domain counts
 * as free). Saves nothing.
 */
export async function regeneratePreview(ctx: AppContext, ref: string, body: { domain?: string }) {
  const knex = ctx.deps.knex;
  const tenant = await resolvePlatformTenant(knex, ref);
  const { rt, cfg } = runsDeps(ctx);
  const { dns, zone } = await zoneOf(rt);
  const base = normalizeRequest(tenant, { domain: body.domain, dns_target: '127.0.0.1' }, zone, cfg).domain;
  const active = await activeDomain(knex, tenant.id);
  const checked: { domain: string; free: boolean; reason: string | null }[] = [];
  for (let n = 1; n <= 20; n++) {
    const subdomain = n === 1 ? tenant.slug : `${tenant.slug.slice(0, 60)}-${n}`;
    const domain = `${subdomain}.${base}`;
    let reason: string | null = null;
    const owner = await domainTakenBy(knex, domain, tenant.id);
    if (owner) reason = 'used by another tenant';
    else if (active?.domain !== domain) {
      const at = await recordsAt(dns, domain);
      if (at.A.length + at.CNAME.length + at.TXT.length > 0) reason = 'DNS records exist';
    }
    checked.push({ domain, free: !reason, reason });
    if (!reason) return { subdomain, domain, zone, free: true, checked };
  }
  return { subdomain: null, domain: null, zone, free: false, checked };
}

/**
 * POST .../subscriber-domain/change-preview: the active (old) and the requested (new) domain, the
 * conflicts at the new one, the TXT/A/CNAME records at both, and the cleanup candidates (replaced
 * domains that qualify now; the old one qualifies after the change). Saves nothing.
 */
export async function changePreview(ctx: AppContext, ref: string, body: Partial<RunRequest>) {
  const knex = ctx.deps.knex;
  const tenant = await resolvePlatformTenant(knex, ref);
  const { rt, cfg } = runsDeps(ctx);
  const { dns, zone } = await zoneOf(rt);
  const request = normalizeRequest(tenant, body, zone, cfg);
  const live = await livePlan(knex, rt, dns, tenant, runPlanOf(tenant, request, cfg, false));
  const old = await activeDomain(knex, tenant.id);
  const replaced = await knex('tenant_subscriber_domains').where({ tenant_id: tenant.id, status: 'replaced' });
  const candidates: string[] = [];
  for (const r of replaced) if (!(await cleanupRefusal(knex, tenant, r))) candidates.push(r.domain);
  const oldManaged = old && (old.dns_record_ids as unknown[]).length > 0;
  const oldPrimary = old && tenant.primary_domain?.toLowerCase() === String(old.domain).toLowerCase();
  return {
    old: old ? { domain: old.domain, records: await recordsAt(dns, old.domain), dns_managed: !!oldManaged } : null,
    new: { domain: live.record.name, records: await recordsAt(dns, live.record.name), action: live.record.action },
    request,
    conflicts: live.record.conflicts,
    cleanup_candidates: candidates,
    old_cleanup_after_change: !!old && !!oldManaged && !oldPrimary,
  };
}
