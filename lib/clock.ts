/**
 * Time as the application sees it (DESIGN.md §10 "time zone"): an injectable Clock, and the calendar
 * date of an instant in a tenant's IANA time zone. Code that decides anything by "now" or "today"
 * takes a Clock (default systemClock), so tests pass a ManualClock instead of depending on the
 * calendar or on how long a run takes.
 *
 * Dates are 'YYYY-MM-DD' strings (a calendar day without a zone, like PostgreSQL `date`); instants
 * are JS Dates (UTC milliseconds). Zone arithmetic uses Intl (the ICU time zone data of Node).
 */

/** The source of the current instant. */
export interface Clock {
  /** The current instant, a new Date on every call (callers may mutate it). */
  now(): Date;
}

/** The time zone of a tenant that has not chosen one (tenants.timezone default). */
export const DEFAULT_TIME_ZONE = 'Asia/Jakarta';

/** One day in ms (a UTC day; a day in a zone with DST may be 23 or 25 hours). */
export const DAY_MS = 86_400_000;

/** The machine's clock (Date.now()). */
export const systemClock: Clock = Object.freeze({ now: () => new Date() });

/** An instant given as a Date, epoch milliseconds or an ISO 8601 string. */
export type InstantInput = Date | number | string;

function toMs(at: InstantInput): number {
  const ms = at instanceof Date ? at.getTime() : typeof at === 'number' ? at : Date.parse(at);
  if (!Number.isFinite(ms)) throw new RangeError(`Not a valid instant: ${String(at)}`);
  return ms;
}

/**
 * A clock that stands still until told otherwise: for tests and for replaying a run "as of" a
 * given instant.
 */
export class ManualClock implements Clock {
  private ms: number;

  /**
   * @param start the instant the clock shows (default: the system clock's now at construction)
   * @throws RangeError when `start` is not a valid instant
   */
  constructor(start: InstantInput = Date.now()) {
    this.ms = toMs(start);
  }

  /** The instant the clock shows (a new Date on every call). */
  now(): Date {
    return new Date(this.ms);
  }

  /**
   * Moves the clock to an instant (back or forward).
   * @returns this clock
   * @throws RangeError when `at` is not a valid instant
   */
  set(at: InstantInput): this {
    this.ms = toMs(at);
    return this;
  }

  /**
   * Moves the clock by `ms` milliseconds (negative: back).
   * @returns this clock
   * @throws RangeError when `ms` is not a finite number
   */
  advance(ms: number): this {
    if (!Number.isFinite(ms)) throw new RangeError(`Not a finite number of ms: ${ms}`);
    this.ms += ms;
    return this;
  }
}

/**
 * A ManualClock showing `at`.
 * @throws RangeError when `at` is not a valid instant
 */
export function fixedClock(at: InstantInput): ManualClock {
  return new ManualClock(at);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** en-US parts formatter of a zone (cached; constructing one costs far more than formatting). */
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/**
 * Whether `timeZone` is an IANA zone name Intl knows ('Asia/Jakarta', 'UTC', 'America/New_York').
 * Offsets ('+07:00') and abbreviations that are not zone names ('WIB') are not valid.
 */
export function isValidTimeZone(timeZone: unknown): timeZone is string {
  if (typeof timeZone !== 'string' || !/^[A-Za-z]/.test(timeZone)) return false;
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks a zone name.
 * @returns the name unchanged
 * @throws RangeError naming the value when it is not a valid IANA zone name (see isValidTimeZone)
 */
export function assertTimeZone(timeZone: string): string {
  if (!isValidTimeZone(timeZone)) throw new RangeError(`Not an IANA time zone: ${JSON.stringify(timeZone)}`);
  return timeZone;
}

/** Wall-clock fields of an instant in a zone (second precision). */
function wallFields(timeZone: string, ms: number) {
  const parts = formatter(assertTimeZone(timeZone)).formatToParts(new Date(ms));
  const get = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)!.value);
  return {
    year: get('year'),
    month: get('month'),
    day: get('day'),
    hour: get('hour'),
    minute: get('minute'),
    second: get('second'),
  };
}

/**
 * The calendar date of an instant in a zone.
 * @param timeZone IANA zone name
 * @param at the instant
 * @returns 'YYYY-MM-DD' (years 1..9999)
 * @throws RangeError for an unknown zone or an invalid instant
 */
export function dateIn(timeZone: string, at: InstantInput): string {
  const { year, month, day } = wallFields(timeZone, toMs(at));
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/**
 * Today in a zone: the calendar date of clock.now() there (e.g. at 17:00:00Z it is already the next
 * day in Asia/Jakarta, UTC+7).
 * @param timeZone IANA zone name (a tenant's tenants.timezone)
 * @param clock the clock to read (default systemClock)
 * @returns 'YYYY-MM-DD'
 * @throws RangeError for an unknown zone
 */
export function todayIn(timeZone: string, clock: Clock = systemClock): string {
  return dateIn(timeZone, clock.now());
}

/**
 * Offset of a zone from UTC at an instant: local wall time minus UTC.
 * @returns milliseconds (Asia/Jakarta: +25_200_000); whole seconds
 * @throws RangeError for an unknown zone or an invalid instant
 */
export function zoneOffsetMs(timeZone: string, at: InstantInput): number {
  const ms = Math.floor(toMs(at) / 1000) * 1000;
  const w = wallFields(timeZone, ms);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - ms;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Parses 'YYYY-MM-DD' to UTC midnight ms. @throws RangeError when not a real calendar date */
function parseDate(date: string): number {
  const m = DATE_RE.exec(date);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== date) {
    throw new RangeError(`Not a calendar date (YYYY-MM-DD): ${JSON.stringify(date)}`);
  }
  return ms;
}

/**
 * Whether `date` is a real calendar date written 'YYYY-MM-DD' ('2025-02-29' is not).
 */
export function isDateString(date: unknown): date is string {
  if (typeof date !== 'string') return false;
  try {
    parseDate(date);
    return true;
  } catch {
    return false;
  }
}

/**
 * Adds calendar days to a date (no zone involved: a calendar day is a calendar day).
 * @param date 'YYYY-MM-DD'
 * @param days whole days, may be negative
 * @returns 'YYYY-MM-DD'
 * @throws RangeError for a malformed date or a non-integer `days`
 */
export function addDays(date: string, days: number): string {
  if (!Number.isInteger(days)) throw new RangeError(`days must be an integer: ${days}`);
  return new Date(parseDate(date) + days * DAY_MS).toISOString().slice(0, 10);
}

/**
 * Whole calendar days from `from` to `to` (positive when `to` is later).
 * @param from 'YYYY-MM-DD'; to 'YYYY-MM-DD'
 * @throws RangeError for a malformed date
 */
export function daysBetween(from: string, to: string): number {
  return Math.round((parseDate(to) - parseDate(from)) / DAY_MS);
}

/**
 * The instant a calendar day begins in a zone: local midnight, or, where a DST change skips
 * midnight, the first instant that carries that date.
 * @param timeZone IANA zone name
 * @param date 'YYYY-MM-DD'
 * @returns the instant as a Date (e.g. Asia/Jakarta, D -> (D-1)T17:00:00.000Z)
 * @throws RangeError for an unknown zone or a malformed date
 */
export function startOfDayIn(timeZone: string, date: string): Date {
  const wall = parseDate(date);
  // Candidates from the offsets a day before, at and a day after; the answer is the earliest
  // candidate that falls on `date` there (covers DST changes near midnight, either way).
  const candidates = [wall - DAY_MS, wall, wall + DAY_MS].map((t) => wall - zoneOffsetMs(timeZone, t));
  let best = Infinity;
  for (const c of candidates) if (c < best && dateIn(timeZone, c) === date) best = c;
  if (best === Infinity) throw new RangeError(`No instant of ${date} in ${timeZone}`);
  return new Date(best);
}
