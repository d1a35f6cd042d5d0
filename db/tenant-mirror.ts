import type { Knex } from 'knex';
import { routeTenant } from './tenant-routing.js';

/**
 * The identity mirror of issue 15 item 4: users and roles stay in the shared database; a cut-over
 * tenant's database keeps a copy written after each shared write (db/tenant-routing.ts
 * MIRRORED_TABLES), so the tenant database's foreign keys hold and it shows the same roles.
 */

/**
 * Keeps a cut-over tenant's copy of a user equal to the shared row (item 4: users stay in the shared
 * database; #6's user writes call this after their transaction so the tenant database's foreign keys
 * to users keep holding), with the user's user_roles and the tenant's custom roles they name (each
 * with its role_permissions), so the tenant database shows the same roles. Built-in roles and the
 * permission catalog are the cutover's copy. One transaction in the tenant database. Does nothing
 * for a tenant on the shared database.
 * @param knex the shared database
 */
export async function mirrorUser(
  knex: Knex,
  tenantId: number,
  userId: number,
  appKey: Buffer | undefined,
): Promise<void> {
  const route = await routeTenant(knex, tenantId, appKey, 'request');
  if (route.mode !== 'tenant_db') return;
  const r = await knex.raw<{ rows: { row: Record<string, unknown> }[] }>(
    'SELECT row_to_json(u) AS row FROM users u WHERE u.id = ? AND u.tenant_id = ?',
    [userId, tenantId],
  );
  if (!r.rows.length) return;
  // the links keep their shared ids (as the cutover's passes copy them): a link inserted without
  // one took the tenant database's own user_roles sequence, which the copied rows already used
  const links = (await knex('user_roles').where({ user_id: userId }).select('id', 'user_id', 'role_id')) as {
    role_id: number;
  }[];
  const roleIds = links.map((l) => Number(l.role_id));
  const roles = roleIds.length
    ? await knex.raw<{ rows: { row: Record<string, unknown> }[] }>(
        'SELECT row_to_json(r) AS row FROM roles r WHERE r.tenant_id = ? AND r.id = ANY(?::int[]) ORDER BY r.id',
        [tenantId, `{${roleIds.join(',')}}`],
      )
    : { rows: [] };
  const custom = roles.rows.map((x) => Number(x.row.id));
  const grants = custom.length ? await knex('role_permissions').whereIn('role_id', custom).select() : [];
  await route.knex.transaction(async (trx) => {
    await upsertRows(trx, 'users', ['id'], [r.rows[0].row]);
    await upsertRows(
      trx,
      'roles',
      ['id'],
      roles.rows.map((x) => x.row),
    );
    if (custom.length) {
      await trx('role_permissions').whereIn('role_id', custom).delete();
      if (grants.length) await trx('role_permissions').insert(grants);
    }
    await trx('user_roles').where({ user_id: userId }).delete();
    if (links.length) await trx('user_roles').insert(links);
  });
}

/**
 * Keeps a cut-over tenant's copy of one of its custom roles equal to the shared row (issue 15 item
 * 4: roles stay shared; the role routes call this after their transaction): the role and its
 * role_permissions upserted, or the copy deleted (its user_roles cascade) when the shared role is
 * gone. Does nothing for a tenant on the shared database.
 * @param knex the shared database
 */
export async function mirrorRole(
  knex: Knex,
  tenantId: number,
  roleId: number,
  appKey: Buffer | undefined,
): Promise<void> {
  const route = await routeTenant(knex, tenantId, appKey, 'request');
  if (route.mode !== 'tenant_db') return;
  const r = await knex.raw<{ rows: { row: Record<string, unknown> }[] }>(
    'SELECT row_to_json(r) AS row FROM roles r WHERE r.id = ? AND r.tenant_id = ?',
    [roleId, tenantId],
  );
  const grants = r.rows.length ? await knex('role_permissions').where({ role_id: roleId }).select() : [];
  await route.knex.transaction(async (trx) => {
    if (!r.rows.length) {
      await trx('roles').where({ id: roleId, tenant_id: tenantId }).delete();
      return;
    }
    await upsertRows(trx, 'roles', ['id'], [r.rows[0].row]);
    await trx('role_permissions').where({ role_id: roleId }).delete();
    if (grants.length) await trx('role_permissions').insert(grants);
  });
}

/** Inserts or updates rows (row_to_json shapes of the shared database) by their key, in `k`. */
async function upsertRows(k: Knex, table: string, pk: string[], rows: Record<string, unknown>[]): Promise<void> {
  if (!rows.length) return;
  const q = (c: string) => `"${c.replace(/"/g, '""')}"`;
  const cols = Object.keys(rows[0]).map(q);
  const keys = pk.map(q);
  const set = cols.filter((c) => !keys.includes(c)).map((c) => `${c} = EXCLUDED.${c}`);
  await k.raw(
    `INSERT INTO ${q(table)} (${cols.join(', ')}) SELECT ${cols.join(', ')}
       FROM json_populate_recordset(null::${q(table)}, ?::json)
     ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${set.join(', ')}`,
    [JSON.stringify(rows)],
  );
}
