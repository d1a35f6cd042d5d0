import { expect } from 'chai';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { openCredentials } from '../../../db/credentials.js';
import { addDays, todayIn } from '../../../lib/clock.js';
import * as customerNetwork from '../../../jobs/customer-network.js';
import {
  PPPOE_SECRET,
  createCustomer,
  customerBody,
  customerRow,
  makeNas,
  makePackage,
  networkQueue,
  uniq,
} from './support.js';

/** Issue 8 item 2: POST/GET/PUT /api/customers (CRUD, field rules, 409, confinement, audit, no secrets). */
describe('/api/customers CRUD', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let nasA: number;
  let nasB: number;
  let pkgA: number;
  let pkgB: number;
  const texts: string[] = [];
  const post = async (body: Record<string, unknown>, f = a) => {
    const res = await app.request('POST', '/api/customers', { token: f.adminToken, body });
    texts.push(res.text);
    return res;
  };
  const put = async (id: number, body: Record<string, unknown>, f = a) => {
    const res = await app.request('PUT', `/api/customers/${id}`, { token: f.adminToken, body });
    texts.push(res.text);
    return res;
  };
  const audits = (action: string, id: number) =>
    tenantKnex(a.tenant.id)('audit_log').where({ action, subject_type: 'customers', subject_id: id }).orderBy('id');

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    nasA = await makeNas(a);
    nasB = await makeNas(b);
    pkgA = await makePackage(a, { name: 'Home 20 Mbps' });
    pkgB = await makePackage(b);
  });

  after(() => {
    const all = [...texts, ...app.logs].join('\n');
    expect(all).not.to.include(PPPOE_SECRET);
  });

  it('creates a customer: 201 with document 1 defaults, the admin fields, the password sealed and never shown', async () => {
    const res = await post(
      customerBody({
        email: 'budi@example.test',
        package_id: pkgA,
        billing_day: 28,
        pppoe_username: 'Budi.Santoso-01',
        pppoe_password: PPPOE_SECRET,
      }),
    );
    expect(res.status).to.equal(201);
    const d = res.body.data;
    expect(d.code).to.match(/^CUST-\d{6}$/);
    expect(d).to.include({
      status: 'active',
      service_type: 'pppoe',
      billing_cycle: 'prepaid',
      customer_tier: 'regular',
      billing_day: 28,
      nas_id: null,
      nas: null,
      pppoe_username: 'Budi.Santoso-01',
      pppoe_password_set: true,
      suspend_reason: null,
      status_reason: null,
      mac_address: null,
    });
    expect(d.package).to.deep.equal({ id: pkgA, name: 'Home 20 Mbps' });
    expect(d.network).to.include({ sync_status: 'none', state: null, error: null, nas_id: null, version: 0 });
    expect(d.latest_invoices).to.deep.equal([]);
    expect(d.latest_tickets).to.deep.equal([]);
    expect(d).not.to.have.property('pppoe_password');
    expect(res.text).not.to.include(PPPOE_SECRET);
    const row = await customerRow(d.id);
    expect(row.pppoe_password_enc).to.be.a('string').and.not.include(PPPOE_SECRET);
    expect(openCredentials(app.appKey, 'customers', a.tenant.id, row.pppoe_password_enc)).to.deep.equal({
      password: PPPOE_SECRET,
    });
    const [audit] = await audits('customers.created', d.id);
    expect(audit.after).to.include({ pppoe_username: 'Budi.Santoso-01', pppoe_password_set: true, package_id: pkgA });
    expect(JSON.stringify(audit)).not.to.include(PPPOE_SECRET);
    // no NAS: nothing to push, no job
    expect(await networkQueue(app).getJobCounts('waiting', 'delayed', 'active')).to.deep.equal({
      waiting: 0,
      delayed: 0,
      active: 0,
    });
  });

  it('a customer created on a NAS gets its first push: versioned job id, ids-only data, sync pending', async () => {
    const res = await post(customerBody({ nas_id: nasA, pppoe_password: PPPOE_SECRET }));
    expect(res.status).to.equal(201);
    const d = res.body.data;
    expect(d.nas).to.deep.include({ id: nasA });
    expect(d.network.sync_status).to.equal('pending');
    expect(d.network.version).to.be.greaterThan(0);
    expect(d.network.requested_at).to.be.a('string');
    const jobId = customerNetwork.pushJobId(a.tenant.id, d.id, d.network.version);
    expect(jobId).to.equal(`customer-network-${a.tenant.id}-${d.id}-v${d.network.version}`);
    const job = (await networkQueue(app).getJob(jobId))!;
    expect(job.name).to.equal(customerNetwork.PUSH_JOB);
    expect(job.data).to.deep.equal({ tenant_id: a.tenant.id, customer_id: d.id, version: d.network.version });
    expect(JSON.stringify(job)).not.to.include(PPPOE_SECRET);
  });

  it('answers 422 with field errors for bad input, and creates nothing', async () => {
    const before = (await tenantKnex(a.tenant.id)('customers').where({ tenant_id: a.tenant.id }).count('* as n'))[0].n;
    const cases: [Record<string, unknown>, string][] = [
      [customerBody({ name: '   ' }), 'name'],
      [customerBody({ phone: '' }), 'phone'],
      [customerBody({ mac_address: 'AA-BB-CC-DD-EE-FF' }), 'mac_address'],
      [customerBody({ service_type: 'dhcp' }), 'mac_address'],
      [customerBody({ billing_day: 29 }), 'billing_day'],
      [customerBody({ billing_day: 0 }), 'billing_day'],
      [customerBody({ package_id: pkgB }), 'package_id'],
      [customerBody({ nas_id: nasB }), 'nas_id'],
      [customerBody({ nas_id: nasA, pppoe_username: null }), 'pppoe_username'],
      [customerBody({ pppoe_username: 'bad name' }), 'pppoe_username'],
      [customerBody({ pppoe_password: 'line\nbreak' }), 'pppoe_password'],
      [customerBody({ status: 'blocked' }), 'status'],
      [customerBody({ code: 'CUST-1' }), 'code'],
    ];
    for (const [body, field] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(res.body.errors, JSON.stringify(res.body)).to.have.property(field);
    }
    const inactive = await makeNas(a, { is_active: false });
    const res = await post(customerBody({ nas_id: inactive }));
    expect(res.status).to.equal(422);
    expect(res.body.errors.nas_id[0]).to.match(/not active/);
    const after = (await tenantKnex(a.tenant.id)('customers').where({ tenant_id: a.tenant.id }).count('* as n'))[0].n;
    expect(after).to.equal(before);
  });

  it('stores a dhcp customer MAC in upper colon form; 409 for a PPPoE username the tenant has, in any case', async () => {
    const dhcp = await post(
      customerBody({ service_type: 'dhcp', mac_address: 'aabb.ccdd.eeff', pppoe_username: null }),
    );
    expect(dhcp.status).to.equal(201);
    expect(dhcp.body.data.mac_address).to.equal('AA:BB:CC:DD:EE:FF');
    const name = `dup-${uniq()}`;
    expect((await post(customerBody({ pppoe_username: name }))).status).to.equal(201);
    const dup = await post(customerBody({ pppoe_username: name.toUpperCase() }));
    expect(dup.status).to.equal(409);
    expect(dup.body.code).to.equal('CONFLICT');
    // another tenant may use the same name
    expect((await post(customerBody({ pppoe_username: name }), b)).status).to.equal(201);
    const other = await createCustomer(app, a);
    const taken = await put(other.id, { pppoe_username: name });
    expect(taken.status).to.equal(409);
    expect((await customerRow(other.id)).pppoe_username).to.equal(other.data.pppoe_username);
  });

  it('shows a customer with its latest invoices and tickets; 404 for another tenant', async () => {
    const c = await createCustomer(app, a, { package_id: pkgA });
    await a.scope.insert('invoices', {
      invoice_number: `INV-${uniq()}`,
      customer_id: c.id,
      amount: 150000,
      status: 'unpaid',
      due_date: addDays(todayIn(a.timeZone), 30),
    });
    const res = await app.request('GET', `/api/customers/${c.id}`, { token: a.adminToken });
    expect(res.status).to.equal(200);
    expect(res.body.data.id).to.equal(c.id);
    expect(res.body.data.latest_invoices).to.have.length(1);
    expect(res.body.data.latest_invoices[0]).to.include({ customer_id: c.id, amount: 150000 });
    const foreign = await app.request('GET', `/api/customers/${c.id}`, { token: b.adminToken });
    expect(foreign.status).to.equal(404);
    expect(foreign.body.code).to.equal('NOT_FOUND');
  });

  it('PUT changes the fields it carries and keeps the others; null clears; audited before/after', async () => {
    const c = await createCustomer(app, a, { email: 'x@example.test', package_id: pkgA, pppoe_password: PPPOE_SECRET });
    const res = await put(c.id, { name: 'Budi Renamed', email: null, billing_day: 5, latitude: -6.9 });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({
      name: 'Budi Renamed',
      email: null,
      billing_day: 5,
      latitude: -6.9,
      phone: c.data.phone,
      pppoe_username: c.data.pppoe_username,
      pppoe_password_set: true,
    });
    expect(res.body.data.package).to.deep.include({ id: pkgA });
    const [audit] = await audits('customers.updated', c.id);
    expect(audit.before.name).to.equal(c.data.name);
    expect(audit.after.name).to.equal('Budi Renamed');
    const cleared = await put(c.id, { pppoe_password: null });
    expect(cleared.body.data.pppoe_password_set).to.equal(false);
    expect((await customerRow(c.id)).pppoe_password_enc).to.equal(null);
  });

  it('PUT refuses status (422 naming the status endpoint) and bad fields; a foreign id is 404 and unchanged', async () => {
    const c = await createCustomer(app, a);
    const status = await put(c.id, { status: 'suspended' });
    expect(status.status).to.equal(422);
    expect(status.body.errors.status[0]).to.include('/api/customers/{id}/status');
    const bad = await put(c.id, { service_type: 'static' });
    expect(bad.status).to.equal(422);
    expect(bad.body.errors).to.have.property('mac_address');
    const before = await customerRow(c.id);
    const foreign = await put(c.id, { name: 'Hijacked' }, b);
    expect(foreign.status).to.equal(404);
    expect(await customerRow(c.id)).to.deep.equal(before);
  });

  it('a network-relevant PUT (NAS, package, PPPoE login, MAC) enqueues a push with a new version; other edits do not', async () => {
    const c = await createCustomer(app, a);
    const onNas = await put(c.id, { nas_id: nasA });
    const v1 = onNas.body.data.network.version;
    expect(onNas.body.data.network.sync_status).to.equal('pending');
    expect(await networkQueue(app).getJob(customerNetwork.pushJobId(a.tenant.id, c.id, v1))).to.not.equal(undefined);
    const renamed = await put(c.id, { name: 'Only a name' });
    expect(renamed.body.data.network.version).to.equal(v1);
    const newPkg = await put(c.id, { package_id: pkgA });
    const v2 = newPkg.body.data.network.version;
    expect(v2).to.be.greaterThan(v1);
    const pw = await put(c.id, { pppoe_password: PPPOE_SECRET });
    const v3 = pw.body.data.network.version;
    expect(v3).to.be.greaterThan(v2);
    for (const v of [v2, v3]) {
      const job = (await networkQueue(app).getJob(customerNetwork.pushJobId(a.tenant.id, c.id, v)))!;
      expect(job.data).to.deep.equal({ tenant_id: a.tenant.id, customer_id: c.id, version: v });
    }
  });

  it('lists newest first, per_page 20, with the filters; search as document 1', async () => {
    const f = await makeTenant();
    const pkg = await makePackage(f);
    const nas = await makeNas(f);
    const made: number[] = [];
    for (let i = 0; i < 23; i++) {
      const extra =
        i % 5 === 0
          ? { package_id: pkg, nas_id: nas, billing_cycle: 'postpaid' }
          : i % 7 === 0
            ? { service_type: 'static', mac_address: `AABBCCDDEE${String(i).padStart(2, '0')}`, pppoe_username: null }
            : {};
      made.push((await createCustomer(app, f, { name: i === 3 ? 'Siti Rahayu' : `Agus ${i}`, ...extra })).id);
    }
    const list = async (q: string) => {
      const res = await app.request('GET', `/api/customers${q}`, { token: f.adminToken });
      expect(res.status, res.text).to.equal(200);
      return res.body;
    };
    const all = await list('');
    expect(all).to.include({ current_page: 1, per_page: 20, total: 23, last_page: 2, from: 1, to: 20 });
    expect(all.data.map((c: any) => c.id)).to.deep.equal([...made].reverse().slice(0, 20));
    expect(all.data[0]).to.have.property('network');
    expect(all.data[0]).not.to.have.property('pppoe_password');
    const byPkg = await list(`?package_id=${pkg}`);
    expect(byPkg.total).to.equal(5);
    expect(byPkg.data.every((c: any) => c.package.id === pkg)).to.equal(true);
    expect((await list(`?nas_id=${nas}`)).total).to.equal(5);
    expect((await list('?billing_cycle=postpaid')).total).to.equal(5);
    expect((await list('?service_type=static')).data.map((c: any) => c.id)).to.deep.equal([
      made[21],
      made[14],
      made[7],
    ]);
    const search = await list('?search=siti');
    expect(search.data.map((c: any) => c.name)).to.deep.equal(['Siti Rahayu']);
    expect((await list('?search=agus&nas_id=' + nas)).total).to.equal(5);
    expect((await list('?search=agus&per_page=5&page=2')).data).to.have.length(5);
    expect((await list('?status=suspended')).total).to.equal(0);
    const bad = await app.request('GET', '/api/customers?service_type=fiber', { token: f.adminToken });
    expect(bad.status).to.equal(422);
  });

  it('staff may read but not write (403 naming customers.manage)', async () => {
    const staff = await makeUser(a.tenant.id, 'staff');
    expect((await app.request('GET', '/api/customers', { token: staff.token })).status).to.equal(200);
    const res = await app.request('POST', '/api/customers', { token: staff.token, body: customerBody() });
    expect(res.status).to.equal(403);
    expect(res.body.message).to.include('customers.manage');
  });
});
