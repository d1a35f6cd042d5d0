/**
 * Exact money arithmetic (DESIGN.md §4 "Money", §10 "money"): amounts are numeric(14,2) in
 * PostgreSQL and JSON numbers with at most 2 decimals in responses; every computation in between is
 * done in exact decimals, never in binary floats.
 *
 * Library choice: decimal.js rather than big.js. Both are exact decimal libraries by the same
 * author; decimal.js ships its own TypeScript types and an ESM entry, has per-call rounding modes
 * (toDecimalPlaces(n, ROUND_HALF_UP)) and `Decimal.clone()`, which gives this module a private
 * configuration no other import can change. big.js needs @types/big.js and a global RM setting.
 *
 * Values are `Money` (a decimal.js instance of this module's private clone). Inputs may be a
 * Money, a JS number or a decimal string ("12.50", "-3"); numbers are read through their shortest
 * round-trip string, so `0.1` is exactly 0.1.
 */
import { Decimal } from 'decimal.js';

/** Private decimal.js constructor: 40 significant digits, half-up, no exponent notation in toString. */
const D = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -40, toExpPos: 40 });

/** An exact decimal amount (currency units, e.g. rupiah or dollars, not minor units). */
export type Money = Decimal;
/** What the functions accept as an amount or a factor. */
export type MoneyInput = Money | number | string;

/** Largest absolute value a numeric(14,2) column holds. */
export const MONEY_MAX = '999999999999.99';
const MAX = new D(MONEY_MAX);
const PLAIN_DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * A value that is not a valid amount: NaN, Infinity, malformed text, too many decimals (code
 * INVALID_AMOUNT), or beyond numeric(14,2) (code AMOUNT_OUT_OF_RANGE). status 422 for the HTTP layer.
 */
export class MoneyError extends Error {
  readonly status = 422;
  constructor(
    readonly code: 'INVALID_AMOUNT' | 'AMOUNT_OUT_OF_RANGE',
    message: string,
  ) {
    super(message);
    this.name = 'MoneyError';
  }
}

function toDecimal(v: MoneyInput): Decimal {
  if (Decimal.isDecimal(v)) {
    if (!v.isFinite()) throw new MoneyError('INVALID_AMOUNT', `amount ${v.toString()} is not a finite number`);
    // every decimal.js clone shares one prototype; re-wrap so this module's configuration applies
    return v.constructor === D ? v : new D(v);
  }
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new MoneyError('INVALID_AMOUNT', `amount ${v} is not a finite number`);
    return new D(v);
  }
  if (typeof v === 'string' && PLAIN_DECIMAL.test(v)) return new D(v);
  throw new MoneyError('INVALID_AMOUNT', `amount ${JSON.stringify(v)} is not a decimal number`);
}

function checkScale(scale: number): void {
  if (!Number.isInteger(scale) || scale < 0 || scale > 2) {
    throw new RangeError(`money scale must be 0, 1 or 2, got ${scale}`);
  }
}

function checkRange(d: Decimal): Decimal {
  if (d.abs().gt(MAX)) throw new MoneyError('AMOUNT_OUT_OF_RANGE', `amount ${d.toString()} exceeds ±${MONEY_MAX}`);
  return d;
}

/** Normalises -0 to 0 so that outputs never read "-0.00". */
const noNegZero = (d: Decimal): Decimal => (d.isZero() ? new D(0) : d);

/**
 * Parses an amount given by a user, a JSON body or a database row.
 * @param v number (finite) or plain decimal string (`-?digits[.digits]`, no exponent, no spaces)
 * @param scale most decimals allowed: 2 (default), 0 for currencies without minor units (IDR)
 * @returns the exact amount
 * @throws MoneyError INVALID_AMOUNT for NaN/Infinity, malformed text or more than `scale` decimals;
 *   AMOUNT_OUT_OF_RANGE beyond ±999999999999.99 (numeric(14,2))
 */
export function money(v: MoneyInput, scale = 2): Money {
  checkScale(scale);
  const d = toDecimal(v);
  if (d.decimalPlaces() > scale) {
    const what = `${scale} decimal${scale === 1 ? '' : 's'}`;
    throw new MoneyError('INVALID_AMOUNT', `amount ${d.toString()} has more than ${what}`);
  }
  return noNegZero(checkRange(d));
}

/**
 * Parses a multiplier (a quantity or a rate such as "0.11" for 11 % tax): any number of decimals.
 * @throws MoneyError INVALID_AMOUNT for NaN/Infinity or malformed text
 */
export function factor(v: MoneyInput): Money {
  return toDecimal(v);
}

/** a + b, exact (not rounded). @throws MoneyError for invalid inputs */
export function add(a: MoneyInput, b: MoneyInput): Money {
  return toDecimal(a).plus(toDecimal(b));
}

/** a − b, exact (not rounded). @throws MoneyError for invalid inputs */
export function sub(a: MoneyInput, b: MoneyInput): Money {
  return toDecimal(a).minus(toDecimal(b));
}

/**
 * amount × factor (a quantity or a rate), exact to 40 significant digits and not rounded: round
 * the result with round() where the business rule says (per line, per document).
 * @throws MoneyError for invalid inputs
 */
export function mul(amount: MoneyInput, by: MoneyInput): Money {
  return toDecimal(amount).times(toDecimal(by));
}

/** Exact sum of a list (0 for an empty list). @throws MoneyError for an invalid item */
export function sum(items: Iterable<MoneyInput>): Money {
  let total = new D(0);
  for (const it of items) total = total.plus(toDecimal(it));
  return total;
}

/**
 * Rounds half-up (ties away from zero: 0.005 -> 0.01, -0.005 -> -0.01) to `scale` decimals.
 * @param scale 2 (default) or 0 for IDR
 */
export function round(a: MoneyInput, scale = 2): Money {
  checkScale(scale);
  return noNegZero(toDecimal(a).toDecimalPlaces(scale, Decimal.ROUND_HALF_UP));
}

/** -1, 0 or 1 as a <, =, > b (exact). @throws MoneyError for invalid inputs */
export function compare(a: MoneyInput, b: MoneyInput): -1 | 0 | 1 {
  return toDecimal(a).comparedTo(toDecimal(b)) as -1 | 0 | 1;
}

/** a === b exactly (e.g. "0.30" equals 0.3). */
export function equals(a: MoneyInput, b: MoneyInput): boolean {
  return compare(a, b) === 0;
}

/**
 * The amount as a JSON number: rounded half-up to `scale` decimals (2 by default), so it prints
 * with at most 2 decimals (12.3 for 12.30).
 * @throws MoneyError AMOUNT_OUT_OF_RANGE beyond numeric(14,2)
 */
export function toNumber(a: MoneyInput, scale = 2): number {
  return Number(toDbString(a, scale)) || 0;
}

/**
 * The amount as text for a numeric(14,2) column or a CSV cell: rounded half-up to `scale`
 * decimals, fixed notation with exactly `scale` decimals ("12.30", "-0.05", "1500" for scale 0).
 * @throws MoneyError AMOUNT_OUT_OF_RANGE beyond ±999999999999.99
 */
export function toDbString(a: MoneyInput, scale = 2): string {
  return checkRange(round(a, scale)).toFixed(scale);
}
