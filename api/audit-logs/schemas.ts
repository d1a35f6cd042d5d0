import type { Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';

const DAY = { type: 'string', format: 'date', description: "A day (YYYY-MM-DD) in the tenant's time zone; inclusive." };

/**
 * GET /api/audit-logs query: page, per_page (default 20), user_id, action, subject_type, subject_id, date_from,
 * date_to.
 */
export const auditLogQuery: Schema = pageQuery(20, {
  user_id: { type: 'integer', minimum: 1, maximum: 2147483647, description: 'Only actions of this user.' },
  action: {
    type: 'string',
    minLength: 1,
    maxLength: 100,
    pattern: '^[a-z0-9_.-]+$',
    description: 'An exact action (`integrations.token_created`) or a module prefix ending in a dot (`integrations.`).',
  },
  subject_type: {
    type: 'string',
    minLength: 1,
    maxLength: 64,
    pattern: '^[a-z0-9_]+$',
    description: 'Subject type, e.g. `auth_tokens`.',
  },
  subject_id: {
    type: 'integer',
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'Subject id (with subject_type).',
  },
  date_from: DAY,
  date_to: DAY,
});

/** One audit entry as GET /api/audit-logs answers it. */
export const auditLogRead: Schema = {
  type: 'object',
  required: ['id', 'action', 'user', 'subject', 'at'],
  properties: {
    id: { type: 'integer' },
    action: { type: 'string' },
    user: {
      type: ['object', 'null'],
      properties: { id: { type: 'integer' }, name: { type: 'string' }, email: { type: 'string' } },
    },
    subject: { type: ['object', 'null'], properties: { type: { type: 'string' }, id: { type: ['integer', 'null'] } } },
    before: { type: ['object', 'null'] },
    after: { type: ['object', 'null'] },
    ip: { type: ['string', 'null'] },
    at: { type: 'string', format: 'date-time' },
  },
};

/** The list envelope of audit entries. */
export const auditLogList: Schema = listEnvelope(auditLogRead);
