import { expect } from 'chai';
import nock from 'nock';
import { randomBytes } from 'node:crypto';
import { env } from '../../helpers/env.js';
import { saveCredentials } from '../../../api/platform/credentials-service.js';
import { configureProvisioningChecks, runProvisioningCheck } from '../../../jobs/provisioning-check.js';
import { leaveTenantsShared } from '../../helpers/shared-mode.js';

const key = randomBytes(32);
const ZONE = 'c'.repeat(32);
const CF = 'https://api.cloudflare.com';
const TOKEN = `cf_check_sentinel_${randomBytes(4).toString('hex')}`;
const S3_SECRET = `s3-check-sentinel-${randomBytes(4).toString('hex')}`;
const now = () => new Date();
const save = (body: Record<string, unknown>) => saveCredentials(env.knex, key, { userId: null }, body, new Date());
const lastTest = async (section: string) =>
  ((await env.knex('provisioning_credentials').where({ section }).first()) as { last_test: unknown })?.last_test;

/** Issue 13 item 5: the read-only checks, run as the provisioning-check processor runs them (nock, real PostgreSQL). */
describe('provisioning checks (tenant_db, cloudflare, mail_panel, storage, backup)', function () {
  leaveTenantsShared();
  this.timeout(30_000);
  const role = `prov_check_${randomBytes(3).toString('hex')}`;
  const rolePw = `pw-${randomBytes(8).toString('hex')}`;

  before(async () => {
    configureProvisioningChecks({ timeoutMs: 3000 });
    await env.knex('provisioning_credentials').del();
    await env.knex('provisioning_settings').del();
    await env.knex.raw(`CREATE ROLE ${role} LOGIN CREATEDB PASSWORD '${rolePw}'`);
  });
  after(async () => {
    configureProvisioningChecks({});
    nock.cleanAll();
    await env.knex.raw(`DROP ROLE IF EXISTS ${role}`);
  });
  afterEach(() => nock.cleanAll());

  it('tenant_db: a superuser passes (version, CREATEDB, CREATEROLE); a role without CREATEROLE and a wrong password fail', async () => {
    const u = new URL(env.adminDatabaseUrl);
    const db = {
      host: u.hostname,
      port: Number(u.port),
      admin_user: 'postgres',
      admin_password: decodeURIComponent(u.password),
    };
    await save({ tenant_db: db });
    const ok = await runProvisioningCheck(env.knex, key, 'tenant_db', now);
    expect(ok.ok, ok.message).to.equal(true);
    expect(ok.details).to.deep.include({ createdb: true, createrole: true, superuser: true });
    expect(ok.details.version).to.match(/^\d+/);
    expect(await lastTest('tenant_db')).to.deep.include({ ok: true });

    await save({ tenant_db: { ...db, admin_user: role, admin_password: rolePw } });
    const weak = await runProvisioningCheck(env.knex, key, 'tenant_db', now);
    expect([weak.ok, weak.message]).to.deep.equal([false, `The role ${role} lacks CREATEROLE.`]);

    await save({ tenant_db: { ...db, admin_password: 'wrong-password-x' } });
    const bad = await runProvisioningCheck(env.knex, key, 'tenant_db', now);
    expect(bad.ok).to.equal(false);
    expect(bad.message)
      .to.match(/^Could not connect: .*password authentication failed/)
      .and.not.include('wrong-password-x');
    expect(await lastTest('tenant_db')).to.deep.include({ ok: false });
  });

  it('cloudflare: token verify and zone active pass; a pending zone and a refused token fail', async () => {
    await save({ cloudflare: { zone_id: ZONE, api_token: TOKEN } });
    nock(CF)
      .get('/client/v4/user/tokens/verify')
      .times(3)
      .reply(200, { success: true, errors: [], result: { status: 'active' } })
      .get(`/client/v4/zones/${ZONE}`)
      .reply(200, { success: true, errors: [], result: { name: 'example.net', status: 'active' } })
      .get(`/client/v4/zones/${ZONE}`)
      .reply(200, { success: true, errors: [], result: { name: 'example.net', status: 'pending' } })
      .get(`/client/v4/zones/${ZONE}`)
      .reply(403, { success: false, errors: [{ code: 9109, message: 'Unauthorized to access requested resource' }] });
    const ok = await runProvisioningCheck(env.knex, key, 'cloudflare', now);
    expect(ok).to.deep.include({ ok: true, message: 'The token is active; the zone example.net is active.' });
    expect(await lastTest('cloudflare')).to.deep.include({ ok: true });
    const pending = await runProvisioningCheck(env.knex, key, 'cloudflare', now);
    expect([pending.ok, pending.message]).to.deep.equal([false, 'The zone example.net is pending, not active.']);
    const refused = await runProvisioningCheck(env.knex, key, 'cloudflare', now);
    expect(refused.ok).to.equal(false);
    expect(refused.message).to.include('HTTP 403').and.not.include(TOKEN);
  });

  it('a check of values changed meanwhile does not mark the new values', async () => {
    await save({ cloudflare: { zone_id: ZONE, api_token: TOKEN } });
    const scope = nock(CF)
      .get('/client/v4/user/tokens/verify')
      .delay(300)
      .reply(200, { success: true, errors: [], result: { status: 'active' } })
      .get(`/client/v4/zones/${ZONE}`)
      .reply(200, { success: true, errors: [], result: { name: 'example.net', status: 'active' } });
    const arrived = new Promise((r) => scope.once('request', r));
    const running = runProvisioningCheck(env.knex, key, 'cloudflare', now);
    await arrived;
    await save({ cloudflare: { zone_id: ZONE, api_token: `${TOKEN}2` } });
    expect((await running).ok).to.equal(true);
    expect(await lastTest('cloudflare')).to.equal(null);
  });

  it('mail_panel: cPanel count_pops logs in; a refused token fails', async () => {
    await save({
      mail_panel: { type: 'cpanel', host: 'panel.example.net', port: 2083, user: 'isp', password: 'tok-x', ssl: true },
    });
    nock('https://panel.example.net:2083')
      .get('/execute/Email/count_pops')
      .reply(200, { status: 1, errors: null, data: 3 })
      .get('/execute/Email/count_pops')
      .reply(401, 'denied');
    expect(await runProvisioningCheck(env.knex, key, 'mail_panel', now)).to.deep.include({
      ok: true,
      message: 'Logged in to cpanel at panel.example.net.',
    });
    const refused = await runProvisioningCheck(env.knex, key, 'mail_panel', now);
    expect(refused.ok).to.equal(false);
    expect(refused.message).to.match(/^The panel refused or failed \(auth\)/);
  });

  it('storage: HeadBucket 200 passes, 403 fails; backup needs the flag and the storage', async () => {
    const storage = {
      endpoint: 'https://s3.example.net',
      region: 'us-east-1',
      bucket: 'isp-backups',
      access_key: 'AKIAX',
      secret_key: S3_SECRET,
    };
    await save({ storage });
    nock('https://s3.example.net')
      .head(/^\/isp-backups\/?$/)
      .times(2)
      .reply(200)
      .head(/^\/isp-backups\/?$/)
      .reply(403);
    expect(await runProvisioningCheck(env.knex, key, 'storage', now)).to.deep.include({ ok: true });
    const off = await runProvisioningCheck(env.knex, key, 'backup', now);
    expect([off.ok, off.message]).to.deep.equal([
      false,
      'backup_ready is off: confirm that backups are in place first.',
    ]);
    await save({ backup_ready: true });
    const on = await runProvisioningCheck(env.knex, key, 'backup', now);
    expect(on.ok, on.message).to.equal(true);
    const settings = await env.knex('provisioning_settings').where({ id: 1 }).first();
    expect(settings.backup_last_test).to.deep.include({ ok: true });
    const denied = await runProvisioningCheck(env.knex, key, 'storage', now);
    expect([denied.ok, denied.message]).to.deep.equal([false, 'HeadBucket isp-backups: access denied.']);
  });
});
