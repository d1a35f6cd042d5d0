import type { Next } from 'koa';
import { createHash } from 'node:crypto';
import { Conflict, ValidationFailed } from '../errors.js';
import type { AppContext } from '../context.js';

/** How long a key is remembered (24 h, issue 2). */
export const IDEMPOTENCY_TTL_HOURS = 24;

/** Canonical JSON (sorted keys) so that the same body hashes the same whatever its key order. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

/**
 * Idempotency-Key support for creating POSTs (issue 2 §6). With the header:
 * - first use: the request runs; a 2xx response is stored (status + body) for 24 h;
 *   a failed request frees the key so the client can retry;
 * - same key and same body within 24 h: the stored response is replayed (header
 *   Idempotent-Replayed: true) and nothing is created;
 * - same key with a different body: 409 CONFLICT; same key still running: 409 CONFLICT.
 * Keys are per tenant and per route; the request hash covers the raw JSON body.
 */
export function idempotency() {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const key = ctx.get('idempotency-key');
    if (!key) return next();
    if (key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
      throw new ValidationFailed({
        'Idempotency-Key': ['The Idempotency-Key header must be 1-255 visible ASCII characters.'],
      });
    }
    const scope = ctx.state.scope!;
    const knex = ctx.deps.knex;
    const route = `${ctx.method} ${ctx._matchedRoute ?? ctx.path}`;
    const hash = createHash('sha256')
      .update(canonical(ctx.request.body ?? null))
      .digest('hex');
    await scope
      .table('idempotency_keys')
      .where({ scope: route, key })
      .where('created_at', '<', knex.raw(`now() - interval '${IDEMPOTENCY_TTL_HOURS} hours'`))
      .delete();
    const inserted = await knex.raw(
      `INSERT INTO idempotency_keys (tenant_id, scope, key, request_hash) VALUES (?, ?, ?, ?)
       ON CONFLICT (tenant_id, scope, key) DO NOTHING RETURNING id`,
      [scope.tenantId, route, key, hash],
    );
    if (inserted.rows.length === 0) {
      const prior = await scope.table('idempotency_keys').where({ scope: route, key }).first();
      if (!prior || prior.request_hash !== hash)
        throw new Conflict('This Idempotency-Key was already used with a different request body.');
      if (prior.response_status === null)
        throw new Conflict('A request with this Idempotency-Key is still being processed.');
      ctx.status = prior.response_status;
      ctx.body = prior.response_body;
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }
    const id = inserted.rows[0].id;
    try {
      await next();
    } catch (e) {
      await knex('idempotency_keys').where({ id }).delete();
      throw e;
    }
    if (ctx.status >= 200 && ctx.status < 300) {
      await knex('idempotency_keys')
        .where({ id })
        .update({ response_status: ctx.status, response_body: JSON.stringify(ctx.body ?? null) });
    } else {
      await knex('idempotency_keys').where({ id }).delete();
    }
  };
}
