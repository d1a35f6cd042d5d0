import { singleLine, type Schema } from '../http/validation.js';
import { WABOT_EVENT_CATALOGUE, WABOT_GROUP_EVENTS } from '../../jobs/wabot/group-notice-texts.js';
import { ACCOUNT_ID_PATTERN } from './schemas.js';

/** Schemas of the chat groups and the event catalogue (issue 11 item 4). */

/** Group kinds (decision). */
export const GROUP_KINDS = ['network_operations', 'technicians', 'other'] as const;
/** At most this many groups per tenant (decision). */
export const MAX_GROUPS = 50;

/** Body of POST /api/wabot/groups and PUT /api/wabot/groups/{id} (PUT replaces the whole group). */
export const groupBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'account_id', 'group_id'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 120, ...singleLine },
    kind: { type: 'string', enum: [...GROUP_KINDS], default: 'other' },
    account_id: {
      type: 'string',
      pattern: ACCOUNT_ID_PATTERN,
      description: 'The sending account (`default` when the configuration has no accounts); not a messenger account.',
    },
    group_id: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      ...singleLine,
      description: "The provider's group id (e.g. `120363...@g.us`), passed to it untouched.",
    },
    events: {
      type: 'array',
      maxItems: 20,
      uniqueItems: true,
      items: { type: 'string', enum: [...WABOT_GROUP_EVENTS] },
      default: [],
      description: 'Events this group receives notices of (GET /api/wabot/events).',
    },
    enabled: { type: 'boolean', default: true },
  },
};

/** A group as read. */
export const groupRead: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    kind: { type: 'string', enum: [...GROUP_KINDS] },
    account_id: { type: 'string' },
    group_id: { type: 'string' },
    events: { type: 'array', items: { type: 'string' } },
    enabled: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

/** `{data: [groups]}`. */
export const groupList: Schema = { type: 'object', properties: { data: { type: 'array', items: groupRead } } };
/** `{data: group}`. */
export const groupOne: Schema = { type: 'object', properties: { data: groupRead } };

/** GET /api/wabot/events. */
export const eventCatalogue: Schema = {
  type: 'object',
  properties: {
    data: {
      type: 'array',
      items: { type: 'object', properties: { name: { type: 'string' }, label: { type: 'string' } } },
    },
  },
};

/** The catalogue as answered. */
export const EVENT_CATALOGUE_DATA = WABOT_EVENT_CATALOGUE.map((e) => ({ name: e.name, label: e.label }));

/** POST /api/wabot/groups/{id}/test answer. */
export const groupTestResult: Schema = {
  type: 'object',
  properties: {
    ok: { type: 'boolean' },
    data: {
      type: 'object',
      properties: {
        communication_id: { type: 'integer' },
        status: { type: 'string' },
        message_id: { type: ['string', 'null'] },
        error: {
          type: ['object', 'null'],
          properties: { code: { type: 'string' }, message: { type: ['string', 'null'] } },
        },
      },
    },
  },
};
