import type { Knex } from 'knex';
import { randomBytes } from 'node:crypto';
import { open, seal } from '../../lib/crypto.js';
import { PanelError } from '../adapters/mail-panel/types.js';
import { DnsProviderError, type DnsProvider } from './contract.js';
import { classifyRecords, domainTakenBy, isOurs, recordComment, type WantedRecord } from './records.js';
import type { ResolvedRuntime } from './runtime.js';

/**
 * The steps of a provisioning run (issue 13 items 7-8): `dns` (provision and change: write the
 * subscriber domain's record, read it back, then make the domain active; cleanup: delete our old
 * records) and `mailbox` (provision: the tenant's mailbox at the panel). Every step re-reads the
 * state it acts on, so a retried or resumed step never does its side effect twice; the unique keys
 * (one record per zone, name and type we look up before creating; provisioning_mailboxes.address)
 * guard the rest. Steps throw StepError: `retry` for network errors, 5xx and 429, else `permanent`.
 */

/** The normalized request of a provision or change run (issue 13 item 6). */
export interface RunRequest {
  subdomain: string;
  domain: string;
  dns_target: string;
  record_type: 'A' | 'CNAME';
  proxied: boolean;
  mailbox_local_part: string;
  mailbox_quota_mb: number;
}

/** What a run plans to do (saved on the run). */
export interface RunPlan {
  record?: WantedRecord;
  mailbox?: { address: string; local_part: string; domain: string; quota_mb: number } | null;
  database?: { name: string };
  cleanup?: { domain_id: number; domain: string };
}

/** A provisioning_runs row. */
export interface RunRow {
  id: number;
  tenant_id: number;
  kind: 'provision' | 'change' | 'cleanup';
  status: 'queued' | 'running' | 'succeeded' | 'partial' | 'failed';
  phrase: string;
  request: Record<string, unknown>;
  plan: RunPlan;
  steps: Record<string, { status: string; result?: unknown; error?: string | null; attempts?: number }>;
  resumes: number;
}

/** A step's failure: `retry` (network, 5xx, 429) or `permanent`. The message never holds a secret. */
export class StepError extends Error {
  constructor(
    readonly kind: 'retry' | 'permanent',
    message: string,
  ) {
    super(message);
    this.name = 'StepError';
  }
}

/** Whether an error is worth a retry (issue 13 item 8: only network errors, 5xx and 429). */
export function isRetryable(err: unknown): boolean {
  if (err instanceof StepError || err instanceof DnsProviderError) return err.kind === 'retry';
  if (err instanceof PanelError) return err.kind === 'transient' || err.kind === 'rate_limited';
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^(ECONN|ETIMEDOUT|EAI_AGAIN|ENOTFOUND|EPIPE|UND_ERR)/.test(code);
}

/** The sealing context of a provisioned mailbox's initial password. */
export const mailboxPasswordAad = (address: string) => `provisioning_mailboxes:${address.toLowerCase()}`;

/** A generated mailbox password: 20 characters of letters and digits. */
export function generateMailboxPassword(): string {
  return randomBytes(15).toString('base64').replace(/[+/]/g, 'x');
}

async function dnsOf(rt: ResolvedRuntime): Promise<DnsProvider> {
  const creds = await rt.source.load();
  if (!creds.cloudflare) throw new StepError('permanent', 'The Cloudflare credentials are not saved.');
  return rt.dns(creds.cloudflare);
}

/**
 * Provision and change: makes the subscriber domain's record exist (ours), reads it back, then
 * makes the domain `active` and any other active domain of the tenant `replaced` (its DNS kept).
 * @returns `{domain, domain_id, record_id, action}` (action create or unchanged)
 * @throws StepError (permanent: conflicts, another tenant's domain), DnsProviderError
 */
export async function ensureDomainStep(knex: Knex, rt: ResolvedRuntime, run: RunRow, now: Date) {
  const wanted = run.plan.record!;
  const dns = await dnsOf(rt);
  const taken = await domainTakenBy(knex, wanted.name, run.tenant_id);
  if (taken) throw new StepError('permanent', `${wanted.name} belongs to another tenant.`);
  const domainId = await knex.transaction(async (trx) => {
    const row = await trx('tenant_subscriber_domains')
      .where({ tenant_id: run.tenant_id })
      .whereRaw('lower(domain) = lower(?)', [wanted.name])
      .whereNotIn('status', ['removed', 'failed'])
      .forUpdate()
      .first('id');
    if (row) return Number(row.id);
    const [ins] = await trx('tenant_subscriber_domains')
      .insert({
        tenant_id: run.tenant_id,
        domain: wanted.name,
        status: 'pending',
        record_type: wanted.type,
        dns_target: wanted.content,
        proxied: wanted.proxied,
        run_id: run.id,
      })
      .returning('id');
    return Number(ins.id);
  });
  const plan = classifyRecords(wanted, await dns.listRecords({ name: wanted.name }));
  if (plan.action === 'conflict')
    throw new StepError('permanent', `Conflict at ${wanted.name}: ${plan.conflicts.join(' ')}`);
  let recordId = plan.record_id;
  if (!recordId) {
    const created = await dns.createRecord({ ...wanted, comment: recordComment(run.tenant_id, run.id) });
    recordId = created.id;
  }
  const back = await dns.listRecords({ name: wanted.name, type: wanted.type });
  if (!back.some((r) => r.id === recordId && isOurs(r) && r.content.toLowerCase() === wanted.content.toLowerCase()))
    throw new StepError('retry', `The record ${wanted.name} did not read back yet.`);
  await knex.transaction(async (trx) => {
    await trx('tenant_subscriber_domains')
      .where({ tenant_id: run.tenant_id, status: 'active' })
      .whereNot({ id: domainId })
      .update({ status: 'replaced', replaced_by_id: domainId, updated_at: now });
    await trx('tenant_subscriber_domains')
      .where({ id: domainId })
      .update({
        status: 'active',
        dns_record_ids: JSON.stringify([recordId]),
        verified_at: now,
        error: null,
        updated_at: now,
      });
  });
  return {
    domain: wanted.name,
    domain_id: domainId,
    record_id: recordId,
    action: plan.record_id ? 'unchanged' : 'create',
  };
}

/**
 * Marks the run's pending domain `failed` (the dns step gave up): the previous active domain stays.
 * @param reason the step's error (no secret)
 */
export async function failPendingDomain(knex: Knex, run: RunRow, reason: string, now: Date): Promise<void> {
  if (!run.plan.record) return;
  await knex('tenant_subscriber_domains')
    .where({ tenant_id: run.tenant_id, status: 'pending' })
    .whereRaw('lower(domain) = lower(?)', [run.plan.record.name])
    .update({ status: 'failed', error: reason.slice(0, 500), updated_at: now });
}

/**
 * Cleanup: deletes exactly our records of a replaced domain (ids it recorded, still carrying our
 * marker), then marks it `removed`. Re-checks the state rules (item 7) first.
 * @throws StepError permanent when the domain no longer qualifies
 */
export async function cleanupStep(knex: Knex, rt: ResolvedRuntime, run: RunRow, now: Date) {
  const { domain_id } = run.plan.cleanup!;
  const row = await knex('tenant_subscriber_domains').where({ id: domain_id, tenant_id: run.tenant_id }).first();
  if (!row) throw new StepError('permanent', 'The old domain is gone.');
  if (row.status === 'removed') return { domain: row.domain, deleted: [] as string[], action: 'unchanged' };
  if (row.status !== 'replaced') throw new StepError('permanent', `The old domain is ${row.status}, not replaced.`);
  const ids = new Set<string>((row.dns_record_ids as string[]) ?? []);
  const dns = await dnsOf(rt);
  const deleted: string[] = [];
  for (const r of await dns.listRecords({ name: row.domain })) {
    if (!ids.has(r.id) || !isOurs(r)) continue;
    await dns.deleteRecord(r.id);
    deleted.push(r.id);
  }
  await knex('tenant_subscriber_domains')
    .where({ id: domain_id })
    .update({ status: 'removed', dns_record_ids: JSON.stringify([]), updated_at: now });
  return { domain: row.domain as string, deleted, action: 'delete' };
}

/**
 * Provision: the tenant's mailbox at the panel. The row (address unique, the password sealed) is
 * written before the panel call, so a retry reuses the same password and finds the mailbox there.
 * @param appKey seals the initial password
 * @returns `{address, action}` (create or unchanged)
 * @throws StepError permanent when the address belongs to another tenant, PanelError from the panel
 */
export async function mailboxStep(knex: Knex, rt: ResolvedRuntime, appKey: Buffer, run: RunRow, now: Date) {
  const mb = run.plan.mailbox!;
  const creds = await rt.source.load();
  if (!creds.mailPanel) throw new StepError('permanent', 'The mail panel credentials are not saved.');
  const panel = rt.panel(creds.mailPanel);
  const password = generateMailboxPassword();
  await knex('provisioning_mailboxes')
    .insert({
      tenant_id: run.tenant_id,
      address: mb.address,
      quota_mb: mb.quota_mb,
      created: false,
      password_enc: seal(appKey, password, mailboxPasswordAad(mb.address)),
      run_id: run.id,
      created_at: now,
    })
    .onConflict(knex.raw('(lower(address))'))
    .ignore();
  const row = await knex('provisioning_mailboxes').whereRaw('lower(address) = lower(?)', [mb.address]).first();
  if (Number(row.tenant_id) !== run.tenant_id)
    throw new StepError('permanent', `${mb.address} belongs to another tenant.`);
  if (row.created) return { address: mb.address, action: 'unchanged' };
  if (await panel.mailboxExists(mb.domain, mb.local_part)) {
    // there already (a retry after the panel created it, or made by hand): adopted, its password unknown to us
    const mine = Number(row.run_id) === run.id;
    await knex('provisioning_mailboxes')
      .where({ id: row.id })
      .update({ created: true, ...(mine ? {} : { password_enc: null }) });
    return { address: mb.address, action: 'unchanged' };
  }
  const pw = row.password_enc ? open(appKey, row.password_enc, mailboxPasswordAad(mb.address)) : password;
  try {
    await panel.createMailbox({
      domain: mb.domain,
      local_part: mb.local_part,
      password: pw,
      quota: mb.quota_mb === 0 ? null : `${mb.quota_mb}M`,
    });
  } catch (err) {
    if (!(err instanceof PanelError && err.kind === 'exists')) throw err;
  }
  await knex('provisioning_mailboxes')
    .where({ id: row.id })
    .update({ created: true, password_enc: seal(appKey, pw, mailboxPasswordAad(mb.address)) });
  return { address: mb.address, action: 'create' };
}
