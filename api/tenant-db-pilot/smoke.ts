import type { Knex } from 'knex';
import { AppError, NotFound } from '../errors.js';
import { resolvePlatformTenant } from '../platform/tenant-param.js';
import { moduleRead, readSource } from '../platform/tenant-db/module-read.js';
import { demoFlow } from '../platform/tenant-db/reports.js';
import { TenantDbUnreachable } from '../platform/tenant-db/service.js';
import { readTenantDb, type TenantDbRow } from '../platform/tenant-db/state.js';
import type { RoutedModule } from '../platform/tenant-db/write-plan.js';

/**
 * The smoke routes of issue 15 item 9 (`GET /api/tenant-db-pilot/tenants/{tenant}/customers`,
 * `/invoices`, `/tickets`, `/demo-flow`): what a pilot token sees, read from the TENANT database
 * only, in issue 6's read shapes (the first page, as `tenant-db/{module}`) and the demo-flow report.
 * A tenant database that cannot serve reads is refused (422), never replaced by the shared one.
 */

/** What the smoke routes pass in. */
export interface SmokeDeps {
  knex: Knex;
  appKey: Buffer;
}

/**
 * The path's tenant, which must be the pilot token's.
 * @throws NotFound (404) for an unknown tenant or another tenant than the token's
 */
export async function smokeTenant(knex: Knex, ref: string, tokenTenantId: number | null) {
  const tenant = await resolvePlatformTenant(knex, ref);
  if (tenant.id !== tokenTenantId) throw new NotFound(`Tenant ${ref.slice(0, 63)}`);
  return tenant;
}

/** 422 INVALID_TRANSITION: the tenant database does not serve reads (why in the message). */
function notServing(row: TenantDbRow, detail: string): AppError {
  const message = `The tenant database does not serve reads (status ${row.status}: ${detail}).`;
  return new AppError(422, 'INVALID_TRANSITION', message, { errors: { status: [message] } });
}

/**
 * Checks the tenant database may serve reads (the module-read rule of issue 14).
 * @throws 422 INVALID_TRANSITION (not copied, flag off, migrations pending), 422 tenant_db_unreachable
 */
async function servingRow(deps: SmokeDeps, tenantId: number): Promise<TenantDbRow> {
  const row = await readTenantDb(deps.knex, tenantId);
  const src = await readSource(deps.knex, row, deps.appKey);
  if (src.reason === 'tenant_db_unreachable')
    throw new TenantDbUnreachable(`The tenant database did not answer: ${src.detail}`);
  if (src.reason) throw notServing(row, `${src.reason}, ${src.detail}`);
  return row;
}

/**
 * A module's first page from the tenant database: the list envelope with `module`, `source`
 * (always `tenant_db`) and `fallback_reason` null.
 * @throws the errors of servingRow; TenantDbUnreachable when the read itself fails
 */
export async function smokeModule(deps: SmokeDeps, tenantId: number, module: RoutedModule) {
  const row = await servingRow(deps, tenantId);
  const page = await moduleRead(deps.knex, row, deps.appKey, module);
  if (page.source !== 'tenant_db')
    throw new TenantDbUnreachable(`The tenant database did not answer: ${page.fallback_detail ?? ''}`);
  return page;
}

/** DEMO- customers of the tenant database, their invoices and tickets (the demo-flow report). */
export async function smokeDemoFlow(deps: SmokeDeps, tenantId: number) {
  await servingRow(deps, tenantId);
  return demoFlow(deps, String(tenantId));
}
