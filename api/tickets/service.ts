import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../db/tenant-scope.js';
import { Customer, Onu, Ticket } from '../../db/models/index.js';
import { NotFound, ValidationFailed } from '../errors.js';
import { iso } from '../shared/schemas.js';
import { dueDates, type Priority } from './sla.js';

/** Ticket status values (document 1 "States and transitions"). */
export const TICKET_STATUSES = ['open', 'inprogress', 'resolved', 'closed'] as const;
/** One of TICKET_STATUSES. */
export type TicketStatus = (typeof TICKET_STATUSES)[number];

/** Roles allowed to reopen a resolved or closed ticket (document 1, state table). */
export const REOPEN_ROLES = ['Super Admin', 'Administrator'];

/** Input of createTicket (document 1, ticket create payload). */
export interface TicketInput {
  type: string;
  customer_id?: number | null;
  onu_id?: number | null;
  priority?: Priority | null;
  status?: 'open' | 'inprogress' | null;
  description?: string | null;
  location_text?: string | null;
  contact_name?: string | null;
  contact_phone?: string | null;
  external_id?: string | null;
}

/**
 * Creates a ticket in the scope's tenant: number TCK-000001 per tenant, SLA due dates from the
 * priority (default medium), status default open.
 * @param source external | admin | portal | incident | bot (DESIGN.md §6)
 * @throws ValidationFailed when customer_id or onu_id is not a record of the same tenant
 */
export async function createTicket(
  scope: TenantScope,
  settings: Record<string, unknown>,
  input: TicketInput,
  source: string,
): Promise<number> {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const errors: Record<string, string[]> = {};
    if (input.customer_id != null && !(await s.query(Customer).findById(input.customer_id).select('id'))) {
      errors.customer_id = ['The selected customer id is invalid.'];
    }
    if (input.onu_id != null && !(await s.query(Onu).findById(input.onu_id).select('id'))) {
      errors.onu_id = ['The selected onu id is invalid.'];
    }
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    const priority = input.priority ?? 'medium';
    const now = new Date();
    const n = await s.nextNumber('ticket', trx);
    const row = await s.create(
      Ticket,
      {
        ticket_number: `TCK-${String(n).padStart(6, '0')}`,
        source,
        external_id: input.external_id ?? null,
        customer_id: input.customer_id ?? null,
        onu_id: input.onu_id ?? null,
        type: input.type,
        priority,
        status: input.status ?? 'open',
        description: input.description ?? null,
        location_text: input.location_text ?? null,
        contact_name: input.contact_name ?? null,
        contact_phone: input.contact_phone ?? null,
        ...dueDates(settings, priority, now),
        created_at: now,
        updated_at: now,
      },
      trx,
    );
    return row.id;
  });
}

/**
 * Ticket status change (document 1 state table; PATCH /api/tickets/{id}). Reopening a resolved or
 * closed ticket (to open or inprogress) needs role Administrator or Super Admin; anyone else gets a
 * 422 field error telling them to reopen through an admin. Sets resolved_at / closed_at.
 * @throws NotFound for an id outside the tenant; ValidationFailed for a refused reopen
 */
export async function changeStatus(
  scope: TenantScope,
  id: number,
  status: TicketStatus,
  actorRoles: string[],
): Promise<void> {
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const t = await s.query(Ticket).findById(id).forUpdate().select('id', 'status', 'resolved_at', 'responded_at');
    if (!t) throw new NotFound('Ticket');
    const finished = t.status === 'resolved' || t.status === 'closed';
    const reopening = finished && (status === 'open' || status === 'inprogress');
    if (reopening && !actorRoles.some((r) => REOPEN_ROLES.includes(r))) {
      throw new ValidationFailed({
        status: ['This ticket is already resolved or closed. Ask an Administrator to reopen it.'],
      });
    }
    const now = new Date();
    const patch: PartialModelObject<Ticket> = { status, updated_at: now };
    if (status === 'inprogress' && !t.responded_at) patch.responded_at = now;
    if (status === 'resolved') patch.resolved_at = now;
    if (status === 'closed') {
      patch.closed_at = now;
      if (!t.resolved_at) patch.resolved_at = now;
    }
    if (reopening) {
      patch.resolved_at = null;
      patch.closed_at = null;
    }
    await s.query(Ticket).findById(id).patch(patch);
  });
}

/**
 * Read shape of a ticket (document 1): includes customer {id, code, name}, onu, assignee, due dates.
 * @throws NotFound when the id is not a ticket of the scope's tenant
 */
export async function ticketById(scope: TenantScope, id: number) {
  const rows = await ticketQuery(scope).where('t.id', id);
  if (!rows.length) throw new NotFound('Ticket');
  return ticketShape(rows[0]);
}

/** The select behind every ticket read (lists and detail). */
export function ticketQuery(scope: TenantScope) {
  return scope
    .query(Ticket, { alias: 't' })
    .leftJoin('customers as c', (j) => {
      j.on('c.id', 't.customer_id').andOn('c.tenant_id', 't.tenant_id');
    })
    .leftJoin('onus as o', (j) => {
      j.on('o.id', 't.onu_id').andOn('o.tenant_id', 't.tenant_id');
    })
    .leftJoin('users as u', 'u.id', 't.assigned_to')
    .select(
      't.*',
      'c.code as c_code',
      'c.name as c_name',
      'o.serial_number as o_serial',
      'o.status as o_status',
      'u.name as u_name',
      'u.email as u_email',
    );
}

/** Row (from ticketQuery) -> read shape. */
export function ticketShape(r: Record<string, any>) {
  return {
    id: r.id,
    ticket_number: r.ticket_number,
    source: r.source,
    external_id: r.external_id,
    customer_id: r.customer_id,
    customer: r.customer_id ? { id: r.customer_id, code: r.c_code, name: r.c_name } : null,
    onu: r.onu_id ? { id: r.onu_id, serial_number: r.o_serial, status: r.o_status } : null,
    assigned_to: r.assigned_to,
    assignee: r.assigned_to ? { id: r.assigned_to, name: r.u_name, email: r.u_email } : null,
    type: r.type,
    priority: r.priority,
    status: r.status,
    description: r.description,
    location_text: r.location_text,
    contact_name: r.contact_name,
    contact_phone: r.contact_phone,
    sla_breached: r.sla_breached,
    response_due_at: iso(r.response_due_at),
    resolution_due_at: iso(r.resolution_due_at),
    responded_at: iso(r.responded_at),
    resolved_at: iso(r.resolved_at),
    closed_at: iso(r.closed_at),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}
