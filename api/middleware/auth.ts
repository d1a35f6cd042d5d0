import type { Next } from 'koa';
import { bearer, parseToken, type TokenKind } from '../../lib/token.js';
import { tokenMatches } from '../../lib/token.js';
import { Forbidden, ModuleDisabled, Unauthenticated, ValidationFailed } from '../errors.js';
import type { ModuleName, Permission } from '../tenants/catalog.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { runStatement, statement } from '../../db/statement.js';
import type { TokenRateLimiter } from './rate-limit.js';
import type { AppContext, AuthInfo, TenantInfo } from '../context.js';
import { authenticatePilot } from './pilot-auth.js';

/** Who may call a route (DESIGN.md §5); `pilot`: the smoke routes of issue 15 item 9 (api/middleware/pilot-auth.ts). */
export type AuthKind = 'public' | 'integration' | 'login' | 'platform' | 'pilot';

interface TokenRow {
  id: number;
  type: string;
  tenant_id: number | null;
  user_id: number | null;
  token_hash: Buffer;
  access: string | null;
  abilities: string[];
  last_used_at: Date | null;
  expires_at: Date | null;
  tenant_slug: string | null;
  tenant_name: string | null;
  tenant_demo_mode: boolean | null;
  tenant_modules: string[] | null;
  tenant_settings: Record<string, unknown> | null;
  tenant_timezone: string | null;
}

/** A login token's row with its user, the user's role names and effective permissions (ACTIVE_LOGIN). */
interface LoginRow extends TokenRow {
  /** null when the token's user is gone. */
  u_id: number | null;
  u_tenant_id: number | null;
  u_platform_admin: boolean | null;
  u_active: boolean | null;
  u_roles: string[] | null;
  u_permissions: string[] | null;
}

/**
 * The token lookup of every authenticated request, one round trip: the token by primary key with
 * its type, revocation and expiry checked in the query, and its tenant. A fixed named statement
 * (db/statement.ts): parsed and planned once per connection. $1 token id, $2 token type.
 */
const ACTIVE_TOKEN = statement(
  'auth_active_token',
  `SELECT t.id, t.type, t.tenant_id, t.user_id, t.token_hash, t.access, t.abilities,
  t.last_used_at, t.expires_at, tn.slug AS tenant_slug, tn.name AS tenant_name, tn.demo_mode AS tenant_demo_mode,
  tn.modules AS tenant_modules, tn.settings AS tenant_settings, tn.timezone AS tenant_timezone
FROM auth_tokens t LEFT JOIN tenants tn ON tn.id = t.tenant_id
WHERE t.id = $1 AND t.type = $2 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())`,
);

/**
 * The lookup of a login (or platform) request, one round trip (issue 8 benchmark admin-customers:
 * the admin list pays for every query of its authentication): ACTIVE_TOKEN's row plus the token's
 * user and, like api/auth/service.ts rolesAndPermissions, the user's role names and permissions
 * (every permission of the catalogue for a holder of the built-in Super Admin role). $1 token id, $2
 * token type.
 */
const ACTIVE_LOGIN = statement(
  'auth_active_login',
  `SELECT t.id, t.type, t.tenant_id, t.user_id, t.token_hash, t.access, t.abilities,
  t.last_used_at, t.expires_at, tn.slug AS tenant_slug, tn.name AS tenant_name, tn.demo_mode AS tenant_demo_mode,
  tn.modules AS tenant_modules, tn.settings AS tenant_settings, tn.timezone AS tenant_timezone,
  u.id AS u_id, u.tenant_id AS u_tenant_id, u.is_platform_admin AS u_platform_admin, u.is_active AS u_active,
  g.roles AS u_roles,
  CASE WHEN g.super THEN (SELECT array_agg(pa.name) FROM permissions pa) ELSE g.perms END AS u_permissions
FROM auth_tokens t LEFT JOIN tenants tn ON tn.id = t.tenant_id
LEFT JOIN users u ON u.id = t.user_id
LEFT JOIN LATERAL (
  SELECT array_agg(DISTINCT ro.name) AS roles, bool_or(ro.tenant_id IS NULL AND ro.name = 'Super Admin') AS super,
    array_agg(DISTINCT p.name) FILTER (WHERE p.name IS NOT NULL) AS perms
  FROM user_roles ur JOIN roles ro ON ro.id = ur.role_id
  LEFT JOIN role_permissions rp ON rp.role_id = ro.id LEFT JOIN permissions p ON p.id = rp.permission_id
  WHERE ur.user_id = u.id) g ON true
WHERE t.id = $1 AND t.type = $2 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())`,
);

/**
 * Looks a parsed token up: one query by primary key that also checks type, revocation and expiry;
 * then a constant-time hash comparison.
 * @returns the row, or null when unknown, of another type, revoked, expired or not matching
 */
export async function findActiveToken(ctx: AppContext, raw: string, type: TokenKind): Promise<TokenRow | null> {
  const parsed = parseToken(raw);
  if (!parsed || parsed.kind !== type) return null;
  const [row] = await runStatement<TokenRow>(ctx.deps.knex, ACTIVE_TOKEN, [parsed.id, type]);
  if (!row || !tokenMatches(raw, row.token_hash)) return null;
  return row;
}

/**
 * Looks a parsed login token up with its user, roles and permissions in one query (ACTIVE_LOGIN),
 * then compares the hash in constant time.
 * @returns the row, or null when unknown, revoked, expired or not matching
 */
async function findActiveLogin(ctx: AppContext, raw: string): Promise<LoginRow | null> {
  const [row] = await runStatement<LoginRow>(ctx.deps.knex, ACTIVE_LOGIN, [parseToken(raw)!.id, 'login']);
  if (!row || !tokenMatches(raw, row.token_hash)) return null;
  return row;
}

/** Writes last_used_at at most once a minute per token (fire and forget; a failure is logged). */
export function touchToken(ctx: AppContext, row: TokenRow): void {
  if (row.last_used_at && Date.now() - new Date(row.last_used_at).getTime() < 60_000) return;
  ctx.deps
    .knex('auth_tokens')
    .where({ id: row.id })
    .where((q) =>
      q.whereNull('last_used_at').orWhere('last_used_at', '<', ctx.deps.knex.raw(`now() - interval '1 minute'`)),
    )
    .update({ last_used_at: ctx.deps.knex.fn.now() })
    .catch((err: unknown) => ctx.deps.logger.warn({ err, token_id: row.id }, 'last_used_at update failed'));
}

async function loadTenant(ctx: AppContext, id: number): Promise<TenantInfo | null> {
  const t = await ctx.deps
    .knex('tenants')
    .select('id', 'slug', 'name', 'demo_mode', 'modules', 'settings', 'timezone')
    .where({ id })
    .first();
  return t ?? null;
}

/** Tenant id named in an integration token's abilities (`tenant:{id}`), or null. */
export function tenantFromAbilities(abilities: string[]): number | null {
  for (const a of abilities) {
    const m = /^tenant:(\d+)$/.exec(a);
    if (m) return Number(m[1]);
  }
  return null;
}

/**
 * Koa middleware authenticating the caller for a route of the given kind. Sets ctx.state.auth, and
 * for tenant callers ctx.state.tenant and ctx.state.scope.
 * - integration: an integration token (document 1); its tenant from abilities (403 when none).
 * - login: an admin login token of a tenant user (document 2, DESIGN.md §5).
 * - platform: a login token of a platform admin.
 * - pilot: a live pilot token (issue 15 item 9), checked by authenticatePilot; no other route takes one.
 * With `rateLimit` (routes marked rateLimited), one point is consumed for the presented token
 * while the token is looked up (the Redis and database round trips overlap); the decision is
 * applied only after the token is verified, so a token that fails gets 401, never 429, and its
 * bucket is discarded (api/middleware/rate-limit.ts).
 * @throws Unauthenticated (401) for anything wrong with the token; Forbidden (403) for a token without tenant;
 *   RateLimited (429) when the verified token's budget is spent
 */
export function authenticate(kind: AuthKind, rateLimit?: TokenRateLimiter) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    if (kind === 'public') return next();
    if (kind === 'pilot') return authenticatePilot(ctx, next);
    const raw = bearer(ctx.get('authorization'));
    if (!raw) throw new Unauthenticated();
    const type = kind === 'integration' ? 'integration' : 'login';
    const parsed = parseToken(raw);
    if (!parsed || parsed.kind !== type) throw new Unauthenticated(); // malformed: no query, no Redis call
    const rate = rateLimit?.consume(raw);
    const row = type === 'login' ? await findActiveLogin(ctx, raw) : await findActiveToken(ctx, raw, type);
    if (!row) {
      if (rate) void rate.then(() => rateLimit!.discard(raw));
      throw new Unauthenticated();
    }
    const abilities = Array.isArray(row.abilities) ? row.abilities : [];
    const auth: AuthInfo = {
      kind: kind === 'integration' ? 'integration' : 'login',
      tokenId: Number(row.id),
      userId: row.user_id,
      tenantId: null,
      access: (row.access as AuthInfo['access']) ?? null,
      abilities,
      roles: [],
      permissions: [],
      isPlatformAdmin: false,
      expiresAt: row.expires_at,
    };
    if (kind === 'integration') {
      auth.tenantId = tenantFromAbilities(abilities);
      if (auth.tenantId === null || auth.tenantId !== row.tenant_id) throw new Forbidden('This token has no tenant.');
    } else {
      const user = row as LoginRow; // login tokens were read with ACTIVE_LOGIN above
      // deactivation revokes the sessions too; this also covers a login that raced with it
      if (!user.u_id || user.u_active === false) throw new Unauthenticated();
      auth.tenantId = user.u_tenant_id;
      auth.isPlatformAdmin = !!user.u_platform_admin;
      // sorted and deduplicated as api/auth/service.ts rolesAndPermissions does
      auth.roles = [...new Set(user.u_roles ?? [])].sort();
      auth.permissions = [...new Set(user.u_permissions ?? [])].sort();
      if (kind === 'platform' && !auth.isPlatformAdmin) throw new Forbidden('A platform admin is required.');
    }
    if (auth.tenantId !== null) {
      const tenant =
        auth.tenantId === row.tenant_id && row.tenant_slug !== null
          ? {
              id: row.tenant_id,
              slug: row.tenant_slug,
              name: row.tenant_name!,
              demo_mode: !!row.tenant_demo_mode,
              modules: row.tenant_modules ?? [],
              settings: row.tenant_settings ?? {},
              timezone: row.tenant_timezone ?? undefined,
            }
          : await loadTenant(ctx, auth.tenantId);
      if (!tenant) throw new Forbidden('This token has no tenant.');
      ctx.state.tenant = tenant;
      ctx.state.scope = new TenantScope(ctx.deps.knex, tenant.id);
    }
    ctx.state.auth = auth;
    touchToken(ctx, row);
    if (rate) rateLimit!.apply(ctx, await rate);
    return next();
  };
}

/**
 * Guards on the authenticated caller, applied after authenticate() (DESIGN.md §10).
 * - access 'write': integration token must be read_write (403 FORBIDDEN otherwise).
 * - module: the tenant must have the module switched on (403 module_disabled otherwise).
 * - permission: login user must hold it (403 FORBIDDEN naming the permission otherwise).
 * - tenant: login routes that need an active tenant (403 for users without one; 422 `errors.tenant`
 *   with 'validation').
 * @throws Forbidden, ModuleDisabled
 */
export function authorize(opts: {
  access?: 'read' | 'write';
  permission?: Permission;
  module?: ModuleName;
  tenant?: boolean | 'validation';
}) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const auth = ctx.state.auth;
    if (!auth) return next();
    if (opts.access === 'write' && auth.kind === 'integration' && auth.access !== 'read_write') {
      throw new Forbidden('This token is read-only; use a read_write token for writes.');
    }
    if ((opts.tenant || opts.module) && !ctx.state.tenant) {
      // issue 12: the app builder answers a login without a tenant with 422 errors.tenant (document 2)
      if (opts.tenant === 'validation')
        throw new ValidationFailed({ tenant: ['Choose a tenant: this login has none.'] });
      throw new Forbidden('This action needs a tenant user.');
    }
    if (opts.module && !ctx.state.tenant!.modules.includes(opts.module)) throw new ModuleDisabled(opts.module);
    if (opts.permission && auth.kind === 'login' && !auth.permissions.includes(opts.permission)) {
      throw new Forbidden(`Missing permission ${opts.permission}.`);
    }
    return next();
  };
}
