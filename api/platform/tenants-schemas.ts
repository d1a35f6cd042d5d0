import { singleLine, type Schema } from '../http/validation.js';
import { MODULES } from '../tenants/catalog.js';

/** A hostname: DNS labels of a-z, 0-9 and inner dashes, at least two, lower case. */
export const HOSTNAME_PATTERN = '^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$';

const fields: Record<string, Schema> = {
  name: { type: 'string', minLength: 1, maxLength: 190, ...singleLine },
  demo_mode: { type: 'boolean', description: 'Demo tenants refuse destructive actions (default false).' },
  is_master: {
    type: 'boolean',
    description: "The platform's own tenant (default false); at most one, 409 when another is.",
  },
  modules: {
    type: 'array',
    uniqueItems: true,
    maxItems: MODULES.length,
    items: { type: 'string', enum: [...MODULES] },
    description: 'Modules switched on (default: all).',
  },
  timezone: {
    type: 'string',
    minLength: 1,
    maxLength: 64,
    ...singleLine,
    description: 'IANA zone, e.g. Asia/Jakarta.',
  },
  primary_domain: {
    type: ['string', 'null'],
    maxLength: 253,
    pattern: HOSTNAME_PATTERN,
    description: "The tenant's own domain (lower case), unique.",
  },
};

/** POST /api/platform/tenants (issue 13 item 2): slug a DNS label, immutable afterwards. */
export const tenantCreateBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['slug', 'name'],
  properties: {
    slug: {
      type: 'string',
      pattern: '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$',
      minLength: 2,
      maxLength: 63,
      description: 'A DNS label (a-z, 0-9, inner dashes), unique, immutable.',
    },
    ...fields,
    admin: {
      type: 'object',
      additionalProperties: false,
      required: ['email', 'password'],
      properties: {
        email: { type: 'string', format: 'email', maxLength: 190 },
        password: { type: 'string', minLength: 8, maxLength: 200 },
        name: { type: 'string', minLength: 1, maxLength: 190, ...singleLine },
      },
      description: 'Optional first user (Super Admin); the password is write-only.',
    },
  },
};

/** PUT /api/platform/tenants/{tenant}: the fields given change; slug is not accepted (immutable). */
export const tenantUpdateBody: Schema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: fields,
};

/** A tenant as the platform API answers it. */
export const platformTenantRead: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    slug: { type: 'string' },
    name: { type: 'string' },
    demo_mode: { type: 'boolean' },
    is_master: { type: 'boolean' },
    modules: { type: 'array', items: { type: 'string' } },
    timezone: { type: 'string' },
    primary_domain: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

/** `{data: tenant}` */
export const platformTenantOne: Schema = { type: 'object', properties: { data: platformTenantRead } };

/** `{data: [tenant], meta}` */
export const platformTenantList: Schema = {
  type: 'object',
  properties: {
    data: { type: 'array', items: platformTenantRead },
    meta: { type: 'object', properties: { total: { type: 'integer' } } },
  },
};
