import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken, makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { MODULES } from '../../../api/tenants/catalog.js';
import { dumpStores, secretForms } from '../mail/support.js';

/** A token no answer, row, audit entry, Redis key or log line may ever show in clear. */
const SENTINEL = 'wabot-Sentinel-tok-7f3e21';
const SENTINEL_KEY = 'wabot-Sentinel-key-0b9d44';

/** Issue 10 item 2: every 422 of PUT /api/wabot/config, the guards, and the sentinel secrets. */
describe('/api/wabot/config: refusals, access and secrets', () => {
  let app: TestApp;
  let a: TenantFixture;
  /** the tenant the 422 cases run against: saved, one account, no top-level secrets */
  let b: TenantFixture;
  const texts: string[] = [];

  const put = async (body: unknown, f: TenantFixture = a) => {
    const res = await app.request('PUT', '/api/wabot/config', { token: f.adminToken, body });
    texts.push(res.text);
    return res;
  };

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    const saved = await put({
      provider: 'wablas',
      wa_token: SENTINEL,
      wa_secret_key: SENTINEL_KEY,
      settings: {
        base_url: 'https://bdg.wablas.test',
        accounts: [{ id: 'acc', base_url: 'https://x.wablas.test', token: SENTINEL, secret_key: SENTINEL_KEY }],
      },
    });
    expect(saved.status, saved.text).to.equal(200);
    b = await makeTenant();
    const plain = await put({ provider: 'fonnte', settings: { accounts: [{ id: 'acc', token: 'plain' }] } }, b);
    expect(plain.status, plain.text).to.equal(200);
  });

  const account = (extra: Record<string, unknown>) => ({ provider: 'fonnte', settings: { accounts: [extra] } });
  /** [case, body, the field errors expected (exactly these keys)] */
  const cases: [string, unknown, string[]][] = [
    ['wablas without base URL', { provider: 'wablas', wa_token: 't' }, ['settings.base_url']],
    ['waha without base URL', { provider: 'waha', settings: { base_url: '' } }, ['settings.base_url']],
    ['messenger without page token and page id', { provider: 'messenger' }, ['wa_token', 'wa_secret_key']],
    ['messenger without page id', { provider: 'messenger', wa_token: 'p' }, ['wa_secret_key']],
    [
      'fonnte with a base URL',
      { provider: 'fonnte', settings: { base_url: 'https://api.fonnte.test' } },
      ['settings.base_url'],
    ],
    ['watzap with a base URL', { provider: 'watzap', settings: { base_url: 'https://w.test' } }, ['settings.base_url']],
    [
      'starsender with a base URL',
      { provider: 'starsender', settings: { base_url: 'https://s.test' } },
      ['settings.base_url'],
    ],
    [
      'a base URL with a query',
      { provider: 'ruangwa', settings: { base_url: 'https://r.test/api?x=1' } },
      ['settings.base_url'],
    ],
    [
      'a base URL that is no http URL',
      { provider: 'waha', settings: { base_url: 'ftp://waha.test' } },
      ['settings.base_url'],
    ],
    ['account: wablas without base URL', account({ provider: 'wablas', token: 't' }), ['settings.accounts.0.base_url']],
    ['account: waha without base URL', account({ provider: 'waha' }), ['settings.accounts.0.base_url']],
    [
      'account: messenger without page token and id',
      account({ provider: 'messenger' }),
      ['settings.accounts.0.token', 'settings.accounts.0.secret_key'],
    ],
    [
      'account: fonnte with a base URL',
      account({ base_url: 'https://api.fonnte.test' }),
      ['settings.accounts.0.base_url'],
    ],
    [
      'account: starsender with a base URL',
      account({ provider: 'starsender', base_url: 'https://s.test' }),
      ['settings.accounts.0.base_url'],
    ],
    [
      'max_messages_per_minute 1001',
      { provider: 'fonnte', settings: { max_messages_per_minute: 1001 } },
      ['settings.max_messages_per_minute'],
    ],
    [
      'max_messages_per_minute -1',
      { provider: 'fonnte', settings: { max_messages_per_minute: -1 } },
      ['settings.max_messages_per_minute'],
    ],
    [
      'message_delay_seconds 3601',
      { provider: 'fonnte', settings: { message_delay_seconds: 3601 } },
      ['settings.message_delay_seconds'],
    ],
    [
      'message_delay_seconds 1.5',
      { provider: 'fonnte', settings: { message_delay_seconds: 1.5 } },
      ['settings.message_delay_seconds'],
    ],
    [
      'routing_strategy other than auto',
      { provider: 'fonnte', settings: { routing_strategy: 'round_robin' } },
      ['settings.routing_strategy'],
    ],
    ['unknown provider', { provider: 'telegram' }, ['provider']],
    ['provider missing', { settings: {} }, ['provider']],
    ['a field the spec does not have', { provider: 'fonnte', token_set: true }, ['token_set']],
    ['account weight 0', account({ weight: 0 }), ['settings.accounts.0.weight']],
    ['account weight 101', account({ weight: 101 }), ['settings.accounts.0.weight']],
    ['account limit 1001', account({ max_messages_per_minute: 1001 }), ['settings.accounts.0.max_messages_per_minute']],
    ['account delay 3601', account({ message_delay_seconds: 3601 }), ['settings.accounts.0.message_delay_seconds']],
    ['account id with a space', account({ id: 'a b' }), ['settings.accounts.0.id']],
    ['account id of 81 characters', account({ id: 'x'.repeat(81) }), ['settings.accounts.0.id']],
    ['account unknown field', account({ token_set: true }), ['settings.accounts.0.token_set']],
    ['account label on two lines', account({ label: 'a\nb' }), ['settings.accounts.0.label']],
    [
      'duplicate account ids',
      { provider: 'fonnte', settings: { accounts: [{ id: 'same' }, { id: 'same' }] } },
      ['settings.accounts.1.id'],
    ],
    [
      '21 accounts',
      { provider: 'fonnte', settings: { accounts: Array.from({ length: 21 }, (_, i) => ({ id: `a${i}` })) } },
      ['settings.accounts'],
    ],
    ['wa_number that is no phone', { provider: 'fonnte', wa_number: '12ab' }, ['wa_number']],
    ['a token on two lines', { provider: 'fonnte', wa_token: 'a\nb' }, ['wa_token']],
  ];

  for (const [name, body, fields] of cases) {
    it(`422 ${name}; nothing changed`, async () => {
      const before = await env.knex('wabot_settings').where({ tenant_id: b.tenant.id }).first();
      const res = await put(body, b);
      expect(res.status, res.text).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(Object.keys(res.body.errors).sort()).to.deep.equal([...fields].sort());
      const after = await env.knex('wabot_settings').where({ tenant_id: b.tenant.id }).first();
      expect(after).to.deep.equal(before);
      expect(await env.knex('wabot_accounts').where({ tenant_id: b.tenant.id }).pluck('account_id')).to.deep.equal([
        'acc',
      ]);
    });
  }

  it('messenger with the stored page token and id is accepted (kept secrets count); 20 accounts are accepted', async () => {
    const f = await makeTenant();
    expect((await put({ provider: 'messenger', wa_token: 'page-tok', wa_secret_key: '1234' }, f)).status).to.equal(200);
    const again = await put({ provider: 'messenger', wa_number: '987654321' }, f);
    expect(again.status, again.text).to.equal(200);
    expect(again.body.data.credential_status).to.deep.include({ token_set: true, secret_key_set: true });
    const many = await put(
      { provider: 'fonnte', settings: { accounts: Array.from({ length: 20 }, (_, i) => ({ id: `a${i}` })) } },
      f,
    );
    expect(many.status, many.text).to.equal(200);
    expect(many.body.data.accounts).to.have.length(20);
  });

  it('technician and staff 403 FORBIDDEN, integration token 401, module off 403 module_disabled; nothing written', async () => {
    const t = await makeTenant();
    const body = { provider: 'fonnte', wa_token: SENTINEL };
    for (const role of ['technician', 'staff']) {
      const u = await makeUser(t.tenant.id, role);
      for (const method of ['GET', 'PUT']) {
        const res = await app.request(method, '/api/wabot/config', { token: u.token, body });
        expect(res.status).to.equal(403);
        expect(res.body.code).to.equal('FORBIDDEN');
        expect(res.body.message).to.include('wabot.manage');
      }
    }
    const integration = await makeIntegrationToken(t, 'read_write');
    for (const method of ['GET', 'PUT']) {
      const res = await app.request(method, '/api/wabot/config', { token: integration.token, body });
      expect(res.status).to.equal(401);
      expect(res.body.code).to.equal('UNAUTHENTICATED');
    }
    await env
      .knex('tenants')
      .where({ id: t.tenant.id })
      .update({ modules: JSON.stringify(MODULES.filter((m) => m !== 'wabot')) });
    for (const method of ['GET', 'PUT']) {
      const off = await app.request(method, '/api/wabot/config', { token: t.adminToken, body });
      expect(off.status).to.equal(403);
      expect(off.body.code).to.equal('module_disabled');
    }
    expect(await env.knex('wabot_settings').where({ tenant_id: t.tenant.id })).to.have.length(0);
    expect(
      await env.knex('audit_log').where({ tenant_id: t.tenant.id, action: 'wabot.config_updated' }),
    ).to.have.length(0);
  });

  it('the sentinel token and key are in no answer, no database column in clear, no Redis key or value, no log line', async () => {
    const res = await app.request('GET', '/api/wabot/config', { token: a.adminToken });
    texts.push(res.text);
    expect(res.body.data.credential_status).to.deep.include({ token_set: true, secret_key_set: true });
    expect(res.body.data.accounts[0]).to.include({ token_set: true, secret_key_set: true });
    const { db, redis } = await dumpStores();
    expect(db).to.include('wabot_settings');
    const dump = { texts: texts.join('\n'), db, redis, logs: app.logs.join('') };
    expect(dump.logs).to.include('/api/wabot/config');
    for (const s of [SENTINEL, SENTINEL_KEY])
      for (const form of secretForms(s))
        for (const [where, text] of Object.entries(dump)) expect(text, `${where}: ${form}`).to.not.include(form);
  });
});
