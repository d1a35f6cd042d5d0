import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { assertLedgerBalanced, makeItem, makeLocation, serial, stockIn, stockOf } from './support.js';

/** Issue 16 item 4: inventory requests, their states, visibility, processing through the ledger. */
describe('/api/inventory/requests', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let tech: { id: number; token: string };
  let tech2: { id: number; token: string };
  let warehouse: number;
  let pop: number;
  let van: number; // tech's own stock
  let cable: number; // quantity item with plenty of stock
  let ticketId: number;

  const create = (body: Record<string, unknown>, token = tech.token) =>
    app.request('POST', '/api/inventory/requests', { token, body });
  const act = (id: number, action: string, body?: unknown, token = a.adminToken) =>
    app.request('POST', `/api/inventory/requests/${id}/${action}`, { token, body });
  const stockOut = (items: unknown[], extra: Record<string, unknown> = {}, token = tech.token) =>
    create({ type: 'stock_out', source_location_id: warehouse, items, ...extra }, token);

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    tech = await makeUser(a.tenant.id, 'technician');
    tech2 = await makeUser(a.tenant.id, 'technician');
    warehouse = await makeLocation(app, a.adminToken, { name: 'Gudang Utama' });
    pop = await makeLocation(app, a.adminToken, { name: 'POP Dago', type: 'pop' });
    van = await makeLocation(app, a.adminToken, { name: 'Van', type: 'technician', holder_user_id: tech.id });
    cable = await makeItem(app, a.adminToken, { name: 'Drop cable', unit: 'm', item_type: 'material' });
    await stockIn(app, a.adminToken, cable, warehouse, 100000);
    ticketId = (await seedBasics(a)).ticketId;
  });
  afterEach(async () => {
    expect(await assertLedgerBalanced(a.tenant.id)).to.be.greaterThan(0);
  });

  it('creates a pending request numbered IR-000001.. for a ticket (201, history), a draft with draft: true', async () => {
    const res = await stockOut([{ item_id: cable, quantity: 25.5, note: 'for the drop' }], {
      reference_type: 'ticket',
      reference_id: ticketId,
      note: 'Installation',
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const d = res.body.data;
    expect(d.number).to.match(/^IR-\d{6}$/);
    expect(d).to.include({ type: 'stock_out', status: 'pending', reference_type: 'ticket', reference_id: ticketId });
    expect(d.source_location).to.deep.equal({ id: warehouse, name: 'Gudang Utama', type: 'warehouse' });
    expect(d.requested_by.id).to.equal(tech.id);
    expect(d.items).to.have.length(1);
    expect(d.items[0]).to.include({ item_id: cable, quantity: 25.5, note: 'for the drop' });
    expect(d.history.map((h: { action: string; to_status: string }) => [h.action, h.to_status])).to.deep.equal([
      ['created', 'pending'],
    ]);
    const draft = await stockOut([{ item_id: cable, quantity: 1 }], { draft: true });
    expect(draft.body.data.status).to.equal('draft');
    const n = (x: string) => Number(x.slice(3));
    expect(n(draft.body.data.number)).to.equal(n(d.number) + 1);
  });

  it('refuses bad bodies with 422 field errors and foreign ids as 422, creating nothing', async () => {
    const foreignLoc = await makeLocation(app, b.adminToken);
    const foreignItem = await makeItem(app, b.adminToken);
    const onu = await makeItem(app, a.adminToken, { tracking: 'serial', item_type: 'device' });
    const count = async () =>
      Number((await env.knex('inventory_requests').where({ tenant_id: a.tenant.id }).count('* as n'))[0].n);
    const before = await count();
    const cases: [Record<string, unknown>, string, string?][] = [
      [{ type: 'stock_out', source_location_id: warehouse, items: [] }, 'items'],
      [
        { type: 'stock_out', source_location_id: foreignLoc, items: [{ item_id: cable, quantity: 1 }] },
        'source_location_id',
      ],
      [
        { type: 'stock_out', source_location_id: warehouse, items: [{ item_id: foreignItem, quantity: 1 }] },
        'items.0.item_id',
      ],
      [
        {
          type: 'stock_out',
          source_location_id: warehouse,
          items: [
            { item_id: cable, quantity: 1 },
            { item_id: cable, quantity: 2 },
          ],
        },
        'items.1.item_id',
      ],
      [
        { type: 'stock_out', source_location_id: warehouse, items: [{ item_id: cable, quantity: 0 }] },
        'items.0.quantity',
      ],
      [
        { type: 'stock_out', source_location_id: warehouse, items: [{ item_id: cable, quantity: 1.005 }] },
        'items.0.quantity',
      ],
      [
        { type: 'stock_out', source_location_id: warehouse, items: [{ item_id: onu, quantity: 1.5 }] },
        'items.0.quantity',
      ],
      [
        { type: 'transfer', source_location_id: warehouse, items: [{ item_id: cable, quantity: 1 }] },
        'destination_location_id',
      ],
      [
        {
          type: 'transfer',
          source_location_id: warehouse,
          destination_location_id: warehouse,
          items: [{ item_id: cable, quantity: 1 }],
        },
        'destination_location_id',
      ],
      [
        {
          type: 'stock_out',
          source_location_id: warehouse,
          destination_location_id: pop,
          items: [{ item_id: cable, quantity: 1 }],
        },
        'destination_location_id',
      ],
      [
        {
          type: 'return',
          source_location_id: warehouse,
          destination_location_id: pop,
          items: [{ item_id: cable, quantity: 1 }],
        },
        'source_location_id',
      ],
      [
        {
          type: 'stock_out',
          source_location_id: warehouse,
          reference_type: 'ticket',
          items: [{ item_id: cable, quantity: 1 }],
        },
        'reference_id',
      ],
      [
        {
          type: 'stock_out',
          source_location_id: warehouse,
          reference_type: 'ticket',
          reference_id: (await seedBasics(b)).ticketId,
          items: [{ item_id: cable, quantity: 1 }],
        },
        'reference_id',
      ],
      [{ type: 'loan', source_location_id: warehouse, items: [{ item_id: cable, quantity: 1 }] }, 'type'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(Object.keys(res.body.errors), JSON.stringify(res.body)).to.include(field);
    }
    expect(await count()).to.equal(before);
  });

  it('a non-manager sees, edits and counts only their own requests; a manager sees all (mine=true: own)', async () => {
    const mine = (await stockOut([{ item_id: cable, quantity: 2 }])).body.data.id;
    const theirs = (await stockOut([{ item_id: cable, quantity: 3 }], {}, tech2.token)).body.data.id;
    const list = await app.request('GET', '/api/inventory/requests?per_page=100', { token: tech.token });
    const ids = list.body.data.map((r: { id: number }) => r.id);
    expect(ids).to.include(mine);
    expect(ids).not.to.include(theirs);
    expect(list.body.data.every((r: { requested_by: { id: number } }) => r.requested_by.id === tech.id)).to.equal(true);
    expect((await app.request('GET', `/api/inventory/requests/${theirs}`, { token: tech.token })).status).to.equal(404);
    const put = await app.request('PUT', `/api/inventory/requests/${theirs}`, {
      token: tech.token,
      body: { note: 'x' },
    });
    expect(put.status).to.equal(404);
    expect((await act(theirs, 'cancel', {}, tech.token)).status).to.equal(404);
    const all = await app.request('GET', '/api/inventory/requests?per_page=100', { token: a.adminToken });
    expect(all.body.data.map((r: { id: number }) => r.id)).to.include.members([mine, theirs]);
    const own = await app.request('GET', '/api/inventory/requests?per_page=100&mine=true', { token: a.adminToken });
    expect(own.body.total).to.equal(0);

    const count = async (token: string) =>
      (await app.request('GET', '/api/inventory/requests/pending-count', { token })).body.data.count;
    const techPending = Number(
      (
        await env
          .knex('inventory_requests')
          .where({ tenant_id: a.tenant.id, requested_by: tech.id, status: 'pending' })
          .count('* as n')
      )[0].n,
    );
    expect(await count(tech.token)).to.equal(techPending);
    const managerWaiting = Number(
      (
        await env
          .knex('inventory_requests')
          .where({ tenant_id: a.tenant.id })
          .whereIn('status', ['pending', 'approved'])
          .count('* as n')
      )[0].n,
    );
    expect(await count(a.adminToken)).to.equal(managerWaiting);
    expect(managerWaiting).to.be.greaterThan(techPending);
    const filtered = await app.request('GET', '/api/inventory/requests?status=draft&type=stock_out', {
      token: tech.token,
    });
    expect(filtered.body.data.every((r: { status: string }) => r.status === 'draft')).to.equal(true);

    // PUT by the requester: items replaced, history row
    const edited = await app.request('PUT', `/api/inventory/requests/${mine}`, {
      token: tech.token,
      body: { items: [{ item_id: cable, quantity: 4 }], note: 'more cable' },
    });
    expect(edited.status).to.equal(200);
    expect(edited.body.data.items.map((i: { quantity: number }) => i.quantity)).to.deep.equal([4]);
    expect(edited.body.data.note).to.equal('more cable');
    expect(edited.body.data.history.map((h: { action: string }) => h.action)).to.deep.equal(['created', 'edited']);
  });

  describe('8 states x 9 actions', () => {
    const STATES = ['draft', 'pending', 'deferred', 'approved', 'rejected', 'processing', 'completed', 'cancelled'];
    /** The spec's table (admin-api.md "Inventory request" rows), written out: action -> from -> to. */
    const ALLOWED: Record<string, Record<string, string>> = {
      edit: { draft: 'draft', pending: 'pending', deferred: 'deferred' },
      submit: { draft: 'pending' },
      approve: { pending: 'approved', deferred: 'approved' },
      reject: { pending: 'rejected' },
      defer: { pending: 'deferred' },
      resume: { deferred: 'pending' },
      process: { approved: 'processing' },
      complete: { processing: 'completed' },
      cancel: { draft: 'cancelled', pending: 'cancelled', deferred: 'cancelled', approved: 'cancelled' },
    };
    const BODY: Record<string, unknown> = { reject: { reason: 'No budget' }, defer: { reason: 'Next week' } };

    it('every action from every state gives the new state or 422 INVALID_TRANSITION, changing nothing', async function () {
      this.timeout(120_000);
      const table: string[] = [];
      for (const state of STATES) {
        for (const action of Object.keys(ALLOWED)) {
          const id = (await stockOut([{ item_id: cable, quantity: 1 }])).body.data.id;
          await env.knex('inventory_requests').where({ id }).update({ status: state });
          const historyBefore = await env.knex('inventory_request_history').where({ request_id: id }).count('* as n');
          const res =
            action === 'edit'
              ? await app.request('PUT', `/api/inventory/requests/${id}`, {
                  token: a.adminToken,
                  body: { note: 'edit' },
                })
              : await act(id, action, BODY[action] ?? {});
          const want = ALLOWED[action][state];
          const row = await env.knex('inventory_requests').where({ id }).first('status');
          const historyAfter = await env.knex('inventory_request_history').where({ request_id: id }).count('* as n');
          const what = `${action} from ${state}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
          if (want) {
            expect(res.status, what).to.equal(200);
            expect(res.body.data.status, what).to.equal(want);
            expect(row.status, what).to.equal(want);
            expect(Number(historyAfter[0].n), what).to.equal(Number(historyBefore[0].n) + 1);
          } else {
            expect(res.status, what).to.equal(422);
            expect(res.body.code, what).to.equal('INVALID_TRANSITION');
            expect(res.body.errors.status[0], what).to.include(state);
            expect(row.status, what).to.equal(state);
            expect(historyAfter[0].n, what).to.equal(historyBefore[0].n);
          }
          table.push(`${state}/${action}: ${res.status}`);
        }
      }
      expect(table).to.have.length(72);
      expect(table.filter((l) => l.endsWith('200'))).to.have.length(15);
    });

    it('reject and defer need a reason (422 VALIDATION_FAILED errors.reason), the request stays pending', async () => {
      for (const action of ['reject', 'defer']) {
        const id = (await stockOut([{ item_id: cable, quantity: 1 }])).body.data.id;
        for (const body of [{}, { reason: '' }]) {
          const res = await act(id, action, body);
          expect(res.status).to.equal(422);
          expect(res.body.code).to.equal('VALIDATION_FAILED');
          expect(res.body.errors).to.have.property('reason');
        }
        const ok = await act(id, action, { reason: 'Out of budget this month' });
        expect(ok.body.data).to.include({
          status: action === 'reject' ? 'rejected' : 'deferred',
          reason: 'Out of budget this month',
        });
        expect(ok.body.data.decided_by.id).to.equal(a.admin.id);
        expect(ok.body.data.history.at(-1)).to.include({
          action,
          from_status: 'pending',
          reason: 'Out of budget this month',
        });
      }
    });

    it('approve, reject, defer, resume and process need inventory.manage; the requester may submit, complete and cancel', async () => {
      const id = (await stockOut([{ item_id: cable, quantity: 1 }], { draft: true })).body.data.id;
      for (const action of ['approve', 'reject', 'defer', 'resume', 'process']) {
        const res = await act(id, action, BODY[action] ?? {}, tech.token);
        expect(res.status, action).to.equal(403);
        expect(res.body.message).to.include('inventory.manage');
      }
      expect((await act(id, 'submit', {}, tech.token)).body.data.status).to.equal('pending');
      expect((await act(id, 'approve')).body.data.status).to.equal('approved');
      expect((await act(id, 'process')).body.data.status).to.equal('processing');
      expect((await act(id, 'complete', {}, tech.token)).body.data.status).to.equal('completed');
      const other = (await stockOut([{ item_id: cable, quantity: 1 }])).body.data.id;
      const c = await act(other, 'cancel', { reason: 'Not needed' }, tech.token);
      expect(c.body.data).to.include({ status: 'cancelled', reason: 'Not needed' });
      expect(c.body.data.cancelled_at).to.be.a('string');
    });
  });

  it('process moves the stock: stock_out out of the source, transfer and return into the destination, a mutation per item and direction', async () => {
    const before = await stockOf(a.tenant.id, cable, warehouse);
    const out = (await stockOut([{ item_id: cable, quantity: 12.25 }])).body.data.id;
    await act(out, 'approve');
    const p = await act(out, 'process');
    expect(p.status, JSON.stringify(p.body)).to.equal(200);
    expect(p.body.data.processed_by.id).to.equal(a.admin.id);
    expect(await stockOf(a.tenant.id, cable, warehouse)).to.equal(before - 12.25);
    const m = await app.request('GET', `/api/inventory/mutations?request_id=${out}`, { token: tech.token });
    expect(m.body.data.map((x: { type: string; quantity: number }) => [x.type, x.quantity])).to.deep.equal([
      ['stock_out', -12.25],
    ]);

    const tr = (
      await create({
        type: 'transfer',
        source_location_id: warehouse,
        destination_location_id: van,
        items: [{ item_id: cable, quantity: 30 }],
      })
    ).body.data.id;
    await act(tr, 'approve');
    await act(tr, 'process');
    expect(await stockOf(a.tenant.id, cable, van)).to.equal(30);
    const rt = (
      await create({
        type: 'return',
        source_location_id: van,
        destination_location_id: pop,
        items: [{ item_id: cable, quantity: 10 }],
      })
    ).body.data.id;
    await act(rt, 'approve');
    await act(rt, 'process');
    expect(await stockOf(a.tenant.id, cable, van)).to.equal(20);
    expect(await stockOf(a.tenant.id, cable, pop)).to.equal(10);
    const rows = await env
      .knex('inventory_mutations')
      .where({ tenant_id: a.tenant.id, reference_id: rt, reference_type: 'inventory_request' })
      .orderBy('id');
    expect(rows.map((r) => [r.type, r.direction, r.location_id, r.quantity])).to.deep.equal([
      ['return', 'out', van, -10],
      ['return', 'in', pop, 10],
    ]);
    // the unique key (request item, direction) refuses a second out row of the same request item
    const dup = env.knex('inventory_mutations').insert({ ...rows[0], id: undefined, created_at: new Date() });
    let err: any;
    await dup.catch((e: unknown) => (err = e));
    expect(err?.code).to.equal('23505');
  });

  it('approve checks the stock without reserving it; a short process moves nothing (INSUFFICIENT_STOCK items.N.quantity)', async () => {
    const fiber = await makeItem(app, a.adminToken, { name: 'Splitter 1:8' });
    await stockIn(app, a.adminToken, fiber, warehouse, 3);
    const big = (
      await stockOut([
        { item_id: cable, quantity: 1 },
        { item_id: fiber, quantity: 4 },
      ])
    ).body.data.id;
    const refused = await act(big, 'approve');
    expect(refused.status).to.equal(422);
    expect(refused.body.code).to.equal('INSUFFICIENT_STOCK');
    expect(Object.keys(refused.body.errors)).to.deep.equal(['items.1.quantity']);
    const r1 = (await stockOut([{ item_id: fiber, quantity: 2 }])).body.data.id;
    const r2 = (
      await stockOut([
        { item_id: cable, quantity: 5 },
        { item_id: fiber, quantity: 2 },
      ])
    ).body.data.id;
    expect((await act(r1, 'approve')).body.data.status).to.equal('approved');
    expect((await act(r2, 'approve')).body.data.status).to.equal('approved'); // nothing reserved by r1
    expect((await act(r1, 'process')).status).to.equal(200);
    const cableBefore = await stockOf(a.tenant.id, cable, warehouse);
    const short = await act(r2, 'process');
    expect(short.status).to.equal(422);
    expect(short.body.code).to.equal('INSUFFICIENT_STOCK');
    expect(short.body.errors).to.have.property('items.1.quantity');
    expect(await stockOf(a.tenant.id, cable, warehouse)).to.equal(cableBefore);
    expect(await stockOf(a.tenant.id, fiber, warehouse)).to.equal(1);
    expect((await env.knex('inventory_requests').where({ id: r2 }).first('status')).status).to.equal('approved');
  });

  it('oversell: stock 5, 20 concurrent 1-unit processes -> exactly 5 succeed, stock 0, 5 mutations', async function () {
    this.timeout(60_000);
    const onuPatch = await makeItem(app, a.adminToken, { name: 'Fast connector' });
    await stockIn(app, a.adminToken, onuPatch, warehouse, 5);
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) {
      const id = (await stockOut([{ item_id: onuPatch, quantity: 1 }])).body.data.id;
      expect((await act(id, 'approve')).status).to.equal(200);
      ids.push(id);
    }
    const results = await Promise.all(ids.map((id) => act(id, 'process')));
    const ok = results.filter((r) => r.status === 200);
    const short = results.filter((r) => r.status === 422);
    expect(ok).to.have.length(5);
    expect(short).to.have.length(15);
    expect(short.every((r) => r.body.code === 'INSUFFICIENT_STOCK' && r.body.errors['items.0.quantity'])).to.equal(
      true,
    );
    expect(await stockOf(a.tenant.id, onuPatch, warehouse)).to.equal(0);
    const outs = await env
      .knex('inventory_mutations')
      .where({ tenant_id: a.tenant.id, item_id: onuPatch, direction: 'out' });
    expect(outs).to.have.length(5);
  });

  it('serials: one serial in two requests -> one wins; the winner issues it; serial count must match', async () => {
    const onu = await makeItem(app, a.adminToken, { name: 'ONT HG8245H', tracking: 'serial', item_type: 'device' });
    const sns = [serial('HWTC'), serial('HWTC')];
    await stockIn(app, a.adminToken, onu, warehouse, 2, { serials: sns });
    const r1 = (await stockOut([{ item_id: onu, quantity: 1 }])).body.data.id;
    const r2 = (await stockOut([{ item_id: onu, quantity: 1 }], {}, tech2.token)).body.data.id;
    await act(r1, 'approve');
    await act(r2, 'approve');
    const missing = await act(r1, 'process', {});
    expect(missing.status).to.equal(422);
    expect(missing.body.errors).to.have.property('items.0.serials');
    const wrongCount = await act(r1, 'process', { items: [{ item_id: onu, serials: sns }] });
    expect(wrongCount.status).to.equal(422);
    const [x, y] = await Promise.all([
      act(r1, 'process', { items: [{ item_id: onu, serials: [sns[0]] }] }),
      act(r2, 'process', { items: [{ item_id: onu, serials: [sns[0].toLowerCase()] }] }),
    ]);
    expect([x.status, y.status].sort()).to.deep.equal([200, 422]);
    const loser = x.status === 422 ? x : y;
    expect(loser.body.code).to.equal('INSUFFICIENT_STOCK');
    expect(loser.body.errors['items.0.serials'][0].toUpperCase()).to.include(sns[0]);
    const winner = x.status === 200 ? x : y;
    expect(winner.body.data.items[0].serials).to.have.length(1);
    const row = await env.knex('inventory_serials').where({ tenant_id: a.tenant.id, serial_number: sns[0] }).first();
    expect(row).to.include({ status: 'issued', location_id: null });
    expect(await stockOf(a.tenant.id, onu, warehouse)).to.equal(1);
    const list = await app.request('GET', `/api/inventory/serials?item_id=${onu}&status=in_stock`, {
      token: tech.token,
    });
    expect(list.body.data.map((s: { serial_number: string }) => s.serial_number)).to.deep.equal([sns[1]]);
  });

  it('the ledger is append-only: UPDATE and DELETE of a mutation fail; deleting a tenant cascades through', async () => {
    const m = await env.knex('inventory_mutations').where({ tenant_id: a.tenant.id }).first('id');
    let err: any;
    await env
      .knex('inventory_mutations')
      .where({ id: m.id })
      .update({ quantity: 999 })
      .catch((e: unknown) => (err = e));
    expect(String(err?.message)).to.match(/append-only/);
    err = undefined;
    await env
      .knex('inventory_mutations')
      .where({ id: m.id })
      .delete()
      .catch((e: unknown) => (err = e));
    expect(String(err?.message)).to.match(/append-only/);
    const gone = await makeTenant();
    const loc = await makeLocation(app, gone.adminToken);
    const item = await makeItem(app, gone.adminToken);
    await stockIn(app, gone.adminToken, item, loc, 2);
    await env.knex('tenants').where({ id: gone.tenant.id }).delete();
    expect(await env.knex('inventory_mutations').where({ tenant_id: gone.tenant.id }).first()).to.equal(undefined);
  });

  it("another tenant's request is 404 on every {id} route and unchanged", async () => {
    const theirLoc = await makeLocation(app, b.adminToken);
    const theirItem = await makeItem(app, b.adminToken);
    const theirs = (
      await create(
        { type: 'stock_out', source_location_id: theirLoc, items: [{ item_id: theirItem, quantity: 1 }] },
        b.adminToken,
      )
    ).body.data;
    expect((await app.request('GET', `/api/inventory/requests/${theirs.id}`, { token: a.adminToken })).status).to.equal(
      404,
    );
    expect(
      (await app.request('PUT', `/api/inventory/requests/${theirs.id}`, { token: a.adminToken, body: { note: 'x' } }))
        .status,
    ).to.equal(404);
    for (const action of ['submit', 'approve', 'reject', 'defer', 'resume', 'process', 'complete', 'cancel'])
      expect(
        (await act(theirs.id, action, action === 'reject' || action === 'defer' ? { reason: 'x' } : {})).status,
        action,
      ).to.equal(404);
    const after = await env.knex('inventory_requests').where({ id: theirs.id }).first();
    expect(after.status).to.equal('pending');
    expect(after.note).to.equal(null);
  });
});
