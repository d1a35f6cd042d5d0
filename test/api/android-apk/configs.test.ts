import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, PASSWORD, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { createPlatformAdmin } from '../../../api/tenants/service.js';
import { login } from '../../../api/auth/service.js';
import { MODULES } from '../../../api/tenants/catalog.js';

/** A valid configuration body (issue 12 item 2). */
export const portalConfig = (extra: Record<string, unknown> = {}) => ({
  app_name: 'Demo Portal',
  package_id: 'id.demoisp.portal',
  version_name: '1.0.0',
  version_code: 1,
  base_url: 'https://portal.demo-isp.test',
  environment: 'production',
  theme_color: '#1A73E8',
  orientation: 'portrait',
  signing_mode: 'debug',
  ...extra,
});

/** Issue 12 items 1-3: configurations, the overview, health, access. */
describe('/api/android-apk: configurations, overview and health', () => {
  let app: TestApp;
  let a: TenantFixture;

  before(async () => {
    app = await startTestApp({ apk: { toolchain: { mode: 'stub' }, signing: noKeystores } });
    a = await makeTenant();
  });

  const put = (appType: string, body: unknown, f: TenantFixture = a) =>
    app.request('PUT', `/api/android-apk/configs/${appType}`, { token: f.adminToken, body });

  it('saves a configuration (200, derived URLs), updates it in place and audits both', async () => {
    const res = await put('portal', portalConfig({ api_url: null }));
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.include({
      app_type: 'portal',
      app_name: 'Demo Portal',
      package_id: 'id.demoisp.portal',
      application_id: 'id.demoisp.portal',
      version_code: 1,
      api_url: null,
      effective_api_url: 'https://portal.demo-isp.test/api',
      start_url: 'https://portal.demo-isp.test/',
      theme_color: '#1A73E8',
      enabled: true,
    });
    const again = await put('portal', portalConfig({ version_code: 2, environment: 'sandbox', enabled: false }));
    expect(again.status, again.text).to.equal(200);
    expect(again.body.data).to.include({
      version_code: 2,
      application_id: 'id.demoisp.portal.sandbox',
      enabled: false,
    });
    expect(await a.scope.table('apk_app_configs').count({ n: '*' }).first()).to.deep.equal({ n: 1 });
    const audits = await a.scope.table('audit_log').where({ action: 'app_builder.config_saved' }).orderBy('id');
    expect(audits).to.have.length(2);
    expect(audits[1].before).to.include({ version_code: 1 });
    expect(audits[1].after).to.include({ version_code: 2, enabled: false });
  });

  it('absensi opens {base_url}/absensi/ (document 2)', async () => {
    const res = await put(
      'absensi',
      portalConfig({
        package_id: 'id.demoisp.absensi',
        base_url: 'https://demo-isp.test/',
        api_url: 'https://api.demo-isp.test/v1',
      }),
    );
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.start_url).to.equal('https://demo-isp.test/absensi/');
    expect(res.body.data.effective_api_url).to.equal('https://api.demo-isp.test/v1');
  });

  /** [case, app type, body, the field expected in errors] */
  const bad: [string, string, Record<string, unknown>, string][] = [
    ['unknown app type', 'customer', portalConfig(), 'appType'],
    ['app_name missing', 'portal', { ...portalConfig(), app_name: undefined }, 'app_name'],
    ['app_name empty', 'portal', portalConfig({ app_name: '' }), 'app_name'],
    ['app_name 51 characters', 'portal', portalConfig({ app_name: 'x'.repeat(51) }), 'app_name'],
    ['app_name with a newline', 'portal', portalConfig({ app_name: 'a\nb' }), 'app_name'],
    ['package_id one segment', 'portal', portalConfig({ package_id: 'portal' }), 'package_id'],
    ['package_id digit start', 'portal', portalConfig({ package_id: 'id.1demo' }), 'package_id'],
    ['package_id with a dash', 'portal', portalConfig({ package_id: 'id.demo-isp' }), 'package_id'],
    ['package_id with a Java keyword', 'portal', portalConfig({ package_id: 'id.new.portal' }), 'package_id'],
    ['version_name empty', 'portal', portalConfig({ version_name: '' }), 'version_name'],
    ['version_code 0', 'portal', portalConfig({ version_code: 0 }), 'version_code'],
    ['version_code too big', 'portal', portalConfig({ version_code: 2100000001 }), 'version_code'],
    ['version_code a string', 'portal', portalConfig({ version_code: '3' }), 'version_code'],
    ['base_url not a URL', 'portal', portalConfig({ base_url: 'portal.demo' }), 'base_url'],
    ['base_url ftp', 'portal', portalConfig({ base_url: 'ftp://demo.test' }), 'base_url'],
    ['base_url http in production', 'portal', portalConfig({ base_url: 'http://demo.test' }), 'base_url'],
    ['api_url http in production', 'portal', portalConfig({ api_url: 'http://api.demo.test' }), 'api_url'],
    ['api_url not a URL', 'portal', portalConfig({ api_url: 'nope' }), 'api_url'],
    ['environment unknown', 'portal', portalConfig({ environment: 'staging' }), 'environment'],
    ['theme_color short HEX', 'portal', portalConfig({ theme_color: '#FFF' }), 'theme_color'],
    ['theme_color a name', 'portal', portalConfig({ theme_color: 'blue' }), 'theme_color'],
    ['orientation unknown', 'portal', portalConfig({ orientation: 'upside' }), 'orientation'],
    ['signing_mode unknown', 'portal', portalConfig({ signing_mode: 'none' }), 'signing_mode'],
    ['enabled a string', 'portal', portalConfig({ enabled: 'yes' }), 'enabled'],
    ['an unknown field', 'portal', portalConfig({ icon: 'x' }), 'icon'],
  ];
  for (const [what, appType, body, field] of bad) {
    it(`422 naming ${field}: ${what}; nothing saved`, async () => {
      const f = await makeTenant();
      const res = await put(appType, body, f);
      expect(res.status, res.text).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(Object.keys(res.body.errors).join(','), res.text).to.include(field);
      expect(await f.scope.table('apk_app_configs').count({ n: '*' }).first()).to.deep.equal({ n: 0 });
    });
  }

  it('http URLs are fine in the sandbox environment', async () => {
    const f = await makeTenant();
    const res = await put('partner', portalConfig({ environment: 'sandbox', base_url: 'http://10.0.0.5:8080' }), f);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.start_url).to.equal('http://10.0.0.5:8080/');
  });

  it('version_code below a successful build of the app type: 422, the saved config unchanged', async () => {
    const f = await makeTenant();
    expect((await put('netadmin', portalConfig({ version_code: 7 }), f)).status).to.equal(200);
    await f.scope.insert('apk_builds', {
      app_type: 'netadmin',
      build_type: 'debug',
      status: 'successful',
      toolchain: 'stub',
      config: JSON.stringify(portalConfig({ version_code: 7 })),
      version_name: '1.0.0',
      version_code: 7,
    });
    const res = await put('netadmin', portalConfig({ version_code: 6 }), f);
    expect(res.status, res.text).to.equal(422);
    expect(res.body.errors.version_code[0]).to.include('at least 7');
    expect((await put('netadmin', portalConfig({ version_code: 7 }), f)).status).to.equal(200);
  });

  it('GET /api/android-apk: the four app types (null where unsaved), recent builds, health', async () => {
    const res = await app.request('GET', '/api/android-apk', { token: a.adminToken });
    expect(res.status, res.text).to.equal(200);
    expect(Object.keys(res.body.data.configs)).to.deep.equal(['portal', 'netadmin', 'partner', 'absensi']);
    expect(res.body.data.configs.portal.app_name).to.equal('Demo Portal');
    expect(res.body.data.configs.netadmin).to.equal(null);
    expect(res.body.data.builds).to.deep.equal([]);
    expect(res.body.data.health.toolchain).to.equal('stub');
  });

  it('GET /api/android-apk/health: items for node, npm, java, keytool, android_sdk, storage with hints', async () => {
    const res = await app.request('GET', '/api/android-apk/health', { token: a.adminToken });
    expect(res.status, res.text).to.equal(200);
    const d = res.body.data;
    expect(d.items.map((i: { name: string }) => i.name)).to.deep.equal([
      'node',
      'npm',
      'java',
      'keytool',
      'android_sdk',
      'storage',
    ]);
    expect(d).to.include({ toolchain: 'stub', mode: 'stub', ready: true });
    const byName = Object.fromEntries(d.items.map((i: { name: string }) => [i.name, i]));
    expect(byName.node).to.include({ status: 'ok', version: process.versions.node });
    expect(byName.npm.status).to.equal('ok');
    for (const i of d.items) {
      if (i.status === 'ok') expect(i.hint).to.equal(null);
      else expect(i.hint, i.name).to.be.a('string').and.include('docs/app-builder.md');
    }
  });

  it('a login without a tenant: 422 errors.tenant on every app builder route', async () => {
    const email = `pa-${Date.now()}@platform.test`;
    await createPlatformAdmin(env.knex, { email, password: PASSWORD });
    const { token } = await login(env.knex, { email, password: PASSWORD });
    for (const [m, p, body] of [
      ['GET', '/api/android-apk', undefined],
      ['GET', '/api/android-apk/health', undefined],
      ['PUT', '/api/android-apk/configs/portal', portalConfig()],
      ['POST', '/api/android-apk/configs/portal/builds', { build_type: 'debug' }],
      ['GET', '/api/android-apk/builds', undefined],
      ['GET', '/api/android-apk/builds/1', undefined],
      ['POST', '/api/android-apk/builds/1/cancel', undefined],
    ] as const) {
      const res = await app.request(m, p, { token, body });
      expect(res.status, `${m} ${p}: ${res.text}`).to.equal(422);
      expect(res.body.errors.tenant[0]).to.be.a('string');
    }
  });

  it('roles: Super Admin and Administrator pass; technician and staff 403; module off 403 module_disabled', async () => {
    const f = await makeTenant();
    for (const [role, status] of [
      ['Super Admin', 200],
      ['Administrator', 200],
      ['technician', 403],
      ['staff', 403],
    ] as const) {
      const u = await makeUser(f.tenant.id, role);
      const res = await app.request('GET', '/api/android-apk', { token: u.token });
      expect(res.status, role).to.equal(status);
      if (status === 403) expect(res.body.message).to.include('app_builder.manage');
    }
    await env
      .knex('tenants')
      .where({ id: f.tenant.id })
      .update({ modules: JSON.stringify(MODULES.filter((m) => m !== 'app_builder')) });
    const off = await app.request('PUT', '/api/android-apk/configs/portal', {
      token: f.adminToken,
      body: portalConfig(),
    });
    expect(off.status).to.equal(403);
    expect(off.body.code).to.equal('module_disabled');
    expect(await f.scope.table('apk_app_configs').count({ n: '*' }).first()).to.deep.equal({ n: 0 });
  });
});

/** No release keystore anywhere (the keystore store is item 8). */
export const noKeystores = {
  hasReleaseKeystore: async () => false,
  writeKeystore: async () => {
    throw new Error('no keystores in this test');
  },
};
