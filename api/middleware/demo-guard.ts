import { DemoGuardBlocked } from '../errors.js';

/**
 * The one list of actions a demo-mode tenant refuses with 403 demo_guard_blocked (document 1,
 * "Authentication" 7; DESIGN.md §5). Route definitions name their action in `demoAction`; a route
 * whose action is listed here is blocked for tenants with demo_mode on.
 */
export const DEMO_BLOCKED_ACTIONS: ReadonlySet<string> = new Set([
  'external.customers.create',
  'external.tickets.create',
  'tickets.status.update',
]);

/**
 * Throws DemoGuardBlocked when the tenant is in demo mode and the action is blocked.
 * @param tenant the active tenant (null for platform-level calls: never blocked)
 * @param action the route's action name
 */
export function assertDemoAllowed(tenant: { demo_mode: boolean } | null | undefined, action: string | undefined): void {
  if (action && tenant?.demo_mode && DEMO_BLOCKED_ACTIONS.has(action)) throw new DemoGuardBlocked(action);
}
