import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../db/tenant-scope.js';
import { Customer, Onu, Ticket, User } from '../../db/models/index.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import { recordAudit } from '../audit-logs/service.js';
import { Forbidden, NotFound, ValidationFailed, type FieldErrors } from '../errors.js';
import { paginate, whereContains, type PageParams } from '../shared/list.js';
import { iso } from '../shared/schemas.js';
import { dueDates, type Priority } from './sla.js';

/** Ticket status values (document 1 "States and transitions"). */
export const TICKET_STATUSES = ['open', 'inprogress', 'resolved', 'closed'] as const;
/** One of TICKET_STATUSES. */
export type TicketStatus = (typeof TICKET_STATUSES)[number];

/** Roles allowed to reopen a resolved or closed ticket (document 1, state table). */
export const REOPEN_ROLES = ['Super Admin', 'Administrator'];

/** Who acts: the user, their permissions and the caller's IP, for checks and the audit log. */
export interface Actor {
  userId: number | null;
  /** The caller's permission names (login tokens); decides who may reassign in PUT. */
  permissions?: readonly string[];
  ip?: string | null;
}

/** Input of createTicket (document 1, ticket create payload; the admin API adds assigned_to). */
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
  /** A user of the tenant (admin API only; the external schema does not accept it). */
  assigned_to?: number | null;
}

/** Body of PUT /api/tickets/{id} after schema validation: the editable fields, replaced as a whole. */
export interface TicketUpdateInput {
  type: string;
  customer_id?: number | null;
  onu_id?: number | null;
  priority?: Priority | null;
  description?: string | null;
  location_text?: string | null;
  contact_name?: string | null;
  contact_phone?: string | null;
  assigned_to?: number | null;
  /** Present only to be refused (the status has PATCH /api/tickets/{id}). */
  status?: unknown;
}

/** Validated query of GET /api/tickets and GET /api/external/v1/tickets. */
export interface TicketFilters {
  search?: string;
  status?: string;
  priority?: string;
  customer_id?: number;
  /** Admin list only. */
  assigned_to?: number;
}

/**
 * Field errors for body ids that are not records of the scope's tenant (document 1 "404 record not
 * found in the tenant" becomes a 422 field error for ids in a body); a new assignee must also be an
 * active user (the current one may stay after being deactivated). Runs the checks one after
 * another: a transaction is one connection.
 * @param currentAssignee the ticket's assigned_to before the change (undefined for a new ticket)
 */
async function foreignIds(
  s: TenantScope,
  input: { customer_id?: number | null; onu_id?: number | null; assigned_to?: number | null },
  currentAssignee?: number | null,
): Promise<FieldErrors> {
  const errors: FieldErrors = {};
  if (input.customer_id != null && !(await s.query(Customer).findById(input.customer_id).select('id'))) {
    errors.customer_id = ['The selected customer id is invalid.'];
  }
  if (input.onu_id != null && !(await s.query(Onu).findById(input.onu_id).select('id'))) {
    errors.onu_id = ['The selected onu id is invalid.'];
  }
  if (input.assigned_to != null && input.assigned_to !== currentAssignee) {
    const user = await User.query(s.knex)
      .findById(input.assigned_to)
      .where('tenant_id', s.tenantId)
      .select('id', 'is_active');
    if (!user) errors.assigned_to = ['The selected assigned to is invalid.'];
    else if (!user.is_active) errors.assigned_to = ['The selected user is deactivated.'];
  }
  return errors;
}

/** The audit summary of a ticket (ids and short fields only; no contact data). */
function summary(r: PartialModelObject<Ticket>) {
  return {
    ticket_number: r.ticket_number ?? null,
    type: r.type ?? null,
    priority: r.priority ?? null,
    status: r.status ?? null,
    customer_id: r.customer_id ?? null,
    onu_id: r.onu_id ?? null,
    assigned_to: r.assigned_to ?? null,
  };
}

/**
 * Creates a ticket in the scope's tenant: number TCK-000001 per tenant, SLA due dates from the
 * priority (default medium), status default open. With `opts.actor` (admin API) the creation is
 * audited (`tickets.created`) in the same transaction.
 * @param source external | admin | portal | incident | bot (DESIGN.md §6)
 * @param opts.clock the time source of created_at and the due dates (default the system clock)
 * @throws ValidationFailed when customer_id, onu_id or assigned_to is not a record of the same tenant
 */
export async function createTicket(
  scope: TenantScope,
  settings: Record<string, unknown>,
  input: TicketInput,
  source: string,
  opts: { actor?: Actor; clock?: Clock } = {},
): Promise<number> {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const errors = await foreignIds(s, input);
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    const priority = input.priority ?? 'medium';
    const now = (opts.clock ?? systemClock).now();
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
        assigned_to: input.assigned_to ?? null,
        ...dueDates(settings, priority, now),
        created_at: now,
        updated_at: now,
      },
      trx,
    );
    if (opts.actor) {
      await recordAudit(s, {
        userId: opts.actor.userId,
        action: 'tickets.created',
        subject: { type: 'tickets', id: row.id },
        after: { ...summary(row), source },
        ip: opts.actor.ip ?? null,
      });
    }
    return row.id;
  });
}

/**
 * PUT /api/tickets/{id}: replaces the editable fields (omitted ones become null, priority medium).
 * A changed priority moves the SLA due dates (counted from created_at, tenant SLA); sla_breached is
 * kept (a recorded breach stays history). Changing assigned_to needs tickets.assign (document 2
 * "manual ticket assign"); sending the current value does not. Audited as `tickets.updated`.
 * @throws ValidationFailed (422) for a `status` field or foreign ids; NotFound for an id outside the
 *   tenant; Forbidden (403 naming tickets.assign) for a reassignment without it
 */
export async function updateTicket(
  scope: TenantScope,
  settings: Record<string, unknown>,
  actor: Actor,
  id: number,
  input: TicketUpdateInput,
  clock: Clock = systemClock,
): Promise<void> {
  if (input.status !== undefined) {
    throw new ValidationFailed({ status: ['The status cannot be set here; use PATCH /api/tickets/{id}.'] });
  }
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Ticket).findById(id).forUpdate();
    if (!row) throw new NotFound('Ticket');
    const assignee = input.assigned_to ?? null;
    if (assignee !== row.assigned_to && !actor.permissions?.includes('tickets.assign')) {
      throw new Forbidden('Changing assigned_to needs the tickets.assign permission.');
    }
    const errors = await foreignIds(s, input, row.assigned_to);
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    const priority = input.priority ?? 'medium';
    const patch: PartialModelObject<Ticket> = {
      type: input.type,
      customer_id: input.customer_id ?? null,
      onu_id: input.onu_id ?? null,
      priority,
      description: input.description ?? null,
      location_text: input.location_text ?? null,
      contact_name: input.contact_name ?? null,
      contact_phone: input.contact_phone ?? null,
      assigned_to: assignee,
      updated_at: clock.now(),
      ...(priority !== row.priority ? dueDates(settings, priority, row.created_at) : {}),
    };
    await s.query(Ticket).findById(id).patch(patch);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'tickets.updated',
      subject: { type: 'tickets', id },
      before: summary(row),
      after: summary({ ...row, ...patch }),
      ip: actor.ip ?? null,
    });
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

/** The columns of every ticket read (ticketShape's input). */
const TICKET_COLUMNS = [
  't.*',
  'c.code as c_code',
  'c.name as c_name',
  'o.serial_number as o_serial',
  'o.status as o_status',
  'u.name as u_name',
  'u.email as u_email',
];

/** Tickets `t` of the scope's tenant with customer `c`, ONU `o` (same tenant) and assignee `u`; no select. */
function ticketFrom(scope: TenantScope) {
  return scope
    .query(Ticket, { alias: 't' })
    .leftJoin('customers as c', (j) => {
      j.on('c.id', 't.customer_id').andOn('c.tenant_id', 't.tenant_id');
    })
    .leftJoin('onus as o', (j) => {
      j.on('o.id', 't.onu_id').andOn('o.tenant_id', 't.tenant_id');
    })
    .leftJoin('users as u', 'u.id', 't.assigned_to');
}

/** The select behind every ticket read (lists and detail). */
export function ticketQuery(scope: TenantScope) {
  return ticketFrom(scope).select(TICKET_COLUMNS);
}

/**
 * Adds the list filters of both ticket lists (document 1 external list; issue 8 admin list) to a
 * query from ticketQuery/ticketFrom: status, priority, customer_id, assigned_to, and search as a
 * case-insensitive substring of the ticket number, type, external id, contact name or customer name.
 * @returns the same query
 */
export function applyTicketFilters<Q extends ReturnType<typeof ticketFrom>>(q: Q, query: TicketFilters): Q {
  if (query.status) q.where('t.status', query.status);
  if (query.priority) q.where('t.priority', query.priority);
  if (query.customer_id) q.where('t.customer_id', query.customer_id);
  if (query.assigned_to) q.where('t.assigned_to', query.assigned_to);
  whereContains(q, ['t.ticket_number', 't.type', 't.external_id', 't.contact_name', 'c.name'], query.search);
  return q;
}

/**
 * GET /api/tickets: newest first (id tie-breaker), filters of applyTicketFilters.
 * @returns the list envelope (DESIGN.md §4) of ticket read shapes
 */
export async function listTickets(scope: TenantScope, query: TicketFilters & PageParams) {
  const q = applyTicketFilters(ticketFrom(scope), query);
  return paginate(q, TICKET_COLUMNS, ['t.created_at', 't.id'], query, ticketShape);
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
