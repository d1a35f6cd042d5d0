import { expect } from 'chai';
import {
  fakeOltAdapter,
  fakeReading,
  oltAdapterFor,
  UnknownOltDriverError,
} from '../../../../jobs/adapters/olt/index.js';
import { ManualClock } from '../../../../lib/clock.js';

/** Issue 8 item 3: the fake OLT driver's readings are deterministic per serial and realistic. */
describe('OLT driver fake (jobs/adapters/olt/fake.ts)', () => {
  const T = new ManualClock().now();
  const serials = Array.from({ length: 400 }, (_, i) => `ZTEG${(0x1000000 + i * 7919).toString(16).toUpperCase()}`);

  it('gives the same reading for the same serial and moment, in any letter case', () => {
    for (const s of serials.slice(0, 20)) {
      expect(fakeReading(s, T)).to.deep.equal(fakeReading(s, new Date(T.getTime())));
      expect({ ...fakeReading(s.toLowerCase(), T), serial_number: s }).to.deep.equal(fakeReading(s, T));
    }
  });

  it('mostly online, some los (and a few offline, power_fail); powers in dBm in realistic ranges, null unless online', () => {
    const readings = serials.map((s) => fakeReading(s, T));
    const count = (st: string) => readings.filter((r) => r.status === st).length;
    expect(count('online')).to.be.within(280, 360);
    expect(count('los')).to.be.within(15, 60);
    expect(count('offline')).to.be.greaterThan(5);
    expect(count('power_fail')).to.be.greaterThan(5);
    for (const r of readings) {
      if (r.status === 'online') {
        expect(r.rx_power).to.be.within(-28, -8);
        expect(r.tx_power).to.be.within(0.5, 4.99);
        expect(Math.round(r.rx_power! * 100) / 100).to.equal(r.rx_power);
        expect(Number.isInteger(r.uptime)).to.equal(true);
        expect(r.uptime).to.be.within(0, 44 * 86400);
      } else {
        expect([r.rx_power, r.tx_power, r.uptime]).to.deep.equal([null, null, null]);
      }
    }
    const rx = new Set(readings.filter((r) => r.status === 'online').map((r) => r.rx_power));
    expect(rx.size).to.be.greaterThan(100);
  });

  it('uptime grows with the clock (seconds) until the ONU "reboots"', () => {
    const online = serials.map((s) => fakeReading(s, T)).filter((r) => r.status === 'online');
    const later = new Date(T.getTime() + 600_000);
    const grown = online.filter((r) => fakeReading(r.serial_number, later).uptime === r.uptime! + 600);
    expect(grown.length).to.be.greaterThan(online.length * 0.95);
  });

  it('polls the serials it is asked about; the registry finds it by name and refuses unknown drivers', async () => {
    const target = {
      id: 1,
      tenant_id: 1,
      name: 'x',
      vendor: null,
      model: null,
      ip_address: null,
      pon_ports: 16,
      serials: serials.slice(0, 3),
      credentials: () => {
        throw new Error('the fake driver never opens credentials');
      },
    };
    const out = await fakeOltAdapter.poll(target, { now: T });
    expect(out).to.deep.equal(serials.slice(0, 3).map((s) => fakeReading(s, T)));
    expect(oltAdapterFor('fake')).to.equal(fakeOltAdapter);
    expect(() => oltAdapterFor('toString')).to.throw(UnknownOltDriverError);
    expect(() => oltAdapterFor('zte')).to.throw(UnknownOltDriverError);
  });
});
