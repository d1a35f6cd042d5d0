import { singleLine, type Schema } from '../http/validation.js';
import { MODULES } from '../tenants/catalog.js';

const MINUTES_PER_YEAR = 525_600;

const targets: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    response_minutes: { type: 'integer', minimum: 1, maximum: MINUTES_PER_YEAR },
    resolution_minutes: { type: 'integer', minimum: 1, maximum: MINUTES_PER_YEAR },
  },
};

const sla: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { high: targets, medium: targets, low: targets },
  description:
    'Ticket SLA targets per priority, in minutes from creation (DESIGN.md §6; defaults high 60/240, ' +
    'medium 240/1440, low 480/4320). A PUT changes the targets it names.',
};

/** PUT /api/settings body: the fields given are changed. */
export const settingsUpdateBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    timezone: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      ...singleLine,
      description: 'IANA time zone, e.g. Asia/Jakarta.',
    },
    currency: { type: 'string', pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, e.g. IDR.' },
    invoice_due_days: {
      type: 'integer',
      minimum: 0,
      maximum: 365,
      description: 'Days from the period start (postpaid: from the day after its end) to the due date.',
    },
    isolation_grace_days: {
      type: ['integer', 'null'],
      minimum: 0,
      maximum: 365,
      description: 'Days past due before an overdue customer is isolated; null: never.',
    },
    ticket_reopen_enabled: { type: 'boolean', description: 'Whether customers may reopen resolved tickets.' },
    sla,
  },
};

/** The tenant's settings as the API answers them (defaults filled in). */
export const settingsRead: Schema = {
  type: 'object',
  required: ['timezone', 'currency', 'invoice_due_days', 'isolation_grace_days', 'ticket_reopen_enabled', 'sla'],
  properties: {
    timezone: { type: 'string' },
    currency: { type: 'string' },
    invoice_due_days: { type: 'integer' },
    isolation_grace_days: { type: ['integer', 'null'] },
    ticket_reopen_enabled: { type: 'boolean' },
    sla: {
      type: 'object',
      properties: Object.fromEntries(
        ['high', 'medium', 'low'].map((p) => [
          p,
          {
            type: 'object',
            properties: { response_minutes: { type: 'integer' }, resolution_minutes: { type: 'integer' } },
          },
        ]),
      ),
    },
  },
};

/** `{data: settings}`. */
export const settingsOne: Schema = { type: 'object', required: ['data'], properties: { data: settingsRead } };

const switches: Record<string, Schema> = Object.fromEntries(MODULES.map((m) => [m, { type: 'boolean' }]));

/**
 * PUT /api/settings/modules body: `{<module>: true|false}` for the modules to switch; the others
 * keep their state. An unknown name is a 422 naming it.
 */
export const modulesUpdateBody: Schema = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  properties: switches,
};

/** `{data: {<module>: boolean}}`, every module of the catalogue. */
export const modulesOne: Schema = {
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'object', required: [...MODULES], properties: switches } },
};
