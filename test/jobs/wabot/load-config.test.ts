import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { env } from '../../helpers/env.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { newWebhookSecret, sealWabotAccount, sealWabotSetting } from '../../../db/wabot-secrets.js';
import {
  callingCodeOf,
  chatSendConfigSource,
  loadChatSendConfig,
  poolVersionOf,
} from '../../../jobs/wabot/load-config.js';

const KEY = randomBytes(32);

/** The error a promise rejects with (fails when it resolves). */
async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

/** Writes a wabot_settings row as the API would (sealed secrets). */
async function saveSettings(f: TenantFixture, cols: Record<string, unknown> = {}, secrets: { token?: string } = {}) {
  const id = f.tenant.id;
  await env.knex('wabot_settings').insert({
    tenant_id: id,
    provider: 'wablas',
    wa_token_enc: secrets.token ? sealWabotSetting(KEY, 'wa_token', id, secrets.token) : null,
    wa_secret_key_enc: sealWabotSetting(KEY, 'wa_secret_key', id, 'top-secret-key'),
    wa_number: '0812 0000 1111',
    base_url: 'https://bdg.wablas.test',
    max_messages_per_minute: 4,
    message_delay_seconds: 7,
    webhook_secret_enc: sealWabotSetting(KEY, 'webhook_secret', id, newWebhookSecret()),
    ...cols,
  });
}

async function addAccount(f: TenantFixture, accountId: string, position: number, cols: Record<string, unknown> = {}) {
  const id = f.tenant.id;
  await env.knex('wabot_accounts').insert({
    tenant_id: id,
    account_id: accountId,
    position,
    provider: 'fonnte',
    label: `Label ${accountId}`,
    token_enc: sealWabotAccount(KEY, 'token', id, accountId, `tok-${accountId}`),
    ...cols,
  });
}

/** Issue 10 item 2: loadChatSendConfig implements the send contract (jobs/wabot/send-config.ts). */
describe('jobs/wabot/load-config: loadChatSendConfig', () => {
  it('null when the tenant saved no configuration', async () => {
    const f = await makeTenant();
    expect(await loadChatSendConfig(env.knex, KEY, f.tenant.id)).to.equal(null);
  });

  it('no accounts: the top-level provider and credentials are the account `default` with the settings limits', async () => {
    const f = await makeTenant();
    await saveSettings(f, { enabled: true }, { token: 'top-token' });
    const c = await loadChatSendConfig(env.knex, KEY, f.tenant.id);
    expect(c).to.deep.equal({
      tenantId: f.tenant.id,
      enabled: true,
      callingCode: '62',
      defaultRecipient: '0812 0000 1111',
      accounts: [
        {
          id: 'default',
          provider: 'wablas',
          label: '',
          token: 'top-token',
          secret_key: 'top-secret-key',
          number: null,
          base_url: 'https://bdg.wablas.test',
          enabled: true,
          weight: 1,
          maxPerMinute: 4,
          delaySeconds: 7,
        },
      ],
      poolVersion: poolVersionOf([{ id: 'default', enabled: true, weight: 1 }]),
    });
  });

  it('with accounts: only they send, in position order, each limit defaulting to the settings', async () => {
    const f = await makeTenant();
    await saveSettings(f, { wa_number: null }, { token: 'top-token' });
    await addAccount(f, 'b', 1, { weight: 3, max_messages_per_minute: 0, enabled: false });
    await addAccount(f, 'a', 0, { message_delay_seconds: 0, number: '62811', secret_key_enc: null });
    const c = (await loadChatSendConfig(env.knex, KEY, f.tenant.id))!;
    expect(c.enabled).to.equal(false);
    expect(c.defaultRecipient).to.equal(null);
    expect(
      c.accounts.map((a) => [a.id, a.token, a.secret_key, a.enabled, a.weight, a.maxPerMinute, a.delaySeconds]),
    ).to.deep.equal([
      ['a', 'tok-a', null, true, 1, 4, 0],
      ['b', 'tok-b', null, false, 3, 0, 7],
    ]);
    expect(c.accounts[0]).to.include({ provider: 'fonnte', label: 'Label a', number: '62811', base_url: null });
    expect(c.accounts.some((a) => a.token === 'top-token')).to.equal(false);
    expect(c.poolVersion).to.equal(poolVersionOf([{ id: 'a', enabled: true, weight: 1 }]));
  });

  it('poolVersion changes with the enabled accounts, their order and weights, not with disabled ones', () => {
    const base = [
      { id: 'a', enabled: true, weight: 2 },
      { id: 'b', enabled: true, weight: 1 },
    ];
    const v = poolVersionOf(base);
    expect(v).to.match(/^[0-9a-f]{16}$/);
    expect(poolVersionOf([...base, { id: 'c', enabled: false, weight: 5 }])).to.equal(v);
    expect(poolVersionOf([base[1], base[0]])).to.not.equal(v);
    expect(poolVersionOf([{ ...base[0], weight: 3 }, base[1]])).to.not.equal(v);
    expect(poolVersionOf([base[0]])).to.not.equal(v);
  });

  it("calling code: the tenant's settings.calling_code when it is 1-3 digits, else 62", async () => {
    expect(callingCodeOf({ calling_code: '60' })).to.equal('60');
    expect(callingCodeOf({ calling_code: '+1' })).to.equal('1');
    expect(callingCodeOf({ calling_code: 65 })).to.equal('65');
    for (const bad of ['0', '1234', 'ab', '', null]) expect(callingCodeOf({ calling_code: bad })).to.equal('62');
    expect(callingCodeOf(null)).to.equal('62');
    const f = await makeTenant();
    await saveSettings(f);
    await env
      .knex('tenants')
      .where({ id: f.tenant.id })
      .update({ settings: JSON.stringify({ calling_code: '60' }) });
    expect((await chatSendConfigSource(env.knex, KEY)(f.tenant.id))!.callingCode).to.equal('60');
  });

  it("secrets are bound to their tenant and account: another tenant's sealed value or a missing APP_KEY throws", async () => {
    const f = await makeTenant();
    const g = await makeTenant();
    await saveSettings(f, {}, { token: 'top-token' });
    expect((await rejection(loadChatSendConfig(env.knex, undefined, f.tenant.id))).message).to.match(/APP_KEY/);
    await saveSettings(g, {
      wa_token_enc: (await env.knex('wabot_settings').where({ tenant_id: f.tenant.id }).first()).wa_token_enc,
    });
    expect((await rejection(loadChatSendConfig(env.knex, KEY, g.tenant.id))).message).to.match(/auth/i);
    await addAccount(f, 'x', 0, {
      token_enc: sealWabotAccount(KEY, 'token', f.tenant.id, 'y', 'moved'),
    });
    expect((await rejection(loadChatSendConfig(env.knex, KEY, f.tenant.id))).message).to.match(/auth/i);
  });
});
