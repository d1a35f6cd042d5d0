import type { TenantScope } from '../../db/tenant-scope.js';
import {
  applyTicketFilters,
  createTicket,
  ticketById,
  ticketQuery,
  ticketShape,
  type TicketInput,
} from '../tickets/service.js';
import { envelope } from '../shared/schemas.js';
import type { PageParams } from './query.js';

/**
 * Tickets of the External v1 API (document 1: GET/POST /api/external/v1/tickets,
 * GET /api/external/v1/tickets/{id}). Read shape and creation live in api/tickets/service.ts.
 */

/** Validated query of the tickets list. */
export interface TicketListQuery extends PageParams {
  search?: string;
  status?: string;
  priority?: string;
  customer_id?: number;
}

/**
 * GET /api/external/v1/tickets: filters status, priority, customer_id, search (substring of the
 * ticket number, type, external id, contact name or customer name). Newest first; exact total.
 */
export async function listTickets(scope: TenantScope, query: TicketListQuery) {
  const q = applyTicketFilters(ticketQuery(scope), query);
  const [rows, [count]] = await Promise.all([
    q
      .clone()
      .orderBy([
        { column: 't.created_at', order: 'desc' },
        { column: 't.id', order: 'desc' },
      ])
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page),
    q.clone().clearSelect().count('* as n').castTo<{ n: string }[]>(),
  ]);
  return envelope(rows.map(ticketShape), query.page, query.per_page, Number(count?.n ?? 0));
}

/**
 * POST /api/external/v1/tickets: creates a ticket with source "external" (external_id kept).
 * @returns the ticket read shape
 * @throws ValidationFailed (422) when customer_id or onu_id is not a record of the tenant
 */
export async function createExternalTicket(scope: TenantScope, settings: Record<string, unknown>, input: TicketInput) {
  const id = await createTicket(scope, settings, input, 'external');
  return ticketById(scope, id);
}

export { ticketById };
