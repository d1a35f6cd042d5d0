import type { Knex } from 'knex';
import { hashPassword } from '../auth/service.js';
import { Conflict, NotFound, ValidationFailed } from '../errors.js';
import { MODULES, PERMISSIONS, ROLES, ROLE_PERMISSIONS, type ModuleName, type RoleName } from './catalog.js';

/**
 * Platform provisioning of tenants and users, shared by the CLI, the demo seed and the tests
 * (issue 2 §10). Idempotent catalog; everything else refuses duplicates with Conflict.
 */

/** Creates the permissions and the global built-in roles with their permissions; safe to re-run. */
export async function ensureCatalog(knex: Knex): Promise<void> {
  await knex('permissions')
    .insert(PERMISSIONS.map((name) => ({ name })))
    .onConflict('name')
    .ignore();
  const perms: { id: number; name: string }[] = await knex('permissions').select('id', 'name');
  const byName = new Map(perms.map((p) => [p.name, p.id]));
  for (const role of ROLES) {
    let r = await knex('roles').whereNull('tenant_id').where({ name: role }).first();
    if (!r) [r] = await knex('roles').insert({ name: role, tenant_id: null }).returning('*');
    const rows = ROLE_PERMISSIONS[role].map((p) => ({ role_id: r.id, permission_id: byName.get(p)! }));
    if (rows.length) await knex('role_permissions').insert(rows).onConflict(['role_id', 'permission_id']).ignore();
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function checkCredentials(email: string, password: string): void {
  const errors: Record<string, string[]> = {};
  if (!EMAIL.test(email ?? '')) errors.email = ['The email field must be a valid email address.'];
  if (typeof password !== 'string' || password.length < 8)
    errors.password = ['The password field must be at least 8 characters.'];
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
}

async function assertEmailFree(knex: Knex, email: string): Promise<void> {
  if (await knex('users').whereRaw('lower(email) = lower(?)', [email]).first('id'))
    throw new Conflict(`A user with e-mail ${email} already exists.`);
}

/**
 * Creates a platform admin (no tenant; may open bull-board and provisioning).
 * @throws ValidationFailed for a bad e-mail or a password under 8 characters; Conflict when the e-mail exists
 */
export async function createPlatformAdmin(knex: Knex, input: { email: string; password: string; name?: string }) {
  checkCredentials(input.email, input.password);
  await ensureCatalog(knex);
  await assertEmailFree(knex, input.email);
  const [u] = await knex('users')
    .insert({
      name: input.name ?? 'Platform Admin',
      email: input.email.toLowerCase(),
      password_hash: await hashPassword(input.password),
      is_platform_admin: true,
    })
    .returning(['id', 'name', 'email', 'is_platform_admin']);
  return u as { id: number; name: string; email: string; is_platform_admin: boolean };
}

/**
 * Creates a user in a tenant with one built-in role.
 * @param input.tenant tenant slug or id
 * @throws NotFound for an unknown tenant; ValidationFailed for an unknown role or bad credentials; Conflict for a
 *   taken e-mail
 */
export async function createUser(
  knex: Knex,
  input: { tenant: string | number; email: string; password: string; role: string; name?: string },
) {
  checkCredentials(input.email, input.password);
  if (!ROLES.includes(input.role as RoleName))
    throw new ValidationFailed({ role: [`The role must be one of: ${ROLES.join(', ')}.`] });
  await ensureCatalog(knex);
  const tenant = await findTenant(knex, input.tenant);
  await assertEmailFree(knex, input.email);
  return knex.transaction(async (trx) => {
    const [u] = await trx('users')
      .insert({
        tenant_id: tenant.id,
        name: input.name ?? input.email.split('@')[0],
        email: input.email.toLowerCase(),
        password_hash: await hashPassword(input.password),
      })
      .returning(['id', 'tenant_id', 'name', 'email']);
    const role = await trx('roles').whereNull('tenant_id').where({ name: input.role }).first();
    await trx('user_roles').insert({ user_id: u.id, role_id: role.id });
    return { ...u, roles: [input.role] } as {
      id: number;
      tenant_id: number;
      name: string;
      email: string;
      roles: string[];
    };
  });
}

/** Finds a tenant by slug or id. @throws NotFound */
export async function findTenant(knex: Knex, ref: string | number) {
  const q = knex('tenants');
  const t =
    typeof ref === 'number' || /^\d+$/.test(String(ref))
      ? await q.where({ id: Number(ref) }).first()
      : await q.where({ slug: ref }).first();
  if (!t) throw new NotFound(`Tenant ${ref}`);
  return t as { id: number; slug: string; name: string; demo_mode: boolean; modules: string[] };
}

/** The tenant fields of createTenant (issue 13 item 2 added modules, timezone and primary domain). */
export interface TenantRecordInput {
  slug: string;
  name: string;
  demo?: boolean;
  /** the modules switched on (default: all of MODULES) */
  modules?: readonly ModuleName[];
  /** IANA zone (default Asia/Jakarta; a zone PostgreSQL does not list fails the check, 23514) */
  timezone?: string;
  /** the tenant's own domain, unique ignoring case */
  primaryDomain?: string | null;
}

/**
 * Creates a tenant without users (the platform API's POST /api/platform/tenants without `admin`).
 * @throws ValidationFailed for a bad slug (a-z, 0-9, '-', 2-63 chars) or an empty name; Conflict for a
 *   taken slug or primary domain
 */
export async function createTenantRecord(knex: Knex, input: TenantRecordInput, admin?: { email: string }) {
  if (!/^[a-z0-9][a-z0-9-]{1,62}$/.test(input.slug ?? ''))
    throw new ValidationFailed({ slug: ['The slug may contain a-z, 0-9 and dashes (2-63 characters).'] });
  if (!input.name?.trim()) throw new ValidationFailed({ name: ['The name field is required.'] });
  await ensureCatalog(knex);
  if (await knex('tenants').where({ slug: input.slug }).first('id'))
    throw new Conflict(`Tenant ${input.slug} already exists.`);
  const domain = input.primaryDomain?.toLowerCase() ?? null;
  if (domain && (await knex('tenants').whereRaw('lower(primary_domain) = ?', [domain]).first('id')))
    throw new Conflict(`Another tenant has the primary domain ${domain}.`);
  if (admin) await assertEmailFree(knex, admin.email);
  const modules = input.modules ? MODULES.filter((m) => input.modules!.includes(m)) : [...MODULES];
  const [t] = await knex('tenants')
    .insert({
      slug: input.slug,
      name: input.name.trim(),
      demo_mode: !!input.demo,
      modules: JSON.stringify(modules),
      ...(input.timezone ? { timezone: input.timezone } : {}),
      ...(domain ? { primary_domain: domain } : {}),
    })
    .returning(['id', 'slug', 'name', 'demo_mode', 'modules']);
  return t as { id: number; slug: string; name: string; demo_mode: boolean; modules: string[] };
}

/**
 * Creates a tenant and its first Super Admin user.
 * @throws ValidationFailed for a bad slug (a-z, 0-9, '-', 2-63 chars); Conflict for a taken slug or e-mail
 */
export async function createTenant(
  knex: Knex,
  input: TenantRecordInput & { adminEmail: string; adminPassword: string; adminName?: string },
) {
  checkCredentials(input.adminEmail, input.adminPassword);
  const t = await createTenantRecord(knex, input, { email: input.adminEmail });
  const admin = await createUser(knex, {
    tenant: t.id,
    email: input.adminEmail,
    password: input.adminPassword,
    role: 'Super Admin',
    name: input.adminName ?? `${input.name} Admin`,
  });
  return { tenant: t, admin };
}

/** Switches a tenant's demo mode. @throws NotFound */
export async function setDemoMode(knex: Knex, ref: string | number, on: boolean) {
  const t = await findTenant(knex, ref);
  const [u] = await knex('tenants')
    .where({ id: t.id })
    .update({ demo_mode: on, updated_at: knex.fn.now() })
    .returning(['id', 'slug', 'name', 'demo_mode']);
  return u as { id: number; slug: string; name: string; demo_mode: boolean };
}

/**
 * Switches a tenant module on or off (DESIGN.md §10 "tenant modules"): routes with `module` answer
 * 403 module_disabled while it is off. Stored per tenant in tenants.modules.
 * @param ref tenant slug or id
 * @returns the tenant's modules after the change, in catalogue order
 * @throws NotFound for an unknown tenant
 */
export async function setModule(
  knex: Knex,
  ref: string | number,
  module: ModuleName,
  on: boolean,
): Promise<ModuleName[]> {
  const t = await findTenant(knex, ref);
  const current = new Set<string>(t.modules);
  if (on) current.add(module);
  else current.delete(module);
  const modules = MODULES.filter((m) => current.has(m));
  await knex('tenants')
    .where({ id: t.id })
    .update({ modules: JSON.stringify(modules), updated_at: knex.fn.now() });
  return modules;
}
