/**
 * Built-in roles and permissions (DESIGN.md §5; document 2 "Authentication" 2 names the
 * permissions). Super Admin holds every permission implicitly.
 */
export const PERMISSIONS = [
  'sales.view', 'sales.create', 'sales.update', 'sales.approve', 'sales.invoice', 'sales.fulfill',
  'paypoint.view', 'invoices.view', 'invoices.manage', 'schedules.view', 'schedules.manage', 'homebase.manage',
  'account.security', 'file_manager.view', 'file_manager.upload', 'file_manager.delete', 'file_manager.admin',
  'office_assets.view', 'settings.view', 'settings.manage', 'finance.manage', 'inventory.manage', 'app_builder.manage',
  'partners.manage', 'tickets.view', 'tickets.update', 'customers.view', 'customers.manage',
] as const;

/** The built-in roles every tenant has (DESIGN.md §5). */
export const ROLES = ['Super Admin', 'Administrator', 'technician', 'staff'] as const;
/** One of ROLES. */
export type RoleName = (typeof ROLES)[number];

/** Permissions per built-in role (Super Admin: all). */
export const ROLE_PERMISSIONS: Record<RoleName, readonly string[]> = {
  'Super Admin': PERMISSIONS,
  Administrator: PERMISSIONS.filter((p) => p !== 'file_manager.admin'),
  technician: ['tickets.view', 'tickets.update', 'customers.view', 'schedules.view', 'file_manager.view', 'file_manager.upload'],
  staff: ['tickets.view', 'tickets.update', 'customers.view', 'invoices.view', 'paypoint.view', 'sales.view', 'schedules.view', 'file_manager.view'],
};

/** Tenant modules that can be switched on or off (document 2). */
export const MODULES = ['sales', 'paypoint', 'finance', 'inventory', 'attendance', 'tickets', 'wabot', 'app_builder', 'file_manager', 'email'] as const;
