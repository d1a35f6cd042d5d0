import type { Knex } from 'knex';
import { Conflict, ValidationFailed } from '../errors.js';
import { createTenant, createTenantRecord } from '../tenants/service.js';
import type { ModuleName } from '../tenants/catalog.js';
import { recordPlatformAudit } from './audit.js';
import { resolvePlatformTenant, type PlatformTenantRow } from './tenant-param.js';

/** Who acts (a platform admin) and from where, for platform_audit_log. */
export interface PlatformActor {
  /** null: the system (seed, CLI) */
  userId: number | null;
  ip?: string | null;
}

/** Fields of POST/PUT /api/platform/tenants (validated by api/platform/tenants-schemas.ts). */
export interface PlatformTenantInput {
  slug?: string;
  name?: string;
  demo_mode?: boolean;
  /** the platform's own tenant; at most one (409 when another is) */
  is_master?: boolean;
  modules?: ModuleName[];
  timezone?: string;
  primary_domain?: string | null;
  admin?: { email: string; password: string; name?: string };
}

const COLUMNS = [
  'id',
  'slug',
  'name',
  'demo_mode',
  'is_master',
  'modules',
  'timezone',
  'primary_domain',
  'created_at',
  'updated_at',
];

/** The audit summary of a tenant (no user data). */
const summary = (t: Partial<PlatformTenantRow>) => ({
  slug: t.slug,
  name: t.name,
  demo_mode: t.demo_mode,
  is_master: t.is_master,
  modules: t.modules,
  timezone: t.timezone,
  primary_domain: t.primary_domain,
});

/** @throws ValidationFailed when PostgreSQL does not list the zone (DESIGN.md §10 "time zone") */
async function assertTimeZone(knex: Knex, tz: string | undefined): Promise<void> {
  if (tz === undefined) return;
  const { rows } = await knex.raw('SELECT is_iana_time_zone(?) AS ok', [tz]);
  if (!rows[0]?.ok)
    throw new ValidationFailed({ timezone: ['The timezone must be an IANA zone name, e.g. Asia/Jakarta.'] });
}

/**
 * Makes `id` the master tenant when asked (issues 13/14: at most one master).
 * @throws Conflict (409) when another tenant is the master
 */
async function setMaster(trx: Knex, id: number, isMaster: boolean | undefined): Promise<void> {
  if (isMaster === undefined) return;
  if (isMaster && (await trx('tenants').where({ is_master: true }).whereNot({ id }).first('id')))
    throw new Conflict('Another tenant is the master tenant.');
  await trx('tenants').where({ id }).update({ is_master: isMaster });
}

/** GET /api/platform/tenants: every tenant, by id (a platform has few tenants). */
export async function listPlatformTenants(knex: Knex) {
  const rows = (await knex('tenants').select(COLUMNS).orderBy('id')) as PlatformTenantRow[];
  return { data: rows, meta: { total: rows.length } };
}

/** GET /api/platform/tenants/{tenant}. @throws NotFound */
export async function platformTenant(knex: Knex, ref: string): Promise<PlatformTenantRow> {
  return resolvePlatformTenant(knex, ref);
}

/**
 * POST /api/platform/tenants (issue 13 item 2): the tenant, its optional first Super Admin, and a
 * platform audit entry, in one transaction.
 * @throws ValidationFailed (bad zone, ...); Conflict (409) for a taken slug, primary domain or admin e-mail
 */
export async function createPlatformTenant(
  knex: Knex,
  actor: PlatformActor,
  input: PlatformTenantInput,
): Promise<PlatformTenantRow> {
  await assertTimeZone(knex, input.timezone);
  const id = await knex.transaction(async (trx) => {
    const base = {
      slug: input.slug!,
      name: input.name!,
      demo: input.demo_mode,
      modules: input.modules,
      timezone: input.timezone,
      primaryDomain: input.primary_domain,
    };
    const t = input.admin
      ? (
          await createTenant(trx, {
            ...base,
            adminEmail: input.admin.email,
            adminPassword: input.admin.password,
            adminName: input.admin.name,
          })
        ).tenant
      : await createTenantRecord(trx, base);
    await setMaster(trx, t.id, input.is_master);
    const row = await resolvePlatformTenant(trx, t.id);
    await recordPlatformAudit(trx, {
      userId: actor.userId,
      action: 'platform.tenant_create',
      subject: { type: 'tenant', id: t.id },
      after: { ...summary(row), with_admin: !!input.admin },
      ip: actor.ip,
    });
    return t.id;
  });
  return resolvePlatformTenant(knex, id);
}

/**
 * PUT /api/platform/tenants/{tenant}: changes the given fields (never the slug), audited.
 * @throws NotFound; ValidationFailed (bad zone); Conflict for a primary domain of another tenant
 */
export async function updatePlatformTenant(
  knex: Knex,
  actor: PlatformActor,
  ref: string,
  input: PlatformTenantInput,
): Promise<PlatformTenantRow> {
  await assertTimeZone(knex, input.timezone);
  return knex.transaction(async (trx) => {
    const before = await resolvePlatformTenant(trx, ref, { forUpdate: true });
    const patch: Record<string, unknown> = {};
    if (input.name !== undefined) patch.name = input.name.trim();
    if (input.demo_mode !== undefined) patch.demo_mode = input.demo_mode;
    if (input.modules !== undefined) patch.modules = JSON.stringify(input.modules);
    if (input.timezone !== undefined) patch.timezone = input.timezone;
    if (input.primary_domain !== undefined) {
      const domain = input.primary_domain?.toLowerCase() ?? null;
      if (
        domain &&
        (await trx('tenants').whereRaw('lower(primary_domain) = ?', [domain]).whereNot({ id: before.id }).first('id'))
      )
        throw new Conflict(`Another tenant has the primary domain ${domain}.`);
      patch.primary_domain = domain;
    }
    await setMaster(trx, before.id, input.is_master);
    if (patch.name === '') throw new ValidationFailed({ name: ['The name field is required.'] });
    await trx('tenants')
      .where({ id: before.id })
      .update({ ...patch, updated_at: trx.fn.now() });
    const after = await resolvePlatformTenant(trx, before.id);
    await recordPlatformAudit(trx, {
      userId: actor.userId,
      action: 'platform.tenant_update',
      subject: { type: 'tenant', id: before.id },
      before: summary(before),
      after: summary(after),
      ip: actor.ip,
    });
    return after;
  });
}
