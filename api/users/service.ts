import type { Knex } from 'knex';
import type { PartialModelObject } from 'objection';
import { AuthToken, HomeBase, User } from '../../db/models/index.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { recordAudit } from '../audit-logs/service.js';
import { hashPassword } from '../auth/service.js';
import { Conflict, Forbidden, NotFound, ValidationFailed } from '../errors.js';
import {
  assertCanGiveRoles,
  lockAccess,
  permissionsOfRoles,
  resolveRoles,
  SUPER_ADMIN,
  type AccessActor,
  type VisibleRole,
} from '../roles/grants.js';
import { paginate, whereContains, type PageParams } from '../shared/list.js';
import { iso } from '../shared/schemas.js';

/**
 * Users of a tenant (issue 8 item 1; DESIGN.md §5): CRUD without delete (deactivate instead), roles
 * given under the grant rules of api/roles/grants.ts, the last active Super Admin kept, sessions
 * revoked on deactivation. Writes run under the tenant's access lock and are audited in their
 * transaction (`users.created`, `users.updated`).
 */

/** Body of POST /api/users and PUT /api/users/{id} after schema validation. */
export interface UserInput {
  name?: string;
  email?: string;
  /** Plain text, at least 8 characters; only its argon2id hash is stored. */
  password?: string;
  /** E.164 or null. */
  phone?: string | null;
  home_base_id?: number | null;
  /** Role ids or names (built-in or the tenant's). */
  roles?: (number | string)[];
  is_active?: boolean;
}

/** Validated query of GET /api/users. */
export interface UserListQuery extends PageParams {
  search?: string;
  /** A role id (digits) or a role name (any case). */
  role?: string;
  is_active?: boolean;
}

/** A user as the API answers it (api/users/schemas.ts userRead). */
export interface UserRead {
  id: number;
  name: string;
  email: string;
  phone: string | null;
  home_base_id: number | null;
  is_active: boolean;
  roles: VisibleRole[];
  permissions: string[];
  created_at: string | null;
  updated_at: string | null;
}

/**
 * Token types that act as the user and die with deactivation. Integration tokens belong to the
 * tenant's integration, not to the admin who minted them; board sessions are platform admins' only.
 */
const SESSION_TYPES = ['login', 'pilot'] as const;

const COLUMNS = [
  'u.id',
  'u.name',
  'u.email',
  'u.phone',
  'u.home_base_id',
  'u.is_active',
  'u.created_at',
  'u.updated_at',
];

/** Roles and effective permissions per user id. */
async function accessOf(knex: Knex | Knex.Transaction, userIds: readonly number[]) {
  const rows: { user_id: number; id: number; name: string; tenant_id: number | null }[] = userIds.length
    ? await knex('user_roles as ur')
        .join('roles as r', 'r.id', 'ur.role_id')
        .whereIn('ur.user_id', [...userIds])
        .orderByRaw('r.tenant_id IS NOT NULL, r.id')
        .select('ur.user_id', 'r.id', 'r.name', 'r.tenant_id')
    : [];
  const roles = new Map<number, VisibleRole>();
  for (const r of rows) roles.set(r.id, { id: r.id, name: r.name, is_builtin: r.tenant_id === null });
  const perms = await permissionsOfRoles(knex, [...roles.values()]);
  const out = new Map<number, { roles: VisibleRole[]; permissions: string[] }>(
    userIds.map((id) => [id, { roles: [], permissions: [] }]),
  );
  for (const r of rows) out.get(r.user_id)!.roles.push(roles.get(r.id)!);
  for (const a of out.values()) a.permissions = [...new Set(a.roles.flatMap((r) => perms.get(r.id) ?? []))].sort();
  return out;
}

/** User rows -> read shapes. */
async function shapes(knex: Knex | Knex.Transaction, rows: User[]): Promise<UserRead[]> {
  const access = await accessOf(
    knex,
    rows.map((r) => r.id),
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    email: r.email,
    phone: r.phone,
    home_base_id: r.home_base_id,
    is_active: r.is_active,
    ...access.get(r.id)!,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  }));
}

/**
 * GET /api/users: newest first (id tie-breaker); `search` over name, e-mail and phone, `role` (id or
 * name), `is_active`.
 * @returns the list envelope (DESIGN.md §4)
 */
export async function listUsers(scope: TenantScope, query: UserListQuery) {
  const q = scope.query(User, { alias: 'u' });
  whereContains(q, ['u.name', 'u.email', 'u.phone'], query.search);
  if (query.is_active !== undefined) q.where('u.is_active', query.is_active);
  if (query.role !== undefined) {
    const role = query.role.trim();
    q.whereExists((e) => {
      e.select(1).from('user_roles as ur').join('roles as r', 'r.id', 'ur.role_id').whereRaw('ur.user_id = u.id');
      if (/^\d+$/.test(role)) e.where('r.id', Number(role));
      else e.whereRaw('lower(r.name) = lower(?)', [role]);
    });
  }
  const page = await paginate(q, COLUMNS, ['u.created_at', 'u.id'], query, (r) => r);
  return { ...page, data: await shapes(scope.knex, page.data) };
}

/**
 * GET /api/users/{id}.
 * @throws NotFound when the id is not a user of the scope's tenant
 */
export async function userById(scope: TenantScope, id: number, trx?: Knex.Transaction): Promise<UserRead> {
  const row = await scope.query(User, { alias: 'u', trx }).findById(id).select(COLUMNS);
  if (!row) throw new NotFound('User');
  return (await shapes(trx ?? scope.knex, [row]))[0];
}

/** @throws Conflict (409) when another user (any tenant: e-mails are the login) has the e-mail. */
async function assertEmailFree(trx: Knex.Transaction, email: string, exceptId?: number) {
  // users.email is unique platform-wide (index users_email_unique on lower(email))
  const q = trx('users').whereRaw('lower(email) = lower(?)', [email]);
  if (exceptId !== undefined) q.whereNot('id', exceptId);
  if (await q.first('id')) throw new Conflict('The email has already been taken.');
}

/**
 * Checks a home base id: it must be one of the tenant's home bases (users.home_base_id references
 * home_bases, migration 20261127070000; the key alone would accept another tenant's base).
 * @throws ValidationFailed (422, field home_base_id)
 */
async function assertHomeBase(scope: TenantScope, trx: Knex.Transaction, id: number | null | undefined) {
  if (id === null || id === undefined) return;
  const ok = await scope.query(HomeBase, { trx }).findById(id).select('id');
  if (!ok) throw new ValidationFailed({ home_base_id: ['The selected home base id is invalid.'] });
}

/** Active users of the tenant holding the built-in Super Admin role, other than `exceptId`. */
async function otherActiveSuperAdmins(scope: TenantScope, trx: Knex.Transaction, exceptId: number) {
  return scope
    .query(User, { alias: 'u', trx })
    .where('u.is_active', true)
    .whereNot('u.id', exceptId)
    .whereExists((e) =>
      e
        .select(1)
        .from('user_roles as ur')
        .join('roles as r', 'r.id', 'ur.role_id')
        .whereRaw('ur.user_id = u.id')
        .whereNull('r.tenant_id')
        .where('r.name', SUPER_ADMIN),
    )
    .resultSize();
}

/** The audit summary of a user (never the password). */
function summary(u: Pick<UserRead, 'name' | 'email' | 'phone' | 'home_base_id' | 'is_active' | 'roles'>) {
  return {
    name: u.name,
    email: u.email,
    phone: u.phone,
    home_base_id: u.home_base_id,
    is_active: u.is_active,
    roles: u.roles.map((r) => r.name),
  };
}

/**
 * POST /api/users: creates a user of the tenant with roles, audited (`users.created`).
 * @returns the new user's read shape
 * @throws ValidationFailed (422) for an unknown role (`roles.<i>`) or home base; Forbidden (403) for
 *   the Super Admin role given by a non-Super Admin or a role with a permission the actor lacks;
 *   Conflict (409) for a taken e-mail
 */
export async function createUser(scope: TenantScope, actor: AccessActor, input: UserInput): Promise<UserRead> {
  const hash = await hashPassword(input.password!);
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    await lockAccess(trx, scope.tenantId);
    const roles = await resolveRoles(s, trx, input.roles ?? []);
    assertCanGiveRoles(actor, roles, await permissionsOfRoles(trx, roles));
    await assertHomeBase(s, trx, input.home_base_id);
    const email = input.email!.trim().toLowerCase();
    await assertEmailFree(trx, email);
    const now = new Date();
    const row = await s.create(
      User,
      {
        name: input.name!.trim(),
        email,
        password_hash: hash,
        phone: input.phone ?? null,
        home_base_id: input.home_base_id ?? null,
        is_active: input.is_active ?? true,
        created_at: now,
        updated_at: now,
      },
      trx,
    );
    await trx('user_roles').insert(roles.map((r) => ({ user_id: row.id, role_id: r.id })));
    const created = await userById(s, row.id, trx);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'users.created',
      subject: { type: 'users', id: row.id },
      after: summary(created),
      ip: actor.ip ?? null,
    });
    return created;
  });
}

/**
 * PUT /api/users/{id}: changes the fields given, audited (`users.updated`, with `password_changed`
 * and `sessions_revoked` but never the password). `roles` replaces the user's roles. Setting
 * is_active false revokes the user's login sessions in the same transaction.
 * @throws NotFound for another tenant's user; Forbidden (403) when the user holds a permission the
 *   actor lacks (a Super Admin is changed only by a Super Admin) or a given role is not the actor's
 *   to give; ValidationFailed (422) for an unknown role or home base, or when the change would leave
 *   the tenant without an active Super Admin (`roles` / `is_active`); Conflict (409) for a taken e-mail
 */
export async function updateUser(scope: TenantScope, actor: AccessActor, id: number, input: UserInput) {
  const hash = input.password === undefined ? undefined : await hashPassword(input.password);
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    await lockAccess(trx, scope.tenantId);
    const current = await userById(s, id, trx);
    const isSuper = (roles: readonly VisibleRole[]) => roles.some((r) => r.is_builtin && r.name === SUPER_ADMIN);
    if (isSuper(current.roles) && !actor.roles.includes(SUPER_ADMIN)) {
      throw new Forbidden('Only a Super Admin can change a Super Admin.');
    }
    const held = new Set(actor.permissions);
    const beyond = current.permissions.filter((p) => !held.has(p));
    if (beyond.length) {
      throw new Forbidden(`You cannot change a user who holds permissions you lack: ${beyond.join(', ')}.`);
    }
    const roles = input.roles ? await resolveRoles(s, trx, input.roles) : current.roles;
    const added = roles.filter((r) => !current.roles.some((c) => c.id === r.id));
    assertCanGiveRoles(actor, added, await permissionsOfRoles(trx, added));
    const isActive = input.is_active ?? current.is_active;
    if (isSuper(current.roles) && current.is_active && (!isSuper(roles) || !isActive)) {
      if ((await otherActiveSuperAdmins(s, trx, id)) === 0) {
        const field = isActive ? 'roles' : 'is_active';
        throw new ValidationFailed({
          [field]: ['The last active Super Admin of the tenant must stay an active Super Admin.'],
        });
      }
    }
    await assertHomeBase(s, trx, input.home_base_id);
    const email = input.email === undefined ? current.email : input.email.trim().toLowerCase();
    if (email !== current.email) await assertEmailFree(trx, email, id);

    const patch: PartialModelObject<User> = { email, is_active: isActive, updated_at: new Date() };
    if (input.name !== undefined) patch.name = input.name.trim();
    if (input.phone !== undefined) patch.phone = input.phone;
    if (input.home_base_id !== undefined) patch.home_base_id = input.home_base_id;
    if (hash !== undefined) patch.password_hash = hash;
    await s.query(User, { trx }).findById(id).patch(patch);
    if (input.roles) {
      await trx('user_roles').where({ user_id: id }).delete();
      await trx('user_roles').insert(roles.map((r) => ({ user_id: id, role_id: r.id })));
    }
    let revoked = 0;
    if (current.is_active && !isActive) {
      revoked = await s
        .query(AuthToken, { trx })
        .where('user_id', id)
        .whereIn('type', [...SESSION_TYPES])
        .whereNull('revoked_at')
        .patch({ revoked_at: new Date(), updated_at: new Date() });
    }
    const updated = await userById(s, id, trx);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'users.updated',
      subject: { type: 'users', id },
      before: summary(current),
      after: { ...summary(updated), password_changed: hash !== undefined, sessions_revoked: revoked },
      ip: actor.ip ?? null,
    });
    return updated;
  });
}
