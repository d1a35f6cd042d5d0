import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import { singleLine, type Schema } from '../http/validation.js';
import type { AppContext } from '../context.js';
import { systemClock } from '../../lib/clock.js';
import { tenantParams } from './tenant-param.js';
import { platformActorOf, platformBase } from './tenants-routes.js';
import { dataOne } from './tenant-db-schemas.js';
import {
  authCheck,
  pilotLogin,
  pilotTokenStatus,
  revokePilotTokens,
  type PilotCredentials,
  type PilotLoginDeps,
} from './tenant-db/pilot-login.js';

/**
 * Pilot logins of a tenant database (issue 15 item 8; admin-api.md "Tenant provisioning (platform
 * admin)"): `POST .../provisioning/tenant-db/auth-check`, `pilot-login`, `pilot-token/revoke` and
 * `GET pilot-token/status`, platform admins only like the other tenant-db routes.
 */
const BASE = '/api/platform/tenants/:tenant/provisioning/tenant-db';
type P = { tenant: string };

/** The clock pilot tokens expire by (AppDeps.config.tenantDbPilot.clock, default the system's). */
export const pilotClockOf = (ctx: AppContext) => ctx.deps.config.tenantDbPilot?.clock ?? systemClock;

function depsOf(ctx: AppContext): PilotLoginDeps {
  const appKey = ctx.deps.config.appKey;
  if (!appKey) throw new Error('APP_KEY is not configured');
  return { knex: ctx.deps.knex, appKey, clock: pilotClockOf(ctx) };
}

const email = { type: 'string', minLength: 3, maxLength: 190, ...singleLine, description: 'A tenant user’s e-mail.' };
const phrase = { type: 'string', maxLength: 100, ...singleLine, description: 'The step’s confirmation phrase.' };

/** Body of auth-check (and of pilot-login, with its phrase). */
const credentialsBody = (withPhrase: boolean): Schema => ({
  type: 'object',
  required: ['email', 'password'],
  additionalProperties: false,
  properties: {
    email,
    password: { type: 'string', minLength: 1, maxLength: 1024 },
    ...(withPhrase ? { confirm_phrase: phrase } : {}),
  },
});

const revokeBody: Schema = {
  type: 'object',
  required: ['email'],
  additionalProperties: false,
  properties: { email, confirm_phrase: phrase },
};

const statusQuery: Schema = {
  type: 'object',
  required: ['email'],
  additionalProperties: false,
  properties: { email },
};

const loginAnswer: Schema = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: {
        token_id: { type: 'integer' },
        token_type: { type: 'string', enum: ['Bearer'] },
        expires_at: { type: 'string', format: 'date-time' },
        abilities: { type: 'array', items: { type: 'string' } },
        user: { type: 'object', additionalProperties: true },
        tenant: { type: 'object', additionalProperties: true },
      },
    },
    token: { type: 'string', description: 'The pilot token (`ispp_...`), shown once.' },
  },
};

const notFound = { 404: { description: 'No tenant with that slug or id' } };
const notServing = {
  description:
    'VALIDATION_FAILED (fields, confirm_phrase, bad credentials); INVALID_TRANSITION (use_tenant_db_read off, ' +
    'no copy); tenant_db_unreachable',
};

export const tenantDbLoginRoutes: AnyWebRoute[] = [
  webRoute<P, Record<string, never>, PilotCredentials>({
    ...platformBase,
    method: 'post',
    path: `${BASE}/auth-check`,
    params: tenantParams,
    body: credentialsBody(false),
    summary: 'Check a tenant user’s password against the tenant database (argon2id; no token, session or write)',
    responses: {
      200: { description: '{data: {user_found, password_matches}}', schema: dataOne },
      ...notFound,
      422: notServing,
    },
    async handler(ctx) {
      ctx.body = { data: await authCheck(depsOf(ctx), ctx.state.params.tenant, ctx.state.body) };
    },
  }),
  webRoute<P, Record<string, never>, PilotCredentials>({
    ...platformBase,
    method: 'post',
    path: `${BASE}/pilot-login`,
    params: tenantParams,
    body: credentialsBody(true),
    summary: 'Log a tenant user in against the tenant database: a 60-minute pilot token (phrase PILOT TENANT DB LOGIN)',
    responses: {
      201: { description: 'The pilot token and its data', schema: loginAnswer },
      ...notFound,
      422: notServing,
    },
    async handler(ctx) {
      const actor = { ...platformActorOf(ctx), userAgent: ctx.get('user-agent') || undefined };
      ctx.status = 201;
      ctx.body = await pilotLogin(depsOf(ctx), actor, ctx.state.params.tenant, ctx.state.body);
    },
  }),
  webRoute<P, { email: string }>({
    ...platformBase,
    method: 'get',
    path: `${BASE}/pilot-token/status`,
    params: tenantParams,
    query: statusQuery,
    summary: 'A tenant user’s pilot tokens (id, expires_at, last_used_at, live); read-only',
    responses: {
      200: { description: '{data: {user, tokens}}', schema: dataOne },
      404: { description: 'No such tenant, or the e-mail is not a user of this tenant' },
    },
    async handler(ctx) {
      ctx.body = { data: await pilotTokenStatus(depsOf(ctx), ctx.state.params.tenant, ctx.state.query.email) };
    },
  }),
  webRoute<P, Record<string, never>, { email: string; confirm_phrase?: string }>({
    ...platformBase,
    method: 'post',
    path: `${BASE}/pilot-token/revoke`,
    params: tenantParams,
    body: revokeBody,
    summary: 'Revoke a tenant user’s pilot tokens, only those (phrase REVOKE TENANT DB PILOT TOKEN)',
    responses: {
      200: { description: '{data: {revoked}}', schema: dataOne },
      404: { description: 'No such tenant, or the e-mail is not a user of this tenant' },
      422: { description: 'VALIDATION_FAILED (email, confirm_phrase)' },
    },
    async handler(ctx) {
      ctx.body = {
        data: await revokePilotTokens(depsOf(ctx), platformActorOf(ctx), ctx.state.params.tenant, ctx.state.body),
      };
    },
  }),
];
