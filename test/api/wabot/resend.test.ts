import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import type { TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { REFUSED_ONCE_NUMBER } from '../../../bin/dev-wabot.js';
import { chatRow, chatRows, configuredTenant, eventually, gwAccount, wabotWorld, type WabotWorld } from './support.js';

/** Issue 10 item 5: POST /api/communications/{id}/resend. */
describe('POST /api/communications/{id}/resend', function () {
  this.timeout(60_000);
  let w: WabotWorld;
  let t: TenantFixture;
  /** an app on a queue prefix no worker serves: its resends stay queued */
  let idle: TestApp;

  const resend = (id: number, f: TenantFixture = t, app: TestApp = w.app) =>
    app.request('POST', `/api/communications/${id}/resend`, { token: f.adminToken });
  const row = (id: number) => env.knex('communication_messages').where({ id }).first();

  before(async () => {
    w = await wabotWorld();
    idle = await startTestApp();
    t = await configuredTenant(w.app, w.gw, { accounts: [gwAccount(w.gw, 'a', { weight: 2 }), gwAccount(w.gw, 'b')] });
  });
  after(() => w.close());
  beforeEach(() => {
    w.gw.arrivals.length = 0;
  });

  it('a failed test send: 202 with a new queued row (resent_from_id, routed afresh); it is sent; the original stays failed; audited', async () => {
    const sent = await w.app.request('POST', '/api/wabot/test', {
      token: t.adminToken,
      body: { phone: REFUSED_ONCE_NUMBER, message: 'Invoice reminder' },
    });
    expect(sent.body.data.status, sent.text).to.equal('failed');
    const failedId = sent.body.data.communication_id;
    const res = await resend(failedId);
    expect(res.status, res.text).to.equal(202);
    const d = res.body.data;
    expect(d).to.include({
      status: 'queued',
      channel: 'whatsapp',
      direction: 'out',
      source: 'resend',
      resent_from_id: failedId,
      counterpart: REFUSED_ONCE_NUMBER,
      body_text: 'Invoice reminder',
      error_code: null,
    });
    expect(['a', 'b']).to.include(d.account_ref);
    const done = await eventually(async () => {
      const r = await row(d.id);
      return r.status !== 'queued' ? r : null;
    });
    expect(done).to.include({ status: 'pending', manual: true, user_id: t.admin.id, recipient_kind: 'phone' });
    expect(done.message_id).to.be.a('string');
    expect(w.gw.arrivals.map((a) => [a.phone, a.result])).to.deep.equal([
      [REFUSED_ONCE_NUMBER, 'refused'],
      [REFUSED_ONCE_NUMBER, 'accepted'],
    ]);
    expect(await row(failedId)).to.include({ status: 'failed', error_code: 'invalid_recipient' });
    const audit = await env
      .knex('audit_log')
      .where({ tenant_id: t.tenant.id, action: 'communications.resent', subject_id: failedId })
      .first();
    expect(audit).to.include({ user_id: t.admin.id, subject_type: 'communication_messages' });
    expect(audit.after).to.deep.equal({ resend_id: d.id, status: 'queued', account_ref: d.account_ref });
    expect(audit.before).to.deep.equal({
      status: 'failed',
      error_code: 'invalid_recipient',
      account_ref: sent.body.data.account_id,
    });
  });

  it('twice while the first resend is queued: 409 CONFLICT naming it; nothing more written', async () => {
    const id = await chatRow(t);
    const first = await resend(id, t, idle);
    expect(first.status, first.text).to.equal(202);
    const count = (await chatRows(t.tenant.id)).length;
    const second = await resend(id, t, idle);
    expect(second.status, second.text).to.equal(409);
    expect(second.body).to.deep.equal({
      code: 'CONFLICT',
      message: `Message ${id} already has a resend waiting to be sent (message ${first.body.data.id}).`,
      resend_id: first.body.data.id,
    });
    expect((await chatRows(t.tenant.id)).length).to.equal(count);
  });

  it('two at once: one 202 and one 409, one new row', async () => {
    const id = await chatRow(t);
    const answers = await Promise.all([resend(id, t, idle), resend(id, t, idle), resend(id, t, idle)]);
    expect(answers.map((a) => a.status).sort()).to.deep.equal([202, 409, 409]);
    expect(await env.knex('communication_messages').where({ resent_from_id: id })).to.have.length(1);
  });

  it('after the resend failed too, the original can be resent again', async () => {
    const id = await chatRow(t);
    const first = await resend(id, t, idle);
    await env.knex('communication_messages').where({ id: first.body.data.id }).update({ status: 'failed' });
    const again = await resend(id, t, idle);
    expect(again.status, again.text).to.equal(202);
    expect(again.body.data.resent_from_id).to.equal(id);
  });

  const refusals: [string, Record<string, unknown>, string][] = [
    ['a queued message', { status: 'queued', error_code: null }, 'Cannot resend a record in status queued.'],
    ['a pending message', { status: 'pending', error_code: null }, 'Cannot resend a record in status pending.'],
    ['a sent message', { status: 'sent', error_code: null }, 'Cannot resend a record in status sent.'],
    ['an inbound WhatsApp message', { direction: 'in', status: 'received' }, 'this is an inbound whatsapp message'],
    ['a failed outbound e-mail', { channel: 'email' }, 'this is an outbound email message'],
  ];
  for (const [name, over, text] of refusals) {
    it(`${name}: 422 INVALID_TRANSITION, nothing written`, async () => {
      const id = await chatRow(t, over);
      const before = (await chatRows(t.tenant.id)).length;
      const res = await resend(id);
      expect(res.status, res.text).to.equal(422);
      expect(res.body.code).to.equal('INVALID_TRANSITION');
      expect(res.body.message).to.include(text);
      expect(res.body.errors.status).to.deep.equal([res.body.message]);
      expect((await chatRows(t.tenant.id)).length).to.equal(before);
      expect(await env.knex('communication_messages').where({ resent_from_id: id })).to.have.length(0);
    });
  }

  it('a foreign, unknown or deleted id: 404, nothing changed', async () => {
    const other = await configuredTenant(w.app, w.gw, { accounts: [gwAccount(w.gw, 'a')] });
    const foreign = await chatRow(other);
    const deleted = await chatRow(t, { deleted_at: new Date() });
    for (const id of [foreign, deleted, 2147483000]) {
      const res = await resend(id);
      expect(res.status, `${id}: ${res.text}`).to.equal(404);
      expect(res.body.code).to.equal('NOT_FOUND');
    }
    expect(await row(foreign)).to.include({ status: 'failed' });
    expect(await env.knex('communication_messages').whereIn('resent_from_id', [foreign, deleted])).to.have.length(0);
    expect(await chatRows(other.tenant.id)).to.have.length(1);
  });

  it('the partial unique index holds even without the route: a second queued resend of one message is refused', async () => {
    const id = await chatRow(t);
    await chatRow(t, { status: 'queued', resent_from_id: id, error_code: null });
    let err: { code?: string } | null = null;
    try {
      await chatRow(t, { status: 'queued', resent_from_id: id, error_code: null });
    } catch (e) {
      err = e as { code?: string };
    }
    expect(err?.code).to.equal('23505');
  });
});
