import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { MODULES } from '../../../api/tenants/catalog.js';
import { configure, fixture, PAGE_ID, pathOf, post } from './inbound-support.js';

/** The inbound rows of a tenant, oldest first. */
const inbound = (tenantId: number) =>
  env.knex('communication_messages').where({ tenant_id: tenantId, direction: 'in' }).orderBy('id');
/** The tenant's inbound_chat_message events. */
const events = (tenantId: number) =>
  env.knex('event_outbox').where({ tenant_id: tenantId, name: 'inbound_chat_message' }).orderBy('id');

/** Each provider's message fixture and what its row must hold. */
const CASES = [
  { file: 'wablas-message', account: 'acc-wablas', text: 'Tagihan saya berapa?', id: 'BAE5F2C8A1B3D4E5' },
  { file: 'fonnte-message', account: 'acc-fonnte', text: 'status', id: '8801234' },
  { file: 'ruangwa-message', account: 'acc-ruangwa', text: 'tiket', id: 'RWA-77120' },
  { file: 'waha-message', account: 'acc-waha', text: 'halo', id: 'false_6281234567801@c.us_3EB0C767D26A1D1A0B4E' },
  {
    file: 'messenger-message',
    account: 'acc-messenger',
    text: 'halo admin',
    id: 'm_AbCdEf0123456789-demo',
    channel: 'messenger',
    counterpart: '7012345678901234',
  },
  { file: 'watzap-message', account: 'acc-watzap', text: 'tagihan', id: 'false_6281234567801@c.us_WZ0001' },
  { file: 'starsender-message', account: 'acc-starsender', text: 'menu', id: 'SS-5512' },
] as const;

describe('POST /api/wabot/inbound/{tenant_slug} (issue 11 item 1)', function () {
  this.timeout(60_000);
  let app: TestApp;

  /** A tenant with the seven accounts and the customer whose phone the fixtures carry. */
  async function tenantWithCustomer(settings: Record<string, unknown> = {}) {
    const f = await makeTenant();
    const config = await configure(app, f, settings);
    const customer = await f.scope.insert('customers', {
      code: 'CUST-000001',
      name: 'Budi Santoso',
      phone: '0812-3456-7801',
      address: 'Jl. Melati 5',
    });
    return { f, config, customerId: customer.id };
  }

  before(async () => {
    app = await startTestApp({ publicBaseUrl: 'https://isp.example.test' });
  });

  for (const as of ['json', 'form'] as const) {
    describe(`each provider's payload as ${as}`, () => {
      let t: Awaited<ReturnType<typeof tenantWithCustomer>>;
      before(async () => {
        t = await tenantWithCustomer();
      });

      for (const c of CASES) {
        it(`${c.file}: one row (counterpart, text, message id, customer), published once; a redelivery adds nothing`, async () => {
          const before = (await inbound(t.f.tenant.id)).length;
          for (let i = 0; i < 2; i++) {
            const res = await post(app, t.config.webhook_url, fixture(c.file), as);
            expect(res.status, res.text).to.equal(200);
            expect(res.body).to.deep.equal({ ok: true });
          }
          const rows = (await inbound(t.f.tenant.id)).slice(before);
          expect(rows.length).to.equal(1);
          const channel = 'channel' in c ? c.channel : 'whatsapp';
          expect(rows[0]).to.deep.include({
            channel,
            direction: 'in',
            status: 'received',
            source: 'webhook',
            account_ref: c.account,
            counterpart: 'counterpart' in c ? c.counterpart : '6281234567801',
            body_text: c.text,
            message_id: c.id,
            is_group: false,
            customer_id: channel === 'messenger' ? null : t.customerId,
          });
          const ev = (await events(t.f.tenant.id)).filter((e) => e.payload.communication_id === Number(rows[0].id));
          expect(ev.length).to.equal(1);
        });
      }
    });
  }

  it('the account named by `&account=` reads the payload; GET config lists a URL per account', async () => {
    const { f, config, customerId } = await tenantWithCustomer();
    const urls = Object.fromEntries(config.accounts.map((a) => [a.id, a.webhook_url]));
    expect(urls['acc-fonnte']).to.equal(`${config.webhook_url}&account=acc-fonnte`);
    expect(urls['acc-wablas']).to.match(
      /^https:\/\/isp\.example\.test\/api\/wabot\/inbound\/t-[0-9a-f]+\?key=.+&account=acc-wablas$/,
    );
    const res = await post(app, urls['acc-fonnte'], fixture('fonnte-message'));
    expect(res.status).to.equal(200);
    const [row] = await inbound(f.tenant.id);
    expect(row).to.deep.include({ account_ref: 'acc-fonnte', customer_id: customerId, message_id: '8801234' });
    // a wablas payload on the fonnte account's URL: fonnte's parser does not read it
    const wrong = await post(app, urls['acc-fonnte'], fixture('wablas-message'));
    expect(wrong.status).to.equal(422);
    expect(wrong.body.code).to.equal('VALIDATION_FAILED');
    const unknown = await post(app, `${config.webhook_url}&account=nope`, fixture('fonnte-message'));
    expect(unknown.status).to.equal(422);
    expect(unknown.body.errors).to.have.property('account');
  });

  it('own messages and echoes are dropped: 200, no row, no event', async () => {
    const { f, config } = await tenantWithCustomer();
    for (const file of ['wablas-fromme', 'waha-fromme', 'messenger-echo']) {
      const res = await post(app, config.webhook_url, fixture(file));
      expect(res.status, file).to.equal(200);
      expect(res.body).to.deep.equal({ ok: true });
    }
    expect(await inbound(f.tenant.id)).to.deep.equal([]);
    expect(await events(f.tenant.id)).to.deep.equal([]);
  });

  it('groups: ignore_groups on drops them (200); off stores them with the group and the member', async () => {
    const on = await tenantWithCustomer({ ignore_groups: true });
    for (const file of ['wablas-group', 'fonnte-group', 'waha-group']) {
      expect((await post(app, on.config.webhook_url, fixture(file))).status).to.equal(200);
    }
    expect(await inbound(on.f.tenant.id)).to.deep.equal([]);
    const off = await tenantWithCustomer({ ignore_groups: false });
    for (const file of ['wablas-group', 'fonnte-group', 'waha-group']) {
      expect((await post(app, off.config.webhook_url, fixture(file))).status).to.equal(200);
    }
    const rows = await inbound(off.f.tenant.id);
    expect(rows.map((r) => [r.account_ref, r.counterpart, r.is_group, r.from_address, r.customer_id])).to.deep.equal([
      ['acc-wablas', '120363041234567890@g.us', true, '6281234567801', null],
      ['acc-fonnte', '120363400835772540@g.us', true, '6281234567801', null],
      ['acc-waha', '120363041234567890@g.us', true, '6281234567801', null],
    ]);
  });

  it('receipts move the outbox item with that message id forward (never back); a report never sends', async () => {
    const { f, config } = await tenantWithCustomer();
    const out = async (account: string, messageId: string, channel = 'whatsapp', status = 'pending') =>
      (
        await f.scope.insert('communication_messages', {
          channel,
          direction: 'out',
          status,
          source: 'bot',
          account_ref: account,
          counterpart: channel === 'messenger' ? '7012345678901234' : '6281234567801',
          body_text: 'x',
          message_id: messageId,
          occurred_at: new Date(),
          sent_at: status === 'pending' ? null : new Date(),
        })
      ).id;
    const wablas = await out('acc-wablas', 'WABLAS-OUT-1');
    const waha = await out('acc-waha', 'true_6281234567801@c.us_WAHAOUT1', 'whatsapp', 'sent');
    const msgr = await out('acc-messenger', 'm_MESSENGEROUT1', 'messenger', 'sent');
    for (const file of ['wablas-status', 'waha-ack', 'messenger-delivery']) {
      const res = await post(app, config.webhook_url, fixture(file));
      expect(res.status, file).to.equal(200);
    }
    const row = (id: number) => env.knex('communication_messages').where({ id }).first();
    const w = await row(wablas);
    expect(w.status).to.equal('read');
    expect(w.read_at).to.be.instanceOf(Date);
    expect(w.delivered_at).to.be.instanceOf(Date);
    expect((await row(waha)).status).to.equal('read');
    expect((await row(waha)).read_at.toISOString()).to.equal(new Date(1764720100 * 1000).toISOString());
    const m = await row(msgr);
    expect(m.status).to.equal('delivered');
    expect(m.delivered_at.toISOString()).to.equal(new Date(1764720001999).toISOString());
    // a late "delivered" after "read" changes nothing
    const late = { ...fixture('wablas-status'), status: 'delivered' };
    expect((await post(app, config.webhook_url, late)).status).to.equal(200);
    expect((await row(wablas)).status).to.equal('read');
    const outbound = await env.knex('communication_messages').where({ tenant_id: f.tenant.id, direction: 'out' });
    expect(outbound.length).to.equal(3);
    expect(await inbound(f.tenant.id)).to.deep.equal([]);
  });

  it('unknown slug 404; missing or wrong key 401; module off 403; nothing stored', async () => {
    const { f, config } = await tenantWithCustomer();
    const body = fixture('wablas-message');
    const url = new URL(config.webhook_url);
    const unknownSlug = await app.request('POST', `/api/wabot/inbound/no-such-tenant${url.search}`, { body });
    expect(unknownSlug.status).to.equal(404);
    expect(unknownSlug.body.code).to.equal('NOT_FOUND');
    const noKey = await app.request('POST', url.pathname, { body });
    expect(noKey.status).to.equal(401);
    expect(noKey.body.code).to.equal('UNAUTHENTICATED');
    const badKey = await app.request('POST', `${url.pathname}?key=${'A'.repeat(43)}`, { body });
    expect(badKey.status).to.equal(401);
    expect(badKey.body.code).to.equal('UNAUTHENTICATED');
    const twoKeys = await app.request('POST', `${url.pathname}${url.search}&key=x`, { body });
    expect(twoKeys.status).to.equal(401);
    await env
      .knex('tenants')
      .where({ id: f.tenant.id })
      .update({ modules: JSON.stringify(MODULES.filter((m) => m !== 'wabot')) });
    const off = await post(app, config.webhook_url, body);
    expect(off.status).to.equal(403);
    expect(off.body.code).to.equal('module_disabled');
    expect(await inbound(f.tenant.id)).to.deep.equal([]);
  });

  it('a payload no parser of the tenant reads: 422; too large: 413', async () => {
    const { f, config } = await tenantWithCustomer();
    const res = await post(app, config.webhook_url, { hello: 'world' });
    expect(res.status).to.equal(422);
    expect(res.body.errors.body[0]).to.include('No parser');
    const big = await app.request('POST', pathOf(config.webhook_url), {
      raw: JSON.stringify({ phone: '6281234567801', message: 'x'.repeat(1_100_000) }),
    });
    expect(big.status).to.equal(413);
    expect(await inbound(f.tenant.id)).to.deep.equal([]);
  });

  it('rotate: 200 with a new webhook_url; the old key is refused at once, the new one works; audited', async () => {
    const { f, config } = await tenantWithCustomer();
    const rot = await app.request('POST', '/api/wabot/webhook-secret/rotate', { token: f.adminToken });
    expect(rot.status, rot.text).to.equal(200);
    const fresh = rot.body.data.webhook_url as string;
    expect(fresh).to.not.equal(config.webhook_url);
    expect(fresh).to.match(/\?key=[A-Za-z0-9_-]{43}$/);
    const old = await post(app, config.webhook_url, fixture('wablas-message'));
    expect(old.status).to.equal(401);
    const ok = await post(app, fresh, fixture('wablas-message'));
    expect(ok.status).to.equal(200);
    expect((await inbound(f.tenant.id)).length).to.equal(1);
    const get = await app.request('GET', '/api/wabot/config', { token: f.adminToken });
    expect(get.body.data.webhook_url).to.equal(fresh);
    const audit = await env.knex('audit_log').where({ tenant_id: f.tenant.id, action: 'wabot.webhook_secret_rotated' });
    expect(audit.length).to.equal(1);
    expect(JSON.stringify(audit[0])).to.not.include(new URL(fresh).searchParams.get('key')!);
    const none = await makeTenant();
    const refused = await app.request('POST', '/api/wabot/webhook-secret/rotate', { token: none.adminToken });
    expect(refused.status).to.equal(422);
    expect(refused.body.errors).to.have.property('config');
  });

  it("Messenger's GET echoes hub.challenge when hub.verify_token is the secret; else 401", async () => {
    const { config } = await tenantWithCustomer();
    const url = new URL(config.webhook_url);
    const key = url.searchParams.get('key')!;
    const q = (token: string) =>
      `${url.pathname}?hub.mode=subscribe&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=1158201444`;
    const ok = await app.request('GET', q(key));
    expect(ok.status).to.equal(200);
    expect(ok.text).to.equal('1158201444');
    expect(ok.headers.get('content-type')).to.match(/^text\/plain/);
    const bad = await app.request('GET', q('wrong'));
    expect(bad.status).to.equal(401);
    expect(bad.body.code).to.equal('UNAUTHENTICATED');
    expect(PAGE_ID).to.equal('104512345678901');
  });
});
