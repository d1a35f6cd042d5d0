import { createRequire } from 'node:module';
import type { OpenApiInfo, OpenApiOptions } from '../http/openapi.js';

const require = createRequire(import.meta.url);
const VERSION: string = require('../../package.json').version;

const DESCRIPTION = `Multi-tenant back office for internet service providers: the external integration API
(document 1, \`/api/external/v1\`), integration token management (\`/api/integrations\`), login
(\`/api/auth\`) and the admin modules.

**Authentication.** External endpoints take an integration token (\`integrationToken\`) that a tenant
admin creates with \`POST /api/integrations/api-tokens\`; every other endpoint takes the login token
of \`POST /api/auth/login\` (\`loginToken\`). Send \`Authorization: Bearer <token>\`.

**Errors.** Every error answers \`{message, code}\`; 422 adds \`errors\` (field -> reasons, dotted
paths), 500 adds \`request_id\`. Codes: UNAUTHENTICATED, FORBIDDEN, demo_guard_blocked, NOT_FOUND,
CONFLICT, VALIDATION_FAILED, RATE_LIMITED, QUEUE_UNAVAILABLE, SERVER_ERROR.

**Lists** answer \`{current_page, data, per_page, total, last_page, from, to}\`; \`page\` >= 1,
\`per_page\` 1..100. **Rate limit**: 600 requests a minute per integration token (429 with
Retry-After and X-RateLimit-* headers).`;

/**
 * What /openapi.json of the web service says about itself.
 * @param serverUrl the service's public base URL (PUBLIC_BASE_URL)
 */
export function webApiInfo(serverUrl: string): OpenApiInfo {
  return { title: 'ISP platform API', version: VERSION, serverUrl, description: DESCRIPTION };
}

/** Tag descriptions of the web service's document (tags not listed here appear without one). */
export const webTagDescriptions: OpenApiOptions['tagDescriptions'] = {
  external: 'External integration API v1 (document 1): integration token, rate limited.',
  integrations: 'Integration token management (document 1): admin login token.',
  auth: 'Login, logout and the current user.',
  tickets: 'Tickets and their append-only work record (tickets.view / tickets.update; module tickets).',
  schedules: 'Technician schedules (schedules.view / schedules.manage).',
  audit: "The tenant's audit log: money, provisioning, permission and file actions (settings.view).",
  users: 'Users of the tenant, their roles and activation (users.manage).',
  roles: 'Built-in (read-only) and custom roles with their permissions (users.manage).',
  settings: 'Tenant settings and module switches (settings.view / settings.manage; modules: Super Admin).',
  packages: 'Service packages (customers.view / customers.manage).',
  network: 'OLTs, ONUs and NAS; ONU readings from the onu-poll job (customers.view / network.manage).',
  'home-bases': 'Home bases of the technicians (customers.view / homebase.manage).',
  invoices:
    'Invoices (subscription, manual, sales), void, and billing runs of the billing cycle (invoices.view / invoices.manage).',
  customers:
    'Customers, their status and their network state on the NAS (customer-network job) (customers.view / customers.manage).',
  email: "The tenant's e-mail account, its sync into the inbox and the connection test (email.manage; module email).",
  communications:
    'The inbox and outbox of every channel: e-mail (email.manage, module email), WhatsApp and Messenger (wabot.manage, module wabot).',
  wabot:
    'The chat bot: its gateway configuration and accounts (secrets write-only), the inbound webhook URL (wabot.manage; module wabot).',
  inventory:
    'Items, stock locations, the stock ledger (stock, mutations, serials), stock-in, counts and inventory requests (inventory.view / inventory.manage; module inventory).',
  'app-builder':
    'The Android app builder: build configurations of the four app types, builder health, builds (apk-build queue), their logs and APK downloads (app_builder.manage; module app_builder).',
  suppliers:
    'Suppliers and their buy prices (inventory.view / inventory.manage); their price lists: preview an uploaded CSV, TXT, XLSX or PDF and import its rows into the item catalogue (supplier-import queue; inventory.manage); module inventory.',
  platform: 'Platform admins only (tenant users 403): tenants, tenant provisioning credentials, readiness and checks.',
  'tenant-db-pilot':
    'Smoke reads of a tenant database with a pilot token (issue 15 item 9): customers, invoices, tickets, demo flow; every other token kind 401.',
};
