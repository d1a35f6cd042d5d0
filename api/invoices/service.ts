import type { Queues } from '../../jobs/queues.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { Customer, Invoice } from '../../db/models/index.js';
import { formatDocumentNumber, nextNumber } from '../../db/numbering.js';
import { addDays, todayIn, type Clock } from '../../lib/clock.js';
import { compare, money, MoneyError, toDbString } from '../../lib/money.js';
import { recordAudit } from '../audit-logs/service.js';
import { NotFound, ValidationFailed, type FieldErrors } from '../errors.js';
import { INVOICE_COLUMNS, invoiceFrom, invoiceShape } from '../external/shapes.js';
import { paginate, whereContains, type PageParams } from '../shared/list.js';
import { iso } from '../shared/schemas.js';
import { stateMachine } from '../shared/state-machine.js';
import { settingsOf } from '../settings/service.js';
import { reactivateIfSettled } from '../customers/network-state.js';

/**
 * Invoices of the admin API (issue 8 item 4): list, detail, manual create and void. The billing
 * cycle (subscription invoices) is api/invoices/billing.ts and jobs/billing-cycle.ts; billing runs
 * are api/invoices/billing-runs.ts.
 */

/** Validated query of GET /api/invoices. */
export interface InvoiceListQuery extends PageParams {
  search?: string;
  status?: Invoice['status'];
  customer_id?: number;
  type?: Invoice['type'];
}

/** Body of POST /api/invoices after schema validation. */
export interface InvoiceInput {
  customer_id: number;
  /** A JSON number or a decimal string, > 0, at most 2 decimals. */
  amount: number | string;
  description: string;
  /** 'YYYY-MM-DD'; default today + invoice_due_days in the tenant's zone. */
  due_date?: string;
}

/** Who acts: the user and the caller's IP, for the audit log. */
export interface Actor {
  userId: number | null;
  ip?: string | null;
}

/** The tenant facts a write needs: its zone and settings (ctx.state.tenant). */
export interface TenantFacts {
  timezone?: string | null;
  settings?: Record<string, unknown> | null;
}

/** An invoice's life (document 1 statuses): void takes unpaid or overdue to cancelled. */
export const invoiceMachine = stateMachine<Invoice['status'], 'void'>({
  void: { from: ['unpaid', 'overdue'], to: 'cancelled' },
});

/** The admin read shape's columns: document 1's plus the issue 8 ones. */
const COLUMNS = [...INVOICE_COLUMNS, 'i.type', 'i.description', 'i.void_reason', 'i.voided_at'];

/** Row -> admin read shape (api/invoices/schemas.ts adminInvoiceRead). */
function adminShape(r: Parameters<typeof invoiceShape>[0]) {
  return {
    ...invoiceShape(r),
    type: r.type,
    description: r.description,
    void_reason: r.void_reason,
    voided_at: iso(r.voided_at),
  };
}

/**
 * GET /api/invoices: newest first (id tie-breaker), per_page 20; filters status, customer_id (a
 * foreign id matches nothing), type, search (substring of the invoice number or the customer's name
 * or code, as document 1's list).
 * @returns the list envelope (DESIGN.md §4)
 */
export async function listInvoices(scope: TenantScope, query: InvoiceListQuery) {
  const q = invoiceFrom(scope);
  if (query.status) q.where('i.status', query.status);
  if (query.customer_id) q.where('i.customer_id', query.customer_id);
  if (query.type) q.where('i.type', query.type);
  whereContains(q, ['i.invoice_number', 'ic.name', 'ic.code'], query.search);
  return paginate(q, COLUMNS, ['i.created_at', 'i.id'], query, adminShape);
}

/**
 * GET /api/invoices/{id}: the admin read shape.
 * @throws NotFound when the id is not an invoice of the scope's tenant
 */
export async function invoiceById(scope: TenantScope, id: number) {
  const row = await invoiceFrom(scope).select(COLUMNS).where('i.id', id).first();
  if (!row) throw new NotFound('Invoice');
  return adminShape(row);
}

/** The amount of a body as a numeric(14,2) string; field errors for anything else. */
function parseAmount(v: number | string, errors: FieldErrors): string | null {
  try {
    const m = money(v);
    if (compare(m, 0) <= 0) {
      errors.amount = ['The amount must be greater than 0.'];
      return null;
    }
    return toDbString(m);
  } catch (err) {
    if (!(err instanceof MoneyError)) throw err;
    errors.amount = [
      err.code === 'AMOUNT_OUT_OF_RANGE'
        ? 'The amount is too large.'
        : 'The amount must be a number with at most 2 decimals.',
    ];
    return null;
  }
}

/**
 * POST /api/invoices: a manual invoice (type manual, status unpaid, no package or period), numbered
 * from the tenant's invoice counter like every invoice (INV-000123), audited as `invoices.created`.
 * @param tenant the tenant's zone and settings (due date default and "today")
 * @param clock "today" (default the system clock)
 * @returns the new invoice's id
 * @throws ValidationFailed (422) for a customer_id not of the tenant, an amount <= 0 or malformed,
 *   or a due_date before today in the tenant's zone
 */
export async function createInvoice(
  scope: TenantScope,
  actor: Actor,
  tenant: TenantFacts,
  input: InvoiceInput,
  clock?: Clock,
): Promise<number> {
  const settings = settingsOf(tenant);
  const today = todayIn(settings.timezone, clock);
  const errors: FieldErrors = {};
  const amount = parseAmount(input.amount, errors);
  const due = input.due_date ?? addDays(today, settings.invoice_due_days);
  if (due < today) errors.due_date = ['The due date must not be before today.'];
  const description = input.description.trim();
  if (!description) errors.description = ['The description must not be blank.'];
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const customer = await s.query(Customer).findById(input.customer_id).select('id');
    if (!customer) errors.customer_id = ['The selected customer id is invalid.'];
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    // the number last: the counter row stays locked until commit (db/numbering.ts)
    const n = await nextNumber(trx, scope.tenantId, 'invoice');
    const now = new Date();
    const row = await s.create(
      Invoice,
      {
        invoice_number: formatDocumentNumber('INV', n, 6),
        customer_id: input.customer_id,
        package_id: null,
        amount: amount as unknown as number, // numeric(14,2) takes the exact decimal string
        status: 'unpaid',
        due_date: due,
        type: 'manual',
        description,
        created_at: now,
        updated_at: now,
      },
      trx,
    );
    await recordAudit(s, {
      userId: actor.userId,
      action: 'invoices.created',
      subject: { type: 'invoices', id: row.id },
      after: {
        invoice_number: row.invoice_number,
        type: 'manual',
        customer_id: input.customer_id,
        amount,
        due_date: due,
      },
      ip: actor.ip ?? null,
    });
    return row.id;
  });
}

/**
 * POST /api/invoices/{id}/void: unpaid or overdue -> cancelled; the number is kept, the reason
 * stored (void_reason, voided_at), audited as `invoices.voided`; all in one transaction.
 * @param queues the producer queues: reactivating an overdue-suspended customer left without overdue
 *   invoices (api/customers/network-state.ts reactivateIfSettled) enqueues its customer-network job
 * @throws NotFound for an id outside the tenant; InvalidTransition (422) from paid or cancelled
 */
export async function voidInvoice(
  scope: TenantScope,
  queues: Queues,
  actor: Actor,
  id: number,
  reason: string,
): Promise<void> {
  const text = reason.trim();
  if (!text) throw new ValidationFailed({ reason: ['The reason must not be blank.'] });
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Invoice).findById(id).forUpdate();
    if (!row) throw new NotFound('Invoice');
    const status = invoiceMachine.next(row.status, 'void');
    const now = new Date();
    await s.query(Invoice).findById(id).patch({ status, void_reason: text, voided_at: now, updated_at: now });
    await recordAudit(s, {
      userId: actor.userId,
      action: 'invoices.voided',
      subject: { type: 'invoices', id },
      before: { status: row.status, invoice_number: row.invoice_number },
      after: { status, void_reason: text },
      ip: actor.ip ?? null,
    });
    // an overdue-suspended customer left without overdue invoices is reactivated in this transaction
    // (issue 8 item 2); its network push is enqueued here too, so Redis down -> 503 and nothing voided
    await reactivateIfSettled(trx, queues, scope.tenantId, row.customer_id);
  });
}
