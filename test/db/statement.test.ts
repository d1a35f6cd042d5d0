import { expect } from 'chai';
import pg from 'pg';
import { env } from '../helpers/env.js';
import { makeTenant } from '../helpers/fixtures.js';
import { isoFromPgTimestamptz, runStatement, statement } from '../../db/statement.js';
import { tenantStatement, TenantScope } from '../../db/tenant-scope.js';

const dateParser = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (s: string) => Date;

describe('db/statement.ts: named statements on the knex pool', () => {
  it('formats timestamptz text exactly as the Date parser + toISOString() do, in UTC and in other time zones', async () => {
    // fractions with and without trailing zeros (PostgreSQL trims them), whole seconds, years < 1000
    const values = [
      '2026-11-21 06:33:13.317123+00',
      '2026-11-21 06:33:13.029+00',
      '2026-11-21 06:33:13.03+00',
      '2026-11-21 06:33:13.1+00',
      '2026-11-21 06:33:13+00',
      '2026-11-21 06:33:13.000001+00',
      '2026-11-21 06:33:13.999999+00',
      '0999-01-01 00:00:00.5+00',
      '2026-11-21 13:33:13.317123+07',
      '2026-11-21 01:03:13.25-05:30',
      '2026-11-21 06:33:13.317+05:45',
    ];
    // every millisecond with whole-millisecond input, where 1000 * parseFloat() is inexact
    for (let ms = 0; ms < 1000; ms++)
      values.push(`2026-01-02 03:04:05.${String(ms).padStart(3, '0').replace(/0+$/, '') || '0'}+00`);
    for (const v of values) expect(isoFromPgTimestamptz(v), v).to.equal(dateParser(v).toISOString());
    expect(isoFromPgTimestamptz('2026-11-21 06:33:13.029+00')).to.match(/^2026-11-21T06:33:13\.0\d\dZ$/);
  });

  it('returns timestamptz as ISO strings from PostgreSQL itself, matching the default Date path, whatever the session time zone', async () => {
    const conn = await env.knex.client.acquireConnection();
    try {
      for (const tz of ['UTC', 'Asia/Jakarta', 'America/St_Johns']) {
        await conn.query(`SET TIME ZONE '${tz}'`);
        // 2,000 instants with microsecond digits all over the place, whole milliseconds, whole seconds and null
        const sql = `SELECT timestamptz '2026-01-02 03:04:05+00' + g * interval '1 millisecond' + (g * 7919 % 1000) * interval '1 microsecond' AS t
          FROM generate_series(0, 1999) g
          UNION ALL VALUES (timestamptz '2026-01-02 03:04:05.029+00'), (timestamptz '2026-01-02 03:04:05+00'), (NULL::timestamptz)`;
        const asDate = (await conn.query(sql)).rows.map((r: { t: Date | null }) => (r.t ? r.t.toISOString() : null));
        const types = {
          getTypeParser: (oid: number) => (oid === 1184 ? isoFromPgTimestamptz : pg.types.getTypeParser(oid)),
        };
        const asIso = (await conn.query({ text: sql, types })).rows.map((r: { t: string | null }) => r.t);
        expect(asIso, tz).to.deep.equal(asDate);
      }
    } finally {
      await conn.query('RESET TIME ZONE');
      await env.knex.client.releaseConnection(conn);
    }
  });

  it("runs a statement, emits knex's query event, and runs inside a transaction on its connection", async () => {
    const stmt = statement('test_statement_echo', 'SELECT $1::int AS n, now() AS at');
    const seen: string[] = [];
    const listener = (q: { sql: string }) => seen.push(q.sql);
    env.knex.on('query', listener);
    try {
      const [row] = await runStatement<{ n: number; at: Date }>(env.knex, stmt, [41]);
      expect(row.n).to.equal(41);
      expect(row.at).to.be.instanceOf(Date);
      const [iso] = await runStatement<{ at: string }>(env.knex, stmt, [1], { timestamps: 'iso' });
      expect(iso.at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    } finally {
      env.knex.off('query', listener);
    }
    expect(seen).to.deep.equal([stmt.text, stmt.text]);
    const probe = statement('test_statement_txid', 'SELECT txid_current_if_assigned()::text AS x');
    await env.knex.transaction(async (trx) => {
      await trx.raw('SELECT txid_current()');
      const inside = await trx.raw('SELECT txid_current_if_assigned()::text AS x');
      const [viaStatement] = await runStatement<{ x: string }>(trx, probe, []);
      expect(viaStatement.x).to.equal(inside.rows[0].x);
    });
    const [outside] = await runStatement<{ x: string | null }>(env.knex, probe, []);
    expect(outside.x).to.equal(null);
  });

  it("rejects with the driver's error (code kept) and leaves the connection usable", async () => {
    const divide = statement('test_statement_divide', 'SELECT 1 / $1::int AS q');
    let err: unknown;
    try {
      await runStatement(env.knex, divide, [0]);
    } catch (e) {
      err = e;
    }
    expect((err as { code?: string })?.code).to.equal('22012');
    const rows = await Promise.all(
      Array.from({ length: 12 }, (_, i) => runStatement<{ q: number }>(env.knex, divide, [i + 1])),
    );
    expect(rows.map((r) => r[0].q)).to.deep.equal([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('refuses a second definition of a name with another text', () => {
    statement('test_statement_twice', 'SELECT 1');
    expect(statement('test_statement_twice', 'SELECT 1').text).to.equal('SELECT 1');
    expect(() => statement('test_statement_twice', 'SELECT 2')).to.throw(/defined twice/);
  });
});

describe('db/tenant-scope.ts: tenant statements', () => {
  it('refuses a statement that reads a tenant table not pinned to $1', () => {
    expect(() => tenantStatement('t_bad_1', 'SELECT c.id FROM customers c WHERE c.status = $2')).to.throw(
      /customers c is not confined/,
    );
    expect(() =>
      tenantStatement(
        't_bad_2',
        'SELECT c.id FROM customers c LEFT JOIN packages p ON p.id = c.package_id WHERE c.tenant_id = $1',
      ),
    ).to.throw(/packages p is not confined/);
    expect(() => tenantStatement('t_bad_3', 'SELECT c.id FROM customers c WHERE c.tenant_id = $2')).to.throw(
      /not confined/,
    );
    expect(() => tenantStatement('t_bad_4', 'SELECT id FROM customers WHERE tenant_id = $1')).to.throw(/not confined/);
    expect(() => tenantStatement('t_bad_5', 'SELECT u.id FROM users u')).to.throw(/reads no tenant table/);
    const ok = tenantStatement(
      't_ok_1',
      `SELECT c.id, p.name FROM customers c
      LEFT JOIN packages p ON p.id = c.package_id AND p.tenant_id = c.tenant_id WHERE c.tenant_id = $1 ORDER BY c.id`,
    );
    expect(ok.tenantBound).to.equal(true);
  });

  it("binds the scope's tenant as $1: another tenant's rows are out of reach", async () => {
    const a = await makeTenant();
    const b = await makeTenant();
    await env.knex('packages').insert([
      { tenant_id: a.tenant.id, name: 'A plan', price: 1, speed_down_kbps: 1, speed_up_kbps: 1 },
      { tenant_id: b.tenant.id, name: 'B plan', price: 1, speed_down_kbps: 1, speed_up_kbps: 1 },
    ]);
    const byName = tenantStatement(
      't_packages_by_name',
      'SELECT k.name FROM packages k WHERE k.tenant_id = $1 AND k.name LIKE $2 ORDER BY k.id',
    );
    expect(await new TenantScope(env.knex, a.tenant.id).run(byName, ['% plan'])).to.deep.equal([{ name: 'A plan' }]);
    expect(await new TenantScope(env.knex, b.tenant.id).run(byName, ['A%'])).to.deep.equal([]);
  });
});
