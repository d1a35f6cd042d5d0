import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken, makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { openEmailPassword } from '../../../db/credentials.js';
import { resetSchemaChecks } from '../../../api/shared/schema-check.js';
import { MODULES } from '../../../api/tenants/catalog.js';

/** Passwords no answer, row, audit entry, Redis key or log line may ever show. */
const IN_SECRET = 'in-Sentinel-pw-51c0de';
const OUT_SECRET = 'out-Sentinel-pw-9e77aa';

/** A complete, valid body (the ten required fields). */
export function settingsBody(extra: Record<string, unknown> = {}) {
  return {
    email: 'CS@Isp.test',
    incoming_protocol: 'imap',
    incoming_host: 'imap.isp.test',
    incoming_port: 993,
    incoming_encryption: 'ssl',
    incoming_username: 'cs@isp.test',
    outgoing_host: '10.0.0.25',
    outgoing_port: 465,
    outgoing_encryption: 'ssl',
    outgoing_username: 'cs@isp.test',
    ...extra,
  };
}

/** Issue 9 item 1: GET/PUT /api/auth/email-settings. */
describe('/api/auth/email-settings', () => {
  let app: TestApp;
  let a: TenantFixture;
  const texts: string[] = [];

  const put = async (body: unknown, f: TenantFixture = a) => {
    const res = await app.request('PUT', '/api/auth/email-settings', { token: f.adminToken, body });
    texts.push(res.text);
    return res;
  };

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
  });

  it('GET before any save: source none, usual TLS ports, nothing set', async () => {
    const res = await app.request('GET', '/api/auth/email-settings', { token: a.adminToken });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.deep.equal({
      email: null,
      incoming_protocol: 'imap',
      incoming_host: null,
      incoming_port: 993,
      incoming_encryption: 'ssl',
      incoming_username: null,
      outgoing_host: null,
      outgoing_port: 465,
      outgoing_encryption: 'ssl',
      outgoing_username: null,
      leave_on_server: true,
      incoming_password_set: false,
      outgoing_password_set: false,
      source: 'none',
      sync: { status: 'never', last_synced_at: null, last_error: null },
    });
  });

  it('GET with a provisioned mailbox: its servers, source mail_panel, username masked', async () => {
    const t = await makeTenant();
    const domain = `panel-${t.tenant.id}.test`;
    const [d] = await env
      .knex('mail_domains')
      .insert({ name: domain, imap_host: `imap.${domain}`, smtp_host: `smtp.${domain}` })
      .returning('id');
    await env.knex('mail_mailboxes').insert({ domain_id: d.id, email: `info@${domain}`, local_part: 'info' });
    await env
      .knex('tenants')
      .where({ id: t.tenant.id })
      .update({ settings: JSON.stringify({ mailbox_email: `info@${domain}` }) });
    const res = await app.request('GET', '/api/auth/email-settings', { token: t.adminToken });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({
      email: `info@${domain}`,
      incoming_host: `imap.${domain}`,
      incoming_port: 993,
      incoming_encryption: 'ssl',
      incoming_username: `in***@${domain}`,
      outgoing_host: `smtp.${domain}`,
      outgoing_username: `in***@${domain}`,
      source: 'mail_panel',
      incoming_password_set: false,
    });
  });

  it('first save without the incoming password: 422 incoming_password, nothing stored', async () => {
    const res = await put(settingsBody());
    expect(res.status).to.equal(422);
    expect(res.body.errors).to.have.property('incoming_password');
    expect(await env.knex('external_email_accounts').where({ tenant_id: a.tenant.id })).to.have.length(0);
  });

  it('saves: 200, passwords sealed and never answered, leave_on_server true even when sent false, audited', async () => {
    const res = await put(
      settingsBody({ incoming_password: IN_SECRET, outgoing_password: OUT_SECRET, leave_on_server: false }),
    );
    expect(res.status).to.equal(200);
    expect(res.body.data).to.deep.include({
      email: 'cs@isp.test',
      incoming_host: 'imap.isp.test',
      outgoing_host: '10.0.0.25',
      leave_on_server: true,
      incoming_password_set: true,
      outgoing_password_set: true,
      source: 'saved',
    });
    expect(res.body.data).not.to.have.property('incoming_password');
    const row = await env.knex('external_email_accounts').where({ tenant_id: a.tenant.id }).first();
    expect(row.leave_on_server).to.equal(true);
    expect(row.incoming_password_enc).to.match(/^v1\./);
    expect(openEmailPassword(app.appKey, 'incoming', a.tenant.id, row.incoming_password_enc)).to.equal(IN_SECRET);
    expect(openEmailPassword(app.appKey, 'outgoing', a.tenant.id, row.outgoing_password_enc)).to.equal(OUT_SECRET);
    expect(() => openEmailPassword(app.appKey, 'outgoing', a.tenant.id, row.incoming_password_enc)).to.throw();
    const audit = await env
      .knex('audit_log')
      .where({ tenant_id: a.tenant.id, action: 'email.settings.updated', subject_id: row.id })
      .first();
    expect(audit.before).to.equal(null);
    expect(audit.after).to.include({ email: 'cs@isp.test', incoming_password_set: true });
    expect(JSON.stringify(audit)).not.to.include(IN_SECRET);
  });

  it('a save without passwords keeps both; an empty one keeps it too; clears auth_failed', async () => {
    await env
      .knex('external_email_accounts')
      .where({ tenant_id: a.tenant.id })
      .update({ sync_status: 'auth_failed', last_error: 'IMAP login failed' });
    const before = await env.knex('external_email_accounts').where({ tenant_id: a.tenant.id }).first();
    const res = await put(settingsBody({ incoming_port: 143, incoming_encryption: 'starttls', outgoing_password: '' }));
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({ incoming_port: 143, incoming_password_set: true, outgoing_password_set: true });
    expect(res.body.data.sync).to.deep.equal({ status: 'never', last_synced_at: null, last_error: null });
    const row = await env.knex('external_email_accounts').where({ tenant_id: a.tenant.id }).first();
    expect(row.incoming_password_enc).to.equal(before.incoming_password_enc);
    expect(row.outgoing_password_enc).to.equal(before.outgoing_password_enc);
    const get = await app.request('GET', '/api/auth/email-settings', { token: a.adminToken });
    texts.push(get.text);
    expect(get.body.data).to.deep.equal(res.body.data);
  });

  it('422 naming each bad field; nothing changed', async () => {
    const before = await env.knex('external_email_accounts').where({ tenant_id: a.tenant.id }).first();
    const cases: [string, Record<string, unknown>][] = [
      ['email', { email: 'not-an-address' }],
      ['incoming_protocol', { incoming_protocol: 'smtp' }],
      ['incoming_host', { incoming_host: 'bad host!' }],
      ['incoming_port', { incoming_port: 0 }],
      ['outgoing_port', { outgoing_port: 65536 }],
      ['incoming_encryption', { incoming_encryption: 'tls' }],
      ['outgoing_encryption', { outgoing_encryption: 'SSL' }],
      ['incoming_username', { incoming_username: 'x'.repeat(191) }],
      ['outgoing_username', { outgoing_username: '' }],
      ['outgoing_host', { outgoing_host: '' }],
    ];
    for (const [field, patch] of cases) {
      const res = await put(settingsBody(patch));
      expect(res.status, field).to.equal(422);
      expect(res.body.errors, field).to.have.property(field);
    }
    const body = settingsBody() as Record<string, unknown>;
    delete body.outgoing_username;
    const res = await put(body);
    expect(res.status).to.equal(422);
    expect(res.body.errors).to.have.property('outgoing_username');
    const after = await env.knex('external_email_accounts').where({ tenant_id: a.tenant.id }).first();
    expect(after.updated_at.getTime()).to.equal(before.updated_at.getTime());
  });

  it('technician and staff 403 FORBIDDEN, integration token 401, module off 403; nothing written', async () => {
    const t = await makeTenant();
    const tech = await makeUser(t.tenant.id, 'technician');
    const staff = await makeUser(t.tenant.id, 'staff');
    const body = settingsBody({ incoming_password: IN_SECRET });
    for (const u of [tech, staff]) {
      for (const method of ['GET', 'PUT']) {
        const res = await app.request(method, '/api/auth/email-settings', { token: u.token, body });
        expect(res.status).to.equal(403);
        expect(res.body.code).to.equal('FORBIDDEN');
      }
    }
    const integration = await makeIntegrationToken(t, 'read_write');
    const res = await app.request('PUT', '/api/auth/email-settings', { token: integration.token, body });
    expect(res.status).to.equal(401);
    await env
      .knex('tenants')
      .where({ id: t.tenant.id })
      .update({ modules: JSON.stringify(MODULES.filter((m) => m !== 'email')) });
    const off = await app.request('PUT', '/api/auth/email-settings', { token: t.adminToken, body });
    expect(off.status).to.equal(403);
    expect(off.body.code).to.equal('module_disabled');
    expect(await env.knex('external_email_accounts').where({ tenant_id: t.tenant.id })).to.have.length(0);
  });

  it('503 external_email_accounts_missing without the table', async () => {
    await env.knex.raw('ALTER TABLE external_email_accounts RENAME TO external_email_accounts_away');
    resetSchemaChecks();
    try {
      const res = await app.request('GET', '/api/auth/email-settings', { token: a.adminToken });
      expect(res.status).to.equal(503);
      expect(res.body.code).to.equal('external_email_accounts_missing');
    } finally {
      await env.knex.raw('ALTER TABLE external_email_accounts_away RENAME TO external_email_accounts');
      resetSchemaChecks();
    }
    const res = await app.request('GET', '/api/auth/email-settings', { token: a.adminToken });
    expect(res.status).to.equal(200);
  });

  it('no password in any answer, log line or Redis key', async () => {
    const keys = await env.redis.keys('*');
    const dump = [...texts, ...app.logs, ...keys].join('\n');
    for (const s of [IN_SECRET, OUT_SECRET]) expect(dump).not.to.include(s);
    expect(texts.length).to.be.greaterThan(10);
  });
});
