import { expect } from 'chai';
import nock from 'nock';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { createLogger } from '../../../lib/logger.js';
import { startWorkers } from '../../../workers/main.js';
import * as provisioningCheck from '../../../jobs/provisioning-check.js';
import { dumpStores } from '../mail/support.js';
import { platformAdminToken } from './support.js';
import { leaveTenantsShared } from '../../helpers/shared-mode.js';

const ZONE = 'd'.repeat(32);
const CF = 'https://api.cloudflare.com';
const TOKEN = `cf_route_sentinel_${randomBytes(5).toString('hex')}`;
const PANEL = `panel-route-sentinel-${randomBytes(5).toString('hex')}`;

/**
 * Issue 13 item 5: POST /api/platform/provisioning/credentials/test/{provider} through the
 * provisioning-check queue and a real (in-process) worker; the only test file of the feature that
 * starts one.
 */
describe('POST /api/platform/provisioning/credentials/test/{provider}', function () {
  leaveTenantsShared();
  this.timeout(60_000);
  let app: TestApp;
  let ops: { id: number; token: string };
  let a: TenantFixture;
  const workerLogs: string[] = [];
  const test = (provider: string, token = ops.token) =>
    app.request('POST', `/api/platform/provisioning/credentials/test/${provider}`, { token });

  before(async () => {
    app = await startTestApp({ provisioningCheckWaitMs: 10_000 });
    const sink = new Writable({
      write(chunk, _e, cb) {
        workerLogs.push(chunk.toString());
        cb();
      },
    });
    provisioningCheck.configureProvisioningChecks({ timeoutMs: 3000 });
    const handle = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      appKey: TEST_WEB_APP_KEY,
      prefix: app.queues.prefix,
      logger: createLogger('info', sink),
      queues: ['provisioning-check'],
      registry: { 'provisioning-check': { processor: provisioningCheck.process, concurrency: 2 } },
    });
    registerCleanup(() => handle.close());
    ops = await platformAdminToken();
    a = await makeTenant();
    await env.knex('provisioning_credentials').del();
    await env.knex('provisioning_settings').del();
    const saved = await app.request('PUT', '/api/platform/provisioning/credentials', {
      token: ops.token,
      body: {
        enabled: true,
        backup_ready: true,
        cloudflare: { zone_id: ZONE, api_token: TOKEN },
        mail_panel: { type: 'cpanel', host: 'panel.example.net', port: 2083, user: 'isp', password: PANEL, ssl: true },
      },
    });
    expect(saved.status, saved.text).to.equal(200);
  });
  after(() => {
    provisioningCheck.configureProvisioningChecks({});
    nock.cleanAll();
  });

  it('tenant users 403; an unknown provider 422; nothing enqueued', async () => {
    expect((await test('cloudflare', a.adminToken)).status).to.equal(403);
    const bad = await test('route53');
    expect(bad.status).to.equal(422);
    expect(bad.body.errors).to.have.property('provider');
    expect(await app.queues.get('provisioning-check').getJobCounts('completed', 'failed', 'waiting')).to.deep.equal({
      completed: 0,
      failed: 0,
      waiting: 0,
    });
  });

  it('cloudflare and mail_panel ok: 200 with details, last_test recorded, the lock opens; audited', async () => {
    nock(CF)
      .get('/client/v4/user/tokens/verify')
      .reply(200, { success: true, errors: [], result: { status: 'active' } })
      .get(`/client/v4/zones/${ZONE}`)
      .reply(200, { success: true, errors: [], result: { name: 'example.net', status: 'active' } });
    nock('https://panel.example.net:2083').get('/execute/Email/count_pops').reply(200, { status: 1, data: 0 });
    const cf = await test('cloudflare');
    expect(cf.status, cf.text).to.equal(200);
    expect(cf.body.data).to.deep.equal({
      provider: 'cloudflare',
      ok: true,
      message: 'The token is active; the zone example.net is active.',
      details: { token: 'active', zone_name: 'example.net', zone_status: 'active' },
    });
    const mp = await test('mail_panel');
    expect(mp.status, mp.text).to.equal(200);
    const r = await app.request('GET', '/api/platform/provisioning/readiness', { token: ops.token });
    expect(r.body.data.lock_reasons).to.deep.equal([]);
    expect(r.body.data.locked).to.equal(false);
    const audits = await env
      .knex('platform_audit_log')
      .where({ action: 'platform.provisioning_credentials_test', user_id: ops.id })
      .orderBy('id');
    expect(audits.map((x) => x.after)).to.deep.equal([
      { provider: 'cloudflare', ok: true },
      { provider: 'mail_panel', ok: true },
    ]);
  });

  it('a failing check: 422 provisioning_check_failed with the reason; the lock closes again', async () => {
    nock(CF)
      .get('/client/v4/user/tokens/verify')
      .reply(401, { success: false, errors: [{ code: 1000, message: 'Invalid API Token' }], result: null });
    const res = await test('cloudflare');
    expect(res.status).to.equal(422);
    expect(res.body.code ?? res.body.error?.code).to.equal('provisioning_check_failed');
    expect(res.body.errors.provider[0]).to.equal('Cloudflare token verify: HTTP 401 (1000: Invalid API Token)');
    const r = await app.request('GET', '/api/platform/provisioning/readiness', { token: ops.token });
    expect(r.body.data.lock_reasons).to.deep.equal(['cloudflare']);
    const missing = await test('tenant_db');
    expect(missing.status).to.equal(422);
    expect(missing.body.errors.provider).to.deep.equal(['The tenant database credential is not saved.']);
  });

  it('the sentinel secrets are in no table, Redis key, log or answer', async () => {
    const { db, redis } = await dumpStores();
    for (const s of [TOKEN, PANEL]) {
      expect(db).to.not.include(s);
      expect(redis).to.not.include(s);
      expect(app.logs.join('')).to.not.include(s);
      expect(workerLogs.join('')).to.not.include(s);
    }
  });
});
