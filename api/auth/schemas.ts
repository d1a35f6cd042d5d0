import { singleLine, type Schema } from '../http/validation.js';

/** POST /api/auth/login body (DESIGN.md §5): e-mail, password, optional device_name naming the session. */
export const loginBody: Schema = {
  type: 'object',
  required: ['email', 'password'],
  additionalProperties: false,
  properties: {
    email: { type: 'string', format: 'email', maxLength: 190 },
    password: { type: 'string', minLength: 1, maxLength: 1024 },
    device_name: { type: 'string', maxLength: 190, ...singleLine },
  },
};

/** The user in login and me answers: id, name, email, role names, permission names, platform-admin flag. */
export const userShape: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    email: { type: 'string' },
    roles: { type: 'array', items: { type: 'string' } },
    permissions: { type: 'array', items: { type: 'string' } },
    is_platform_admin: { type: 'boolean' },
  },
};

/** The user's tenant in login and me answers (null for a platform admin). */
export const tenantShape: Schema = {
  type: ['object', 'null'],
  properties: {
    id: { type: 'integer' },
    slug: { type: 'string' },
    name: { type: 'string' },
    demo_mode: { type: 'boolean' },
    modules: { type: 'array', items: { type: 'string' } },
  },
};

/**
 * 200 answer of POST /api/auth/login: `{token, token_type: "Bearer", expires_at, user, tenant}` (login token valid
 * 12 h).
 */
export const loginResult: Schema = {
  type: 'object',
  required: ['token', 'token_type', 'expires_at', 'user', 'tenant'],
  properties: {
    token: { type: 'string' },
    token_type: { const: 'Bearer' },
    expires_at: { type: 'string', format: 'date-time' },
    user: userShape,
    tenant: tenantShape,
  },
};
