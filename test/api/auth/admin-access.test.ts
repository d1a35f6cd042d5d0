import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import {
  makeIntegrationToken,
  makeTenant,
  makeUser,
  PASSWORD,
  seedBasics,
  type TenantFixture,
} from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { createPlatformAdmin } from '../../../api/tenants/service.js';
import { login } from '../../../api/auth/service.js';
import { openBoardSession } from '../../../api/board/session.js';
import { mintToken } from '../../../lib/token.js';

/** The ids an admin endpoint is called with: a token of the tenant and a ticket of the tenant. */
interface Ids {
  tokenId: number;
  ticketId: number;
}

/** One endpoint of the admin side that takes an admin login token (document 1 token management, PATCH ticket). */
interface AdminEndpoint {
  name: string;
  method: 'GET' | 'POST' | 'DELETE' | 'PATCH';
  path: (ids: Ids) => string;
  body?: Record<string, unknown>;
  permission: string;
  /** Whether a demo-mode tenant refuses it (the demo guard's list). */
  demoBlocked: boolean;
}

const ADMIN_ENDPOINTS: AdminEndpoint[] = [
  {
    name: 'tokens.list',
    method: 'GET',
    path: () => '/api/integrations/api-tokens',
    permission: 'settings.manage',
    demoBlocked: false,
  },
  {
    name: 'tokens.create',
    method: 'POST',
    path: () => '/api/integrations/api-tokens',
    body: { name: 'CRM' },
    permission: 'settings.manage',
    demoBlocked: false,
  },
  {
    name: 'tokens.revoke',
    method: 'DELETE',
    path: (ids) => `/api/integrations/api-tokens/${ids.tokenId}`,
    permission: 'settings.manage',
    demoBlocked: false,
  },
  {
    name: 'tickets.status',
    method: 'PATCH',
    path: (ids) => `/api/tickets/${ids.ticketId}`,
    body: { status: 'closed' },
    permission: 'tickets.update',
    demoBlocked: true,
  },
];

/** Rows an admin endpoint could change, for "nothing changed". */
async function snapshot(tenantIds: number[]): Promise<string> {
  const tokens = await env
    .knex('auth_tokens')
    .whereIn('tenant_id', tenantIds)
    .where({ type: 'integration' })
    .orderBy('id')
    .select('id', 'revoked_at', 'name');
  const tickets = await env
    .knex('tickets')
    .whereIn('tenant_id', tenantIds)
    .orderBy('id')
    .select('id', 'status', 'updated_at');
  return JSON.stringify({ tokens, tickets });
}

/**
 * Issue 2 "Tests" (tables, not samples) for the admin login-token endpoints: every endpoint x every
 * bad credential -> 401; x a user without the permission -> 403; x another tenant's id -> 404 and
 * nothing changed; demo tenants -> 403 demo_guard_blocked exactly for the blocked actions.
 */
describe('admin login-token endpoints: access table (token management, PATCH /api/tickets/{id})', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let ids: (f: TenantFixture) => Promise<Ids>;

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    ids = async (f) => ({ tokenId: (await makeIntegrationToken(f)).data.id, ticketId: (await seedBasics(f)).ticketId });
  });

  it('answers 401 UNAUTHENTICATED JSON for every endpoint x every bad credential, and changes nothing', async () => {
    const own = await ids(a);
    const loginToken = async () => (await login(env.knex, { email: a.admin.email, password: PASSWORD })).token;
    const revoked = await loginToken();
    await env
      .knex('auth_tokens')
      .where({ id: Number(revoked.split('_')[1]) })
      .update({ revoked_at: env.knex.fn.now() });
    const expired = await loginToken();
    await env
      .knex('auth_tokens')
      .where({ id: Number(expired.split('_')[1]) })
      .update({ expires_at: new Date(Date.now() - 3600_000) });
    const loggedOut = await loginToken();
    expect((await app.request('POST', '/api/auth/logout', { token: loggedOut })).status).to.equal(200);
    const wrongChecksum = a.adminToken.slice(0, 20) + (a.adminToken[20] === 'a' ? 'b' : 'a') + a.adminToken.slice(21);
    const board = (await openBoardSession(env.knex, a.admin.id)).token;
    const unknownId = mintToken('login', 2_000_000_000).token;
    const integration = (await makeIntegrationToken(a, 'read_write')).token;
    const credentials: [string, string | undefined, Record<string, string>?][] = [
      ['no token', undefined],
      ['garbage', 'garbage'],
      ['wrong checksum', wrongChecksum],
      ['unknown id', unknownId],
      ['revoked login token', revoked],
      ['expired login token', expired],
      ['logged-out login token', loggedOut],
      ['integration token', integration],
      ['board session token', board],
      [
        'Basic scheme',
        undefined,
        { authorization: `Basic ${Buffer.from(`${a.admin.email}:${PASSWORD}`).toString('base64')}` },
      ],
    ];
    const before = await snapshot([a.tenant.id]);
    for (const e of ADMIN_ENDPOINTS) {
      for (const [label, token, headers] of credentials) {
        const res = await app.request(e.method, e.path(own), { token, headers, body: e.body });
        expect(res.status, `${e.name} / ${label}`).to.equal(401);
        expect(res.body, `${e.name} / ${label}`).to.deep.equal({
          message: 'Unauthenticated.',
          code: 'UNAUTHENTICATED',
        });
        expect(res.headers.get('content-type')).to.match(/^application\/json/);
        expect(res.headers.get('location'), `${e.name} / ${label}`).to.equal(null);
      }
    }
    expect(await snapshot([a.tenant.id])).to.equal(before);
  });

  it('answers 403 FORBIDDEN for every endpoint to a user without its permission and to a platform admin (no tenant), and changes nothing', async () => {
    const own = await ids(a);
    const noRoles = await makeUser(a.tenant.id, 'staff');
    await env.knex('user_roles').where({ user_id: noRoles.id }).delete();
    const tech = await makeUser(a.tenant.id, 'technician');
    const email = `platform-${randomBytes(3).toString('hex')}@example.test`;
    await createPlatformAdmin(env.knex, { email, password: PASSWORD });
    const platform = (await login(env.knex, { email, password: PASSWORD })).token;
    const before = await snapshot([a.tenant.id]);
    for (const e of ADMIN_ENDPOINTS) {
      const callers: [string, string][] = [
        ['user without roles', noRoles.token],
        ['platform admin', platform],
      ];
      if (e.permission === 'settings.manage') callers.push(['technician', tech.token]);
      for (const [label, token] of callers) {
        const res = await app.request(e.method, e.path(own), { token, body: e.body });
        expect(res.status, `${e.name} / ${label}`).to.equal(403);
        expect(res.body.code, `${e.name} / ${label}`).to.equal('FORBIDDEN');
      }
    }
    expect(await snapshot([a.tenant.id])).to.equal(before);
  });

  it('answers 404 NOT_FOUND for every endpoint with an id of another tenant, and changes nothing', async () => {
    const foreign = await ids(b);
    const withId = ADMIN_ENDPOINTS.filter((e) => e.path({ tokenId: 1, ticketId: 1 }).match(/\/1$/));
    expect(withId.map((e) => e.name)).to.deep.equal(['tokens.revoke', 'tickets.status']);
    const before = await snapshot([a.tenant.id, b.tenant.id]);
    for (const e of withId) {
      const res = await app.request(e.method, e.path(foreign), { token: a.adminToken, body: e.body });
      expect(res.status, e.name).to.equal(404);
      expect(res.body.code, e.name).to.equal('NOT_FOUND');
    }
    expect(await snapshot([a.tenant.id, b.tenant.id])).to.equal(before);
  });

  it("refuses exactly the demo guard's actions on a demo tenant (403 demo_guard_blocked, nothing changed); token management stays open", async () => {
    const demo = await makeTenant({ demo: true });
    for (const e of ADMIN_ENDPOINTS) {
      const own = await ids(demo);
      const before = await snapshot([demo.tenant.id]);
      const res = await app.request(e.method, e.path(own), { token: demo.adminToken, body: e.body });
      if (e.demoBlocked) {
        expect(res.status, e.name).to.equal(403);
        expect(res.body.code, e.name).to.equal('demo_guard_blocked');
        expect(await snapshot([demo.tenant.id]), e.name).to.equal(before);
      } else {
        expect(res.status, e.name).to.be.oneOf([200, 201]);
      }
    }
  });
});
