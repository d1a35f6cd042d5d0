import type { Knex } from 'knex';
import { Role } from '../../db/models/index.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { recordAudit } from '../audit-logs/service.js';
import { Conflict, Forbidden, NotFound, ValidationFailed, type FieldErrors } from '../errors.js';
import { ilikeContains, type PageParams } from '../shared/list.js';
import { envelope, iso } from '../shared/schemas.js';
import { isPermission } from '../tenants/catalog.js';
import { assertCanGrant, lockAccess, permissionsOfRoles, visibleRoles, type AccessActor } from './grants.js';

/**
 * Roles of a tenant (issue 8 item 1; DESIGN.md §5, §10 "permissions"): the built-in roles (read-only,
 * shared by every tenant) and the tenant's custom roles with a permission list from the catalogue.
 * Nobody grants a permission they lack; a role a user holds cannot be deleted. Writes run under the
 * tenant's access lock (grants.ts lockAccess) and are audited in their transaction.
 */

/** Body of POST /api/roles and PUT /api/roles/{id} after schema validation. */
export interface RoleInput {
  name?: string;
  /** Permission identifiers of the catalogue (api/tenants/catalog.ts). */
  permissions?: string[];
}

/** Validated query of GET /api/roles. */
export interface RoleListQuery extends PageParams {
  /** Case-insensitive substring of the name. */
  search?: string;
}

/** A role as the API answers it (api/roles/schemas.ts roleRead). */
export interface RoleRead {
  id: number;
  name: string;
  is_builtin: boolean;
  permissions: string[];
  users_count: number;
  created_at: string | null;
  updated_at: string | null;
}

/** Role rows -> read shapes: permissions and the number of the tenant's users holding each. */
async function shapes(scope: TenantScope, rows: Role[], trx?: Knex.Transaction): Promise<RoleRead[]> {
  const knex = trx ?? scope.knex;
  const roles = rows.map((r) => ({ id: r.id, name: r.name, is_builtin: r.tenant_id === null }));
  const perms = await permissionsOfRoles(knex, roles);
  const counts: { role_id: number; n: string }[] = rows.length
    ? await knex('user_roles as ur')
        .join('users as u', 'u.id', 'ur.user_id')
        .where('u.tenant_id', scope.tenantId)
        .whereIn(
          'ur.role_id',
          rows.map((r) => r.id),
        )
        .groupBy('ur.role_id')
        .select('ur.role_id', knex.raw('count(*) AS n'))
    : [];
  const byRole = new Map(counts.map((c) => [c.role_id, Number(c.n)]));
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    is_builtin: r.tenant_id === null,
    permissions: perms.get(r.id) ?? [],
    users_count: byRole.get(r.id) ?? 0,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  }));
}

/**
 * GET /api/roles: the built-in roles first (catalogue order), then the tenant's own, oldest first;
 * `search` matches the name.
 * @returns the list envelope (DESIGN.md §4)
 */
export async function listRoles(scope: TenantScope, query: RoleListQuery) {
  const q = visibleRoles(scope);
  if (query.search?.trim()) q.where('roles.name', 'ilike', ilikeContains(query.search.trim()));
  const [rows, total] = await Promise.all([
    q
      .clone()
      .select('roles.*')
      .orderByRaw('roles.tenant_id IS NOT NULL, roles.id')
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page),
    q.clone().resultSize(),
  ]);
  return envelope(await shapes(scope, rows), query.page, query.per_page, total);
}

/**
 * GET /api/roles/{id}: a built-in role or one of the tenant's.
 * @throws NotFound for another tenant's role or an unknown id
 */
export async function roleById(scope: TenantScope, id: number, trx?: Knex.Transaction): Promise<RoleRead> {
  const row = await visibleRoles(scope, trx).findById(id);
  if (!row) throw new NotFound('Role');
  return (await shapes(scope, [row], trx))[0];
}

/** Field errors for permission names outside the catalogue (`permissions.<i>`). */
function unknownPermissions(list: readonly string[] | undefined): FieldErrors {
  const errors: FieldErrors = {};
  (list ?? []).forEach((p, i) => {
    if (!isPermission(p)) errors[`permissions.${i}`] = ['The selected permission is invalid.'];
  });
  return errors;
}

/**
 * Refuses a name that another role visible to the tenant (built-in or custom) already has, in any
 * case.
 * @throws ValidationFailed for a blank name; Conflict (409) for a taken one
 */
async function assertNameFree(scope: TenantScope, trx: Knex.Transaction, name: string, exceptId?: number) {
  if (!name) throw new ValidationFailed({ name: ['The name field is required.'] });
  const q = visibleRoles(scope, trx).whereRaw('lower(roles.name) = lower(?)', [name]);
  if (exceptId !== undefined) q.whereNot('roles.id', exceptId);
  if (await q.first()) throw new Conflict(`A role named ${name} already exists.`);
}

/** Replaces a custom role's permissions with `names` (catalogue names, already checked). */
async function setPermissions(trx: Knex.Transaction, roleId: number, names: readonly string[]) {
  await trx('role_permissions').where({ role_id: roleId }).delete();
  if (!names.length) return;
  const ids: number[] = await trx('permissions')
    .whereIn('name', [...names])
    .pluck('id');
  await trx('role_permissions').insert(ids.map((permission_id) => ({ role_id: roleId, permission_id })));
}

/** The custom role `id` of the tenant, locked; built-ins refused. */
async function customRoleForWrite(scope: TenantScope, trx: Knex.Transaction, id: number, verb: string) {
  const row = await visibleRoles(scope, trx).findById(id);
  if (!row) throw new NotFound('Role');
  if (row.tenant_id === null) throw new Forbidden(`The built-in role ${row.name} is read-only; it cannot be ${verb}.`);
  return (await scope.query(Role, { trx }).findById(id).forUpdate())!;
}

/**
 * POST /api/roles: creates a custom role of the tenant, audited (`roles.created`).
 * @returns the new role's read shape
 * @throws ValidationFailed (422) for permissions outside the catalogue; Conflict (409) for a name in
 *   use (built-in names included); Forbidden (403) for permissions the actor lacks
 */
export async function createRole(scope: TenantScope, actor: AccessActor, input: Required<RoleInput>) {
  const permissions = [...new Set(input.permissions)].sort();
  const errors = unknownPermissions(input.permissions);
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  assertCanGrant(actor, permissions);
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    await lockAccess(trx, scope.tenantId);
    const name = input.name.trim();
    await assertNameFree(s, trx, name);
    const now = new Date();
    const row = await s.create(Role, { name, created_at: now, updated_at: now }, trx);
    await setPermissions(trx, row.id, permissions);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'roles.created',
      subject: { type: 'roles', id: row.id },
      after: { name, permissions },
      ip: actor.ip ?? null,
    });
    return roleById(s, row.id, trx);
  });
}

/**
 * PUT /api/roles/{id}: renames a custom role and/or replaces its permission list, audited
 * (`roles.updated`). Permissions the role gains must be held by the actor; keeping or removing
 * others is allowed.
 * @throws NotFound for another tenant's role; Forbidden (403) for a built-in role or a gained
 *   permission the actor lacks; ValidationFailed (422); Conflict (409) for a name in use
 */
export async function updateRole(scope: TenantScope, actor: AccessActor, id: number, input: RoleInput) {
  const errors = unknownPermissions(input.permissions);
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    await lockAccess(trx, scope.tenantId);
    const row = await customRoleForWrite(s, trx, id, 'changed');
    const before = (await shapes(s, [row], trx))[0];
    const name = input.name === undefined ? row.name : input.name.trim();
    if (name !== row.name) await assertNameFree(s, trx, name, id);
    const permissions = input.permissions ? [...new Set(input.permissions)].sort() : before.permissions;
    assertCanGrant(
      actor,
      permissions.filter((p) => !before.permissions.includes(p)),
    );
    await s.query(Role, { trx }).findById(id).patch({ name, updated_at: new Date() });
    if (input.permissions) await setPermissions(trx, id, permissions);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'roles.updated',
      subject: { type: 'roles', id },
      before: { name: before.name, permissions: before.permissions },
      after: { name, permissions },
      ip: actor.ip ?? null,
    });
    return roleById(s, id, trx);
  });
}

/**
 * DELETE /api/roles/{id}: deletes a custom role no user holds (inactive users included), audited
 * (`roles.deleted`).
 * @returns the deleted role's last read shape
 * @throws NotFound for another tenant's role; Forbidden (403) for a built-in role;
 *   ValidationFailed (422, field `role`) while a user holds it
 */
export async function deleteRole(scope: TenantScope, actor: AccessActor, id: number): Promise<RoleRead> {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    await lockAccess(trx, scope.tenantId);
    const row = await customRoleForWrite(s, trx, id, 'deleted');
    const shape = (await shapes(s, [row], trx))[0];
    if (shape.users_count > 0) {
      const who = shape.users_count === 1 ? '1 user holds' : `${shape.users_count} users hold`;
      throw new ValidationFailed({ role: [`The role ${row.name} is in use: ${who} it. Take it from them first.`] });
    }
    await s.query(Role, { trx }).findById(id).delete();
    await recordAudit(s, {
      userId: actor.userId,
      action: 'roles.deleted',
      subject: { type: 'roles', id },
      before: { name: shape.name, permissions: shape.permissions },
      ip: actor.ip ?? null,
    });
    return shape;
  });
}
