import { webRoute, type AnyWebRoute } from '../../http/web-route.js';
import type { Input } from '../../http/route.js';
import type { Schema } from '../../http/validation.js';
import type { RunRequest } from '../../../jobs/provisioning/steps.js';
import { tenantParams } from '../tenant-param.js';
import { platformBase } from '../tenants-routes.js';
import { changePreview, getProvisioning, preview, regeneratePreview, saveDraft } from './read.js';
import { resumeRun, startRun } from './service.js';
import {
  changeBody,
  cleanupBody,
  dataOne,
  provisionBody,
  regenerateBody,
  requestBody,
  resumeBody,
  runParams,
} from './schemas.js';

/**
 * Tenant provisioning runs (issue 13 items 6-8; admin-api.md "Tenant provisioning (platform admin)"):
 * `/api/platform/tenants/{tenant}/provisioning...`, platform admins only.
 */
const BASE = '/api/platform/tenants/:tenant/provisioning';
const notFound = { 404: { description: 'No tenant with that slug or id' } };
const refused = {
  403: { description: 'demo_guard_blocked: the tenant is in demo mode' },
  422: {
    description:
      'VALIDATION_FAILED (fields, confirm_phrase), provisioning_locked, INVALID_TRANSITION (state rules, another open run), provisioning_dns_failed',
  },
};
const run202 = {
  202: { description: '{data: run}: the run (queued), or the open run of the same request', schema: dataOne },
};
type T = { tenant: string };

/** One confirmed run route. */
function runRoute(path: string, kind: 'provision' | 'change' | 'cleanup', body: Schema, summary: string) {
  return webRoute<T, Input, Record<string, unknown>>({
    ...platformBase,
    method: 'post',
    path: `${BASE}${path}`,
    params: tenantParams,
    body,
    summary,
    responses: { ...run202, ...notFound, ...refused },
    async handler(ctx) {
      const { run } = await startRun(ctx, ctx.state.params.tenant, kind, ctx.state.body);
      ctx.status = 202;
      ctx.body = { data: run };
    },
  });
}

/** The runs half's routes. */
export const platformRunRoutes: AnyWebRoute[] = [
  webRoute<T>({
    ...platformBase,
    method: 'get',
    path: BASE,
    params: tenantParams,
    summary: "The tenant's provisioning: database, subscriber domains, mailbox, drafts, last 20 runs",
    responses: {
      200: { description: '{data: {database, domains, mailbox, drafts, runs}}', schema: dataOne },
      ...notFound,
    },
    async handler(ctx) {
      ctx.body = { data: await getProvisioning(ctx, ctx.state.params.tenant) };
    },
  }),
  webRoute<T, Input, Partial<RunRequest>>({
    ...platformBase,
    method: 'post',
    path: `${BASE}/preview`,
    params: tenantParams,
    body: requestBody,
    summary: 'The plan read live (record, mailbox, database name: create, unchanged, conflict); saves nothing',
    responses: {
      200: { description: '{data: {request, record, mailbox, database}}', schema: dataOne },
      ...notFound,
      422: { description: 'VALIDATION_FAILED, provisioning_dns_failed' },
    },
    async handler(ctx) {
      ctx.body = { data: await preview(ctx, ctx.state.params.tenant, ctx.state.body) };
    },
  }),
  webRoute<T, Input, Partial<RunRequest>>({
    ...platformBase,
    method: 'post',
    path: `${BASE}/draft`,
    params: tenantParams,
    body: requestBody,
    summary: 'Save a draft request (provision runs it with draft_id); runs nothing',
    responses: { 201: { description: '{data: draft}', schema: dataOne }, ...notFound },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = { data: await saveDraft(ctx, ctx.state.params.tenant, ctx.state.body) };
    },
  }),
  runRoute(
    '/subscriber-domain/provision',
    'provision',
    provisionBody,
    'PROVISION SUBSCRIBER DOMAIN: a run writing the DNS record and the mailbox',
  ),
  webRoute<T, Input, { domain?: string }>({
    ...platformBase,
    method: 'post',
    path: `${BASE}/subscriber-domain/regenerate-preview`,
    params: tenantParams,
    body: regenerateBody,
    summary: 'A candidate {slug}.{zone} (else -2, -3, ...) free of other tenants and DNS records',
    responses: {
      200: { description: '{data: {subdomain, domain, free, checked}}', schema: dataOne },
      ...notFound,
      422: { description: 'VALIDATION_FAILED, provisioning_dns_failed' },
    },
    async handler(ctx) {
      ctx.body = { data: await regeneratePreview(ctx, ctx.state.params.tenant, ctx.state.body) };
    },
  }),
  webRoute<T, Input, Partial<RunRequest>>({
    ...platformBase,
    method: 'post',
    path: `${BASE}/subscriber-domain/change-preview`,
    params: tenantParams,
    body: requestBody,
    summary: 'Old and new domain, conflicts, TXT/A/CNAME at both, cleanup candidates; saves nothing',
    responses: {
      200: { description: '{data: {old, new, conflicts, cleanup_candidates}}', schema: dataOne },
      ...notFound,
      422: { description: 'VALIDATION_FAILED, provisioning_dns_failed' },
    },
    async handler(ctx) {
      ctx.body = { data: await changePreview(ctx, ctx.state.params.tenant, ctx.state.body) };
    },
  }),
  runRoute(
    '/subscriber-domain/change-apply',
    'change',
    changeBody,
    'CHANGE SUBSCRIBER DOMAIN: the new domain becomes active, the old one replaced (its DNS kept)',
  ),
  runRoute(
    '/subscriber-domain/cleanup-old',
    'cleanup',
    cleanupBody,
    'DELETE OLD SUBSCRIBER DNS: deletes our records of a replaced domain (not primary, DNS-managed)',
  ),
  webRoute<{ tenant: string; run: number }, Input, Record<string, unknown>>({
    ...platformBase,
    method: 'post',
    path: `${BASE}/runs/:run/resume`,
    params: runParams,
    body: resumeBody,
    summary: "Resume a partial or failed run with the run's phrase: only its unfinished steps run",
    responses: { ...run202, 404: { description: 'No such tenant, or no such run of the tenant' }, ...refused },
    async handler(ctx) {
      const { tenant, run } = ctx.state.params;
      ctx.status = 202;
      ctx.body = { data: await resumeRun(ctx, tenant, run, ctx.state.body) };
    },
  }),
];
