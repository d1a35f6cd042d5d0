import { expect } from 'chai';
import {
  addDays,
  assertTimeZone,
  DAY_MS,
  daysBetween,
  dateIn,
  DEFAULT_TIME_ZONE,
  fixedClock,
  isDateString,
  isValidTimeZone,
  ManualClock,
  startOfDayIn,
  systemClock,
  todayIn,
  zoneOffsetMs,
} from '../../lib/clock.js';

const HOUR = 3_600_000;
/** A base date taken from the machine's clock: every expectation below is relative to it. */
const D = todayIn('UTC');
const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
};

/** lib/clock.ts (DESIGN.md §10 time zone). No fixed calendar date: everything hangs off today. */
describe('lib/clock', () => {
  describe('clocks', () => {
    it('systemClock reads the machine clock', () => {
      const before = Date.now();
      const now = systemClock.now().getTime();
      expect(now).to.be.at.least(before).and.at.most(Date.now());
    });

    it('a ManualClock stands still, moves by set() and advance(), and hands out copies', () => {
      const start = Date.parse(`${D}T10:00:00.000Z`);
      const clock = new ManualClock(start);
      expect(clock.now().getTime()).to.equal(start);
      clock.now().setTime(0); // a caller mutating its Date does not move the clock
      expect(clock.now().getTime()).to.equal(start);
      expect(clock.advance(1500).now().getTime()).to.equal(start + 1500);
      expect(
        clock
          .advance(-2 * DAY_MS)
          .now()
          .toISOString(),
      ).to.equal(`${addDays(D, -2)}T10:00:01.500Z`);
      expect(clock.set(`${D}T23:30:00Z`).now().toISOString()).to.equal(`${D}T23:30:00.000Z`);
      expect(clock.set(new Date(start)).now().getTime()).to.equal(start);
      expect(fixedClock(start).now().getTime()).to.equal(start);
      expect(thrown(() => new ManualClock('not a date'))).to.be.instanceOf(RangeError);
      expect(thrown(() => clock.advance(Number.NaN))).to.be.instanceOf(RangeError);
      expect(clock.now().getTime()).to.equal(start);
    });

    it('a ManualClock built without an instant starts at the system clock', () => {
      const before = Date.now();
      const t = new ManualClock().now().getTime();
      expect(t).to.be.at.least(before).and.at.most(Date.now());
    });
  });

  describe('the clock in Asia/Jakarta around midnight UTC', () => {
    const next = addDays(D, 1);

    it('16:59:59.999Z is still D in Jakarta, 17:00:00Z is already D+1 (UTC+7)', () => {
      const clock = fixedClock(`${D}T16:59:59.999Z`);
      expect(todayIn('Asia/Jakarta', clock)).to.equal(D);
      expect(todayIn('Asia/Jakarta', clock.advance(1))).to.equal(next);
      expect(clock.now().toISOString()).to.equal(`${D}T17:00:00.000Z`);
      expect(DEFAULT_TIME_ZONE).to.equal('Asia/Jakarta');
    });

    it('at 23:30Z the UTC date is D while Jakarta is on D+1; at 00:30Z both are on D+1', () => {
      const clock = fixedClock(`${D}T23:30:00Z`);
      expect(todayIn('UTC', clock)).to.equal(D);
      expect(todayIn('Asia/Jakarta', clock)).to.equal(next);
      clock.advance(HOUR);
      expect(todayIn('UTC', clock)).to.equal(next);
      expect(todayIn('Asia/Jakarta', clock)).to.equal(next);
    });

    it('a day in Jakarta begins at 17:00Z of the UTC day before and lasts 24 h; offset +7 h', () => {
      expect(startOfDayIn('Asia/Jakarta', next).toISOString()).to.equal(`${D}T17:00:00.000Z`);
      const start = startOfDayIn('Asia/Jakarta', next).getTime();
      expect(startOfDayIn('Asia/Jakarta', addDays(next, 1)).getTime() - start).to.equal(DAY_MS);
      expect(zoneOffsetMs('Asia/Jakarta', `${D}T12:00:00Z`)).to.equal(7 * HOUR);
      expect(dateIn('Asia/Jakarta', startOfDayIn('Asia/Jakarta', next).getTime() - 1)).to.equal(D);
    });

    it('west of UTC the date changes later: at 23:30Z America/Los_Angeles is still on D', () => {
      expect(todayIn('America/Los_Angeles', fixedClock(`${D}T23:30:00Z`))).to.equal(D);
      expect(todayIn('America/Los_Angeles', fixedClock(`${next}T06:59:00Z`))).to.equal(D);
      expect(todayIn('America/Los_Angeles', fixedClock(`${next}T08:00:00Z`))).to.equal(next);
    });
  });

  describe('zones with DST and odd offsets, over the next 400 days', () => {
    const zones = [
      'Asia/Jakarta',
      'UTC',
      'America/New_York',
      'Europe/Berlin',
      'America/Santiago',
      'Australia/Lord_Howe',
      'Asia/Kolkata',
      'Asia/Kathmandu',
      'Pacific/Kiritimati',
      'Pacific/Pago_Pago',
      'America/St_Johns',
    ];
    const days = Array.from({ length: 400 }, (_, i) => addDays(D, i));

    it('startOfDayIn(d) is the first instant of d there: it carries d, the millisecond before carries d-1', () => {
      for (const tz of zones) {
        for (const d of days) {
          const start = startOfDayIn(tz, d).getTime();
          expect(dateIn(tz, start), `${tz} ${d}`).to.equal(d);
          expect(dateIn(tz, start - 1), `${tz} ${d}`).to.equal(addDays(d, -1));
        }
      }
    });

    it('a day lasts 24 h minus the change of offset: 24 h in Jakarta; in New York 23 h and 25 h days alternate', () => {
      const lengths = (tz: string) =>
        days.map((d) => {
          const start = startOfDayIn(tz, d).getTime();
          const end = startOfDayIn(tz, addDays(d, 1)).getTime();
          expect(end - start, `${tz} ${d}`).to.equal(DAY_MS - (zoneOffsetMs(tz, end) - zoneOffsetMs(tz, start)));
          return (end - start) / HOUR;
        });
      expect(new Set(lengths('Asia/Jakarta'))).to.deep.equal(new Set([24]));
      // 400 days hold 2 to 4 DST changes (spring forward: 23 h, fall back: 25 h), never two alike in a row
      const changes = lengths('America/New_York').filter((h) => h !== 24);
      expect(changes.length).to.be.within(2, 4);
      changes.forEach((h, i) => {
        expect([23, 25]).to.include(h);
        if (i > 0) expect(h).to.not.equal(changes[i - 1]);
      });
    });
  });

  describe('calendar dates', () => {
    it('addDays and daysBetween move across months, years and leap days', () => {
      for (let n = -400; n <= 400; n += 7) {
        const d = addDays(D, n);
        expect(d).to.equal(new Date(Date.parse(`${D}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10));
        expect(daysBetween(D, d)).to.equal(n);
        expect(addDays(d, -n)).to.equal(D);
      }
      const year = Number(D.slice(0, 4));
      for (let y = year; y < year + 8; y++) {
        const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
        expect(addDays(`${y}-02-28`, 1), String(y)).to.equal(leap ? `${y}-02-29` : `${y}-03-01`);
        expect(addDays(`${y}-12-31`, 1)).to.equal(`${y + 1}-01-01`);
        expect(isDateString(`${y}-02-29`)).to.equal(leap);
      }
    });

    it('refuses malformed dates and fractional days', () => {
      const year = D.slice(0, 4);
      for (const bad of [`${year}-13-01`, `${year}-02-30`, `${year}-1-01`, `${D}T00:00:00Z`, '']) {
        expect(
          thrown(() => addDays(bad, 1)),
          bad,
        ).to.be.instanceOf(RangeError);
        expect(isDateString(bad), bad).to.equal(false);
      }
      expect(thrown(() => addDays(D, 0.5))).to.be.instanceOf(RangeError);
      expect(isDateString(D)).to.equal(true);
    });
  });

  describe('time zone names', () => {
    it('accepts IANA names, refuses abbreviations, offsets and unknown names', () => {
      for (const ok of ['Asia/Jakarta', 'Asia/Makassar', 'Asia/Jayapura', 'UTC', 'America/Argentina/Buenos_Aires']) {
        expect(isValidTimeZone(ok), ok).to.equal(true);
        expect(assertTimeZone(ok)).to.equal(ok);
      }
      for (const bad of ['WIB', '+07:00', 'Mars/Olympus_Mons', '', ' Asia/Jakarta', 7, null]) {
        expect(isValidTimeZone(bad), String(bad)).to.equal(false);
      }
      const err = thrown(() => assertTimeZone('Mars/Olympus_Mons'));
      expect(err).to.be.instanceOf(RangeError);
      expect((err as Error).message).to.include('Mars/Olympus_Mons');
      expect(thrown(() => todayIn('WIB'))).to.be.instanceOf(RangeError);
    });
  });
});
