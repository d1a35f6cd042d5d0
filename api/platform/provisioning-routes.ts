import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { systemClock } from '../../lib/clock.js';
import { credentialsBody, credentialsOne, readinessOne } from './credentials-schemas.js';
import { getCredentials, saveCredentials, type CredentialsInput } from './credentials-service.js';
import { readiness } from './readiness.js';
import { platformActorOf, platformBase } from './tenants-routes.js';

/**
 * The platform's provisioning credentials and readiness (issue 13 items 3-4; admin-api.md "Tenant
 * provisioning (platform admin)"). Platform admins only.
 */
export const platformProvisioningRoutes: AnyWebRoute[] = [
  webRoute({
    ...platformBase,
    method: 'get',
    path: '/api/platform/provisioning/readiness',
    summary: 'The global checklist (tables, tenant DB, Cloudflare, mail panel, storage, backup) and the lock',
    responses: { 200: { description: '{ready, locked, lock_reasons, checks}', schema: readinessOne } },
    async handler(ctx) {
      ctx.body = { data: await readiness(ctx.deps.knex) };
    },
  }),
  webRoute({
    ...platformBase,
    method: 'get',
    path: '/api/platform/provisioning/credentials',
    summary: 'The provisioning credentials, masked, with the last test of each section',
    responses: { 200: { description: 'Masked credentials (secrets as *_set flags)', schema: credentialsOne } },
    async handler(ctx) {
      ctx.body = { data: await getCredentials(ctx.deps.knex) };
    },
  }),
  webRoute<Input, Input, CredentialsInput>({
    ...platformBase,
    method: 'put',
    path: '/api/platform/provisioning/credentials',
    body: credentialsBody,
    summary:
      "Save provisioning credentials (sections optional, secrets write-only and kept when omitted, encrypted); a change resets that section's test, so saving never unlocks",
    responses: { 200: { description: 'The masked credentials after the save', schema: credentialsOne } },
    async handler(ctx) {
      const appKey = ctx.deps.config.appKey;
      if (!appKey) throw new Error('APP_KEY is not configured');
      const now = systemClock.now();
      ctx.body = { data: await saveCredentials(ctx.deps.knex, appKey, platformActorOf(ctx), ctx.state.body, now) };
    },
  }),
];
