import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import knexPkg from 'knex';
import type { Knex } from 'knex';
import { env } from '../helpers/env.js';
import { knexConfig } from '../../db/knex.js';
import { formatDocumentNumber, nextDocumentNumber, nextNumber } from '../../db/numbering.js';

const { knex: createKnexInstance } = knexPkg;
const uniq = () => randomBytes(4).toString('hex');

/** A promise that resolves once `n` callers have arrived, so the transactions really overlap. */
function barrier(n: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return () => {
    if (++arrived === n) open();
    return opened;
  };
}

describe('db/numbering.ts: per-tenant gap-free document numbers', () => {
  // its own pool, large enough for every transaction of a test to hold a connection at once
  let k: Knex;
  const table = `numbering_test_${uniq()}`;

  async function makeTenant(): Promise<number> {
    const slug = `num-${uniq()}`;
    const [row] = await env
      .knex('tenants')
      .insert({ slug, name: `Numbering ${slug}` })
      .returning('id');
    return row.id as number;
  }

  /**
   * Runs one transaction per entry of `plan` concurrently: each waits until all hold a connection,
   * takes a number, inserts a row with it, then commits or (plan entry `rollback`) rolls back.
   * Returns the numbers handed out, including those of rolled-back transactions.
   */
  async function run(plan: { tenantId: number; name: string; rollback?: boolean }[]): Promise<number[]> {
    const ready = barrier(plan.length);
    const taken: number[] = [];
    const results = await Promise.allSettled(
      plan.map((p, i) =>
        k.transaction(async (trx) => {
          await trx.raw('SELECT 1');
          await ready();
          const { n, number } = await nextDocumentNumber(trx, p.tenantId, p.name, 'INV');
          taken.push(n);
          // hold the counter lock a little, in varied order, so that the others queue on it
          await trx.raw('SELECT pg_sleep(?)', [(i % 5) / 1000]);
          await trx(table).insert({ tenant_id: p.tenantId, name: p.name, n, number });
          if (p.rollback) throw new Error('rolled back on purpose');
        }),
      ),
    );
    results.forEach((r, i) => {
      expect(r.status, `transaction ${i}`).to.equal(plan[i].rollback ? 'rejected' : 'fulfilled');
    });
    return taken;
  }

  const committed = async (tenantId: number, name: string) =>
    (await env.knex(table).where({ tenant_id: tenantId, name }).orderBy('n')).map((r) => ({
      n: r.n as number,
      number: r.number as string,
    }));

  before(async () => {
    k = createKnexInstance(knexConfig(env.databaseUrl, { min: 0, max: 45 }));
    await env.knex.schema.createTable(table, (t) => {
      t.integer('tenant_id').notNullable();
      t.string('name', 40).notNullable();
      t.integer('n').notNullable();
      t.string('number', 40).notNullable();
      t.unique(['tenant_id', 'name', 'n']);
    });
  });

  after(async () => {
    await env.knex.schema.dropTableIfExists(table);
    await k?.destroy();
  });

  it('formats document numbers with a zero-padded width', () => {
    expect(formatDocumentNumber('INV', 123)).to.equal('INV-000123');
    expect(formatDocumentNumber('TCK-', 7, 4)).to.equal('TCK-0007');
    expect(formatDocumentNumber('SO', 1234567, 6)).to.equal('SO-1234567');
    expect(formatDocumentNumber('', 42, 3)).to.equal('042');
    expect(() => formatDocumentNumber('INV', 0)).to.throw(RangeError);
    expect(() => formatDocumentNumber('INV', 1.5)).to.throw(RangeError);
    expect(() => formatDocumentNumber('INV', 1, 0)).to.throw(RangeError);
  });

  it('refuses to run outside a transaction and checks its arguments', async () => {
    const tenantId = await makeTenant();
    let err: unknown;
    try {
      // a plain Knex posing as a transaction: the runtime check refusing it is under test
      await nextNumber(env.knex as unknown as Knex.Transaction, tenantId, 'invoice');
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(TypeError);
    expect((err as Error).message).to.match(/inside a transaction/);
    for (const [t, name] of [
      [0, 'invoice'],
      [tenantId, ''],
      [tenantId, 'x'.repeat(41)],
    ] as const) {
      let e2: unknown;
      await env.knex.transaction(async (trx) => {
        try {
          await nextNumber(trx, t, name);
        } catch (e) {
          e2 = e;
        }
      });
      expect(e2, `${t} ${name}`).to.be.instanceOf(TypeError);
    }
  });

  it('numbering under 20 concurrent inserts (contiguous, no duplicates)', async () => {
    const tenantId = await makeTenant();
    const taken = await run(Array.from({ length: 20 }, () => ({ tenantId, name: 'invoice' })));
    expect([...taken].sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i + 1));
    const rows = await committed(tenantId, 'invoice');
    expect(rows.map((r) => r.n)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(rows[0].number).to.equal('INV-000001');
    expect(rows[19].number).to.equal('INV-000020');
  });

  it('stays gap-free when some of 20 concurrent transactions roll back (their numbers are reissued)', async () => {
    const tenantId = await makeTenant();
    const plan = Array.from({ length: 20 }, (_, i) => ({ tenantId, name: 'invoice', rollback: i % 3 === 0 }));
    const taken = await run(plan);
    const commits = plan.filter((p) => !p.rollback).length;
    expect(commits).to.equal(13);
    const rows = await committed(tenantId, 'invoice');
    expect(rows.map((r) => r.n)).to.deep.equal(Array.from({ length: commits }, (_, i) => i + 1));
    // rolled-back numbers were handed out again, so the 20 transactions saw repeated values
    expect(taken).to.have.length(20);
    // (only the last transaction to take a number can have rolled back a value nobody reused)
    expect(new Set(taken).size).to.be.at.most(commits + 1);
    const counter = await env.knex('tenant_counters').where({ tenant_id: tenantId, name: 'invoice' }).first();
    expect(Number(counter.value)).to.equal(commits);
    // the next document continues right after the last committed one
    const next = await env.knex.transaction((trx) => nextNumber(trx, tenantId, 'invoice'));
    expect(next).to.equal(commits + 1);
  });

  it('a rolled-back number is the next one taken', async () => {
    const tenantId = await makeTenant();
    await env.knex.transaction((trx) => nextNumber(trx, tenantId, 'ticket'));
    let lost = 0;
    const outcome = await env.knex
      .transaction(async (trx) => {
        lost = await nextNumber(trx, tenantId, 'ticket');
        throw new Error('abandon');
      })
      .catch((e: Error) => e.message);
    expect(outcome).to.equal('abandon');
    expect(lost).to.equal(2);
    const n = await env.knex.transaction((trx) => nextNumber(trx, tenantId, 'ticket'));
    expect(n).to.equal(2);
  });

  it('keeps separate sequences per tenant and per counter name, concurrently', async () => {
    const [a, b] = [await makeTenant(), await makeTenant()];
    const plan = Array.from({ length: 40 }, (_, i) => ({
      tenantId: i % 2 ? a : b,
      name: i % 4 < 2 ? 'invoice' : 'quote',
      rollback: i % 7 === 3,
    }));
    await run(plan);
    for (const tenantId of [a, b]) {
      for (const name of ['invoice', 'quote']) {
        const commits = plan.filter((p) => p.tenantId === tenantId && p.name === name && !p.rollback).length;
        expect(commits, `${tenantId} ${name}`).to.be.greaterThan(5);
        const rows = await committed(tenantId, name);
        const want = Array.from({ length: commits }, (_, i) => i + 1);
        expect(
          rows.map((r) => r.n),
          `${tenantId} ${name}`,
        ).to.deep.equal(want);
      }
    }
  });
});
