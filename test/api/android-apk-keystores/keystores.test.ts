import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { openKeystore } from '../../../db/apk-keystore-secrets.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { keytoolSha256, makeKeystore, uploadForm } from './support.js';

const KS = '/api/android-apk/configs';

/**
 * Issue 12 item 8: upload (checked by keytool), generate, replace rules, read and delete of the
 * release keystores, against real PostgreSQL, Redis and the JDK's keytool.
 */
describe('android-apk release keystores: upload, generate, replace, read, delete (issue 12 item 8)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let a: TenantFixture;
  let jks: Buffer;
  const STORE = 'jks-store-pw-1';
  const KEY = 'jks-key-pw-2';

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    jks = await makeKeystore({ type: 'JKS', storePassword: STORE, alias: 'upload', keyPassword: KEY });
  });

  const rows = (tenantId: number) => env.knex('apk_keystores').where({ tenant_id: tenantId }).orderBy('id');
  const audits = (tenantId: number) =>
    env.knex('audit_log').where({ tenant_id: tenantId }).where('action', 'like', 'app_builder.%').orderBy('id');

  it('refuses what keytool does not open, by field, and stores nothing', async () => {
    const cases: [Record<string, string>, Buffer | undefined, string][] = [
      [{ store_password: 'wrong-password', key_alias: 'upload', key_password: KEY }, jks, 'store_password'],
      [{ store_password: STORE, key_alias: 'nobody', key_password: KEY }, jks, 'key_alias'],
      [{ store_password: STORE, key_alias: 'upload', key_password: 'wrong-key-pw' }, jks, 'key_password'],
      [{ store_password: STORE, key_alias: 'upload' }, jks, 'key_password'], // JKS key password differs from the store's
      [{ store_password: STORE, key_alias: 'upload', key_password: KEY }, Buffer.from('not a keystore'), 'file'],
      [{ store_password: STORE, key_alias: 'upload', key_password: KEY }, undefined, 'file'],
      [{ key_alias: 'upload', key_password: KEY }, jks, 'store_password'],
      [{ store_password: STORE, key_alias: 'upload', key_password: KEY, is_admin: 'true' }, jks, 'is_admin'],
      [{ store_password: STORE, key_alias: 'a\nb', key_password: KEY }, jks, 'key_alias'],
      [{ store_password: STORE, key_alias: 'upload', key_password: KEY, replace: 'yes' }, jks, 'replace'],
    ];
    for (const [fields, file, field] of cases) {
      const res = await uploadForm(app, a.adminToken, 'portal', fields, file);
      expect(res.status, `${field}: ${res.text}`).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(Object.keys(res.body.errors), res.text).to.include(field);
    }
    const json = await app.request('POST', `${KS}/portal/keystore`, {
      token: a.adminToken,
      body: { store_password: STORE },
    });
    expect(json.status).to.equal(422);
    expect(json.body.errors).to.have.property('file');
    const big = await uploadForm(
      app,
      a.adminToken,
      'portal',
      { store_password: STORE, key_alias: 'upload' },
      Buffer.concat([jks, randomBytes(1024 * 1024)]),
    );
    expect(big.status).to.equal(413);
    expect(big.body.code).to.equal('PAYLOAD_TOO_LARGE');
    const badType = await uploadForm(app, a.adminToken, 'desktop', { store_password: STORE, key_alias: 'upload' }, jks);
    expect(badType.status).to.equal(422);
    expect(badType.body.errors).to.have.property('appType');
    expect(await rows(a.tenant.id)).to.deep.equal([]);
    expect(await audits(a.tenant.id)).to.deep.equal([]);
  });

  it('uploads a JKS keystore: 201 metadata with keytool’s fingerprint, sealed at rest, audited; GET shows it', async () => {
    const res = await uploadForm(
      app,
      a.adminToken,
      'portal',
      { store_password: STORE, key_alias: 'upload', key_password: KEY },
      jks,
    );
    expect(res.status, res.text).to.equal(201);
    const fp = await keytoolSha256(jks, 'JKS', STORE, 'upload');
    expect(res.body.data).to.deep.include({
      app_type: 'portal',
      type: 'JKS',
      alias: 'upload',
      sha256_fingerprint: fp,
      source: 'uploaded',
    });
    expect(Date.parse(res.body.data.valid_until)).to.be.greaterThan(Date.now() + 9 * 365 * 86_400_000);
    expect(Object.keys(res.body.data).sort()).to.deep.equal(
      ['alias', 'app_type', 'created_at', 'sha256_fingerprint', 'source', 'type', 'updated_at', 'valid_until'].sort(),
    );
    const got = await app.request('GET', `${KS}/portal/keystore`, { token: a.adminToken });
    expect(got.status).to.equal(200);
    expect(got.body.data).to.deep.equal(res.body.data);
    const [row] = await rows(a.tenant.id);
    const opened = openKeystore(app.appKey, a.tenant.id, 'portal', row.secret_enc);
    expect(opened.keystore.equals(jks)).to.equal(true);
    expect(opened).to.deep.include({ storePassword: STORE, keyPassword: KEY });
    expect(JSON.stringify(row)).not.to.include(STORE);
    const [audit] = await audits(a.tenant.id);
    expect(audit).to.deep.include({ action: 'app_builder.keystore_uploaded', subject_type: 'apk_keystores' });
    expect(audit.before).to.equal(null);
    expect(audit.after).to.deep.include({ app_type: 'portal', alias: 'upload', sha256_fingerprint: fp });
    const other = await app.request('GET', `${KS}/netadmin/keystore`, { token: a.adminToken });
    expect(other.status).to.equal(404);
  });

  it('replacing needs replace=true: 409 CONFLICT and nothing changed without it', async () => {
    const p12 = await makeKeystore({ type: 'PKCS12', storePassword: 'p12-pass-3', alias: 'next' });
    const before = await rows(a.tenant.id);
    const refused = await uploadForm(
      app,
      a.adminToken,
      'portal',
      { store_password: 'p12-pass-3', key_alias: 'next' },
      p12,
    );
    expect(refused.status).to.equal(409);
    expect(refused.body.code).to.equal('CONFLICT');
    expect(refused.body.message).to.include('replace');
    const gen = await app.request('POST', `${KS}/portal/keystore/generate`, {
      token: a.adminToken,
      body: { key_alias: 'gen', common_name: 'X', organization: 'Y', country: 'ID' },
    });
    expect(gen.status).to.equal(409);
    expect(await rows(a.tenant.id)).to.deep.equal(before);
    const replaced = await uploadForm(
      app,
      a.adminToken,
      'portal',
      { store_password: 'p12-pass-3', key_alias: 'next', replace: 'true' },
      p12,
    );
    expect(replaced.status, replaced.text).to.equal(201);
    expect(replaced.body.data).to.deep.include({ type: 'PKCS12', alias: 'next' });
    expect(replaced.body.data.sha256_fingerprint).to.equal(await keytoolSha256(p12, 'PKCS12', 'p12-pass-3', 'next'));
    const now = await rows(a.tenant.id);
    expect(now).to.have.length(1);
    const audit = (await audits(a.tenant.id)).at(-1);
    expect(audit.action).to.equal('app_builder.keystore_uploaded');
    expect(audit.before.sha256_fingerprint).to.equal(before[0].sha256_fingerprint);
    expect(audit.after.sha256_fingerprint).to.equal(replaced.body.data.sha256_fingerprint);
  });

  it('generates a PKCS12 keystore: 201 {alias, sha256_fingerprint, valid_until} with the passwords once', async () => {
    const t0 = Date.now();
    const res = await app.request('POST', `${KS}/partner/keystore/generate`, {
      token: a.adminToken,
      body: { key_alias: 'partner-release', common_name: 'Budi, "Net" <ISP>', organization: 'PT Net', country: 'ID' },
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const d = res.body.data;
    expect(d).to.deep.include({ app_type: 'partner', alias: 'partner-release', type: 'PKCS12', source: 'generated' });
    expect(d.store_password).to.match(/^[A-Za-z0-9_-]{32}$/);
    expect(d.key_password).to.equal(d.store_password);
    const [row] = await env.knex('apk_keystores').where({ tenant_id: a.tenant.id, app_type: 'partner' });
    const opened = openKeystore(app.appKey, a.tenant.id, 'partner', row.secret_enc);
    expect(d.sha256_fingerprint).to.equal(
      await keytoolSha256(opened.keystore, 'PKCS12', d.store_password, 'partner-release'),
    );
    // 25 years from now (the certificate's dates are whole seconds)
    const until = new Date(d.valid_until);
    const from = new Date(until);
    from.setUTCFullYear(from.getUTCFullYear() - 25);
    expect(from.getTime()).to.be.within(t0 - 2000, Date.now() + 1000);
    const got = await app.request('GET', `${KS}/partner/keystore`, { token: a.adminToken });
    expect(got.body.data).not.to.have.property('store_password');
    expect(got.text).not.to.include(d.store_password);
    const again = await app.request('POST', `${KS}/partner/keystore/generate`, {
      token: a.adminToken,
      body: {
        key_alias: 'second',
        common_name: 'C',
        organization: 'O',
        country: 'ID',
        validity_years: 30,
        replace: true,
      },
    });
    expect(again.status).to.equal(201);
    expect(again.body.data.sha256_fingerprint).not.to.equal(d.sha256_fingerprint);
    const again2 = new Date(again.body.data.valid_until);
    again2.setUTCFullYear(again2.getUTCFullYear() - 30);
    expect(again2.getTime()).to.be.within(t0 - 2000, Date.now() + 1000);
    const audit = (await audits(a.tenant.id)).at(-1);
    expect(audit.action).to.equal('app_builder.keystore_generated');
    expect(audit.before.alias).to.equal('partner-release');
    expect(JSON.stringify(await audits(a.tenant.id))).not.to.include(d.store_password);
  });

  it('generate: each bad field is 422 on that field, nothing stored', async () => {
    const good = { key_alias: 'k', common_name: 'C', organization: 'O', country: 'ID' };
    const before = await rows(a.tenant.id);
    for (const [patch, field] of [
      [{ key_alias: 'has space' }, 'key_alias'],
      [{ key_alias: '' }, 'key_alias'],
      [{ common_name: 'a\nb' }, 'common_name'],
      [{ organization: 'o'.repeat(65) }, 'organization'],
      [{ country: 'id' }, 'country'],
      [{ country: 'IDN' }, 'country'],
      [{ validity_years: 0 }, 'validity_years'],
      [{ validity_years: 51 }, 'validity_years'],
      [{ replace: 'true' }, 'replace'],
      [{ store_password: 'mine' }, 'store_password'],
    ] as const) {
      const res = await app.request('POST', `${KS}/absensi/keystore/generate`, {
        token: a.adminToken,
        body: { ...good, ...patch },
      });
      expect(res.status, JSON.stringify(patch)).to.equal(422);
      expect(Object.keys(res.body.errors), JSON.stringify(res.body)).to.include(field);
    }
    expect(await rows(a.tenant.id)).to.deep.equal(before);
  });

  it('DELETE removes it (audited), then GET and DELETE are 404', async () => {
    const del = await app.request('DELETE', `${KS}/portal/keystore`, { token: a.adminToken });
    expect(del.status).to.equal(200);
    expect(del.body.data).to.deep.include({ app_type: 'portal', alias: 'next' });
    expect((await app.request('GET', `${KS}/portal/keystore`, { token: a.adminToken })).status).to.equal(404);
    const again = await app.request('DELETE', `${KS}/portal/keystore`, { token: a.adminToken });
    expect(again.status).to.equal(404);
    expect(again.body.code).to.equal('NOT_FOUND');
    const audit = (await audits(a.tenant.id)).at(-1);
    expect(audit).to.deep.include({ action: 'app_builder.keystore_deleted', after: null });
    expect(audit.before.alias).to.equal('next');
    expect((await rows(a.tenant.id)).map((r) => r.app_type)).to.deep.equal(['partner']);
  });
});
