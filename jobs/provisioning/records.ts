import type { Knex } from 'knex';
import type { DnsProvider, DnsRecord } from './contract.js';

/**
 * How the runs of issue 13 (items 6-8) read a subscriber domain's DNS: which records are ours
 * (created by a run: the comment starts with {@link RECORD_MARKER}), which are conflicts (records
 * not ours, never touched) and whether the wanted record is to be created or is already there.
 * Shared by the preview (api) and the dns step (jobs) so both decide alike.
 */

/** Prefix of the comment of every DNS record a run creates (decision: "DNS-managed" = carries it). */
export const RECORD_MARKER = 'isp-backoffice';

/** The comment of a record created for a tenant. */
export const recordComment = (tenantId: number, runId: number) => `${RECORD_MARKER} tenant:${tenantId} run:${runId}`;

/** Whether a record was created by a run of ours. */
export const isOurs = (r: Pick<DnsRecord, 'comment'>) =>
  typeof r.comment === 'string' && r.comment.startsWith(RECORD_MARKER);

/** The record a run wants at a subscriber domain. */
export interface WantedRecord {
  name: string;
  type: 'A' | 'CNAME';
  content: string;
  proxied: boolean;
}

/** The plan of one record: create, unchanged (our identical record is there) or conflict (with reasons). */
export interface RecordPlan extends WantedRecord {
  action: 'create' | 'unchanged' | 'conflict';
  /** our identical record, when unchanged */
  record_id: string | null;
  conflicts: string[];
  existing: { id: string; type: string; content: string; ours: boolean }[];
}

/**
 * Classifies the records found at the wanted name (pure).
 * A wants no CNAME there and no A/AAAA that is not our identical record; CNAME wants nothing else
 * at the name. Records not ours are always conflicts (never modified or deleted).
 */
export function classifyRecords(wanted: WantedRecord, found: DnsRecord[]): RecordPlan {
  const conflicts: string[] = [];
  let mine: DnsRecord | null = null;
  for (const r of found) {
    const same = r.type === wanted.type && r.content.toLowerCase() === wanted.content.toLowerCase();
    if (same && isOurs(r)) {
      mine ??= r;
      continue;
    }
    const clash = wanted.type === 'CNAME' || r.type === 'CNAME' || r.type === 'A' || r.type === 'AAAA';
    if (!clash) continue;
    conflicts.push(
      isOurs(r)
        ? `${r.type} ${r.name} -> ${r.content} (ours, another target) is in the way.`
        : `${r.type} ${r.name} -> ${r.content} exists and is not ours.`,
    );
  }
  const action = conflicts.length ? 'conflict' : mine ? 'unchanged' : 'create';
  return {
    ...wanted,
    action,
    record_id: mine?.id ?? null,
    conflicts,
    existing: found.map((r) => ({ id: r.id, type: r.type, content: r.content, ours: isOurs(r) })),
  };
}

/**
 * Reads the records at the wanted name and classifies them, adding a conflict when another tenant
 * holds the domain (tenant_subscriber_domains not removed or failed, or its primary_domain).
 * @throws DnsProviderError from the provider
 */
export async function planRecord(
  knex: Knex,
  dns: DnsProvider,
  tenantId: number,
  wanted: WantedRecord,
): Promise<RecordPlan> {
  const plan = classifyRecords(wanted, await dns.listRecords({ name: wanted.name }));
  const taken = await domainTakenBy(knex, wanted.name, tenantId);
  if (taken) {
    plan.conflicts.push(`${wanted.name} belongs to another tenant (${taken}).`);
    plan.action = 'conflict';
  }
  return plan;
}

/**
 * The slug of another tenant holding the domain (subscriber domain not removed or failed, or primary
 * domain), else null.
 */
export async function domainTakenBy(knex: Knex | Knex.Transaction, domain: string, tenantId: number) {
  const r = await knex.raw<{ rows: { slug: string }[] }>(
    `SELECT t.slug FROM tenants t
      WHERE t.id <> ? AND (lower(t.primary_domain) = lower(?) OR EXISTS (
        SELECT 1 FROM tenant_subscriber_domains d
         WHERE d.tenant_id = t.id AND lower(d.domain) = lower(?) AND d.status NOT IN ('removed', 'failed')))
      LIMIT 1`,
    [tenantId, domain, domain],
  );
  return r.rows[0]?.slug ?? null;
}
