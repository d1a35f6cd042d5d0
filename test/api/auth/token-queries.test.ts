import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken, makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { mintToken } from '../../../lib/token.js';

/**
 * DESIGN.md §5 / issue 2 item 4: a malformed token is rejected before any database query; a
 * well-formed one costs one query (token, type, revocation, expiry and tenant together).
 * Queries are counted with knex's 'query' event on the app's knex.
 */
describe('token checks and database queries (malformed tokens cost no query)', () => {
  let app: TestApp;
  let a: TenantFixture;

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
  });

  /** SQL statements the app ran while serving one request. */
  async function queriesOf(method: string, path: string, token?: string): Promise<{ status: number; sql: string[] }> {
    await env.knex.raw('select 1'); // lets any earlier fire-and-forget write land before counting
    const sql: string[] = [];
    const listener = (q: { sql: string }) => {
      sql.push(q.sql);
    };
    env.knex.on('query', listener);
    try {
      const res = await app.request(method, path, { token });
      return { status: res.status, sql };
    } finally {
      env.knex.off('query', listener);
    }
  }

  it('answers 401 without a single query for a missing, malformed, wrong-checksum or wrong-kind token', async () => {
    const integration = (await makeIntegrationToken(a, 'read')).token;
    const flip = (t: string, i: number) => t.slice(0, i) + (t[i] === 'a' ? 'b' : 'a') + t.slice(i + 1);
    const cases: [string, string, string | undefined][] = [
      ['/api/external/v1/health', 'no token', undefined],
      ['/api/external/v1/health', 'garbage', 'garbage'],
      ['/api/external/v1/health', 'wrong checksum', flip(integration, 30)],
      ['/api/external/v1/health', 'truncated', integration.slice(0, -1)],
      ['/api/external/v1/health', 'login token on the external API', a.adminToken],
      ['/api/external/v1/health', 'mailbox API key', mintToken('mailbox', 5).token],
      ['/api/auth/me', 'wrong checksum', flip(a.adminToken, 30)],
      ['/api/auth/me', 'integration token on a login route', integration],
      ['/api/integrations/api-tokens', 'garbage', 'ispl_1_xyz'],
    ];
    for (const [path, label, token] of cases) {
      const { status, sql } = await queriesOf('GET', path, token);
      expect(status, `${path} / ${label}`).to.equal(401);
      expect(sql, `${path} / ${label}`).to.deep.equal([]);
    }
  });

  it('looks a well-formed token up in one query that checks type, revocation and expiry', async () => {
    const unknown = await queriesOf('GET', '/api/external/v1/health', mintToken('integration', 2_000_000_000).token);
    expect(unknown.status).to.equal(401);
    expect(unknown.sql).to.have.length(1);
    const sql = unknown.sql[0].replace(/"/g, '').replace(/\s+/g, ' ').toLowerCase(); // knex builder or a raw statement
    expect(sql)
      .to.match(/from auth_tokens/)
      .and.match(/revoked_at is null/)
      .and.match(/expires_at/)
      .and.match(/\btype = /);
    const t = await makeIntegrationToken(a, 'read');
    await env.knex('auth_tokens').where({ id: t.data.id }).update({ revoked_at: env.knex.fn.now() });
    const revoked = await queriesOf('GET', '/api/external/v1/health', t.token);
    expect(revoked.status).to.equal(401);
    expect(revoked.sql).to.have.length(1);
  });
});
