import { Ticket, TicketCheckIn, TicketComment } from '../models/index.js';
import type { TenantScope } from '../tenant-scope.js';
import type { Rng } from './demo-data.js';

const MINUTE = 60_000;

/** What a technician writes while working a ticket, by ticket type (notes are internal). */
const WORK_NOTES: Record<string, string> = {
  'No internet': 'PPPoE session was down; re-provisioned the ONU and the session came back.',
  'Slow connection': 'Rx power fine; the router was on 2.4 GHz only. Switched the customer to 5 GHz.',
  'LOS red light on ONU': 'Drop cable broken near the pole; spliced and re-terminated. Rx now -21 dBm.',
  'Intermittent connection': 'Loose patch cord in the ODP; replaced it and watched the session for 15 minutes.',
  'Relocation request': 'Surveyed the new address: ODP port free 80 m away. Relocation planned.',
  'Router replacement': 'Router swapped for a new unit; Wi-Fi name and password kept.',
  'Package upgrade': 'Upgrade applied on the NAS profile; speed test matches the new package.',
  'Billing question': 'Transfer found under another reference; finance will match it to the invoice.',
  'Wi-Fi password reset': 'Password reset with the customer on the phone.',
  'Cable cut after storm': 'Replaced 120 m of drop cable along the street; three customers back online.',
};

/** What staff tell the customer (comments are part of the conversation). */
const COMMENTS = [
  'We have received your report; a technician will contact you.',
  'The technician is on the way; please make sure somebody is at home.',
  'The problem has been fixed. Please tell us if the connection drops again.',
];

/**
 * Documents the demo tickets (issue 8 item 6): every resolved or closed ticket gets a customer
 * comment, a technician's note and a field check-in near the customer; every second in-progress
 * ticket gets a note and a check-in (the others are processed but not documented, so the detail
 * shows resolution_requirements met and not met); the first open ticket gets a comment only
 * (documented, not processed). No attachments: files live in the storage driver, outside the
 * seed's transaction (docs/decisions.md). Deterministic for a given rng and `now`.
 * @param opts.technicianId author of notes and check-ins (null: the tenant's first user)
 * @returns how many comments, notes and check-ins were written
 */
export async function seedTicketWork(
  scope: TenantScope,
  rng: Rng,
  opts: { now: Date; technicianId: number | null },
): Promise<{ comments: number; notes: number; check_ins: number }> {
  const first = await scope.knex('users').where({ tenant_id: scope.tenantId }).orderBy('id').first('id');
  const tech = opts.technicianId ?? first?.id ?? null;
  const staff = first?.id ?? null;
  const tickets = await scope
    .query(Ticket, { alias: 't' })
    .leftJoin('customers as c', (j) => {
      j.on('c.id', 't.customer_id').andOn('c.tenant_id', 't.tenant_id');
    })
    .orderBy('t.id')
    .select(
      't.id',
      't.type',
      't.status',
      't.created_at',
      't.responded_at',
      't.resolved_at',
      'c.latitude',
      'c.longitude',
    )
    .castTo<
      (Pick<Ticket, 'id' | 'type' | 'status' | 'created_at' | 'responded_at' | 'resolved_at'> & {
        latitude: number | null;
        longitude: number | null;
      })[]
    >();
  const done = { comments: 0, notes: 0, check_ins: 0 };
  const between = (from: Date, to: Date) =>
    new Date(from.getTime() + Math.floor(rng.next() * Math.max(0, to.getTime() - from.getTime())));
  let inProgress = 0;
  let openDone = false;
  for (const t of tickets) {
    const finished = t.status === 'resolved' || t.status === 'closed';
    const documentInProgress = t.status === 'inprogress' && inProgress++ % 2 === 0;
    const commentOnOpen: boolean = t.status === 'open' && !openDone;
    if (!finished && !documentInProgress && !commentOnOpen) continue;
    const start = t.responded_at ?? t.created_at;
    const end = new Date(Math.min((t.resolved_at ?? opts.now).getTime(), opts.now.getTime()));
    if (finished || commentOnOpen) {
      openDone ||= commentOnOpen;
      await scope.create(TicketComment, {
        ticket_id: t.id,
        user_id: staff,
        kind: 'comment',
        body: commentOnOpen ? COMMENTS[0] : COMMENTS[2],
        created_at: commentOnOpen ? new Date(t.created_at.getTime() + rng.int(2, 9) * MINUTE) : end,
      });
      done.comments++;
      if (commentOnOpen) continue;
    }
    const arrived = between(start, end);
    await scope.create(TicketCheckIn, {
      ticket_id: t.id,
      user_id: tech,
      latitude: (t.latitude ?? -6.9) + rng.float(-0.0003, 0.0003, 6),
      longitude: (t.longitude ?? 107.6) + rng.float(-0.0003, 0.0003, 6),
      accuracy: rng.int(4, 25),
      note: 'At the customer premises.',
      created_at: arrived,
    });
    done.check_ins++;
    await scope.create(TicketComment, {
      ticket_id: t.id,
      user_id: tech,
      kind: 'note',
      body: WORK_NOTES[t.type] ?? 'Checked the line and the ONU on site.',
      created_at: between(arrived, end),
    });
    done.notes++;
  }
  return done;
}
