import { Customer, Schedule, Ticket, type ScheduleStatus } from '../models/index.js';
import type { TenantScope } from '../tenant-scope.js';
import type { Rng } from './demo-data.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const JOB_TYPES = ['installation', 'repair', 'survey', 'relocation', 'maintenance'] as const;
const NOTES: Record<(typeof JOB_TYPES)[number], string> = {
  installation: 'New PPPoE line: ONU, drop cable and router; test speed with the customer.',
  repair: 'Check the drop cable and ONU rx power on site.',
  survey: 'Check the pole distance and the nearest ODP port.',
  relocation: 'Move the ONU and router to the new address.',
  maintenance: 'Clean connectors and re-terminate the fibre.',
};

/**
 * Writes demo schedules (issue 8 item 5) for a tenant: done and cancelled ones in the past two
 * weeks, one in progress today, the rest in the next week, on the technician when there is one,
 * some linked to the open tickets. Deterministic for a given rng and `now`.
 * @param count how many (full: 12, small: 4)
 * @param technicianId the user who does the work (null: unassigned)
 * @returns how many were written
 */
export async function seedSchedules(
  scope: TenantScope,
  rng: Rng,
  opts: { now: Date; count: number; technicianId: number | null; createdBy: number | null },
): Promise<number> {
  const customers = await scope.query(Customer).where('status', '!=', 'terminated').orderBy('id').select('id');
  const tickets = await scope.query(Ticket).whereIn('status', ['open', 'inprogress']).orderBy('id').select('id');
  if (!customers.length) return 0;
  const plan: ScheduleStatus[] = ['done', 'done', 'cancelled', 'in_progress'];
  while (plan.length < opts.count) plan.splice(plan.length - 1, 0, plan.length % 4 === 0 ? 'done' : 'scheduled');
  plan.splice(opts.count);
  let i = 0;
  for (const status of plan) {
    const past = status === 'done' || status === 'cancelled';
    const offset =
      status === 'in_progress'
        ? -rng.int(1, 3) * HOUR
        : past
          ? -rng.int(1, 14) * DAY
          : rng.int(1, 7) * DAY + rng.int(0, 8) * HOUR;
    const at = new Date(Math.floor((opts.now.getTime() + offset) / (30 * 60_000)) * 30 * 60_000);
    const job = rng.pick(JOB_TYPES);
    const ticket = job === 'repair' && tickets.length ? tickets[i++ % tickets.length].id : null;
    const created = new Date(Math.min(at.getTime(), opts.now.getTime()) - rng.int(1, 5) * DAY);
    const duration = job === 'installation' ? 120 : 60;
    await scope.create(Schedule, {
      scheduled_at: at,
      job_type: job,
      technician_id: opts.technicianId,
      customer_id: rng.pick(customers).id,
      ticket_id: ticket,
      duration_minutes: duration,
      notes: NOTES[job],
      status,
      started_at: status === 'in_progress' || status === 'done' ? at : null,
      finished_at: status === 'done' ? new Date(at.getTime() + duration * 60_000) : status === 'cancelled' ? at : null,
      created_by: opts.createdBy,
      created_at: created,
      updated_at: past ? at : created,
    });
  }
  return plan.length;
}
