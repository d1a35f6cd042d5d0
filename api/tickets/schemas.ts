import type { Schema } from '../http/validation.js';

/** PATCH /api/tickets/{id} body: `{status}` (open, inprogress, resolved, closed; document 1 state table). */
export const ticketStatusBody: Schema = {
  type: 'object',
  required: ['status'],
  additionalProperties: false,
  properties: { status: { type: 'string', enum: ['open', 'inprogress', 'resolved', 'closed'] } },
};

/**
 * Ticket read shape (document 1) + source, external_id, response_due_at / resolution_due_at and the timestamps
 * (DESIGN.md §6).
 */
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
    priority: { type: 'string', enum: ['high', 'medium', 'low'] },
    status: { type: 'string', enum: ['open', 'inprogress', 'resolved', 'closed'] },
    description: { type: ['string', 'null'] },
    sla_breached: { type: 'boolean' },
    response_due_at: { type: ['string', 'null'], format: 'date-time' },
    resolution_due_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};
