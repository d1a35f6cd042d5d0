import { expect } from 'chai';
import { Readable } from 'node:stream';
import http from 'node:http';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { createLogger } from '../../../lib/logger.js';
import { ManualClock } from '../../../lib/clock.js';
import { createQueues } from '../../../jobs/queues.js';
import { startWorkers, type WorkerHandle } from '../../../workers/main.js';
import { recordFailure } from '../../../jobs/supplier-import.js';
import { previewAnswer } from '../../../api/supplier-import/service.js';
import { putJson, type Storage } from '../../../lib/storage/index.js';
import type { Queue } from 'bullmq';
import { fileURLToPath } from 'node:url';
import { makePdf, priceRows, priceXlsx, zipBomb } from '../../jobs/supplier-import/files.js';

const FIXTURES = path.join(import.meta.dirname, '../../fixtures/supplier-import');

/**
 * Issue 16 item 6 through the API and a real worker running the sandboxed processor
 * (workers/sandboxed/supplier-import.ts in a child with a 256 MB heap and a 10 s limit here; the
 * 50,001-row refusal is tested in-process: test/jobs/supplier-import/parse.test.ts).
 */
describe('/api/suppliers/{supplier}/items import (real worker, sandboxed parse)', function () {
  this.timeout(600_000);
  let app: TestApp;
  let worker: WorkerHandle;
  let f: TenantFixture;
  let supplierId: number;
  const clock = new ManualClock();
  const opts = { waitMs: 150_000, clock };
  let faultFile: string;

  before(async () => {
    faultFile = path.join(env.dir, `supplier-import-fault-${process.pid}`);
    await writeFile(faultFile, '');
    app = await startTestApp({ supplierImport: opts });
    worker = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      prefix: app.queues.prefix,
      queues: ['supplier-import'],
      storage: app.storage,
      logger: createLogger('silent'),
      registry: {
        'supplier-import': {
          processor: fileURLToPath(new URL('../../../workers/sandboxed/supplier-import.ts', import.meta.url)),
          concurrency: 1,
          fork: {
            execArgv: ['--max-old-space-size=256'],
            env: {
              ...process.env,
              DATABASE_URL: env.databaseUrl,
              DATA_DIR: env.dir,
              S3_BUCKET: '',
              SUPPLIER_IMPORT_TIME_LIMIT_MS: '10000',
              SUPPLIER_IMPORT_FAULT_FILE: faultFile,
            },
          },
          onFailed: (job, err) => recordFailure({ knex: env.knex, storage: app.storage }, job, err),
        },
      },
    });
    f = await makeTenant();
    [{ id: supplierId }] = await env
      .knex('suppliers')
      .insert({ tenant_id: f.tenant.id, name: 'PT Serat' })
      .returning('id');
    await env.knex('inventory_items').insert([
      { tenant_id: f.tenant.id, name: 'ONT ZTE F609', sku: 'ZTE-609', sell_price: 300000 },
      { tenant_id: f.tenant.id, name: 'Kabel Drop 1 Core', sku: null, sell_price: 2000 },
    ]);
  });
  afterEach(() => writeFile(faultFile, ''));
  after(async () => {
    await worker?.close();
  });

  const base = (s = supplierId) => `/api/suppliers/${s}/items`;
  const upload = async (data: Buffer, name = 'prices.csv', token = f.adminToken, s = supplierId, a = app) => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(data)]), name);
    const res = await fetch(`${a.url}${base(s)}/import-preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      body: form,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, text, headers: res.headers };
  };
  const until = async <T>(what: string, fn: () => Promise<T | null>, ms = 120_000): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (v) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const uploads = async () =>
    readdir(path.join(env.dir, 'storage', 'tenants', String(f.tenant.id), 'supplier-imports')).catch(() => []);
  const lastPreview = () =>
    env.knex('supplier_import_previews').where('tenant_id', f.tenant.id).orderBy('id', 'desc').first();

  it('previews a CSV (200 within the wait), polls it, imports the selected rows, and a second import skips all', async () => {
    const res = await upload(await readFile(path.join(FIXTURES, 'prices-comma.csv')));
    expect(res.status, res.text).to.equal(200);
    const { preview_id, counts, rows } = res.body.data;
    expect(counts).to.deep.equal({ total: 5, valid: 4, invalid: 1, create: 1, update: 2, skip: 2 });
    expect(rows.map((r: { action: string }) => r.action)).to.deep.equal(['update', 'update', 'create', 'skip', 'skip']);
    expect(rows[0].matching_item).to.include({ sku: 'ZTE-609' });
    // the stored rows are streamed with their exact length
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(Number(res.headers.get('content-length'))).to.equal(Buffer.byteLength(res.text));
    const poll = await app.request('GET', `${base()}/import-previews/${preview_id}`, { token: f.adminToken });
    expect(poll.status).to.equal(200);
    expect(poll.body.data.counts).to.deep.equal(counts);
    expect(poll.body.data.rows).to.deep.equal(rows);
    expect(await uploads()).to.deep.equal([]);

    const items = rows.map((r: Record<string, unknown>) => ({
      selected: r.action !== 'skip',
      name: r.name,
      sku: r.sku,
      category: r.category,
      unit: r.unit,
      notes: r.notes,
      cost_price: r.cost_price === null ? null : Number(r.cost_price),
      sell_price: r.sell_price === null ? null : Number(r.sell_price),
    }));
    const first = await app.request('POST', `${base()}/import`, { token: f.adminToken, body: { items } });
    expect(first.status, first.text).to.equal(200);
    expect(first.body.data).to.include({ status: 'completed', created: 1, updated: 2, skipped: 0 });
    const again = await app.request('POST', `${base()}/import`, { token: f.adminToken, body: { items } });
    expect(again.body.data).to.include({ created: 0, updated: 0, skipped: 3 });
    // the selected rows went to a file of the storage driver (not the run row), removed once applied
    const run = await env.knex('supplier_imports').where('id', first.body.data.import_id).first();
    expect(run.items).to.equal(null);
    expect(run.items_key).to.match(new RegExp(`^tenants/${f.tenant.id}/supplier-imports/[0-9a-f-]{36}-items\\.json$`));
    expect(await app.storage.exists(run.items_key)).to.equal(false);
    expect(await uploads()).to.deep.equal([]);
    const read = await app.request('GET', `${base()}/imports/${first.body.data.import_id}`, { token: f.adminToken });
    expect(read.status).to.equal(200);
    expect(read.body.data).to.include({ created: 1, updated: 2, skipped: 0 });
    const cost = await env
      .knex('supplier_items as si')
      .join('inventory_items as i', 'i.id', 'si.item_id')
      .where({ 'si.supplier_id': supplierId, 'i.sku': 'SP-8' })
      .first('si.cost_price');
    expect(Number(cost.cost_price)).to.equal(45000);
  });

  it('202 when the wait is over, then polled to 200 (preview of an XLSX and an import)', async () => {
    opts.waitMs = 0;
    try {
      const res = await upload(await priceXlsx(priceRows(300)), 'list.bin');
      expect(res.status, res.text).to.equal(202);
      const { preview_id, job_id } = res.body.data;
      expect(job_id).to.equal(`supplier-import-preview-${preview_id}`);
      const done = await until('the preview', async () => {
        const r = await app.request('GET', `${base()}/import-previews/${preview_id}`, { token: f.adminToken });
        return r.status === 200 ? r : null;
      });
      expect(done.body.data.counts).to.include({ total: 300, create: 300 });
      const started = await app.request('POST', `${base()}/import`, {
        token: f.adminToken,
        body: { items: [{ name: 'Patch Cord SC', sku: 'PC-SC', cost_price: 12500 }] },
      });
      expect(started.status).to.equal(202);
      const applied = await until('the import', async () => {
        const r = await app.request('GET', `${base()}/imports/${started.body.data.import_id}`, { token: f.adminToken });
        return r.status === 200 ? r : null;
      });
      expect(applied.body.data).to.include({ created: 1, updated: 0, skipped: 0 });
    } finally {
      opts.waitMs = 150_000;
    }
  });

  it('import: an invalid selected item is 422 items.N.field and nothing is written; unselected ones are ignored', async () => {
    const before = await env.knex('inventory_items').where('tenant_id', f.tenant.id).count<{ count: string }[]>();
    const res = await app.request('POST', `${base()}/import`, {
      token: f.adminToken,
      body: {
        items: [
          { name: 'Fine item', cost_price: 1 },
          { name: 'x'.repeat(151), sku: 's'.repeat(81) },
          { name: '', selected: false },
          { name: 'Bad price', cost_price: -1, sell_price: 0.001 },
        ],
      },
    });
    expect(res.status).to.equal(422);
    expect(Object.keys(res.body.errors).sort()).to.deep.equal([
      'items.1.name',
      'items.1.sku',
      'items.3.cost_price',
      'items.3.sell_price',
    ]);
    const after = await env.knex('inventory_items').where('tenant_id', f.tenant.id).count<{ count: string }[]>();
    expect(after[0].count).to.equal(before[0].count);
    const ok = await app.request('POST', `${base()}/import`, {
      token: f.adminToken,
      body: { items: [{ name: 'y'.repeat(150), cost_price: 1 }] },
    });
    expect(ok.body.data).to.include({ created: 1 });
  });

  it('hostile files: 422 errors.file with the reason, the job failed once, the upload removed, the worker alive', async () => {
    const wb = await priceXlsx(priceRows(5));
    const cases: [string, Buffer, string, RegExp, string?][] = [
      ['binary named .csv', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3]), 'x.csv', /unsupported file type/],
      ['empty file', Buffer.alloc(0), 'empty.csv', /the file is empty/],
      ['no name column', Buffer.from('sku,cost\nA,1\n'), 'a.csv', /no name column/],
      ['zip bomb', await zipBomb(), 'bomb.xlsx', /100 MB or a ratio above 100:1/],
      ['truncated XLSX', wb.subarray(0, Math.floor(wb.length / 2)), 't.xlsx', /corrupt or truncated XLSX/],
      ['encrypted PDF', makePdf([[['Nama']]], { encrypted: true }), 'e.pdf', /encrypted PDF/],
      ['1,000-page PDF', makePdf(Array.from({ length: 1000 }, () => [['Nama'], ['x']])), 'l.pdf', /1000 pages/],
      ['heap cap', Buffer.from('name\nx\n'), 'h.csv', /more than the \d+ MB of memory/, 'heap'],
      ['time limit (waiting)', Buffer.from('name\nx\n'), 'w.csv', /took longer than/, 'hang'],
      ['time limit (busy loop)', Buffer.from('name\nx\n'), 's.csv', /took longer than/, 'spin'],
    ];
    for (const [what, data, name, reason, fault] of cases) {
      await writeFile(faultFile, fault ?? '');
      const before = await lastPreview();
      const res = await upload(data, name);
      expect(res.status, `${what}: ${res.text}`).to.equal(422);
      expect(res.body.errors.file[0], what).to.match(reason);
      const row = await lastPreview();
      if (row?.id !== before?.id) {
        expect(row, what).to.include({ status: 'failed', file_key: null });
        const job = await app.queues.get('supplier-import').getJob(`supplier-import-preview-${row.id}`);
        expect(await job!.getState(), what).to.equal('failed');
        expect(job!.attemptsMade, what).to.equal(1);
      }
      expect(await uploads(), what).to.deep.equal([]);
    }
    await writeFile(faultFile, '');
    const alive = await upload(Buffer.from('nama\nStill alive\n'));
    expect(alive.status, alive.text).to.equal(200);
  });

  /** Inserts a completed one-row preview (counts {total: 1}) with `rows` (jsonb) or `rows_key`; its id. */
  const completedPreview = async (where: { rows: string } | { rows_key: string }): Promise<number> => {
    const now = clock.now();
    const [{ id }] = await env
      .knex('supplier_import_previews')
      .insert({
        tenant_id: f.tenant.id,
        supplier_id: supplierId,
        status: 'completed',
        counts: JSON.stringify({ total: 1 }),
        ...where,
        created_at: now,
        expires_at: new Date(now.getTime() + 3600_000),
      })
      .returning('id');
    return id;
  };

  it('a preview finished before its rows went to a file answers the rows of its `rows` column', async () => {
    const rows = [{ row: 1, name: 'Old row', action: 'create', valid: true }];
    const id = await completedPreview({ rows: JSON.stringify(rows) });
    const res = await app.request('GET', `${base()}/import-previews/${id}`, { token: f.adminToken });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.deep.equal({ preview_id: id, status: 'completed', counts: { total: 1 }, rows });
  });

  it("a completed preview's answer streams its rows file with its length; unknown when the driver has no size", async () => {
    const rows = [{ row: 1, name: 'Streamed row', action: 'create', valid: true }];
    const rowsKey = `tenants/${f.tenant.id}/supplier-import-previews/stream-test-rows.json`;
    await putJson(app.storage, rowsKey, rows);
    const id = await completedPreview({ rows_key: rowsKey });
    const text = async (r: Readable) => Buffer.concat(await r.toArray()).toString('utf8');
    const expected = { data: { preview_id: id, status: 'completed', counts: { total: 1 }, rows } };
    // the queue is read only while a preview runs
    const queue = {} as Queue;
    const known = await previewAnswer(f.scope, queue, app.storage, supplierId, id, clock);
    const body = await text(known.json!.stream);
    expect(JSON.parse(body)).to.deep.equal(expected);
    expect(known.json!.length).to.equal(Buffer.byteLength(body));
    // a driver that reports no size (S3 without ContentLength): no length, the whole body still
    const sizeless: Storage = { ...app.storage, get: async (k) => ({ ...(await app.storage.get(k)), size: 0 }) };
    const unknown = await previewAnswer(f.scope, queue, sizeless, supplierId, id, clock);
    expect(unknown.json!.length).to.equal(undefined);
    expect(JSON.parse(await text(unknown.json!.stream))).to.deep.equal(expected);
  });

  it('413 above 20 MB, 404 for another tenant, expired after 24 h, 503 with the upload removed when Redis is down', async () => {
    const huge = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const { port } = new URL(app.url);
      const req = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `${base()}/import-preview`,
        headers: {
          authorization: `Bearer ${f.adminToken}`,
          'content-type': 'multipart/form-data; boundary=x',
          'content-length': String(21 * 1024 * 1024),
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.write('--x\r\n');
    });
    expect(huge.status).to.equal(413);
    expect(JSON.parse(huge.body).code).to.equal('PAYLOAD_TOO_LARGE');
    const other = await makeTenant();
    expect((await upload(Buffer.from('name\nx\n'), 'a.csv', other.adminToken)).status).to.equal(404);
    const mine = await upload(Buffer.from('name\nx\n'));
    expect(mine.status).to.equal(200);
    const path1 = `${base()}/import-previews/${mine.body.data.preview_id}`;
    expect((await app.request('GET', path1, { token: other.adminToken })).status).to.equal(404);
    const { rows_key: rowsKey } = await env
      .knex('supplier_import_previews')
      .where('id', mine.body.data.preview_id)
      .first();
    expect(await app.storage.exists(rowsKey)).to.equal(true);
    // an import whose job never ran (its rows' file still there), as old as the preview
    const itemsKey = `tenants/${f.tenant.id}/supplier-imports/expiry-test-items.json`;
    await app.storage.put(itemsKey, Readable.from([Buffer.from('[]')]), { maxBytes: 100 });
    const [stale] = await env
      .knex('supplier_imports')
      .insert({
        tenant_id: f.tenant.id,
        supplier_id: supplierId,
        items_key: itemsKey,
        created_at: clock.now(),
        expires_at: new Date(clock.now().getTime() + 24 * 3600 * 1000),
      })
      .returning('id');
    clock.advance(24 * 3600 * 1000 + 1);
    expect((await app.request('GET', path1, { token: f.adminToken })).status).to.equal(404);
    // the next preview removes the expired one with its rows file, and the expired import with its rows
    expect((await upload(Buffer.from('name\ny\n'))).status).to.equal(200);
    expect(await env.knex('supplier_import_previews').where('id', mine.body.data.preview_id).first()).to.equal(
      undefined,
    );
    expect(await app.storage.exists(rowsKey)).to.equal(false);
    expect(await env.knex('supplier_imports').where('id', stale.id).first()).to.equal(undefined);
    expect(await app.storage.exists(itemsKey)).to.equal(false);

    const down = await startTestApp();
    const dead = createQueues('redis://127.0.0.1:1', { prefix: `{supplier-dead-${process.pid}}` });
    registerCleanup(() => dead.close());
    Object.assign(down.queues, { get: dead.get.bind(dead) });
    const count = async () => (await env.knex('supplier_import_previews').where('tenant_id', f.tenant.id)).length;
    const n = await count();
    const refused = await upload(Buffer.from('name\nx\n'), 'a.csv', f.adminToken, supplierId, down);
    expect(refused.status).to.equal(503);
    expect(refused.body.code).to.equal('QUEUE_UNAVAILABLE');
    expect(await count()).to.equal(n);
    expect(await uploads()).to.deep.equal([]);
    // an import refused the same way leaves neither its run nor its rows' file
    const imports = async () => (await env.knex('supplier_imports').where('tenant_id', f.tenant.id)).length;
    const m = await imports();
    const item = { name: 'Kabel drop 1 core', sku: 'DROP-1C', cost_price: 1500 };
    const refusedImport = await down.request('POST', `${base()}/import`, {
      token: f.adminToken,
      body: { items: [item] },
    });
    expect(refusedImport.status).to.equal(503);
    expect(refusedImport.body.code).to.equal('QUEUE_UNAVAILABLE');
    expect(await imports()).to.equal(m);
    expect(await uploads()).to.deep.equal([]);
  });
});
