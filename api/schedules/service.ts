import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../db/tenant-scope.js';
import { Customer, Schedule, Ticket, User, type ScheduleStatus } from '../../db/models/index.js';
import { addDays, startOfDayIn } from '../../lib/clock.js';
import { recordAudit } from '../audit-logs/service.js';
import { InvalidTransition, NotFound, ValidationFailed, type FieldErrors } from '../errors.js';
import { paginate, type PageParams } from '../shared/list.js';
import { iso } from '../shared/schemas.js';
import { stateMachine } from '../shared/state-machine.js';

/**
 * Technician schedules (issue 8 item 5; document 2 "technician schedule"): CRUD, status changes
 * through a state machine, every write audited in its transaction.
 */

/** Body of POST /api/schedules and PUT /api/schedules/{id} after schema validation. */
export interface ScheduleInput {
  /** ISO 8601 date-time. */
  scheduled_at: string;
  job_type?: string | null;
  technician_id?: number | null;
  customer_id?: number | null;
  ticket_id?: number | null;
  /** Planned length in minutes, 1..1440. */
  duration_minutes?: number | null;
  notes?: string | null;
  /** Present only to be refused by PUT (the status has its own endpoint). */
  status?: unknown;
}

/** Validated query of GET /api/schedules. */
export interface ScheduleListQuery extends PageParams {
  /** First day (YYYY-MM-DD, tenant's zone), inclusive. */
  from?: string;
  /** Last day (YYYY-MM-DD, tenant's zone), inclusive. */
  to?: string;
  technician_id?: number;
  status?: ScheduleStatus;
}

/** Who acts: the user and the caller's IP, for the audit log. */
export interface Actor {
  userId: number | null;
  ip?: string | null;
}

/** The status a POST /api/schedules/{id}/status asks for. */
export type ScheduleTarget = Exclude<ScheduleStatus, 'scheduled'>;

/** The schedule's life: scheduled -> in_progress -> done, scheduled or in_progress -> cancelled. */
export const scheduleMachine = stateMachine<ScheduleStatus, 'start' | 'finish' | 'cancel'>({
  start: { from: ['scheduled'], to: 'in_progress' },
  finish: { from: ['in_progress'], to: 'done' },
  cancel: { from: ['scheduled', 'in_progress'], to: 'cancelled' },
});

const ACTION_FOR: Record<ScheduleTarget, 'start' | 'finish' | 'cancel'> = {
  in_progress: 'start',
  done: 'finish',
  cancelled: 'cancel',
};

/** Statuses in which the record itself may still be edited. */
const EDITABLE: readonly ScheduleStatus[] = ['scheduled', 'in_progress'];

const COLUMNS = [
  's.id',
  's.scheduled_at',
  's.job_type',
  's.technician_id',
  's.customer_id',
  's.ticket_id',
  's.duration_minutes',
  's.notes',
  's.status',
  's.started_at',
  's.finished_at',
  's.created_at',
  's.updated_at',
  'u.name as u_name',
  'c.code as c_code',
  'c.name as c_name',
  't.ticket_number as t_number',
];

/** Schedules `s` of the scope's tenant with technician `u`, customer `c` and ticket `t` (same tenant). */
function scheduleFrom(scope: TenantScope) {
  return scope
    .query(Schedule, { alias: 's' })
    .leftJoin('users as u', (j) => {
      j.on('u.id', 's.technician_id').andOn('u.tenant_id', 's.tenant_id');
    })
    .leftJoin('customers as c', (j) => {
      j.on('c.id', 's.customer_id').andOn('c.tenant_id', 's.tenant_id');
    })
    .leftJoin('tickets as t', (j) => {
      j.on('t.id', 's.ticket_id').andOn('t.tenant_id', 's.tenant_id');
    });
}

/** Row (from scheduleFrom + COLUMNS) -> read shape (api/schedules/schemas.ts scheduleRead). */
function scheduleShape(r: Record<string, any>) {
  return {
    id: r.id,
    scheduled_at: iso(r.scheduled_at),
    job_type: r.job_type,
    technician_id: r.technician_id,
    technician: r.technician_id && r.u_name != null ? { id: r.technician_id, name: r.u_name } : null,
    customer_id: r.customer_id,
    customer: r.customer_id && r.c_code != null ? { id: r.customer_id, code: r.c_code, name: r.c_name } : null,
    ticket_id: r.ticket_id,
    ticket: r.ticket_id && r.t_number != null ? { id: r.ticket_id, ticket_number: r.t_number } : null,
    duration_minutes: r.duration_minutes,
    notes: r.notes,
    status: r.status,
    started_at: iso(r.started_at),
    finished_at: iso(r.finished_at),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/**
 * GET /api/schedules: by time ascending (id tie-breaker); filters technician_id, status and the days
 * from/to in the tenant's zone.
 * @param timeZone the tenant's IANA zone
 * @returns the list envelope (DESIGN.md §4)
 */
export async function listSchedules(scope: TenantScope, query: ScheduleListQuery, timeZone: string) {
  const q = scheduleFrom(scope);
  if (query.technician_id) q.where('s.technician_id', query.technician_id);
  if (query.status) q.where('s.status', query.status);
  if (query.from) q.where('s.scheduled_at', '>=', startOfDayIn(timeZone, query.from));
  if (query.to) q.where('s.scheduled_at', '<', startOfDayIn(timeZone, addDays(query.to, 1)));
  return paginate(q, COLUMNS, ['s.scheduled_at', 's.id'], query, scheduleShape, 'asc');
}

/**
 * GET /api/schedules/{id}: the read shape.
 * @throws NotFound when the id is not a schedule of the scope's tenant
 */
export async function scheduleById(scope: TenantScope, id: number) {
  const row = await scheduleFrom(scope).select(COLUMNS).where('s.id', id).first();
  if (!row) throw new NotFound('Schedule');
  return scheduleShape(row);
}

/** Field errors for body ids that are not records of the tenant (technician: a user of the tenant). */
async function foreignIds(s: TenantScope, input: ScheduleInput): Promise<FieldErrors> {
  const errors: FieldErrors = {};
  // one after another: a transaction is one connection, which runs one query at a time
  const tech =
    input.technician_id == null ||
    (await User.query(s.knex).findById(input.technician_id).where('tenant_id', s.tenantId).select('id'));
  const customer = input.customer_id == null || (await s.query(Customer).findById(input.customer_id).select('id'));
  const ticket = input.ticket_id == null || (await s.query(Ticket).findById(input.ticket_id).select('id'));
  if (!tech) errors.technician_id = ['The selected technician id is invalid.'];
  if (!customer) errors.customer_id = ['The selected customer id is invalid.'];
  if (!ticket) errors.ticket_id = ['The selected ticket id is invalid.'];
  return errors;
}

/** The editable columns from a body; omitted fields become null (PUT replaces the record). */
function columns(input: ScheduleInput): PartialModelObject<Schedule> {
  return {
    scheduled_at: new Date(input.scheduled_at),
    job_type: input.job_type?.trim() || null,
    technician_id: input.technician_id ?? null,
    customer_id: input.customer_id ?? null,
    ticket_id: input.ticket_id ?? null,
    duration_minutes: input.duration_minutes ?? null,
    notes: input.notes ?? null,
  };
}

/** The audit summary of a schedule (no personal data beyond ids). */
function summary(r: PartialModelObject<Schedule>) {
  const at = r.scheduled_at;
  return {
    scheduled_at: at instanceof Date ? at.toISOString() : (at ?? null),
    job_type: r.job_type ?? null,
    technician_id: r.technician_id ?? null,
    customer_id: r.customer_id ?? null,
    ticket_id: r.ticket_id ?? null,
    status: r.status ?? null,
  };
}

/**
 * POST /api/schedules: creates a schedule (status scheduled) and its audit entry in one transaction.
 * @returns the new schedule's id
 * @throws ValidationFailed (422) when technician_id, customer_id or ticket_id is not of the tenant
 */
export async function createSchedule(scope: TenantScope, actor: Actor, input: ScheduleInput): Promise<number> {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const errors = await foreignIds(s, input);
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    const now = new Date();
    const row = await s.create(
      Schedule,
      { ...columns(input), status: 'scheduled', created_by: actor.userId, created_at: now, updated_at: now },
      trx,
    );
    await recordAudit(s, {
      userId: actor.userId,
      action: 'schedules.created',
      subject: { type: 'schedules', id: row.id },
      after: summary(row),
      ip: actor.ip ?? null,
    });
    return row.id;
  });
}

/**
 * PUT /api/schedules/{id}: replaces the editable fields of a scheduled or in-progress schedule.
 * @throws ValidationFailed for a `status` field or foreign ids; NotFound for an id outside the
 *   tenant; InvalidTransition (422) for a done or cancelled schedule
 */
export async function updateSchedule(scope: TenantScope, actor: Actor, id: number, input: ScheduleInput) {
  if (input.status !== undefined) {
    throw new ValidationFailed({ status: ['The status cannot be set here; use POST /api/schedules/{id}/status.'] });
  }
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Schedule).findById(id).forUpdate();
    if (!row) throw new NotFound('Schedule');
    if (!EDITABLE.includes(row.status)) throw new InvalidTransition(row.status, 'edit', EDITABLE);
    const errors = await foreignIds(s, input);
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    const patch = { ...columns(input), updated_at: new Date() };
    await s.query(Schedule).findById(id).patch(patch);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'schedules.updated',
      subject: { type: 'schedules', id },
      before: summary(row),
      after: summary({ ...patch, status: row.status }),
      ip: actor.ip ?? null,
    });
  });
}

/**
 * POST /api/schedules/{id}/status: in_progress (sets started_at), done or cancelled (set
 * finished_at), through scheduleMachine, audited.
 * @throws NotFound for an id outside the tenant; InvalidTransition (422) for a refused change
 */
export async function changeScheduleStatus(scope: TenantScope, actor: Actor, id: number, target: ScheduleTarget) {
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Schedule).findById(id).forUpdate();
    if (!row) throw new NotFound('Schedule');
    const status = scheduleMachine.next(row.status, ACTION_FOR[target]);
    const now = new Date();
    const patch: PartialModelObject<Schedule> = { status, updated_at: now };
    if (status === 'in_progress') patch.started_at = now;
    else patch.finished_at = now;
    await s.query(Schedule).findById(id).patch(patch);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'schedules.status_changed',
      subject: { type: 'schedules', id },
      before: { status: row.status },
      after: { status },
      ip: actor.ip ?? null,
    });
  });
}
