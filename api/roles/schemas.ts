import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';
import { PERMISSIONS } from '../tenants/catalog.js';

const permissionList: Schema = {
  type: 'array',
  maxItems: PERMISSIONS.length,
  items: { type: 'string', maxLength: 100, ...singleLine },
  description: `Permission identifiers of the catalogue: ${PERMISSIONS.join(', ')}.`,
};

const name: Schema = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  ...singleLine,
  description: 'Unique in the tenant (any case), not a built-in name.',
};

/** POST /api/roles body: name and permissions required. */
export const roleCreateBody: Schema = {
  type: 'object',
  required: ['name', 'permissions'],
  additionalProperties: false,
  properties: { name, permissions: permissionList },
};

/** PUT /api/roles/{id} body: the fields given are replaced (permissions as a whole list). */
export const roleUpdateBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { name, permissions: permissionList },
};

/** GET /api/roles query: page, per_page (20), search (name). */
export const roleListQuery: Schema = pageQuery(20, { search: { type: 'string', maxLength: 100, ...singleLine } });

/** A role as the API answers it. */
export const roleRead: Schema = {
  type: 'object',
  required: ['id', 'name', 'is_builtin', 'permissions', 'users_count'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    is_builtin: { type: 'boolean', description: 'Built-in roles (Super Admin, Administrator, ...) are read-only.' },
    permissions: { type: 'array', items: { type: 'string' } },
    users_count: { type: 'integer', description: 'Users of this tenant holding the role.' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

/** `{data: role}`. */
export const roleOne: Schema = { type: 'object', required: ['data'], properties: { data: roleRead } };

/** The list envelope of roles. */
export const roleList: Schema = listEnvelope(roleRead);
