/**
 * The one permission catalogue (DESIGN.md §5, §10 "permissions"): every identifier document 2
 * ("Authentication" 2) names, plus the ones DESIGN §10 decides for what the spec leaves unnamed,
 * and the built-in roles' grants. Super Admin holds every permission. Route definitions name a
 * permission with the Permission type, so a typo does not compile.
 */

/** Permissions named by document 2, "Authentication" 2. */
const SPEC_PERMISSIONS = [
  'sales.view',
  'sales.create',
  'sales.update',
  'sales.approve',
  'sales.invoice',
  'sales.fulfill',
  'paypoint.view',
  'invoices.view',
  'invoices.manage',
  'schedules.view',
  'schedules.manage',
  'homebase.manage',
  'account.security',
  'file_manager.view',
  'file_manager.upload',
  'file_manager.delete',
  'file_manager.admin',
  'office_assets.view',
  'settings.view',
  'settings.manage',
] as const;

/** Permissions DESIGN.md §10 adds for the ones document 2 leaves unnamed. */
const DESIGN_PERMISSIONS = [
  'finance.manage',
  'inventory.view',
  'inventory.manage',
  'partners.view',
  'partners.manage',
  'app_builder.manage',
  'wabot.manage',
  'email.manage',
  'customers.view',
  'customers.manage',
  'customers.import',
  'network.manage',
  'tickets.view',
  'tickets.update',
  'tickets.assign',
  'users.manage',
] as const;

/** Every permission, in catalogue order. */
export const PERMISSIONS = [...SPEC_PERMISSIONS, ...DESIGN_PERMISSIONS] as const;
/** One permission identifier of the catalogue. */
export type Permission = (typeof PERMISSIONS)[number];

/** The built-in roles every tenant has (DESIGN.md §5). */
export const ROLES = ['Super Admin', 'Administrator', 'technician', 'staff'] as const;
/** One of ROLES. */
export type RoleName = (typeof ROLES)[number];

/**
 * Permissions per built-in role. Super Admin: all. Administrator: all but file_manager.admin (the
 * master file share is the owner's). technician: field work (tickets, customers, schedules, files,
 * inventory to take stock out). staff: front office (tickets, customers, invoices, cash point,
 * sales, schedules, files, inventory to see stock and request it).
 */
export const ROLE_PERMISSIONS: Record<RoleName, readonly Permission[]> = {
  'Super Admin': PERMISSIONS,
  Administrator: PERMISSIONS.filter((p) => p !== 'file_manager.admin'),
  technician: [
    'tickets.view',
    'tickets.update',
    'customers.view',
    'schedules.view',
    'file_manager.view',
    'file_manager.upload',
    'inventory.view',
  ],
  staff: [
    'tickets.view',
    'tickets.update',
    'customers.view',
    'invoices.view',
    'paypoint.view',
    'sales.view',
    'schedules.view',
    'file_manager.view',
    // issue 16 item 7: staff see the stock and make their own inventory requests
    'inventory.view',
  ],
};

/** Tenant modules that can be switched on or off per tenant (DESIGN.md §10 "tenant modules"). */
export const MODULES = [
  'sales',
  'paypoint',
  'finance',
  'inventory',
  'attendance',
  'tickets',
  'wabot',
  'app_builder',
  'file_manager',
  'email',
] as const;
/** One of MODULES. */
export type ModuleName = (typeof MODULES)[number];

/** True when `name` is a permission of the catalogue. */
export function isPermission(name: string): name is Permission {
  return (PERMISSIONS as readonly string[]).includes(name);
}

/** True when `name` is a tenant module. */
export function isModule(name: string): name is ModuleName {
  return (MODULES as readonly string[]).includes(name);
}

/** The time zone of a tenant that has none set (DESIGN.md §10 "time zone"). */
export const DEFAULT_TIMEZONE = 'Asia/Jakarta';
