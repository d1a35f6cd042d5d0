import { expect } from 'chai';
import { env } from '../helpers/env.js';
import { makeTenant } from '../helpers/fixtures.js';
import { isValidTimeZone } from '../../lib/clock.js';

/** Migration 20261122010000_add_tenant_timezone: tenants.timezone, IANA, default Asia/Jakarta. */
describe('tenants.timezone', () => {
  const zoneOf = async (id: number) => (await env.knex('tenants').where({ id }).first('timezone')).timezone as string;

  it('defaults to Asia/Jakarta and takes any IANA zone name', async () => {
    const t = await makeTenant();
    expect(await zoneOf(t.tenant.id)).to.equal('Asia/Jakarta');
    expect(t.timeZone).to.equal('Asia/Jakarta');
    for (const tz of ['Asia/Makassar', 'America/New_York', 'UTC', 'Etc/GMT-7']) {
      await env.knex('tenants').where({ id: t.tenant.id }).update({ timezone: tz });
      expect(await zoneOf(t.tenant.id)).to.equal(tz);
    }
    const u = await makeTenant({ timeZone: 'Asia/Jayapura' });
    expect(await zoneOf(u.tenant.id)).to.equal('Asia/Jayapura');
  });

  it('refuses abbreviations, POSIX offset strings, wrong case, unknown names and NULL', async () => {
    const t = await makeTenant();
    for (const tz of ['WIB', 'XYZ-7', '+07', 'asia/jakarta', 'Mars/Olympus_Mons', '', null]) {
      let err: { code?: string; constraint?: string } | undefined;
      try {
        await env.knex('tenants').where({ id: t.tenant.id }).update({ timezone: tz });
      } catch (e) {
        err = e as typeof err;
      }
      expect(err?.code, String(tz)).to.equal(tz === null ? '23502' : '23514');
      if (tz !== null) expect(err?.constraint).to.equal('tenants_timezone_iana');
    }
    expect(await zoneOf(t.tenant.id)).to.equal('Asia/Jakarta');
  });

  it('every Indonesian zone and the common ones are known to both PostgreSQL and Intl', async () => {
    const zones = ['Asia/Jakarta', 'Asia/Pontianak', 'Asia/Makassar', 'Asia/Jayapura', 'UTC', 'Asia/Singapore'];
    const { rows } = await env.knex.raw('SELECT z, is_iana_time_zone(z) AS ok FROM unnest(?::text[]) AS z', [zones]);
    const seen = rows.map((r: { z: string; ok: boolean }) => [r.z, r.ok, isValidTimeZone(r.z)]);
    expect(seen).to.deep.equal(zones.map((z) => [z, true, true]));
  });
});
