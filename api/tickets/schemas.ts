import { SINGLE_LINE_PATTERN, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';

/**
 * JSON schemas of the admin ticket endpoints (document 2 "Tickets"; document 1 ticket fields and
 * state table; issue 8 item 6). They validate requests (api/http/route.ts) and feed /openapi.json.
 */

/** Ticket status values (document 1). */
const STATUSES = ['open', 'inprogress', 'resolved', 'closed'];
/** Ticket priorities (document 1). */
const PRIORITIES = ['high', 'medium', 'low'];

/** Default per_page of GET /api/tickets (DESIGN.md §4, admin lists). */
export const TICKET_PER_PAGE = 20;

const ID = { type: 'integer', minimum: 1, maximum: 2147483647 };
const idOrNull = (description: string): Schema => ({ ...ID, type: ['integer', 'null'], description });
/** A one-line string of at most `max` characters (`min` 1 for required text). */
const line = (max: number, min = 0): Schema => ({
  type: 'string',
  maxLength: max,
  ...(min ? { minLength: min } : {}),
  pattern: SINGLE_LINE_PATTERN,
});
const lineOrNull = (max: number): Schema => ({ ...line(max), type: ['string', 'null'] });
/** Free text (newlines allowed; NUL is refused for every body string by api/http/hostile-input.ts). */
const textOrNull = (max: number): Schema => ({ type: ['string', 'null'], maxLength: max });
const ts: Schema = { type: 'string', format: 'date-time' };
const tsOrNull: Schema = { type: ['string', 'null'], format: 'date-time' };
const userRef: Schema = {
  type: ['object', 'null'],
  description: 'Who wrote the entry (null once the user is gone).',
  properties: { id: { type: 'integer' }, name: { type: 'string' } },
};

/** PATCH /api/tickets/{id} body: `{status}` (open, inprogress, resolved, closed; document 1 state table). */
export const ticketStatusBody: Schema = {
  type: 'object',
  required: ['status'],
  additionalProperties: false,
  properties: { status: { type: 'string', enum: STATUSES } },
};

/** GET /api/tickets query: page, per_page (default 20), search, status, priority, customer_id, assigned_to. */
export const ticketListQuery: Schema = pageQuery(TICKET_PER_PAGE, {
  search: {
    ...line(100),
    description: 'Case-insensitive substring of the ticket number, type, external id, contact name or customer name.',
  },
  status: { type: 'string', enum: STATUSES },
  priority: { type: 'string', enum: PRIORITIES },
  customer_id: ID,
  assigned_to: { ...ID, description: 'Tickets assigned to this user.' },
});

/** The editable fields of a ticket (document 1 create payload without status and external_id) + assigned_to. */
const editable: Record<string, Schema> = {
  type: { ...line(190, 1), description: 'Free text describing the problem category.' },
  customer_id: idOrNull('A customer of the tenant.'),
  onu_id: idOrNull('An ONU of the tenant.'),
  priority: {
    type: ['string', 'null'],
    enum: [...PRIORITIES, null],
    description: 'Default medium; the SLA due dates follow it.',
  },
  description: textOrNull(10000),
  location_text: textOrNull(1000),
  contact_name: lineOrNull(190),
  contact_phone: lineOrNull(40),
  assigned_to: idOrNull('A user of the tenant who works the ticket.'),
};

/** POST /api/tickets body: document 1's ticket create payload + assigned_to (source becomes admin). */
export const ticketCreateBody: Schema = {
  type: 'object',
  required: ['type'],
  additionalProperties: false,
  properties: {
    ...editable,
    status: { type: ['string', 'null'], enum: ['open', 'inprogress', null], description: 'Default open.' },
    external_id: { ...lineOrNull(190), description: 'Id of the ticket in another system.' },
  },
};

/**
 * PUT /api/tickets/{id} body: the whole editable record (fields left out become null, priority
 * medium). `status` is not accepted here (422 naming PATCH /api/tickets/{id}); it is declared only so
 * that the refusal can say so. external_id stays as created.
 */
export const ticketUpdateBody: Schema = {
  type: 'object',
  required: ['type'],
  additionalProperties: false,
  properties: {
    ...editable,
    status: { description: 'Not accepted: change the status with PATCH /api/tickets/{id}.' },
  },
};

/** POST /api/tickets/{id}/comments body. */
export const ticketCommentBody: Schema = {
  type: 'object',
  required: ['body'],
  additionalProperties: false,
  properties: {
    body: { type: 'string', minLength: 1, maxLength: 5000, description: 'The text; not blank.' },
    kind: {
      type: 'string',
      enum: ['comment', 'note'],
      default: 'comment',
      description: 'comment: part of the conversation on the ticket; note: internal to the staff.',
    },
  },
};

/** POST /api/tickets/{id}/check-ins body: where the technician is, in WGS 84 degrees and metres. */
export const ticketCheckInBody: Schema = {
  type: 'object',
  required: ['latitude', 'longitude', 'accuracy'],
  additionalProperties: false,
  properties: {
    latitude: { type: 'number', minimum: -90, maximum: 90, description: 'Degrees.' },
    longitude: { type: 'number', minimum: -180, maximum: 180, description: 'Degrees.' },
    accuracy: { type: 'number', minimum: 0, maximum: 100000, description: 'GPS accuracy radius in metres.' },
    note: textOrNull(2000),
  },
};

/** POST /api/tickets/{id}/attachments: multipart/form-data with one file (documentation). */
export const ticketAttachmentUpload: Schema = {
  type: 'object',
  required: ['file'],
  additionalProperties: false,
  properties: {
    file: {
      type: 'string',
      contentMediaType: 'application/octet-stream',
      description: 'JPG, PNG, WEBP or PDF (decided by content, not by name), at most 10 MB (10,485,760 bytes).',
    },
  },
};

/** Path of GET /api/tickets/{id}/attachments/{attachmentId}. */
export const attachmentParams: Schema = {
  type: 'object',
  required: ['id', 'attachmentId'],
  additionalProperties: false,
  properties: { id: ID, attachmentId: ID },
};

/** Ticket read shape (document 1) + source, external_id, due dates and timestamps (DESIGN.md §6). */
export const ticketRead: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    ticket_number: { type: 'string' },
    source: { type: 'string' },
    external_id: { type: ['string', 'null'] },
    customer_id: { type: ['integer', 'null'] },
    customer: { type: ['object', 'null'] },
    onu: { type: ['object', 'null'] },
    assigned_to: { type: ['integer', 'null'] },
    assignee: { type: ['object', 'null'] },
    type: { type: 'string' },
    priority: { type: 'string', enum: PRIORITIES },
    status: { type: 'string', enum: STATUSES },
    description: { type: ['string', 'null'] },
    location_text: { type: ['string', 'null'] },
    contact_name: { type: ['string', 'null'] },
    contact_phone: { type: ['string', 'null'] },
    sla_breached: { type: 'boolean' },
    response_due_at: tsOrNull,
    resolution_due_at: tsOrNull,
    responded_at: tsOrNull,
    resolved_at: tsOrNull,
    closed_at: tsOrNull,
    created_at: ts,
    updated_at: ts,
  },
};

/** A comment or note of the work record. */
export const ticketCommentRead: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    kind: { type: 'string', enum: ['comment', 'note'] },
    body: { type: 'string' },
    user: userRef,
    created_at: ts,
  },
};

/** An attachment of the work record (metadata; the file is at `download_url`). */
export const ticketAttachmentRead: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    file_name: { type: 'string' },
    mime_type: { type: 'string', enum: ['image/jpeg', 'image/png', 'image/webp', 'application/pdf'] },
    size_bytes: { type: 'integer' },
    sha256: { type: 'string', description: 'SHA-256 of the content, lower-case hex.' },
    download_url: { type: 'string', description: 'Path of GET /api/tickets/{id}/attachments/{attachmentId}.' },
    user: userRef,
    created_at: ts,
  },
};

/** A field check-in of the work record. */
export const ticketCheckInRead: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    latitude: { type: 'number' },
    longitude: { type: 'number' },
    accuracy: { type: 'number', description: 'Metres.' },
    note: { type: ['string', 'null'] },
    user: userRef,
    created_at: ts,
  },
};

/** The admin detail: the read shape + the work record (oldest first) + resolution_requirements. */
export const ticketDetailRead: Schema = {
  type: 'object',
  properties: {
    ...(ticketRead.properties as Record<string, Schema>),
    comments: { type: 'array', items: ticketCommentRead },
    attachments: { type: 'array', items: ticketAttachmentRead },
    check_ins: { type: 'array', items: ticketCheckInRead },
    resolution_requirements: {
      type: 'object',
      description:
        'What resolve-all needs: processed = responded_at set; documented = a comment, note, attachment or ' +
        'check-in exists; met = both.',
      properties: {
        processed: { type: 'boolean' },
        documented: { type: 'boolean' },
        met: { type: 'boolean' },
      },
    },
  },
};

/** `{data: X}`. */
export const dataOf = (s: Schema): Schema => ({ type: 'object', required: ['data'], properties: { data: s } });

/** The list envelope of GET /api/tickets. */
export const ticketList: Schema = listEnvelope(ticketRead);
