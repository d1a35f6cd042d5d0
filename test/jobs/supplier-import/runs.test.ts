import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createStorage, putJson, readWhole, type Storage } from '../../../lib/storage/index.js';
import { runApply, runParse } from '../../../jobs/supplier-import/runs.js';
import { failureReason, recordFailure } from '../../../jobs/supplier-import.js';
import { parseFile } from '../../../jobs/supplier-import/parse-file.js';
import { ImportFileError, type ImportRow } from '../../../jobs/supplier-import/rows.js';
import { env } from '../../helpers/env.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { fakeJob } from '../fake-job.js';
import { makePdf, zipBomb } from './files.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';

const FIXTURES = path.join(import.meta.dirname, '../../fixtures/supplier-import');

/** A valid import row: blank fields null unless given. */
const importRow = (r: Pick<ImportRow, 'row' | 'name'> & Partial<ImportRow>): ImportRow => ({
  sku: null,
  category: null,
  unit: null,
  cost_price: null,
  sell_price: null,
  notes: null,
  valid: true,
  errors: {},
  ...r,
});

/** Issue 16 item 6: the `parse` and `apply` jobs with a fake Job (no worker), and the failure hook. */
describe('supplier import: parse and apply jobs, failure reasons', function () {
  this.timeout(120_000); // the first PDF loads pdfjs: 15-25 s on a loaded machine
  let f: TenantFixture;
  let supplierId: number;
  let storage: Storage;
  let dir: string;
  before(async () => {
    f = await makeTenant();
    storage = createStorage({ driver: 'local', root: path.join(env.dir, 'storage') });
    dir = await mkdtemp(path.join(tmpdir(), 'supplier-runs-'));
    [{ id: supplierId }] = await env
      .knex('suppliers')
      .insert({ tenant_id: f.tenant.id, name: 'PT Serat' })
      .returning('id');
    await env.knex('inventory_items').insert([
      { tenant_id: f.tenant.id, name: 'ONT ZTE F609', sku: 'ZTE-609', sell_price: 300000 },
      { tenant_id: f.tenant.id, name: 'Kabel Drop 1 Core', sku: null, sell_price: 2000 },
    ]);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const preview = async (content: Buffer) => {
    const key = `tenants/${f.tenant.id}/supplier-imports/t-${Math.random().toString(36).slice(2)}`;
    await storage.put(key, Readable.from([content]), { maxBytes: 1e8 });
    const now = new Date();
    const [{ id }] = await env
      .knex('supplier_import_previews')
      .insert({ tenant_id: f.tenant.id, supplier_id: supplierId, file_key: key, created_at: now, expires_at: now })
      .returning('id');
    return { id: id as number, key };
  };

  /** The preview's row with `rows` read from its rows file (storage driver). */
  const storedPreview = async (id: number) => {
    const row = await env.knex('supplier_import_previews').where('id', id).first();
    return { ...row, rows: JSON.parse((await readWhole(storage, row.rows_key)).toString('utf8')) };
  };

  it('parse: a comma CSV -> rows with actions and matches, counts, progress and logs; the upload removed', async () => {
    const p = await preview(await readFile(path.join(FIXTURES, 'prices-comma.csv')));
    const fake = fakeJob({ tenantId: f.tenant.id, supplierId, previewId: p.id });
    const counts = await runParse(fake.job, { knex: env.knex, storage });
    expect(counts).to.deep.equal({ total: 5, valid: 4, invalid: 1, create: 1, update: 2, skip: 2 });
    const row = await storedPreview(p.id);
    expect(row).to.include({ status: 'completed', file_key: null });
    expect(row.rows_key).to.equal(`tenants/${f.tenant.id}/supplier-import-previews/${p.id}-rows.json`);
    expect(row.rows.map((r: { action: string }) => r.action)).to.deep.equal([
      'update',
      'update',
      'create',
      'skip',
      'skip',
    ]);
    expect(row.rows[0].matching_item).to.include({ sku: 'ZTE-609', name: 'ONT ZTE F609' });
    expect(row.rows[1].matching_item).to.include({ name: 'Kabel Drop 1 Core' });
    expect(row.rows[4].errors).to.deep.equal({ name: 'is required' });
    expect(await storage.exists(p.key)).to.equal(false);
    expect(fake.logs[0]).to.match(/^reading \d+ bytes \(copied in \d+ ms\)$/);
    // where the time went: each phase's duration in the log
    expect(fake.logs.join('\n')).to.match(
      /read 5 rows in \d+ ms; matching\nmatched in \d+ ms; storing\ndone: .* \(stored in \d+ ms\)/,
    );
    expect(fake.progress.at(-1)).to.deep.equal({ rows_read: 5, done: true });
    // idempotent: a finished preview is not parsed again
    expect(await runParse(fake.job, { knex: env.knex, storage })).to.equal(null);
  });

  it('parse: a PDF price list (text lines) and the semicolon and Windows-1252 fixtures', async () => {
    const pdf = makePdf([
      [
        ['Nama', 'Kode', 'Harga Beli'],
        ['Patch Cord SC', 'PC-SC', '12.500'],
      ],
    ]);
    for (const [content, name, cost] of [
      [pdf, 'Patch Cord SC', '12500'],
      [await readFile(path.join(FIXTURES, 'prices-semicolon.txt')), 'ONT ZTE F609', '250000'],
      [await readFile(path.join(FIXTURES, 'prices-cp1252.txt')), 'Kabel café 50m', '75000'],
    ] as const) {
      const p = await preview(content);
      await runParse(fakeJob({ tenantId: f.tenant.id, supplierId, previewId: p.id }).job, { knex: env.knex, storage });
      const row = await storedPreview(p.id);
      expect(row.rows[0], name).to.include({ name, cost_price: cost, valid: true });
    }
  });

  it('apply: creates and updates with buy prices, no stock; a second run skips all', async () => {
    const items = [
      importRow({ row: 1, name: 'ONT ZTE F609', sku: 'zte-609', cost_price: '250000' }),
      importRow({
        row: 2,
        name: 'Splitter 1:16',
        sku: 'SP-16',
        category: 'Pasif',
        unit: 'pcs',
        cost_price: '90000',
        sell_price: '120000',
      }),
    ];
    const run = async () => {
      const now = new Date();
      const [{ id }] = await env
        .knex('supplier_imports')
        .insert({
          tenant_id: f.tenant.id,
          supplier_id: supplierId,
          items: JSON.stringify(items),
          created_at: now,
          expires_at: now,
        })
        .returning('id');
      const fake = fakeJob({ tenantId: f.tenant.id, supplierId, importId: id as number });
      return { result: await runApply(fake.job, { knex: env.knex }), id: id as number, fake };
    };
    const first = await run();
    expect(first.result).to.deep.equal({ created: 1, updated: 1, skipped: 0 });
    expect(await runApply(first.fake.job, { knex: env.knex })).to.deep.equal(first.result);
    expect((await run()).result).to.deep.equal({ created: 0, updated: 0, skipped: 2 });
    const prices = await env
      .knex('supplier_items as si')
      .join('inventory_items as i', 'i.id', 'si.item_id')
      .where('si.supplier_id', supplierId)
      .orderBy('i.name')
      .select('i.name', 'si.cost_price');
    expect(prices.map((p) => [p.name, p.cost_price])).to.deep.include.members([
      ['ONT ZTE F609', 250000],
      ['Splitter 1:16', 90000],
    ]);
    expect(
      await env.knex.schema
        .hasTable('inventory_stock')
        .then(async (has) => (has ? (await env.knex('inventory_stock').where('tenant_id', f.tenant.id)).length : 0)),
    ).to.equal(0);
  });

  it('apply: reads the rows from their file (items_key), removes it once applied; the hook removes it on failure', async () => {
    const rows = [importRow({ row: 1, name: 'Patch cord SC-UPC 3m', sku: 'PC-3M-F', cost_price: '12500' })];
    const newImport = async (n: number) => {
      const key = `tenants/${f.tenant.id}/supplier-imports/runs-test-${n}-items.json`;
      await putJson(storage, key, rows);
      const now = new Date();
      const [{ id }] = await env
        .knex('supplier_imports')
        .insert({ tenant_id: f.tenant.id, supplier_id: supplierId, items_key: key, created_at: now, expires_at: now })
        .returning('id');
      return { key, id: id as number };
    };
    const a = await newImport(1);
    const fake = fakeJob({ tenantId: f.tenant.id, supplierId, importId: a.id });
    expect(await runApply(fake.job, { knex: env.knex, storage })).to.deep.equal({ created: 1, updated: 0, skipped: 0 });
    expect(fake.logs[0]).to.equal('applying 1 rows');
    expect(fake.logs.at(-1)).to.match(/^done: 1 created, 0 updated, 0 skipped \(in \d+ ms\)$/);
    expect(await storage.exists(a.key)).to.equal(false);
    const item = await env.knex('inventory_items').where({ tenant_id: f.tenant.id, sku: 'PC-3M-F' }).first();
    expect(item.name).to.equal('Patch cord SC-UPC 3m');
    // a rerun of the finished import answers its stored result, without the file
    expect(await runApply(fake.job, { knex: env.knex, storage })).to.deep.equal({ created: 1, updated: 0, skipped: 0 });

    const b = await newImport(2);
    const job = { name: 'apply', data: { tenantId: f.tenant.id, supplierId, importId: b.id } };
    await recordFailure({ knex: env.knex, storage }, job, { name: 'Error', message: 'deadlock detected' });
    const failed = await env.knex('supplier_imports').where('id', b.id).first();
    expect(failed).to.include({ status: 'failed', items_key: null, error: 'the import could not be applied' });
    expect(await storage.exists(b.key)).to.equal(false);
  });

  it('hostile files are refused with a reason: zip bomb, encrypted PDF, 1,000-page PDF', async () => {
    const refusal = async (name: string, data: Buffer) => {
      const p = path.join(dir, name);
      await writeFile(p, data);
      const err = await parseFile(p).then(
        () => null,
        (e: Error) => e,
      );
      expect(err, name).to.be.instanceOf(ImportFileError);
      return err!.message;
    };
    expect(await refusal('bomb.xlsx', await zipBomb())).to.match(/ratio above 100:1/);
    expect(await refusal('locked.pdf', makePdf([[['Nama']]], { encrypted: true }))).to.equal('encrypted PDF');
    const pages = Array.from({ length: 1000 }, (_, i) => [['Nama'], [`x ${i}`]]);
    expect(await refusal('long.pdf', makePdf(pages))).to.equal('PDF has 1000 pages (at most 200)');
  });

  it('failure hook: records the reason (file, heap cap, time limit, other), removes the upload, keeps finished runs', async () => {
    expect(failureReason({ name: 'ImportFileError', message: 'the file is empty' })).to.equal('the file is empty');
    expect(failureReason({ name: 'Error', message: 'Unexpected exit code: null signal: SIGABRT' })).to.match(
      /more than the \d+ MB of memory/,
    );
    expect(failureReason({ name: 'Error', message: 'Unexpected exit code: 124 signal: null' })).to.match(
      /took longer than \d+ s/,
    );
    expect(failureReason({ name: 'Error', message: 'Unexpected exit code: null signal: SIGKILL' })).to.match(
      /took longer/,
    );
    expect(failureReason({ name: 'Error', message: 'connect ECONNREFUSED 10.0.0.1:5432' })).to.equal(
      'the file could not be read',
    );
    const p = await preview(Buffer.from('name\nx\n'));
    const job = { name: 'parse', data: { tenantId: f.tenant.id, supplierId, previewId: p.id } };
    await recordFailure({ knex: env.knex, storage }, job, {
      name: 'Error',
      message: 'Unexpected exit code: 134 signal: null',
    });
    const row = await env.knex('supplier_import_previews').where('id', p.id).first();
    expect(row).to.include({ status: 'failed', file_key: null });
    expect(row.error).to.match(/memory/);
    expect(await storage.exists(p.key)).to.equal(false);
    await recordFailure({ knex: env.knex, storage }, job, { name: 'ImportFileError', message: 'later' });
    expect((await env.knex('supplier_import_previews').where('id', p.id).first()).error).to.match(/memory/);
  });
});
