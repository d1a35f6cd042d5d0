import { expect } from 'chai';
import { env } from '../../helpers/env.js';
import { seedBasics } from '../../helpers/fixtures.js';
import { assertLedgerBalanced, makeItem, makeLocation } from './support.js';
import { requestWorld, type RequestWorld } from './request-world.js';

/** Issue 16 item 4: inventory requests, their states, visibility, processing through the ledger. */
describe('/api/inventory/requests', () => {
  let w: RequestWorld;
  let app: RequestWorld['app'];
  let a: RequestWorld['a'];
  let b: RequestWorld['b'];
  let tech: RequestWorld['tech'];
  let tech2: RequestWorld['tech2'];
  let warehouse: RequestWorld['warehouse'];
  let pop: RequestWorld['pop'];
  let cable: RequestWorld['cable'];
  let ticketId: RequestWorld['ticketId'];
  const create = (...args: Parameters<RequestWorld['create']>) => w.create(...args);
  const act = (...args: Parameters<RequestWorld['act']>) => w.act(...args);
  const stockOut = (...args: Parameters<RequestWorld['stockOut']>) => w.stockOut(...args);

  before(async () => {
    w = await requestWorld();
    ({ app, a, b, tech, tech2, warehouse, pop, cable, ticketId } = w);
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
