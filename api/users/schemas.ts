import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';

/** E.164: a plus, a country code not starting with 0, 8 to 15 digits in all. */
export const E164 = '^\\+[1-9][0-9]{7,14}$';

const fields: Record<string, Schema> = {
  name: { type: 'string', minLength: 1, maxLength: 190, ...singleLine },
  email: { type: 'string', format: 'email', maxLength: 190, description: 'Unique across the platform (login).' },
  password: {
    type: 'string',
    minLength: 8,
    maxLength: 200,
    writeOnly: true,
    description: 'Write-only; stored as an argon2id hash.',
  },
  phone: { type: ['string', 'null'], pattern: E164, description: 'E.164, e.g. +6281234567890.' },
  home_base_id: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: 2147483647,
    description: 'A home base of the tenant (issue 8 item 3).',
  },
  roles: {
    type: 'array',
    minItems: 1,
    maxItems: 20,
    items: {
      type: ['integer', 'string'],
      minimum: 1,
      maximum: 2147483647,
      minLength: 1,
      maxLength: 100,
      ...singleLine,
    },
    description: "Role ids or names: built-in roles or the tenant's custom roles.",
  },
  is_active: {
    type: 'boolean',
    description: "false: the user cannot log in and the user's sessions are revoked at once.",
  },
};

/** POST /api/users body: name, email, password and roles required; is_active default true. */
export const userCreateBody: Schema = {
  type: 'object',
  required: ['name', 'email', 'password', 'roles'],
  additionalProperties: false,
  properties: fields,
};

/** PUT /api/users/{id} body: the fields given are changed, the others kept (password included). */
export const userUpdateBody: Schema = { type: 'object', additionalProperties: false, properties: fields };

/** GET /api/users query: page, per_page (20), search, role (id or name), is_active. */
export const userListQuery: Schema = pageQuery(20, {
  search: {
    type: 'string',
    maxLength: 190,
    ...singleLine,
    description: 'Case-insensitive substring of name, e-mail or phone.',
  },
  role: { type: 'string', maxLength: 100, ...singleLine, description: 'A role id (digits) or a role name.' },
  is_active: { type: 'boolean' },
});

/** A user as the API answers it (never the password). */
export const userRead: Schema = {
  type: 'object',
  required: ['id', 'name', 'email', 'roles', 'permissions', 'is_active'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    email: { type: 'string' },
    phone: { type: ['string', 'null'] },
    home_base_id: { type: ['integer', 'null'] },
    is_active: { type: 'boolean' },
    roles: {
      type: 'array',
      items: {
        type: 'object',
        properties: { id: { type: 'integer' }, name: { type: 'string' }, is_builtin: { type: 'boolean' } },
      },
    },
    permissions: { type: 'array', items: { type: 'string' }, description: 'What the roles add up to.' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

/** `{data: user}`. */
export const userOne: Schema = { type: 'object', required: ['data'], properties: { data: userRead } };

/** The list envelope of users. */
export const userList: Schema = listEnvelope(userRead);
