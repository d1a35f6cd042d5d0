/**
 * Ticket SLA (DESIGN.md §6): due dates from the priority; resolution high 4 h / medium 24 h /
 * low 72 h, response high 1 h / medium 4 h / low 8 h; a tenant may override them in
 * tenants.settings.sla = {high: {response_minutes, resolution_minutes}, ...}.
 */
export type Priority = 'high' | 'medium' | 'low';

/** SLA targets of one priority, in minutes from the ticket's creation. */
export interface SlaTargets {
  response_minutes: number;
  resolution_minutes: number;
}

/** The platform's targets when the tenant sets none (DESIGN.md §6). */
export const DEFAULT_SLA: Record<Priority, SlaTargets> = {
  high: { response_minutes: 60, resolution_minutes: 4 * 60 },
  medium: { response_minutes: 4 * 60, resolution_minutes: 24 * 60 },
  low: { response_minutes: 8 * 60, resolution_minutes: 72 * 60 },
};

/** The tenant's targets for a priority (tenant override, else the default). */
export function slaFor(settings: Record<string, unknown> | null | undefined, priority: Priority): SlaTargets {
  const o = (settings?.sla as Record<string, Partial<SlaTargets>> | undefined)?.[priority];
  const d = DEFAULT_SLA[priority];
  const pos = (v: unknown, def: number) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : def);
  return {
    response_minutes: pos(o?.response_minutes, d.response_minutes),
    resolution_minutes: pos(o?.resolution_minutes, d.resolution_minutes),
  };
}

/** response_due_at and resolution_due_at for a ticket opened at `openedAt`. */
export function dueDates(settings: Record<string, unknown> | null | undefined, priority: Priority, openedAt: Date) {
  const t = slaFor(settings, priority);
  return {
    response_due_at: new Date(openedAt.getTime() + t.response_minutes * 60_000),
    resolution_due_at: new Date(openedAt.getTime() + t.resolution_minutes * 60_000),
  };
}
