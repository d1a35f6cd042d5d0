import { expect } from 'chai';
import { requireTables, resetSchemaChecks, RECHECK_MS } from '../../../api/shared/schema-check.js';
import { describeError } from '../../../api/http/error-table.js';
import { env } from '../../helpers/env.js';

async function thrown(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  return null;
}

describe("api/shared/schema-check.ts (the spec's 503 schema-missing codes)", () => {
  const table = `tmp_schema_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
  beforeEach(() => resetSchemaChecks());
  after(() => env.knex.schema.dropTableIfExists(table));

  it('passes when every table exists', async () => {
    expect(await thrown(requireTables(env.knex, 'sales_schema_missing', ['tenants', 'users']))).to.equal(null);
  });

  it('answers 503 with the spec code, Retry-After and the missing table names; heals after the migration', async () => {
    const t0 = Date.now();
    const err = await thrown(requireTables(env.knex, 'attendance_schema_missing', ['tenants', table], t0));
    const http = describeError(err);
    expect(http).to.include({ status: 503, code: 'attendance_schema_missing' });
    expect(http.message).to.include(table).and.not.include('tenants,');
    expect(http.headers['Retry-After']).to.match(/^\d+$/);
    await env.knex.schema.createTable(table, (t) => t.increments('id'));
    // within RECHECK_MS the cached answer stands; after it the tables are looked up again
    expect(
      describeError(await thrown(requireTables(env.knex, 'attendance_schema_missing', ['tenants', table], t0 + 1)))
        .status,
    ).to.equal(503);
    expect(
      await thrown(requireTables(env.knex, 'attendance_schema_missing', ['tenants', table], t0 + RECHECK_MS + 1)),
    ).to.equal(null);
  });

  it('asks information_schema once per process for a complete table set', async () => {
    let queries = 0;
    const count = () => {
      queries += 1;
    };
    env.knex.on('query', count);
    try {
      for (let i = 0; i < 5; i += 1) await requireTables(env.knex, 'sales_schema_missing', ['tenants', 'users']);
    } finally {
      env.knex.removeListener('query', count);
    }
    expect(queries).to.equal(1);
  });
});
