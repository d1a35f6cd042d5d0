import { DemoGuardBlocked } from '../errors.js';

/**
 * The one typed list of actions a demo-mode tenant refuses with 403 demo_guard_blocked (document 2
 * "Authentication" 6; DESIGN.md §5, §10 "demo guard"): every action that reaches a real external
 * system or moves real money, plus the external API's writes (document 1). Reads and local drafts
 * stay allowed. Route definitions name their action with `demoAction: DemoAction`, so a typo does
 * not compile; a route whose action is in this list is blocked for tenants with demo_mode on.
 */
export const DEMO_BLOCKED_ACTIONS = [
  // document 1: writes of the external integration API
  'external.customers.create',
  'external.tickets.create',
  // issue 2: ticket status changes notify customers
  'tickets.status.update',
  // issue 8: ticket attachments write files into storage, outside the database (docs/decisions.md)
  'tickets.attachment.upload',
  // issue 8 item 1: who may do what on the demo tenant stays as seeded for the next visitor
  'users.create',
  'users.update',
  'roles.create',
  'roles.update',
  'roles.delete',
  'settings.modules.update',
  // issue 8 item 2: customer status and network sync push to a real NAS
  'customers.status.update',
  'customers.network_sync',
  // DESIGN §10: real external systems
  'wabot.send',
  'email.send',
  'email.sync',
  'app_builder.release_build',
  'provisioning.run',
  'network.dhcp_bind_sync',
  // DESIGN §10: real money
  'paypoint.cash_payment',
  'finance.invoice_pay',
  'finance.money_request_pay',
  // issue 11 item 3: the chat bot's status reads reach the real gateway
  'wabot.sync_status',
  'wabot.sync_device_status',
  // issue 16 item 3: a paid stock-in books an expense (checked in the route: only when finance_paid)
  'inventory.paid_stock_in',
  // issue 12 item 8: release keystores serve only release builds, which demo tenants cannot run, and a
  // visitor's real signing key never belongs on a shared tenant (docs/decisions.md)
  'app_builder.keystore.upload',
  'app_builder.keystore.generate',
  'app_builder.keystore.delete',
  // issue 13 item 9: a customer mailbox is created at the real mail panel
  'customers.email_account',
] as const;

/** One action the demo guard blocks. */
export type DemoAction = (typeof DEMO_BLOCKED_ACTIONS)[number];

const BLOCKED: ReadonlySet<string> = new Set(DEMO_BLOCKED_ACTIONS);

/** True when the action is on the demo guard's list. */
export function isDemoBlocked(action: string | undefined): action is DemoAction {
  return !!action && BLOCKED.has(action);
}

/**
 * Throws DemoGuardBlocked when the tenant is in demo mode and the action is blocked.
 * @param tenant the active tenant (null for platform-level calls: never blocked)
 * @param action the route's action name
 * @throws DemoGuardBlocked (403 demo_guard_blocked) naming the action
 */
export function assertDemoAllowed(
  tenant: { demo_mode: boolean } | null | undefined,
  action: DemoAction | undefined,
): void {
  if (action && tenant?.demo_mode && BLOCKED.has(action)) throw new DemoGuardBlocked(action);
}
