import type { AnyWebRoute } from './http/web-route.js';
import { authRoutes } from './auth/routes.js';
import { tokenRoutes } from './tokens/routes.js';
import { externalRoutes } from './external/routes.js';
import { ticketRoutes } from './tickets/routes.js';
import { auditLogRoutes } from './audit-logs/routes.js';
import { scheduleRoutes } from './schedules/routes.js';
import { userRoutes } from './users/routes.js';
import { roleRoutes } from './roles/routes.js';
import { settingsRoutes } from './settings/routes.js';
import { packageRoutes } from './packages/routes.js';
import { oltRoutes } from './olts/routes.js';
import { onuRoutes } from './onus/routes.js';
import { nasRoutes } from './nas/routes.js';
import { homeBaseRoutes } from './home-bases/routes.js';
import { invoiceRoutes } from './invoices/routes.js';
import { customerRoutes } from './customers/routes.js';
import { emailRoutes } from './email/routes.js';
import { communicationRoutes } from './communications/routes.js';
import { wabotRoutes } from './wabot/routes.js';
import { wabotInboundRoutes } from './wabot/inbound-routes.js';
import { wabotGroupRoutes } from './wabot/group-routes.js';
import { wabotStatsRoutes } from './wabot/stats-routes.js';
import { inventoryCatalogueRoutes } from './inventory/routes.js';
import { inventoryStockRoutes } from './inventory/stock-routes.js';
import { supplierRoutes } from './suppliers/routes.js';
import { inventoryRequestRoutes } from './inventory/requests/routes.js';
import { androidApkKeystoreRoutes } from './android-apk-keystores/routes.js';
import { androidApkRoutes } from './android-apk/routes.js';
import { supplierImportRoutes } from './supplier-import/routes.js';
import { platformTenantRoutes } from './platform/tenants-routes.js';
import { platformProvisioningRoutes } from './platform/provisioning-routes.js';
import { platformCheckRoutes } from './platform/checks-route.js';
import { tenantDbRoutes } from './platform/tenant-db-routes.js';
import { platformRunRoutes } from './platform/runs/routes.js';
import { customerEmailAccountRoutes } from './customers/email-account.js';
import { tenantDbReportRoutes } from './platform/tenant-db-report-routes.js';
import { tenantDbLoginRoutes } from './platform/tenant-db-login-routes.js';
import { tenantDbPilotRoutes } from './tenant-db-pilot/routes.js';
import { tenantDbProductionRoutes } from './platform/tenant-db-production-routes.js';

/**
 * The web service's route table, in documentation order: document 1's endpoints and the login
 * endpoints first, then every admin module. The Koa router and /openapi.json are both built from it.
 */
export const webRoutes: AnyWebRoute[] = [
  ...externalRoutes,
  ...authRoutes,
  ...tokenRoutes,
  ...ticketRoutes,
  ...auditLogRoutes,
  ...scheduleRoutes,
  ...userRoutes,
  ...roleRoutes,
  ...settingsRoutes,
  ...packageRoutes,
  ...oltRoutes,
  ...onuRoutes,
  ...nasRoutes,
  ...homeBaseRoutes,
  ...invoiceRoutes,
  ...customerRoutes,
  ...emailRoutes,
  ...communicationRoutes,
  ...wabotRoutes,
  ...wabotInboundRoutes,
  ...wabotGroupRoutes,
  ...wabotStatsRoutes,
  ...inventoryCatalogueRoutes,
  ...inventoryStockRoutes,
  ...supplierRoutes,
  ...inventoryRequestRoutes,
  ...androidApkKeystoreRoutes,
  ...androidApkRoutes,
  ...supplierImportRoutes,
  ...platformTenantRoutes,
  ...platformProvisioningRoutes,
  ...platformCheckRoutes,
  ...tenantDbRoutes,
  ...platformRunRoutes,
  ...customerEmailAccountRoutes,
  ...tenantDbReportRoutes,
  ...tenantDbLoginRoutes,
  ...tenantDbPilotRoutes,
  ...tenantDbProductionRoutes,
];
