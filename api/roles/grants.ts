import type { Knex } from 'knex';
import { Role } from '../../db/models/index.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { Forbidden, ValidationFailed, type FieldErrors } from '../errors.js';
import { PERMISSIONS } from '../tenants/catalog.js';

/**
 * The rules of who may grant what (issue 8 item 1; DESIGN.md §10 "permissions"), shared by
 * /api/users and /api/roles:
 * - nobody grants a permission they lack, to a role or through roles to a user;
 * - only a Super Admin grants the Super Admin role;
 * - nobody changes a user who holds a permission they lack (a password reset would be a way in);
 * - user and role writes of a tenant run one at a time (lockAccess), so "the last active Super
 *   Admin stays" and "a role in use stays" hold under concurrent requests.
 */

/** The built-in role that holds every permission. */
export const SUPER_ADMIN = 'Super Admin';

/** Who acts on users and roles: the login user, its roles and permissions, the caller's IP. */
export interface AccessActor {
  userId: number | null;
  /** Role names (ctx.state.auth.roles). */
  roles: readonly string[];
  /** Effective permissions (ctx.state.auth.permissions; a Super Admin holds all). */
  permissions: readonly string[];
  ip?: string | null;
}

/** A role a tenant can see: a built-in one (tenant_id null) or one of its own. */
export interface VisibleRole {
  id: number;
  name: string;
  is_builtin: boolean;
}

/**
 * Serialises the user and role writes of one tenant: a FOR NO KEY UPDATE lock on the tenant row,
 * held until the transaction ends. It does not block inserts elsewhere (their foreign keys take
 * FOR KEY SHARE, which this lock does not conflict with).
 */
export async function lockAccess(trx: Knex.Transaction, tenantId: number): Promise<void> {
  await trx('tenants').where({ id: tenantId }).forNoKeyUpdate().first('id');
}

/**
 * Roles the scope's tenant can see: the built-in ones (tenant_id null, shared by every tenant) and
 * its own. roles is a platform-level table (built-ins have no tenant), so this is the one place that
 * filters it by hand: `tenant_id IS NULL OR tenant_id = <tenant>`.
 */
export function visibleRoles(scope: TenantScope, trx?: Knex.Transaction) {
  return Role.query(trx ?? (scope.knex as Knex)).where((w) =>
    w.whereNull('roles.tenant_id').orWhere('roles.tenant_id', scope.tenantId),
  );
}

/**
 * Permission names per role id (sorted). The built-in Super Admin holds the whole catalogue,
 * whatever role_permissions says (as in rolesAndPermissions).
 */
export async function permissionsOfRoles(
  knex: Knex | Knex.Transaction,
  roles: readonly { id: number; name: string; is_builtin: boolean }[],
): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>(roles.map((r) => [r.id, []]));
  if (!roles.length) return out;
  const rows: { role_id: number; name: string }[] = await knex('role_permissions as rp')
    .join('permissions as p', 'p.id', 'rp.permission_id')
    .whereIn(
      'rp.role_id',
      roles.map((r) => r.id),
    )
    .select('rp.role_id', 'p.name');
  for (const r of rows) out.get(r.role_id)!.push(r.name);
  for (const r of roles) {
    if (r.is_builtin && r.name === SUPER_ADMIN) out.set(r.id, [...PERMISSIONS]);
    out.get(r.id)!.sort();
  }
  return out;
}

/**
 * Resolves the `roles` of a user body: each entry a role id (integer) or a role name (string, any
 * case) of a built-in role or one of the tenant's. Duplicates collapse.
 * @returns the roles in the order given
 * @throws ValidationFailed with `roles.<i>` for an entry that is not such a role (a foreign tenant's
 *   role id included)
 */
export async function resolveRoles(
  scope: TenantScope,
  trx: Knex.Transaction,
  refs: readonly (string | number)[],
): Promise<VisibleRole[]> {
  const all = (await visibleRoles(scope, trx).select('id', 'name', 'tenant_id')).map((r) => ({
    id: r.id,
    name: r.name,
    is_builtin: r.tenant_id === null,
  }));
  const errors: FieldErrors = {};
  const found = new Map<number, VisibleRole>();
  refs.forEach((ref, i) => {
    const role =
      typeof ref === 'number'
        ? all.find((r) => r.id === ref)
        : all.find((r) => r.name.toLowerCase() === ref.trim().toLowerCase());
    if (role) found.set(role.id, role);
    else errors[`roles.${i}`] = ['The selected role is invalid.'];
  });
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return [...found.values()];
}

/**
 * Refuses to grant permissions the actor lacks.
 * @param permissions what the grant would give (to a role, or a user through roles)
 * @throws Forbidden (403 FORBIDDEN) naming the permissions the actor lacks
 */
export function assertCanGrant(actor: AccessActor, permissions: Iterable<string>): void {
  const held = new Set(actor.permissions);
  const missing = [...new Set(permissions)].filter((p) => !held.has(p)).sort();
  if (missing.length) {
    throw new Forbidden(`You cannot grant permissions you do not hold: ${missing.join(', ')}.`);
  }
}

/**
 * Refuses to give roles the actor may not give: the Super Admin role unless the actor is a Super
 * Admin, and any role with a permission the actor lacks.
 * @param added the roles being given (not those the user already holds)
 * @param perms permissionsOfRoles() of (at least) these roles
 * @throws Forbidden (403 FORBIDDEN)
 */
export function assertCanGiveRoles(
  actor: AccessActor,
  added: readonly VisibleRole[],
  perms: Map<number, string[]>,
): void {
  if (added.some((r) => r.is_builtin && r.name === SUPER_ADMIN) && !actor.roles.includes(SUPER_ADMIN)) {
    throw new Forbidden('Only a Super Admin can grant the Super Admin role.');
  }
  assertCanGrant(
    actor,
    added.flatMap((r) => perms.get(r.id) ?? []),
  );
}
