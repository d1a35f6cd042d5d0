import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { openWabotAccount, openWabotSetting } from '../../../db/wabot-secrets.js';
import { loadChatSendConfig } from '../../../jobs/wabot/load-config.js';

/** Issue 10 item 2: GET/PUT /api/wabot/config, defaults, secrets kept, webhook URL, audit. */
describe('/api/wabot/config', () => {
  let app: TestApp;
  let a: TenantFixture;

  const put = (body: unknown, f: TenantFixture = a) =>
    app.request('PUT', '/api/wabot/config', { token: f.adminToken, body });
  const get = (f: TenantFixture = a) => app.request('GET', '/api/wabot/config', { token: f.adminToken });

  before(async () => {
    app = await startTestApp({ publicBaseUrl: 'https://isp.example.test/' });
    a = await makeTenant();
  });

  it('GET before any save: the defaults, nothing set, no webhook URL yet', async () => {
    const res = await get();
    expect(res.status).to.equal(200);
    expect(res.body.data).to.deep.equal({
      provider: null,
      wa_number: null,
      credential_status: { configured: false, token_set: false, secret_key_set: false },
      webhook_url: null,
      // issue 11 items 3 and 6: the implicit account's device status and webhook registration
      device_status: null,
      webhook_registration: null,
      settings: {
        enabled: false,
        auto_reply: false,
        base_url: null,
        ignore_groups: true,
        webhook_auto_register: false,
        reply_unknown_customers: false,
        max_messages_per_minute: 3,
        message_delay_seconds: 10,
        routing_strategy: 'auto',
      },
      accounts: [],
    });
  });

  it('PUT: 200 with the saved shape and defaults; secrets sealed; webhook_url from PUBLIC_BASE_URL with a 256-bit key; audited', async () => {
    const res = await put({
      provider: 'wablas',
      wa_token: 'tok-1',
      wa_number: '0812-3456 7890',
      settings: { base_url: 'https://bdg.wablas.test/', enabled: true },
    });
    expect(res.status, res.text).to.equal(200);
    const d = res.body.data;
    expect(d).to.deep.include({
      provider: 'wablas',
      wa_number: '0812-3456 7890',
      credential_status: { configured: true, token_set: true, secret_key_set: false },
      accounts: [],
    });
    expect(d.settings).to.deep.equal({
      enabled: true,
      auto_reply: false,
      base_url: 'https://bdg.wablas.test/',
      ignore_groups: true,
      webhook_auto_register: false,
      reply_unknown_customers: false,
      max_messages_per_minute: 3,
      message_delay_seconds: 10,
      routing_strategy: 'auto',
    });
    const m = /^https:\/\/isp\.example\.test\/api\/wabot\/inbound\/([^?]+)\?key=([A-Za-z0-9_-]{43})$/.exec(
      d.webhook_url,
    );
    expect(m, d.webhook_url).to.not.equal(null);
    expect(m![1]).to.equal(a.tenant.slug);
    const row = await env.knex('wabot_settings').where({ tenant_id: a.tenant.id }).first();
    expect(row.wa_token_enc).to.match(/^v1\./);
    expect(openWabotSetting(app.appKey, 'wa_token', a.tenant.id, row.wa_token_enc)).to.equal('tok-1');
    expect(openWabotSetting(app.appKey, 'webhook_secret', a.tenant.id, row.webhook_secret_enc)).to.equal(m![2]);
    expect((await get()).body.data).to.deep.equal(d);
    const audit = await env
      .knex('audit_log')
      .where({ tenant_id: a.tenant.id, action: 'wabot.config_updated' })
      .orderBy('id', 'desc')
      .first();
    expect(audit.user_id).to.equal(a.admin.id);
    expect(audit.subject_type).to.equal('wabot_settings');
    expect(audit.before).to.equal(null);
    expect(audit.after.credential_status).to.deep.equal({ configured: true, token_set: true, secret_key_set: false });
    expect(JSON.stringify(audit)).to.not.include('tok-1');
  });

  it('secrets: absent or empty keeps them, a new value replaces, null clears; the webhook key stays', async () => {
    const f = await makeTenant();
    const first = await put(
      { provider: 'watzap', wa_token: 'api-1', wa_secret_key: 'num-1', wa_number: '+62 811 000 111' },
      f,
    );
    expect(first.status, first.text).to.equal(200);
    const open = async (field: 'wa_token' | 'wa_secret_key') => {
      const row = await env.knex('wabot_settings').where({ tenant_id: f.tenant.id }).first();
      return row[`${field}_enc`] == null ? null : openWabotSetting(app.appKey, field, f.tenant.id, row[`${field}_enc`]);
    };
    const kept = await put({ provider: 'watzap', wa_token: '' }, f);
    expect(kept.status).to.equal(200);
    expect(kept.body.data.credential_status).to.deep.include({ token_set: true, secret_key_set: true });
    expect(kept.body.data.webhook_url).to.equal(first.body.data.webhook_url);
    expect(kept.body.data.wa_number).to.equal(null);
    expect([await open('wa_token'), await open('wa_secret_key')]).to.deep.equal(['api-1', 'num-1']);
    await put({ provider: 'watzap', wa_token: 'api-2', wa_secret_key: null }, f);
    expect([await open('wa_token'), await open('wa_secret_key')]).to.deep.equal(['api-2', null]);
    expect((await get(f)).body.data.credential_status).to.deep.include({ token_set: true, secret_key_set: false });
  });

  it('accounts: defaults (enabled, weight 1, generated id, provider from the top, limits inherited), order kept, secrets kept by id, removed ones deleted', async () => {
    const f = await makeTenant();
    const res = await put(
      {
        provider: 'fonnte',
        wa_token: 'top',
        settings: {
          max_messages_per_minute: 5,
          message_delay_seconds: 2,
          accounts: [
            { label: 'First', token: 'f-1' },
            {
              id: 'wb',
              provider: 'wablas',
              token: 'w-1',
              secret_key: 's-1',
              base_url: 'https://solo.wablas.test',
              weight: 3,
              enabled: false,
              max_messages_per_minute: 0,
              message_delay_seconds: 30,
              number: '62811',
            },
          ],
        },
      },
      f,
    );
    expect(res.status, res.text).to.equal(200);
    const [gen, wb] = res.body.data.accounts;
    expect(gen.id).to.match(/^acc_[0-9a-f]{10}$/);
    expect(gen).to.deep.equal({
      id: gen.id,
      provider: 'fonnte',
      label: 'First',
      number: null,
      base_url: null,
      enabled: true,
      weight: 1,
      max_messages_per_minute: null,
      message_delay_seconds: null,
      token_set: true,
      secret_key_set: false,
      // issue 11: each account's webhook URL names it
      webhook_url: `${res.body.data.webhook_url}&account=${gen.id}`,
      // issue 11 items 3 and 6: nothing checked or registered yet
      device_status: null,
      webhook_registration: null,
    });
    expect(wb).to.deep.equal({
      id: 'wb',
      provider: 'wablas',
      label: '',
      number: '62811',
      base_url: 'https://solo.wablas.test',
      enabled: false,
      weight: 3,
      max_messages_per_minute: 0,
      message_delay_seconds: 30,
      token_set: true,
      secret_key_set: true,
      webhook_url: `${res.body.data.webhook_url}&account=wb`,
      device_status: null,
      webhook_registration: null,
    });
    const c = (await loadChatSendConfig(env.knex, app.appKey, f.tenant.id))!;
    expect(c.accounts.map((x) => [x.id, x.token, x.secret_key, x.maxPerMinute, x.delaySeconds])).to.deep.equal([
      [gen.id, 'f-1', null, 5, 2],
      ['wb', 'w-1', 's-1', 0, 30],
    ]);

    // wb first now, its secrets absent (kept); the generated one dropped; a new one added
    const again = await put(
      {
        provider: 'fonnte',
        settings: {
          accounts: [
            { id: 'wb', provider: 'wablas', base_url: 'https://solo.wablas.test', token: '' },
            { id: 'new_1', token: 'n-1' },
          ],
        },
      },
      f,
    );
    expect(again.status, again.text).to.equal(200);
    expect(again.body.data.accounts.map((x: any) => [x.id, x.token_set, x.secret_key_set, x.weight])).to.deep.equal([
      ['wb', true, true, 1],
      ['new_1', true, false, 1],
    ]);
    const rows = await env.knex('wabot_accounts').where({ tenant_id: f.tenant.id }).orderBy('position');
    expect(rows.map((r) => [r.account_id, r.position])).to.deep.equal([
      ['wb', 0],
      ['new_1', 1],
    ]);
    expect(openWabotAccount(app.appKey, 'token', f.tenant.id, 'wb', rows[0].token_enc)).to.equal('w-1');
    expect(openWabotAccount(app.appKey, 'secret_key', f.tenant.id, 'wb', rows[0].secret_key_enc)).to.equal('s-1');
    const cleared = await put({ provider: 'fonnte', settings: { accounts: [] } }, f);
    expect(cleared.body.data.accounts).to.deep.equal([]);
    expect(await env.knex('wabot_accounts').where({ tenant_id: f.tenant.id })).to.have.length(0);
  });

  it("with accounts, the top-level provider does not send: wablas without a base URL is accepted there (an account's is not)", async () => {
    const f = await makeTenant();
    const ok = await put({ provider: 'wablas', settings: { accounts: [{ provider: 'fonnte', token: 'x' }] } }, f);
    expect(ok.status, ok.text).to.equal(200);
    const bad = await put({ provider: 'wablas', settings: { accounts: [{ token: 'x' }] } }, f);
    expect(bad.status).to.equal(422);
    expect(Object.keys(bad.body.errors)).to.deep.equal(['settings.accounts.0.base_url']);
  });

  it("one tenant's configuration is invisible to another", async () => {
    const f = await makeTenant();
    const g = await makeTenant();
    expect((await put({ provider: 'fonnte', wa_token: 'mine' }, f)).status).to.equal(200);
    const other = await get(g);
    expect(other.body.data.provider).to.equal(null);
    expect(other.body.data.credential_status.configured).to.equal(false);
    expect((await get(f)).body.data.webhook_url).to.include(`/inbound/${f.tenant.slug}?key=`);
  });
});
