import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';

/** Schedule statuses (issue 8 item 5). */
export const SCHEDULE_STATUSES = ['scheduled', 'in_progress', 'done', 'cancelled'] as const;

const ID = { type: 'integer', minimum: 1, maximum: 2147483647 };
const nullableId = (description: string) => ({
  type: ['integer', 'null'],
  minimum: 1,
  maximum: 2147483647,
  description,
});
const DAY = { type: 'string', format: 'date', description: "A day (YYYY-MM-DD) in the tenant's time zone; inclusive." };

/** Fields of a schedule body shared by POST and PUT (document 2 "technician schedule" + issue 8). */
const fields: Record<string, Schema> = {
  scheduled_at: { type: 'string', format: 'date-time', description: 'When the visit or job starts (ISO 8601).' },
  job_type: {
    type: ['string', 'null'],
    maxLength: 100,
    ...singleLine,
    description: 'What is done, e.g. installation, repair, survey.',
  },
  technician_id: nullableId('A user of the tenant who does the work.'),
  customer_id: nullableId('A customer of the tenant.'),
  ticket_id: nullableId('A ticket of the tenant.'),
  duration_minutes: { type: ['integer', 'null'], minimum: 1, maximum: 1440, description: 'Planned length.' },
  notes: { type: ['string', 'null'], maxLength: 5000 },
};

/** POST /api/schedules body: scheduled_at required. */
export const scheduleCreateBody: Schema = {
  type: 'object',
  required: ['scheduled_at'],
  additionalProperties: false,
  properties: fields,
};

/**
 * PUT /api/schedules/{id} body: the whole editable record (fields left out become null). `status`
 * is not accepted here (422 naming POST /api/schedules/{id}/status); it is declared only so that the
 * refusal can say so.
 */
export const scheduleUpdateBody: Schema = {
  type: 'object',
  required: ['scheduled_at'],
  additionalProperties: false,
  properties: {
    ...fields,
    status: { description: 'Not accepted: change the status with POST /api/schedules/{id}/status.' },
  },
};

/** POST /api/schedules/{id}/status body. */
export const scheduleStatusBody: Schema = {
  type: 'object',
  required: ['status'],
  additionalProperties: false,
  properties: { status: { type: 'string', enum: ['in_progress', 'done', 'cancelled'] } },
};

/** GET /api/schedules query: page, per_page (20), from, to (days), technician_id, status. */
export const scheduleListQuery: Schema = pageQuery(20, {
  from: DAY,
  to: DAY,
  technician_id: ID,
  status: { type: 'string', enum: [...SCHEDULE_STATUSES] },
});

/** A schedule as the API answers it. */
export const scheduleRead: Schema = {
  type: 'object',
  required: ['id', 'scheduled_at', 'status'],
  properties: {
    id: { type: 'integer' },
    scheduled_at: { type: 'string', format: 'date-time' },
    job_type: { type: ['string', 'null'] },
    technician_id: { type: ['integer', 'null'] },
    technician: { type: ['object', 'null'], properties: { id: { type: 'integer' }, name: { type: 'string' } } },
    customer_id: { type: ['integer', 'null'] },
    customer: {
      type: ['object', 'null'],
      properties: { id: { type: 'integer' }, code: { type: 'string' }, name: { type: 'string' } },
    },
    ticket_id: { type: ['integer', 'null'] },
    ticket: {
      type: ['object', 'null'],
      properties: { id: { type: 'integer' }, ticket_number: { type: 'string' } },
    },
    duration_minutes: { type: ['integer', 'null'] },
    notes: { type: ['string', 'null'] },
    status: { type: 'string', enum: [...SCHEDULE_STATUSES] },
    started_at: { type: ['string', 'null'], format: 'date-time' },
    finished_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

/** `{data: schedule}`. */
export const scheduleOne: Schema = { type: 'object', required: ['data'], properties: { data: scheduleRead } };

/** The list envelope of schedules. */
export const scheduleList: Schema = listEnvelope(scheduleRead);
