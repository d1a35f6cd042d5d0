import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { env } from '../../helpers/env.js';
import { createProvisioningCredentialSource, sealSectionSecret } from '../../../jobs/provisioning/credentials.js';

/** Issue 13 items 3-4: the credential source of the contract over the database. */
describe('provisioning credential source: sealed secrets, the lock', () => {
  const key = randomBytes(32);
  const SENTINEL = `cf-sentinel-${randomBytes(6).toString('hex')}`;

  after(async () => {
    await env.knex('provisioning_credentials').del();
    await env.knex('provisioning_settings').del();
  });

  it('is locked with every reason when nothing is saved, and opens sealed secrets', async () => {
    await env.knex('provisioning_credentials').del();
    await env.knex('provisioning_settings').del();
    const src = createProvisioningCredentialSource(env.knex, key);
    expect(await src.lock()).to.deep.equal({
      locked: true,
      reasons: ['enabled', 'backup', 'cloudflare', 'mail_panel'],
    });
    await env.knex('provisioning_credentials').insert({
      section: 'cloudflare',
      settings: JSON.stringify({ zone_id: 'zone-1' }),
      secret_enc: sealSectionSecret(key, 'cloudflare', SENTINEL),
      changed_at: env.knex.fn.now(),
    });
    const raw = await env.knex('provisioning_credentials').where({ section: 'cloudflare' }).first();
    expect(JSON.stringify(raw)).to.not.include(SENTINEL);
    const loaded = await src.load();
    expect(loaded.cloudflare).to.deep.equal({ apiToken: SENTINEL, zoneId: 'zone-1' });
    expect(loaded.mailPanel).to.equal(null);
    expect(loaded.enabled).to.equal(false);
  });

  it('unlocks only when enabled, backup ready and cloudflare and mail_panel tested ok', async () => {
    const src = createProvisioningCredentialSource(env.knex, key);
    await env.knex('provisioning_settings').insert({ id: 1, enabled: true, backup_ready: true });
    const ok = JSON.stringify({ ok: true, at: new Date(0).toISOString(), message: 'ok' });
    await env.knex('provisioning_credentials').where({ section: 'cloudflare' }).update({ last_test: ok });
    expect(await src.lock()).to.deep.equal({ locked: true, reasons: ['mail_panel'] });
    await env.knex('provisioning_credentials').insert({
      section: 'mail_panel',
      settings: JSON.stringify({ type: 'cpanel', host: 'panel.test', port: 2083, user: 'u', ssl: true }),
      secret_enc: sealSectionSecret(key, 'mail_panel', 'pw'),
      changed_at: env.knex.fn.now(),
      last_test: ok,
    });
    expect(await src.lock()).to.deep.equal({ locked: false, reasons: [] });
    expect((await src.load()).mailPanel).to.deep.include({ type: 'cpanel', host: 'panel.test', password: 'pw' });
  });
});
