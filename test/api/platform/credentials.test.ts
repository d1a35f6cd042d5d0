import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { platformAdminToken } from './support.js';

const ZONE = 'a'.repeat(32);
const hex = () => randomBytes(6).toString('hex');

/** Sentinel secrets: must never appear in a column, an answer or a log. */
const S = {
  db: `dbpw-sentinel-${hex()}`,
  cf: `cftoken_sentinel_${hex()}`,
  panel: `panel-sentinel-${hex()}`,
  s3: `s3secret-sentinel-${hex()}`,
};

const full = () => ({
  enabled: false,
  backup_ready: false,
  tenant_db: { host: '127.0.0.1', port: 5432, admin_user: 'postgres', admin_password: S.db },
  cloudflare: { zone_id: ZONE, api_token: S.cf },
  mail_panel: { type: 'cpanel', host: 'panel.example.net', port: 2083, user: 'isp', password: S.panel, ssl: true },
  storage: {
    endpoint: 'https://s3.example.net',
    region: 'us-east-1',
    bucket: 'isp-backups',
    access_key: 'AKIAEXAMPLE',
    secret_key: S.s3,
  },
});

/** Issue 13 items 3-4: PUT/GET credentials, readiness and the lock. */
describe('/api/platform/provisioning: credentials and readiness', function () {
  this.timeout(30_000);
  let app: TestApp;
  let ops: { id: number; token: string };
  let a: TenantFixture;
  const put = (body: unknown, token = ops.token) =>
    app.request('PUT', '/api/platform/provisioning/credentials', { token, body });
  const readiness = async () =>
    (await app.request('GET', '/api/platform/provisioning/readiness', { token: ops.token })).body.data;
  const statusOf = async () =>
    Object.fromEntries(((await readiness()).checks as { key: string; status: string }[]).map((c) => [c.key, c.status]));
  const markTested = (section: string, ok = true) =>
    env
      .knex('provisioning_credentials')
      .where({ section })
      .update({ last_test: JSON.stringify({ ok, at: new Date().toISOString(), message: ok ? 'ok' : 'refused' }) });

  before(async () => {
    app = await startTestApp();
    ops = await platformAdminToken();
    a = await makeTenant();
    await env.knex('provisioning_credentials').del();
    await env.knex('provisioning_settings').del();
  });

  it('refuses tenant users (403) on every route', async () => {
    for (const [m, p] of [
      ['GET', '/api/platform/provisioning/readiness'],
      ['GET', '/api/platform/provisioning/credentials'],
      ['PUT', '/api/platform/provisioning/credentials'],
    ] as const) {
      const r = await app.request(m, p, { token: a.adminToken, body: m === 'PUT' ? { enabled: true } : undefined });
      expect(r.status, `${m} ${p}`).to.equal(403);
    }
    expect(await env.knex('provisioning_settings').count('* as n').first()).to.deep.equal({ n: 0 });
  });

  it('readiness with nothing saved: locked, every credential missing', async () => {
    const r = await readiness();
    expect(r).to.deep.include({
      ready: false,
      locked: true,
      lock_reasons: ['enabled', 'backup', 'cloudflare', 'mail_panel'],
    });
    expect(await statusOf()).to.deep.equal({
      metadata_tables: 'ok',
      tenant_db: 'missing',
      cloudflare: 'missing',
      mail_panel: 'missing',
      storage: 'missing',
      backup: 'missing',
    });
  });

  it('answers 422 for each bad field, saving nothing', async () => {
    const bad: [string, Record<string, unknown>][] = [
      ['enabled', { enabled: 'yes' }],
      ['tenant_db.port', { tenant_db: { ...full().tenant_db, port: 70000 } }],
      ['tenant_db.host', { tenant_db: { ...full().tenant_db, host: 'http://db' } }],
      ['tenant_db.admin_user', { tenant_db: { ...full().tenant_db, admin_user: 'a b' } }],
      ['tenant_db.admin_password', { tenant_db: { ...full().tenant_db, admin_password: undefined } }],
      ['cloudflare.zone_id', { cloudflare: { zone_id: 'not-a-zone', api_token: 'x' } }],
      ['cloudflare.api_token', { cloudflare: { zone_id: ZONE, api_token: 'bad token\n' } }],
      ['cloudflare.api_token', { cloudflare: { zone_id: ZONE } }],
      ['mail_panel.type', { mail_panel: { ...full().mail_panel, type: 'plesk' } }],
      ['mail_panel.ssl', { mail_panel: { ...full().mail_panel, ssl: 'on' } }],
      ['mail_panel.password', { mail_panel: { ...full().mail_panel, password: undefined } }],
      ['mail_panel.ssh_key_path', { mail_panel: { ...full().mail_panel, type: 'hestia', password: undefined } }],
      ['storage.endpoint', { storage: { ...full().storage, endpoint: 'ftp://x' } }],
      ['storage.bucket', { storage: { ...full().storage, bucket: 'A' } }],
      ['storage.secret_key', { storage: { ...full().storage, secret_key: undefined } }],
      ['extra', { extra: 1 }],
    ];
    for (const [field, body] of bad) {
      const r = await put(body);
      expect(r.status, `${field}: ${r.text}`).to.equal(422);
      expect(Object.keys(r.body.errors ?? {}).join(','), field).to.include(field);
    }
    expect(await env.knex('provisioning_credentials').count('* as n').first()).to.deep.equal({ n: 0 });
  });

  it('saves sealed secrets, answers masked, keeps secrets when omitted; audited; sentinels nowhere', async () => {
    const r = await put(full());
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data.cloudflare).to.deep.include({
      zone_id: ZONE,
      api_token_set: true,
      fake: false,
      last_test: null,
    });
    expect(r.body.data.storage).to.deep.include({ access_key: 'AKIA***', secret_key_set: true });
    expect(r.body.data.tenant_db).to.deep.include({ host: '127.0.0.1', port: 5432, admin_password_set: true });
    expect(r.body.data.mail_panel).to.deep.include({ type: 'cpanel', user: 'isp', password_set: true });
    const raw = JSON.stringify(await env.knex('provisioning_credentials').select('*'));
    const audit = JSON.stringify(
      await env.knex('platform_audit_log').where({ action: 'platform.provisioning_credentials_update' }),
    );
    expect(audit).to.include('"changed"');
    for (const s of Object.values(S)) {
      expect(raw).to.not.include(s);
      expect(r.text).to.not.include(s);
      expect(audit).to.not.include(s);
      expect(app.logs.join('')).to.not.include(s);
    }
    // omitted secret: kept (same value -> not a change)
    await markTested('cloudflare');
    const again = await put({ cloudflare: { zone_id: ZONE } });
    expect(again.status).to.equal(200);
    expect(again.body.data.cloudflare.last_test).to.include({ ok: true });
    const get = await app.request('GET', '/api/platform/provisioning/credentials', { token: ops.token });
    expect(get.body.data.cloudflare).to.deep.include({ api_token_set: true });
  });

  it('locked states: not enabled, untested, failed, changed after a test; saving never unlocks', async () => {
    expect(await statusOf()).to.deep.include({ tenant_db: 'untested', cloudflare: 'ok', mail_panel: 'untested' });
    expect((await put({ enabled: true, backup_ready: true })).status).to.equal(200);
    expect((await readiness()).lock_reasons).to.deep.equal(['mail_panel']);
    await markTested('mail_panel', false);
    expect(await statusOf()).to.deep.include({ mail_panel: 'failed' });
    expect((await readiness()).locked).to.equal(true);
    await markTested('mail_panel', true);
    expect((await readiness()).locked).to.equal(false);
    // a changed token resets cloudflare's test: locked again
    const r = await put({ cloudflare: { zone_id: ZONE, api_token: `${S.cf}x` } });
    expect(r.body.data.cloudflare.last_test).to.equal(null);
    expect(await readiness()).to.deep.include({ locked: true, lock_reasons: ['cloudflare'] });
    expect(await statusOf()).to.deep.include({ cloudflare: 'untested', backup: 'untested' });
    await markTested('cloudflare');
    // switching it off locks it
    await put({ enabled: false });
    expect((await readiness()).lock_reasons).to.deep.equal(['enabled']);
    // null removes a section
    const del = await put({ storage: null });
    expect(del.body.data.storage).to.equal(null);
    expect(await statusOf()).to.deep.include({ storage: 'missing' });
  });
});
