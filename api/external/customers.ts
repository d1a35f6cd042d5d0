import type { TenantScope } from '../../db/tenant-scope.js';
import { Customer, Package } from '../../db/models/index.js';
import { NotFound, ValidationFailed, type FieldErrors } from '../errors.js';
import { MAC_REQUIRED_SERVICE_TYPES, normaliseMac } from '../customers/mac.js';
import { ticketQuery, ticketShape } from '../tickets/service.js';
import { customerSelect, customerShape, INVOICE_COLUMNS, invoiceFrom, invoiceShape } from './shapes.js';

/**
 * Customers of the External v1 API (document 1: POST /api/external/v1/customers,
 * GET /api/external/v1/customers/{id}; DESIGN.md §6). The list is in customer-list.ts.
 */

/** Latest invoices and tickets shown on the customer detail. */
export const CUSTOMER_DETAIL_LATEST = 5;

/**
 * GET /api/external/v1/customers/{id}: the read shape plus latest_invoices and latest_tickets
 * (5 each, newest first; DESIGN.md §6).
 * @throws NotFound when the id is not a customer of the scope's tenant
 */
export async function customerById(scope: TenantScope, id: number) {
  return customerDetail(scope, id, customerSelect(scope), customerShape);
}

/**
 * A customer's detail: `shape` of its row plus latest_invoices and latest_tickets (5 each, newest
 * first). Three queries in parallel, all tenant-scoped. Shared by the external and the admin API
 * (api/customers), which differ in the select list and the read shape.
 * @param select the customers query aliased `c` (its select list and joins)
 * @param shape the read shape of one row
 * @throws NotFound when the id is not a customer of the scope's tenant
 */
export async function customerDetail<S extends object>(
  scope: TenantScope,
  id: number,
  select: ReturnType<typeof customerSelect>,
  shape: (row: Record<string, any>) => S,
) {
  const [rows, invoices, tickets] = await Promise.all([
    select.where('c.id', id),
    invoiceFrom(scope)
      .select(INVOICE_COLUMNS)
      .where('i.customer_id', id)
      .orderBy([
        { column: 'i.created_at', order: 'desc' },
        { column: 'i.id', order: 'desc' },
      ])
      .limit(CUSTOMER_DETAIL_LATEST),
    ticketQuery(scope)
      .where('t.customer_id', id)
      .orderBy([
        { column: 't.created_at', order: 'desc' },
        { column: 't.id', order: 'desc' },
      ])
      .limit(CUSTOMER_DETAIL_LATEST),
  ]);
  if (!rows.length) throw new NotFound('Customer');
  return {
    ...shape(rows[0]),
    latest_invoices: invoices.map(invoiceShape),
    latest_tickets: tickets.map(ticketShape),
  };
}

/** Customer create payload after schema validation (document 1 + mac_address). */
export interface CustomerInput {
  name: string;
  phone: string;
  address: string;
  email?: string | null;
  latitude?: number | null;
  longitude?: number | null;
  package_id?: number | null;
  status?: Customer['status'] | null;
  service_type?: Customer['service_type'] | null;
  billing_cycle?: Customer['billing_cycle'] | null;
  mac_address?: string | null;
}

/** Defaults of the nullable create fields (DESIGN.md §6). */
export const CUSTOMER_DEFAULTS = {
  status: 'active',
  service_type: 'pppoe',
  billing_cycle: 'prepaid',
  customer_tier: 'regular',
} as const;

/** Customer code from the per-tenant counter: 123 -> CUST-000123. */
export function customerCode(n: number): string {
  return `CUST-${String(n).padStart(6, '0')}`;
}

/**
 * POST /api/external/v1/customers: creates a customer in the scope's tenant.
 * Rules beyond the schema: name, phone and address not blank; mac_address required for
 * service_type dhcp/static and, whenever sent, one of the accepted MAC forms (stored as
 * AA:BB:CC:DD:EE:FF); package_id a package of the same tenant. Code CUST-000123 from the
 * tenant's counter, in the same transaction as the insert.
 * @returns the new customer's id
 * @throws ValidationFailed (422) with field errors
 */
export async function createCustomer(scope: TenantScope, input: CustomerInput): Promise<number> {
  const errors: FieldErrors = {};
  for (const f of ['name', 'phone', 'address'] as const) {
    if (!input[f].trim()) errors[f] = [`The ${f} field is required.`];
  }
  const serviceType = input.service_type ?? CUSTOMER_DEFAULTS.service_type;
  let mac: string | null = null;
  if (input.mac_address === undefined || input.mac_address === null) {
    if (MAC_REQUIRED_SERVICE_TYPES.includes(serviceType)) {
      errors.mac_address = ['The mac address field is required when service type is dhcp or static.'];
    }
  } else {
    mac = normaliseMac(input.mac_address);
    if (!mac)
      errors.mac_address = [
        'The mac address field must be a valid MAC address (AA:BB:CC:DD:EE:FF, AABB.CCDD.EEFF or AABBCCDDEEFF).',
      ];
  }
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    if (input.package_id != null && !(await s.query(Package).findById(input.package_id).select('id'))) {
      errors.package_id = ['The selected package id is invalid.'];
    }
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    const code = customerCode(await s.nextNumber('customer', trx));
    const now = new Date();
    const row = await s.create(
      Customer,
      {
        code,
        name: input.name.trim(),
        phone: input.phone.trim(),
        address: input.address.trim(),
        email: input.email ?? null,
        latitude: input.latitude ?? null,
        longitude: input.longitude ?? null,
        package_id: input.package_id ?? null,
        status: input.status ?? CUSTOMER_DEFAULTS.status,
        service_type: serviceType,
        billing_cycle: input.billing_cycle ?? CUSTOMER_DEFAULTS.billing_cycle,
        customer_tier: CUSTOMER_DEFAULTS.customer_tier,
        mac_address: mac,
        created_at: now,
        updated_at: now,
      },
      trx,
    );
    return row.id;
  });
}
