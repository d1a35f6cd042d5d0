import type { Knex } from 'knex';
import { createRole } from '../../api/roles/service.js';
import { createUser } from '../../api/users/service.js';
import { PERMISSIONS, type Permission } from '../../api/tenants/catalog.js';
import { TenantScope } from '../tenant-scope.js';

/** The demo custom role (issue 8 item 1): front-office billing without settings or user management. */
export const DEMO_CUSTOM_ROLE: { name: string; permissions: Permission[] } = {
  name: 'Billing clerk',
  permissions: ['invoices.view', 'invoices.manage', 'customers.view', 'paypoint.view', 'tickets.view'],
};

/** The demo login holding the custom role (shown in the banner: db/seeds/demo.ts DEMO_LOGINS). */
export const DEMO_CLERK = { email: 'clerk@demo-isp.test', name: 'Dian Puspita' };

/** More field technicians of demo-isp (not in the banner; they log in with the demo password too). */
export const DEMO_EXTRA_TECHNICIANS = [
  { email: 'tech2@demo-isp.test', name: 'Agus Pratama', phone: '+6281320004512' },
  { email: 'tech3@demo-isp.test', name: 'Dewi Lestari', phone: '+6285722108893' },
] as const;

/**
 * Seeds demo-isp's custom role, a clerk holding it and the extra technicians, through the users and
 * roles services as the tenant's Super Admin (so they are audited as `roles.created` and
 * `users.created` like any admin's work). Runs inside the seed's transaction (the services' own
 * transactions become savepoints).
 * @param trx the seed's transaction
 * @param tenantId demo-isp
 * @param adminId its Super Admin (the actor)
 * @param password the demo password
 * @returns the ids of the role, the clerk and the technicians
 */
export async function seedDemoStaff(trx: Knex.Transaction, tenantId: number, adminId: number, password: string) {
  const scope = new TenantScope(trx, tenantId);
  const actor = { userId: adminId, roles: ['Super Admin'], permissions: PERMISSIONS, ip: null };
  const role = await createRole(scope, actor, DEMO_CUSTOM_ROLE);
  const clerk = await createUser(scope, actor, { ...DEMO_CLERK, password, roles: [role.id] });
  const technicians: number[] = [];
  for (const t of DEMO_EXTRA_TECHNICIANS) {
    technicians.push((await createUser(scope, actor, { ...t, password, roles: ['technician'] })).id);
  }
  return { roleId: role.id, clerkId: clerk.id, technicians };
}
