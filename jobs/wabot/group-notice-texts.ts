import type { EventPayloads } from '../../api/events/service.js';

/**
 * The events chat groups can tick and the texts of their notices (issue 11 item 4; document 2
 * "Events": `ticket_incident_created`, label "Incident Massal"). Texts in Indonesian, as the
 * auto-replies (jobs/wabot/auto-reply-texts.ts).
 */

/** The catalogue of GET /api/wabot/events: the events a group may tick, with their labels. */
export const WABOT_EVENT_CATALOGUE = [{ name: 'ticket_incident_created', label: 'Incident Massal' }] as const;

/** One event name of the catalogue. */
export type WabotGroupEvent = (typeof WABOT_EVENT_CATALOGUE)[number]['name'];

/** The catalogue's names. */
export const WABOT_GROUP_EVENTS: readonly WabotGroupEvent[] = WABOT_EVENT_CATALOGUE.map((e) => e.name);

/** The first line of every incident notice. */
export const INCIDENT_TITLE = 'Incident Massal';

/** `dd-mm-yyyy HH:mm` of an ISO time in a zone; the input as given when it is no time. */
export function localTime(iso: string, timeZone: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(d)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.day}-${parts.month}-${parts.year} ${parts.hour}:${parts.minute}`;
}

const clean = (v: unknown): string | null => {
  if (v === null || v === undefined) return null;
  const s = String(v).trim();
  return s === '' ? null : s.slice(0, 1000);
};

/**
 * The text of a `ticket_incident_created` notice: "Incident Massal", then the payload's
 * group_message when it has one, else a template of its fields (ticket, description, severity,
 * OLT, home base, impact area, estimated recovery in the tenant's zone); fields absent are left out.
 * @param timeZone the tenant's IANA zone (estimated_recovery_at)
 * @returns at most 4000 characters
 */
export function incidentNoticeText(
  p: EventPayloads['ticket_incident_created'],
  timeZone: string,
  title = INCIDENT_TITLE,
): string {
  const message = clean(p.group_message);
  if (message) return `${title}\n${message}`.slice(0, 4000);
  const eta = clean(p.estimated_recovery_at);
  const lines: [string, string | null][] = [
    ['Tiket', clean(p.ticket_number) ?? (p.incident_id ? `#${p.incident_id}` : p.ticket_id ? `#${p.ticket_id}` : null)],
    ['Deskripsi', clean(p.description)],
    ['Tingkat', clean(p.severity)],
    ['OLT', clean(p.olt)],
    ['Home base', clean(p.home_base)],
    ['Area terdampak', clean(p.impact_area)],
    ['Perkiraan pulih', eta ? localTime(eta, timeZone) : null],
  ];
  const body = lines.filter(([, v]) => v).map(([k, v]) => `${k}: ${v}`);
  return [title, ...body].join('\n').slice(0, 4000);
}

/** The sample notice of POST /api/wabot/groups/{id}/test. */
export function sampleNoticeText(groupName: string, timeZone: string, now: Date): string {
  return incidentNoticeText(
    {
      ticket_number: 'TCK-CONTOH',
      description: `Contoh notifikasi untuk grup "${groupName}" (tes dari pengaturan bot, bukan gangguan nyata)`,
      severity: 'high',
      olt: 'OLT-CONTOH',
      impact_area: 'Area contoh',
      estimated_recovery_at: new Date(now.getTime() + 2 * 3600_000).toISOString(),
    },
    timeZone,
    `[TES] ${INCIDENT_TITLE}`,
  );
}
