import { expect } from 'chai';
import { startTestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { REFUSED_ONCE_NUMBER } from '../../../bin/dev-wabot.js';
import { chatRows, configuredTenant, gwAccount, wabotWorld, type WabotWorld } from './support.js';

/** Issue 10 item 4: POST /api/wabot/test (connection check, real send through the limiter, the 422s). */
describe('POST /api/wabot/test', function () {
  this.timeout(60_000);
  let w: WabotWorld;
  let t: TenantFixture;

  const test = (body: unknown, f: TenantFixture = t) =>
    w.app.request('POST', '/api/wabot/test', { token: f.adminToken, body });
  const audits = (f: TenantFixture) =>
    env.knex('audit_log').where({ tenant_id: f.tenant.id, action: 'wabot.tested' }).orderBy('id');

  before(async () => {
    w = await wabotWorld();
    t = await configuredTenant(w.app, w.gw, {
      accounts: [gwAccount(w.gw, 'a', { weight: 2 }), gwAccount(w.gw, 'b'), gwAccount(w.gw, 'off', { enabled: false })],
    });
  });
  after(() => w.close());
  beforeEach(() => {
    w.gw.arrivals.length = 0;
  });

  it('empty body: a connection check of each enabled account, no message sent, no row; audited', async () => {
    const res = await w.app.request('POST', '/api/wabot/test', { token: t.adminToken });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.ok).to.equal(true);
    expect(res.body.data).to.deep.equal([
      {
        account_id: 'a',
        provider: 'wablas',
        label: 'Label a',
        enabled: true,
        ok: true,
        verified: true,
        code: null,
        detail: res.body.data[0].detail,
      },
      {
        account_id: 'b',
        provider: 'wablas',
        label: 'Label b',
        enabled: true,
        ok: true,
        verified: true,
        code: null,
        detail: res.body.data[1].detail,
      },
    ]);
    expect(res.body.data[0].detail).to.be.a('string');
    expect(w.gw.arrivals).to.have.length(0);
    expect(await chatRows(t.tenant.id)).to.have.length(0);
    const [audit] = await audits(t);
    expect(audit).to.include({ user_id: t.admin.id, subject_type: 'wabot_settings' });
    expect(audit.after).to.deep.equal({ mode: 'connection', account_ids: ['a', 'b'] });
  });

  it('blank message and an account_id: checks that account only, a disabled one included', async () => {
    const res = await test({ message: '   ', account_id: 'off' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.map((d: { account_id: string; ok: boolean }) => [d.account_id, d.ok])).to.deep.equal([
      ['off', true],
    ]);
    expect(w.gw.arrivals).to.have.length(0);
  });

  it('an account that cannot be checked (no token): ok false with the adapter’s code, no request', async () => {
    const f = await configuredTenant(w.app, w.gw, { accounts: [gwAccount(w.gw, 'x', { token: null })] });
    const res = await test({}, f);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.ok).to.equal(false);
    expect(res.body.data).to.have.length(1);
    expect(res.body.data[0]).to.include({ account_id: 'x', ok: false, verified: true, code: 'invalid_config' });
  });

  it('a message: one real send through the routing, answered pending with the gateway id; a manual test row', async () => {
    const res = await test({ phone: '0812-3456 7890', message: 'Test from the panel' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.ok).to.equal(true);
    const d = res.body.data;
    expect(d).to.include({ status: 'pending', error: null, available_at: null });
    expect(['a', 'b']).to.include(d.account_id);
    expect(d.message_id).to.be.a('string').and.not.equal('');
    expect(w.gw.arrivals.map((a) => [a.phone, a.message, a.id])).to.deep.equal([
      ['6281234567890', 'Test from the panel', d.message_id],
    ]);
    const row = await env.knex('communication_messages').where({ id: d.communication_id }).first();
    expect(row).to.include({
      tenant_id: t.tenant.id,
      status: 'pending',
      source: 'test',
      manual: true,
      user_id: t.admin.id,
      account_ref: d.account_id,
      recipient_kind: 'phone',
      counterpart: '0812-3456 7890',
    });
    const last = (await audits(t)).pop();
    expect(last).to.include({ subject_type: 'communication_messages', subject_id: d.communication_id });
    expect(last.after).to.deep.equal({ mode: 'send', account_id: d.account_id, recipient_kind: 'phone' });
  });

  it('no phone: the saved wa_number; account_id picks the account; the bot switched off still sends a test', async () => {
    const f = await configuredTenant(w.app, w.gw, {
      enabled: false,
      accounts: [gwAccount(w.gw, 'a'), gwAccount(w.gw, 'b')],
    });
    const res = await test({ message: 'Hello', account_id: 'b' }, f);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.include({ status: 'pending', account_id: 'b' });
    expect(w.gw.arrivals.map((a) => a.phone)).to.deep.equal(['6281200000001']);
  });

  it('is_group with a group id on wablas: sent as a group message', async () => {
    const res = await test({ phone: '120363025246125888', is_group: true, message: 'Hi group', account_id: 'a' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.status).to.equal('pending');
    expect(w.gw.arrivals.map((a) => [a.phone, a.isGroup])).to.deep.equal([['120363025246125888', true]]);
  });

  it('a refused recipient: 200, ok false, failed with the provider’s code', async () => {
    const res = await test({ phone: REFUSED_ONCE_NUMBER, message: 'Refused' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.ok).to.equal(false);
    expect(res.body.data).to.include({ status: 'failed', message_id: null });
    expect(res.body.data.error.code).to.equal('invalid_recipient');
  });

  it('a slot later than the wait: answered at once, queued with available_at', async () => {
    const f = await configuredTenant(w.app, w.gw, {
      accounts: [gwAccount(w.gw, 'slow', { max_messages_per_minute: 1, message_delay_seconds: 3600 })],
    });
    const first = await test({ message: 'first' }, f);
    expect(first.body.data.status, first.text).to.equal('pending');
    const started = Date.now();
    const second = await test({ message: 'second' }, f);
    expect(second.status, second.text).to.equal(200);
    expect(Date.now() - started).to.be.below(10_000);
    expect(second.body).to.deep.include({ ok: true });
    expect(second.body.data).to.include({ status: 'queued', account_id: 'slow', message_id: null, error: null });
    const at = Date.parse(second.body.data.available_at);
    expect(at - Date.now()).to.be.within(3000 * 1000, 3700 * 1000);
    expect(w.gw.arrivals.map((a) => a.message)).to.deep.equal(['first']);
  });

  it('no worker within the bound: the check answers timeout per account, the send still queued', async () => {
    const lone = await startTestApp({ wabotTestWaitMs: 300 });
    const check = await lone.request('POST', '/api/wabot/test', { token: t.adminToken, body: { account_id: 'a' } });
    expect(check.status, check.text).to.equal(200);
    expect(check.body).to.deep.include({ ok: false });
    expect(check.body.data[0]).to.include({ account_id: 'a', ok: false, code: 'timeout' });
    const send = await lone.request('POST', '/api/wabot/test', { token: t.adminToken, body: { message: 'later' } });
    expect(send.status, send.text).to.equal(200);
    expect(send.body.data).to.include({ status: 'queued', available_at: null });
  });

  describe('422, nothing written and nothing sent', () => {
    let bare: TenantFixture;
    let fonnte: TenantFixture;
    let mixed: TenantFixture;
    let noNumber: TenantFixture;
    before(async () => {
      bare = await makeTenant();
      fonnte = await configuredTenant(w.app, w.gw, { base_url: null }, { provider: 'fonnte', wa_token: 'f' });
      mixed = await configuredTenant(w.app, w.gw, {
        accounts: [gwAccount(w.gw, 'w'), { id: 'f', provider: 'fonnte', token: 'f' }],
      });
      noNumber = await configuredTenant(w.app, w.gw, { accounts: [gwAccount(w.gw, 'a')] }, { wa_number: null });
    });
    const cases: [string, () => TenantFixture, unknown, string][] = [
      ['message over 500 characters', () => t, { message: 'x'.repeat(501) }, 'message'],
      ['account_id over 80 characters', () => t, { account_id: 'a'.repeat(81) }, 'account_id'],
      ['phone over 200 characters', () => t, { phone: '1'.repeat(201), message: 'x' }, 'phone'],
      ['is_group not a boolean', () => t, { is_group: 'yes' }, 'is_group'],
      ['an unknown field', () => t, { to: '0812' }, 'to'],
      ['an unknown account_id', () => t, { account_id: 'nope', message: 'x' }, 'account_id'],
      ['a send through a disabled account', () => t, { account_id: 'off', message: 'x' }, 'account_id'],
      ['nothing saved', () => bare, {}, 'provider'],
      ['no recipient (no phone, no wa_number)', () => noNumber, { message: 'x' }, 'phone'],
      ['is_group off wablas', () => fonnte, { is_group: true, phone: '1203', message: 'x' }, 'is_group'],
      ['is_group with routing over a non-wablas account', () => mixed, { is_group: true, phone: '1203' }, 'is_group'],
      ['is_group without a group id', () => t, { is_group: true, message: 'x' }, 'phone'],
    ];
    for (const [name, who, body, field] of cases) {
      it(name, async () => {
        const f = who();
        const before = (await chatRows(f.tenant.id)).length;
        const auditsBefore = (await audits(f)).length;
        const res = await test(body, f);
        expect(res.status, res.text).to.equal(422);
        expect(res.body.code).to.equal('VALIDATION_FAILED');
        expect(Object.keys(res.body.errors)).to.deep.equal([field]);
        expect((await chatRows(f.tenant.id)).length).to.equal(before);
        expect((await audits(f)).length).to.equal(auditsBefore);
        expect(w.gw.arrivals).to.have.length(0);
      });
    }
  });
});
