import { expect } from 'chai';
import { createPlatformAdmin } from '../../../api/tenants/service.js';
import { login } from '../../../api/auth/service.js';
import { MODULES, ROLES } from '../../../api/tenants/catalog.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, PASSWORD, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { dumpStores, makeKeystore, secretForms, uploadForm } from './support.js';

const KS = '/api/android-apk/configs';
/** A keystore password that must appear nowhere but in the sealed row. */
const SENTINEL = 'SENTINEL-KS-Pw-7f3a9c';

/**
 * Issue 12 item 8 access rules: roles x endpoints, the module switch, other tenants, a login
 * without a tenant, the demo tenant; and the sentinel keystore password kept out of the database
 * (raw), Redis, the logs and every response.
 */
describe('android-apk release keystores: access, tenants, demo, secrets (issue 12 item 8)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let a: TenantFixture;
  let p12: Buffer;

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    p12 = await makeKeystore({ type: 'PKCS12', storePassword: SENTINEL, alias: 'sentinel' });
  });

  /** Each endpoint with a request that passes validation (the generate body is valid). */
  const endpoints = (appType: string) =>
    [
      ['GET', `${KS}/${appType}/keystore`, undefined],
      ['POST', `${KS}/${appType}/keystore`, undefined],
      [
        'POST',
        `${KS}/${appType}/keystore/generate`,
        { key_alias: 'k', common_name: 'C', organization: 'O', country: 'ID' },
      ],
      ['DELETE', `${KS}/${appType}/keystore`, undefined],
    ] as const;

  it('roles x endpoints: Super Admin and Administrator pass, technician and staff get 403 naming the permission', async () => {
    const seen: string[] = [];
    for (const role of ROLES) {
      const { token } = await makeUser(a.tenant.id, role);
      for (const [method, path, body] of endpoints('netadmin')) {
        const res = await app.request(method, path, { token, body });
        seen.push(`${role} ${method} ${path}: ${res.status}`);
        if (role === 'Super Admin' || role === 'Administrator') {
          expect(res.status, `${role} ${method} ${path} ${res.text}`).not.to.equal(403);
        } else {
          expect(res.status, `${role} ${method} ${path}`).to.equal(403);
          expect(res.body).to.deep.equal({ message: 'Missing permission app_builder.manage.', code: 'FORBIDDEN' });
        }
      }
    }
    // what the passing roles met: GET 404 (none), the bare POST 422 (not multipart), generate 201 then 409, DELETE
    expect(seen.filter((l) => l.startsWith('Super Admin'))).to.deep.equal([
      `Super Admin GET ${KS}/netadmin/keystore: 404`,
      `Super Admin POST ${KS}/netadmin/keystore: 422`,
      `Super Admin POST ${KS}/netadmin/keystore/generate: 201`,
      `Super Admin DELETE ${KS}/netadmin/keystore: 200`,
    ]);
  });

  it('module app_builder off: 403 module_disabled on every endpoint, nothing changed', async () => {
    const t = await makeTenant();
    await env
      .knex('tenants')
      .where({ id: t.tenant.id })
      .update({ modules: JSON.stringify(MODULES.filter((m) => m !== 'app_builder')) });
    for (const [method, path, body] of endpoints('portal')) {
      const res = await app.request(method, path, { token: t.adminToken, body });
      expect(res.status, `${method} ${path}`).to.equal(403);
      expect(res.body.code).to.equal('module_disabled');
    }
    expect(await env.knex('apk_keystores').where({ tenant_id: t.tenant.id })).to.deep.equal([]);
  });

  it('another tenant never sees or deletes a keystore: 404, the owner’s row unchanged', async () => {
    const owner = await makeTenant();
    const gen = await app.request('POST', `${KS}/absensi/keystore/generate`, {
      token: owner.adminToken,
      body: { key_alias: 'owner', common_name: 'Owner', organization: 'O', country: 'ID' },
    });
    expect(gen.status).to.equal(201);
    const before = await env.knex('apk_keystores').where({ tenant_id: owner.tenant.id });
    const intruder = await makeTenant();
    expect((await app.request('GET', `${KS}/absensi/keystore`, { token: intruder.adminToken })).status).to.equal(404);
    const del = await app.request('DELETE', `${KS}/absensi/keystore`, { token: intruder.adminToken });
    expect(del.status).to.equal(404);
    // the intruder's own generate makes its own row, never replacing the owner's
    const own = await app.request('POST', `${KS}/absensi/keystore/generate`, {
      token: intruder.adminToken,
      body: { key_alias: 'intruder', common_name: 'I', organization: 'O', country: 'ID' },
    });
    expect(own.status).to.equal(201);
    expect(await env.knex('apk_keystores').where({ tenant_id: owner.tenant.id })).to.deep.equal(before);
    const ownerView = await app.request('GET', `${KS}/absensi/keystore`, { token: owner.adminToken });
    expect(ownerView.body.data.alias).to.equal('owner');
  });

  it('a login without a tenant: 422 errors.tenant on every endpoint', async () => {
    const email = `platform-${Date.now()}@example.test`;
    await createPlatformAdmin(env.knex, { email, password: PASSWORD });
    const { token } = await login(env.knex, { email, password: PASSWORD });
    for (const [method, path, body] of endpoints('portal')) {
      const res = await app.request(method, path, { token, body });
      expect(res.status, `${method} ${path}`).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(res.body.errors).to.have.property('tenant');
    }
  });

  it('demo tenant: upload, generate and delete 403 demo_guard_blocked; GET allowed', async () => {
    const demo = await makeTenant({ demo: true });
    const upload = await uploadForm(app, demo.adminToken, 'portal', { store_password: SENTINEL, key_alias: 'x' }, p12);
    expect(upload.status).to.equal(403);
    expect(upload.body.code).to.equal('demo_guard_blocked');
    for (const [method, path, body] of endpoints('portal').slice(1)) {
      const res = await app.request(method, path, { token: demo.adminToken, body });
      expect(res.status, `${method} ${path}`).to.equal(403);
      expect(res.body.code).to.equal('demo_guard_blocked');
    }
    expect((await app.request('GET', `${KS}/portal/keystore`, { token: demo.adminToken })).status).to.equal(404);
    expect(await env.knex('apk_keystores').where({ tenant_id: demo.tenant.id })).to.deep.equal([]);
  });

  it('the sentinel keystore password is in no table (raw), no Redis key or value, no log line, no response', async () => {
    const t = await makeTenant();
    const texts: string[] = [];
    const wrong = await uploadForm(app, t.adminToken, 'portal', { store_password: SENTINEL, key_alias: 'other' }, p12);
    expect(wrong.status).to.equal(422);
    const bad = await uploadForm(
      app,
      t.adminToken,
      'portal',
      { store_password: SENTINEL, key_alias: 'sentinel', key_password: `${SENTINEL}-x` },
      p12,
    );
    expect(bad.status).to.equal(422);
    const ok = await uploadForm(app, t.adminToken, 'portal', { store_password: SENTINEL, key_alias: 'sentinel' }, p12);
    expect(ok.status, ok.text).to.equal(201);
    const again = await uploadForm(
      app,
      t.adminToken,
      'portal',
      { store_password: SENTINEL, key_alias: 'sentinel' },
      p12,
    );
    expect(again.status).to.equal(409);
    const got = await app.request('GET', `${KS}/portal/keystore`, { token: t.adminToken });
    const del = await app.request('DELETE', `${KS}/portal/keystore`, { token: t.adminToken });
    expect(del.status).to.equal(200);
    const ok2 = await uploadForm(app, t.adminToken, 'portal', { store_password: SENTINEL, key_alias: 'sentinel' }, p12);
    expect(ok2.status).to.equal(201);
    for (const r of [wrong, bad, ok, again, got, del, ok2]) texts.push(r.text, JSON.stringify([...r.headers]));
    const { db, redis } = await dumpStores();
    expect(db).to.include('apk_keystores'); // the dump really covers the table
    const sealed = (await env.knex('apk_keystores').where({ tenant_id: t.tenant.id }).first()).secret_enc;
    expect(db).to.include(sealed);
    for (const form of secretForms(SENTINEL)) {
      expect(db, 'database').not.to.include(form);
      expect(redis, 'redis').not.to.include(form);
      expect(app.logs.join('\n'), 'logs').not.to.include(form);
      expect(texts.join('\n'), 'responses').not.to.include(form);
    }
  });
});
