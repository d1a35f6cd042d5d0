import type { TenantScope } from '../../db/tenant-scope.js';
import { Customer, Invoice, Onu } from '../../db/models/index.js';
import { iso } from '../shared/schemas.js';

/**
 * Read shapes of the External v1 API (document 1 "Resources and their fields"; DESIGN.md §6) and
 * the explicit select lists they are built from. Every list is one query with LEFT JOINs; the
 * select lists name their columns so that no list reads more than it shows.
 */

type Row = Record<string, any>;

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

// ---- customers --------------------------------------------------------------------------------

/** Columns of a customer row joined as `c`, its package as `p` and its ONU (lateral) as `o`. */
export const CUSTOMER_COLUMNS = [
  'c.id',
  'c.code',
  'c.name',
  'c.email',
  'c.phone',
  'c.status',
  'c.service_type',
  'c.customer_tier',
  'c.address',
  'c.latitude',
  'c.longitude',
  'c.billing_cycle',
  'c.billing_day',
  'c.mac_address',
  'c.package_id',
  'c.created_at',
  'c.updated_at',
  'p.name as p_name',
  'o.id as o_id',
  'o.serial_number as o_serial_number',
  'o.status as o_status',
  'o.rx_power as o_rx_power',
  'o.tx_power as o_tx_power',
  'o.last_seen as o_last_seen',
];

/**
 * SQL of the customer's ONU join: the newest active ONU of the customer in the same tenant
 * (LATERAL ... LIMIT 1, so a customer with two ONUs is still one row). Uses onus (tenant_id,
 * customer_id).
 */
export const CUSTOMER_ONU_JOIN = `LEFT JOIN LATERAL (
  SELECT o1.id, o1.serial_number, o1.status, o1.rx_power, o1.tx_power, o1.last_seen FROM onus o1
  WHERE o1.tenant_id = c.tenant_id AND o1.customer_id = c.id AND o1.is_active
  ORDER BY o1.id DESC LIMIT 1) o ON true`;

/**
 * The customer select, confined to the scope's tenant: customers `c`, package `p` (same tenant),
 * ONU `o` (lateral). Callers add their WHERE/ORDER.
 */
export function customerSelect(scope: TenantScope) {
  return scope
    .query(Customer, { alias: 'c' })
    .leftJoin('packages as p', (j) => {
      j.on('p.id', 'c.package_id').andOn('p.tenant_id', 'c.tenant_id');
    })
    .joinRaw(CUSTOMER_ONU_JOIN)
    .select(CUSTOMER_COLUMNS);
}

/**
 * Customer read shape (document 1 + mac_address): package {id, name}, onu {id, serial_number, status, rx_power,
 * tx_power, last_seen} (dBm).
 */
export function customerShape(r: Row) {
  return {
    id: r.id,
    code: r.code,
    name: r.name,
    email: r.email,
    phone: r.phone,
    status: r.status,
    service_type: r.service_type,
    customer_tier: r.customer_tier,
    address: r.address,
    latitude: num(r.latitude),
    longitude: num(r.longitude),
    billing_cycle: r.billing_cycle,
    billing_day: r.billing_day,
    mac_address: r.mac_address,
    package: r.package_id && r.p_name !== null && r.p_name !== undefined ? { id: r.package_id, name: r.p_name } : null,
    onu: r.o_id
      ? {
          id: r.o_id,
          serial_number: r.o_serial_number,
          status: r.o_status,
          rx_power: num(r.o_rx_power),
          tx_power: num(r.o_tx_power),
          last_seen: iso(r.o_last_seen),
        }
      : null,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

// ---- invoices ---------------------------------------------------------------------------------

/** Columns of an invoice `i` with its customer `ic`. */
export const INVOICE_COLUMNS = [
  'i.id',
  'i.invoice_number',
  'i.customer_id',
  'i.package_id',
  'i.amount',
  'i.status',
  'i.due_date',
  'i.paid_at',
  'i.period_start',
  'i.period_end',
  'i.created_at',
  'i.updated_at',
  'ic.code as ic_code',
  'ic.name as ic_name',
];

/** Invoices `i` of the scope's tenant joined to their customer `ic` (same tenant); no select yet. */
export function invoiceFrom(scope: TenantScope) {
  return scope.query(Invoice, { alias: 'i' }).leftJoin('customers as ic', (j) => {
    j.on('ic.id', 'i.customer_id').andOn('ic.tenant_id', 'i.tenant_id');
  });
}

/** Invoice read shape (document 1): customer {id, code, name}; amount a JSON number; dates YYYY-MM-DD. */
export function invoiceShape(r: Row) {
  return {
    id: r.id,
    invoice_number: r.invoice_number,
    customer_id: r.customer_id,
    customer:
      r.ic_code !== null && r.ic_code !== undefined ? { id: r.customer_id, code: r.ic_code, name: r.ic_name } : null,
    package_id: r.package_id,
    amount: num(r.amount),
    status: r.status,
    due_date: r.due_date,
    paid_at: iso(r.paid_at),
    period_start: r.period_start,
    period_end: r.period_end,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

// ---- packages, OLTs, ONUs ---------------------------------------------------------------------

/** Columns selected for the package read shape. */
export const PACKAGE_COLUMNS = [
  'id',
  'name',
  'description',
  'price',
  'speed_down_kbps',
  'speed_up_kbps',
  'service_type',
  'is_active',
  'is_partner_package',
  'created_at',
  'updated_at',
];

/** Package read shape (DESIGN.md §6); price a JSON number, speeds in kbit/s. */
export function packageShape(r: Row) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    price: num(r.price),
    speed_down_kbps: r.speed_down_kbps,
    speed_up_kbps: r.speed_up_kbps,
    service_type: r.service_type,
    is_active: r.is_active,
    is_partner_package: r.is_partner_package,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/** Columns selected for the OLT read shape. */
export const OLT_COLUMNS = [
  'id',
  'name',
  'vendor',
  'model',
  'ip_address',
  'location',
  'status',
  'pon_ports',
  'created_at',
  'updated_at',
];

/** OLT read shape (DESIGN.md §6). */
export function oltShape(r: Row) {
  return {
    id: r.id,
    name: r.name,
    vendor: r.vendor,
    model: r.model,
    ip_address: r.ip_address,
    location: r.location,
    status: r.status,
    pon_ports: r.pon_ports,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/** Columns of an ONU `n` with its customer `nc` and OLT `nl`. */
export const ONU_COLUMNS = [
  'n.id',
  'n.customer_id',
  'n.olt_id',
  'n.serial_number',
  'n.pon_port',
  'n.rx_power',
  'n.tx_power',
  'n.bandwidth_pct',
  'n.status',
  'n.uptime',
  'n.last_seen',
  'n.created_at',
  'n.updated_at',
  'nc.code as nc_code',
  'nc.name as nc_name',
  'nl.name as nl_name',
];

/** ONUs `n` of the scope's tenant joined to their customer `nc` and OLT `nl` (same tenant); no select yet. */
export function onuFrom(scope: TenantScope) {
  return scope
    .query(Onu, { alias: 'n' })
    .leftJoin('customers as nc', (j) => {
      j.on('nc.id', 'n.customer_id').andOn('nc.tenant_id', 'n.tenant_id');
    })
    .leftJoin('olts as nl', (j) => {
      j.on('nl.id', 'n.olt_id').andOn('nl.tenant_id', 'n.tenant_id');
    });
}

/** ONU read shape (document 1): rx/tx power in dBm, bandwidth_pct in percent, uptime in seconds. */
export function onuShape(r: Row) {
  return {
    id: r.id,
    customer_id: r.customer_id,
    customer: r.customer_id && r.nc_code != null ? { id: r.customer_id, code: r.nc_code, name: r.nc_name } : null,
    olt: r.olt_id && r.nl_name != null ? { id: r.olt_id, name: r.nl_name } : null,
    serial_number: r.serial_number,
    pon_port: r.pon_port,
    rx_power: num(r.rx_power),
    tx_power: num(r.tx_power),
    bandwidth_pct: num(r.bandwidth_pct),
    status: r.status,
    uptime: num(r.uptime),
    last_seen: iso(r.last_seen),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}
