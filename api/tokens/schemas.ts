import { singleLine, type Schema } from '../http/validation.js';

/** Integration token create payload (document 1). */
export const tokenCreateBody: Schema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 190, ...singleLine },
    access: { type: 'string', enum: ['read', 'read_write'], default: 'read' },
    expires_at: { type: ['string', 'null'], format: 'date-time', maxLength: 64 },
  },
};

/** Integration token info shape (document 1). */
export const tokenInfo: Schema = {
  type: 'object',
  required: ['id', 'name', 'access', 'created_by', 'abilities', 'last_used_at', 'expires_at', 'created_at'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    access: { type: 'string', enum: ['read', 'read_write'] },
    created_by: {
      type: ['object', 'null'],
      properties: {
        id: { type: ['integer', 'null'] },
        name: { type: ['string', 'null'] },
        email: { type: ['string', 'null'] },
      },
    },
    abilities: { type: 'array', items: { type: 'string' } },
    last_used_at: { type: ['string', 'null'], format: 'date-time' },
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: ['string', 'null'], format: 'date-time' },
  },
};
