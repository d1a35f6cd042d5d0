import { expect } from 'chai';
import { env } from '../helpers/env.js';
import {
  add,
  compare,
  equals,
  factor,
  money,
  MONEY_MAX,
  MoneyError,
  mul,
  round,
  sub,
  sum,
  toDbString,
  toNumber,
} from '../../lib/money.js';

const code = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(MoneyError);
    return (e as MoneyError).code;
  }
  return undefined;
};

describe('lib/money.ts: exact money arithmetic', () => {
  it('adds 0.1 + 0.2 to exactly 0.3 (binary floats give 0.30000000000000004)', () => {
    expect(0.1 + 0.2).to.not.equal(0.3);
    const r = add(0.1, 0.2);
    expect(r.toString()).to.equal('0.3');
    expect(equals(r, '0.30')).to.equal(true);
    expect(toNumber(r)).to.equal(0.3);
    expect(toDbString(r)).to.equal('0.30');
  });

  it('multiplies 3 × 0.10 to exactly 0.30, and by a rate without rounding until asked', () => {
    expect(toDbString(mul('0.10', 3))).to.equal('0.30');
    expect(toNumber(mul(0.1, 3))).to.equal(0.3);
    const tax = mul('150000', factor('0.11'));
    expect(tax.toString()).to.equal('16500');
    const odd = mul('19.99', '0.075');
    expect(odd.toString()).to.equal('1.49925');
    expect(toDbString(odd)).to.equal('1.50');
    expect(toDbString(mul('1234.56', '0.333333'))).to.equal('411.52');
  });

  it('sums many items exactly where floats drift', () => {
    const items = Array.from({ length: 10_000 }, () => '0.01');
    let float = 0;
    for (let i = 0; i < 10_000; i++) float += 0.01;
    expect(float).to.not.equal(100);
    expect(toDbString(sum(items))).to.equal('100.00');
    expect(toNumber(sum([19.99, '5.01', money('0.10'), -25]))).to.equal(0.1);
    expect(sum([]).toString()).to.equal('0');
    expect(toDbString(sub('100.00', '99.99'))).to.equal('0.01');
    expect(
      toDbString(
        sum(
          (function* () {
            for (let i = 1; i <= 1000; i++) yield `${i}.01`;
          })(),
        ),
      ),
    ).to.equal('500510.00');
  });

  it('rounds half-up (ties away from zero) to 2 decimals or to 0 for IDR', () => {
    const cases: [string, number, string][] = [
      ['1.005', 2, '1.01'],
      ['1.004', 2, '1'],
      ['2.675', 2, '2.68'],
      ['-1.005', 2, '-1.01'],
      ['-0.004', 2, '0'],
      ['0.125', 2, '0.13'],
      ['1500.5', 0, '1501'],
      ['1500.49', 0, '1500'],
      ['-2.5', 0, '-3'],
      ['999.995', 2, '1000'],
    ];
    for (const [v, scale, want] of cases) expect(round(v, scale).toString(), `${v} @${scale}`).to.equal(want);
    // 2.675 is 2.67499999... as a double; read from its shortest string it is exactly 2.675
    expect(toNumber(2.675)).to.equal(2.68);
    expect(toDbString('-0.001')).to.equal('0.00');
    expect(toNumber('-0.001')).to.equal(0);
    expect(Object.is(toNumber('-0.001'), -0)).to.equal(false);
    expect(toDbString('1500.5', 0)).to.equal('1501');
    expect(toNumber('12.30')).to.equal(12.3);
    expect(() => round('1', 3)).to.throw(RangeError);
  });

  it('compares exactly', () => {
    expect(compare('0.30', add(0.1, 0.2))).to.equal(0);
    expect(compare('10.01', 10)).to.equal(1);
    expect(compare(-1, '0')).to.equal(-1);
    expect(equals('1.10', 1.1)).to.equal(true);
    expect(equals('1.10', '1.11')).to.equal(false);
  });

  it('parses numbers and decimal strings, rejecting NaN, Infinity, malformed text and extra decimals', () => {
    expect(money('12.5').toString()).to.equal('12.5');
    expect(money(7).toString()).to.equal('7');
    expect(money('-0').toString()).to.equal('0');
    expect(money('1500', 0).toString()).to.equal('1500');
    expect(code(() => money(Number.NaN))).to.equal('INVALID_AMOUNT');
    expect(code(() => money(Number.POSITIVE_INFINITY))).to.equal('INVALID_AMOUNT');
    expect(code(() => money('Infinity'))).to.equal('INVALID_AMOUNT');
    expect(code(() => money('1e3'))).to.equal('INVALID_AMOUNT');
    expect(code(() => money(' 1'))).to.equal('INVALID_AMOUNT');
    expect(code(() => money('0x10'))).to.equal('INVALID_AMOUNT');
    expect(code(() => money(''))).to.equal('INVALID_AMOUNT');
    expect(code(() => money('1.005'))).to.equal('INVALID_AMOUNT');
    expect(code(() => money(0.1 + 0.2))).to.equal('INVALID_AMOUNT');
    expect(code(() => money('1500.5', 0))).to.equal('INVALID_AMOUNT');
    // null from an untyped caller: the runtime refusal is under test
    expect(code(() => money(null as unknown as string))).to.equal('INVALID_AMOUNT');
    expect(code(() => add('abc', 1))).to.equal('INVALID_AMOUNT');
    expect(code(() => mul(1, Number.NaN))).to.equal('INVALID_AMOUNT');
    expect(factor('0.123456').toString()).to.equal('0.123456');
    const err = (() => {
      try {
        money('x');
      } catch (e) {
        return e as MoneyError;
      }
    })();
    expect(err?.status).to.equal(422);
  });

  it('keeps within numeric(14,2): ±999999999999.99 accepted, one cent more rejected', () => {
    expect(MONEY_MAX).to.equal('999999999999.99');
    expect(money('999999999999.99').toString()).to.equal('999999999999.99');
    expect(money('-999999999999.99').toString()).to.equal('-999999999999.99');
    expect(toDbString('999999999999.99')).to.equal('999999999999.99');
    expect(toNumber('999999999999.99')).to.equal(999999999999.99);
    expect(code(() => money('1000000000000.00'))).to.equal('AMOUNT_OUT_OF_RANGE');
    expect(code(() => money('-1000000000000'))).to.equal('AMOUNT_OUT_OF_RANGE');
    // a sum may pass the bound in between, but never reach the column
    const big = add('999999999999.99', '0.01');
    expect(big.toString()).to.equal('1000000000000');
    expect(code(() => toDbString(big))).to.equal('AMOUNT_OUT_OF_RANGE');
    expect(code(() => toNumber(big))).to.equal('AMOUNT_OUT_OF_RANGE');
    expect(code(() => toDbString('999999999999.995'))).to.equal('AMOUNT_OUT_OF_RANGE');
    expect(toDbString(sub(big, '0.01'))).to.equal('999999999999.99');
  });

  it('round-trips numeric(14,2) through PostgreSQL unchanged', async () => {
    const values = ['0.30', '999999999999.99', '-999999999999.99', '0.01', '123456789.05'];
    const rows = await env.knex.raw(`SELECT v::numeric(14,2)::text AS t FROM unnest(?::text[]) v`, [
      values.map((v) => toDbString(v)),
    ]);
    expect(rows.rows.map((r: { t: string }) => r.t)).to.deep.equal(values);
  });
});
