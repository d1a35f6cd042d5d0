import type { TenantScope } from '../../db/tenant-scope.js';
import { NotFound } from '../errors.js';
import { paginate, whereContains, type PageParams } from './query.js';
import { INVOICE_COLUMNS, invoiceFrom, invoiceShape } from './shapes.js';

/** Invoices of the External v1 API (document 1: GET /api/external/v1/invoices, /invoices/{id}). */

/** Validated query of the invoices list. */
export interface InvoiceListQuery extends PageParams {
  search?: string;
  status?: string;
  customer_id?: number;
  updated_since?: string;
}

/**
 * GET /api/external/v1/invoices: filters status, customer_id (a foreign id simply matches
 * nothing), updated_since (updated_at >= value), search (substring of the invoice number or the
 * customer's name or code). Newest first, id tie-breaker; exact total.
 */
export async function listInvoices(scope: TenantScope, query: InvoiceListQuery) {
  const q = invoiceFrom(scope);
  if (query.status) q.where('i.status', query.status);
  if (query.customer_id) q.where('i.customer_id', query.customer_id);
  if (query.updated_since) q.where('i.updated_at', '>=', new Date(query.updated_since));
  whereContains(q, ['i.invoice_number', 'ic.name', 'ic.code'], query.search);
  return paginate(q, INVOICE_COLUMNS, ['i.created_at', 'i.id'], query, invoiceShape);
}

/**
 * GET /api/external/v1/invoices/{id}: the invoice read shape.
 * @throws NotFound when the id is not an invoice of the scope's tenant
 */
export async function invoiceById(scope: TenantScope, id: number) {
  const row = await invoiceFrom(scope).select(INVOICE_COLUMNS).where('i.id', id).first();
  if (!row) throw new NotFound('Invoice');
  return invoiceShape(row);
}
