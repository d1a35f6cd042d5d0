import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { idParams } from '../shared/schemas.js';
import { tokenCreateBody, tokenInfo } from './schemas.js';
import { createToken, listTokens, revokeIntegrationToken, type TokenInput } from './service.js';

/** Integration token management (document 1): admin login token only, permission settings.manage. */
export const tokenRoutes: AnyWebRoute[] = [
  webRoute({
    method: 'get',
    path: '/api/integrations/api-tokens',
    tag: 'integrations',
    auth: 'login',
    tenant: true,
    permission: 'settings.manage',
    summary: "List the integration tokens of the active tenant (all admins' tokens)",
    responses: {
      200: {
        description: 'Tokens',
        schema: { type: 'object', properties: { data: { type: 'array', items: tokenInfo } } },
      },
    },
    async handler(ctx) {
      ctx.body = { data: await listTokens(ctx.state.scope!) };
    },
  }),
  webRoute<Input, Input, TokenInput>({
    method: 'post',
    path: '/api/integrations/api-tokens',
    tag: 'integrations',
    auth: 'login',
    tenant: true,
    permission: 'settings.manage',
    summary: 'Create an integration token; the plain token is in this response only (field token)',
    body: tokenCreateBody,
    responses: {
      201: {
        description: 'Created',
        schema: {
          type: 'object',
          required: ['data', 'token'],
          properties: { data: tokenInfo, token: { type: 'string' } },
        },
      },
    },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = await createToken(ctx.state.scope!, ctx.state.auth!.userId!, ctx.state.body, ctx.ip);
    },
  }),
  webRoute<{ id: number }>({
    method: 'delete',
    path: '/api/integrations/api-tokens/:id',
    tag: 'integrations',
    auth: 'login',
    tenant: true,
    permission: 'settings.manage',
    summary: 'Revoke an integration token of the active tenant',
    params: idParams,
    responses: {
      200: {
        description: 'Revoked',
        schema: { type: 'object', properties: { message: { type: 'string' }, data: tokenInfo } },
      },
      404: { description: "Unknown id or another tenant's token" },
    },
    async handler(ctx) {
      ctx.body = await revokeIntegrationToken(ctx.state.scope!, ctx.state.params.id, {
        userId: ctx.state.auth!.userId,
        ip: ctx.ip,
      });
    },
  }),
];
