import { expect } from 'chai';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { normaliseMac } from '../../../api/customers/mac.js';
import { countRows, makeWorld, V1, type World } from './world.js';

describe('external v1: customer and ticket create (document 1; DESIGN.md §6)', () => {
  let app: TestApp;
  let a: World;

  before(async () => {
    app = await startTestApp();
    a = await makeWorld();
  });

  const create = (body: Record<string, unknown>) => app.request('POST', `${V1}/customers`, { token: a.write, body });
  const base = { name: 'Dewi Lestari', phone: '+62812000111', address: 'Jl. Sudirman 5' };

  describe('customers', () => {
    it('creates with the defaults and answers 201 {data: read shape}; the code comes from the tenant counter', async () => {
      const counter = await tenantKnex(a.tenant.id)('tenant_counters')
        .where({ tenant_id: a.tenant.id, name: 'customer' })
        .first();
      const res = await create({ ...base, package_id: a.ids.packageId });
      expect(res.status).to.equal(201);
      const d = res.body.data;
      expect(d).to.include({
        name: 'Dewi Lestari',
        phone: '+62812000111',
        address: 'Jl. Sudirman 5',
        email: null,
        status: 'active',
        service_type: 'pppoe',
        billing_cycle: 'prepaid',
        customer_tier: 'regular',
        mac_address: null,
        latitude: null,
        longitude: null,
        onu: null,
      });
      expect(d.code).to.equal(`CUST-${String(Number(counter.value) + 1).padStart(6, '0')}`);
      expect(d.package).to.deep.equal({
        id: a.ids.packageId,
        name: (await tenantKnex(a.tenant.id)('packages').where({ id: a.ids.packageId }).first()).name,
      });
      expect(d.latest_invoices).to.deep.equal([]);
      expect(d.latest_tickets).to.deep.equal([]);
      const row = await tenantKnex(a.tenant.id)('customers').where({ id: d.id }).first();
      expect(row).to.include({
        tenant_id: a.tenant.id,
        code: d.code,
        status: 'active',
        service_type: 'pppoe',
        billing_cycle: 'prepaid',
        customer_tier: 'regular',
      });
      const shown = await app.request('GET', `${V1}/customers/${d.id}`, { token: a.read });
      expect(shown.body.data).to.deep.equal(d);
    });

    it('stores every given field', async () => {
      const res = await create({
        ...base,
        email: 'dewi@example.id',
        latitude: -6.2,
        longitude: 106.816666,
        status: 'suspended',
        service_type: 'hotspot',
        billing_cycle: 'postpaid',
        package_id: null,
      });
      expect(res.status).to.equal(201);
      expect(res.body.data).to.include({
        email: 'dewi@example.id',
        latitude: -6.2,
        longitude: 106.816666,
        status: 'suspended',
        service_type: 'hotspot',
        billing_cycle: 'postpaid',
        package: null,
      });
    });

    it('gives consecutive codes to consecutive customers', async () => {
      const one = await create(base);
      const two = await create(base);
      const n = (c: string) => Number(c.replace('CUST-', ''));
      expect(n(two.body.data.code)).to.equal(n(one.body.data.code) + 1);
    });

    it('answers 422 with field errors for a bad payload and creates nothing', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ phone: '1', address: 'a' }, 'name'],
        [{ name: 'x', address: 'a' }, 'phone'],
        [{ name: 'x', phone: '1' }, 'address'],
        [{ ...base, name: '' }, 'name'],
        [{ ...base, name: '   ' }, 'name'],
        [{ ...base, name: 42 }, 'name'],
        [{ ...base, email: 'not-an-email' }, 'email'],
        [{ ...base, latitude: 90.5 }, 'latitude'],
        [{ ...base, latitude: -91 }, 'latitude'],
        [{ ...base, longitude: 180.01 }, 'longitude'],
        [{ ...base, longitude: -181 }, 'longitude'],
        [{ ...base, latitude: '1.5' }, 'latitude'],
        [{ ...base, package_id: 999999999 }, 'package_id'],
        [{ ...base, package_id: 'x' }, 'package_id'],
        [{ ...base, status: 'deleted' }, 'status'],
        [{ ...base, service_type: 'fiber' }, 'service_type'],
        [{ ...base, billing_cycle: 'weekly' }, 'billing_cycle'],
        [{ ...base, name: 'a\u0000b' }, 'name'],
      ];
      const before = await countRows('customers', a.tenant.id);
      for (const [body, field] of cases) {
        const res = await create(body);
        expect(res.status, JSON.stringify(body)).to.equal(422);
        expect(res.body.code).to.equal('VALIDATION_FAILED');
        expect(res.body.errors, JSON.stringify(body)).to.have.property(field);
      }
      const bad = await app.request('POST', `${V1}/customers`, { token: a.write, raw: '{"name": ' });
      expect(bad.status).to.equal(422);
      expect(await countRows('customers', a.tenant.id)).to.equal(before);
    });

    it('accepts latitude/longitude on the bounds', async () => {
      const res = await create({ ...base, latitude: -90, longitude: 180 });
      expect(res.status).to.equal(201);
      expect(res.body.data).to.include({ latitude: -90, longitude: 180 });
    });
  });

  describe('MAC address (mac_address)', () => {
    const accepted: [string, string][] = [
      ['AA:BB:CC:DD:EE:FF', 'AA:BB:CC:DD:EE:FF'],
      ['aa:bb:cc:dd:ee:ff', 'AA:BB:CC:DD:EE:FF'],
      ['0a:1B:2c:3D:4e:5F', '0A:1B:2C:3D:4E:5F'],
      ['AABB.CCDD.EEFF', 'AA:BB:CC:DD:EE:FF'],
      ['aabb.ccdd.eeff', 'AA:BB:CC:DD:EE:FF'],
      ['0011.2233.4455', '00:11:22:33:44:55'],
      ['AABBCCDDEEFF', 'AA:BB:CC:DD:EE:FF'],
      ['aabbccddeeff', 'AA:BB:CC:DD:EE:FF'],
      ['a1B2c3D4e5F6', 'A1:B2:C3:D4:E5:F6'],
    ];
    const rejected: [string, unknown][] = [
      ['empty', ''],
      ['bad characters (colon form)', 'GG:BB:CC:DD:EE:FF'],
      ['bad characters (bare)', 'AABBCCDDEEFZ'],
      ['bad characters (dotted)', 'AABB.CCDD.EEFG'],
      ['too short (colon)', 'AA:BB:CC:DD:EE'],
      ['too long (colon)', 'AA:BB:CC:DD:EE:FF:00'],
      ['too short (bare)', 'AABBCCDDEEF'],
      ['too long (bare)', 'AABBCCDDEEFF0'],
      ['too long (dotted)', 'AABB.CCDD.EEFF.0011'],
      ['mixed separators', 'AA:BB:CC.DD.EE:FF'],
      ['mixed separators (dotted)', 'AABB.CCDD:EEFF'],
      ['misplaced colons', 'AAB:BCC:DDE:EFF'],
      ['misplaced dots', 'AA.BBCC.DDEEFF'],
      ['hyphens', 'AA-BB-CC-DD-EE-FF'],
      ['single digits', 'A:B:C:D:E:F'],
      ['surrounding blanks', ' AA:BB:CC:DD:EE:FF '],
      ['inner blanks', 'AA BB CC DD EE FF'],
      ['not a string', 123456789012],
      ['trailing newline', 'AA:BB:CC:DD:EE:FF\n'],
    ];

    it('the pure normaliser maps each accepted form and refuses each invalid one', () => {
      for (const [input, stored] of accepted) expect(normaliseMac(input), input).to.equal(stored);
      for (const [label, input] of rejected) expect(normaliseMac(input), label).to.equal(null);
      expect(normaliseMac(null)).to.equal(null);
    });

    for (const serviceType of ['dhcp', 'static']) {
      it(`${serviceType}: each accepted form is stored as AA:BB:CC:DD:EE:FF`, async () => {
        for (const [input, stored] of accepted) {
          const res = await create({ ...base, service_type: serviceType, mac_address: input });
          expect(res.status, input).to.equal(201);
          expect(res.body.data.mac_address, input).to.equal(stored);
          const row = await tenantKnex(a.tenant.id)('customers').where({ id: res.body.data.id }).first();
          expect(row.mac_address, input).to.equal(stored);
        }
      });

      it(`${serviceType}: missing or null MAC is 422 "required"; each invalid form is 422; nothing is created`, async () => {
        const before = await countRows('customers', a.tenant.id);
        for (const body of [
          { ...base, service_type: serviceType },
          { ...base, service_type: serviceType, mac_address: null },
        ]) {
          const res = await create(body);
          expect(res.status).to.equal(422);
          expect(res.body.errors.mac_address[0]).to.match(/required/);
        }
        for (const [label, input] of rejected) {
          const res = await create({ ...base, service_type: serviceType, mac_address: input });
          expect(res.status, label).to.equal(422);
          expect(res.body.errors, label).to.have.property('mac_address');
        }
        expect(await countRows('customers', a.tenant.id)).to.equal(before);
      });
    }

    it('pppoe/hotspot: MAC optional, normalised when sent, 422 when invalid', async () => {
      for (const serviceType of ['pppoe', 'hotspot', undefined]) {
        const none = await create({ ...base, service_type: serviceType });
        expect(none.status).to.equal(201);
        expect(none.body.data.mac_address).to.equal(null);
        const ok = await create({ ...base, service_type: serviceType, mac_address: 'aabb.ccdd.eeff' });
        expect(ok.body.data.mac_address).to.equal('AA:BB:CC:DD:EE:FF');
        for (const bad of ['', 'AA:BB:CC:DD:EE', 'AA-BB-CC-DD-EE-FF']) {
          const res = await create({ ...base, service_type: serviceType, mac_address: bad });
          expect(res.status, `${serviceType} ${bad}`).to.equal(422);
          expect(res.body.errors).to.have.property('mac_address');
        }
      }
    });

    it('reports the MAC and package errors together', async () => {
      const res = await create({ ...base, service_type: 'dhcp', package_id: 999999999 });
      expect(res.status).to.equal(422);
      expect(Object.keys(res.body.errors).sort()).to.deep.equal(['mac_address', 'package_id']);
    });
  });

  describe('tickets', () => {
    it('creates a ticket with source external, external_id kept, SLA due dates, and answers 201 {data: read shape}', async () => {
      const before = Date.now();
      const res = await app.request('POST', `${V1}/tickets`, {
        token: a.write,
        body: {
          type: 'no internet',
          customer_id: a.ids.customerId,
          onu_id: a.ids.onuId,
          priority: 'high',
          status: 'inprogress',
          description: 'LOS red light',
          location_text: 'Blok C',
          contact_name: 'Pak RT',
          contact_phone: '0812',
          external_id: 'CRM-4711',
        },
      });
      expect(res.status).to.equal(201);
      const d = res.body.data;
      expect(d).to.include({
        source: 'external',
        external_id: 'CRM-4711',
        type: 'no internet',
        priority: 'high',
        status: 'inprogress',
        customer_id: a.ids.customerId,
        description: 'LOS red light',
        location_text: 'Blok C',
        contact_name: 'Pak RT',
        contact_phone: '0812',
        sla_breached: false,
      });
      expect(d.ticket_number).to.match(/^TCK-\d{6}$/);
      expect(d.customer.id).to.equal(a.ids.customerId);
      expect(d.onu.id).to.equal(a.ids.onuId);
      const resolution = new Date(d.resolution_due_at).getTime() - new Date(d.created_at).getTime();
      expect(resolution).to.equal(4 * 3600_000);
      expect(new Date(d.created_at).getTime()).to.be.at.least(before - 1000);
      const row = await tenantKnex(a.tenant.id)('tickets').where({ id: d.id }).first();
      expect(row).to.include({ tenant_id: a.tenant.id, source: 'external', external_id: 'CRM-4711' });
      const shown = await app.request('GET', `${V1}/tickets/${d.id}`, { token: a.read });
      expect(shown.body.data).to.deep.equal(d);
    });

    it('defaults priority medium and status open', async () => {
      const res = await app.request('POST', `${V1}/tickets`, { token: a.write, body: { type: 'slow' } });
      expect(res.status).to.equal(201);
      expect(res.body.data).to.include({
        priority: 'medium',
        status: 'open',
        customer: null,
        onu: null,
        external_id: null,
        source: 'external',
      });
    });

    it('answers 422 for a bad payload and creates nothing', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{}, 'type'],
        [{ type: '' }, 'type'],
        [{ type: 'x', priority: 'urgent' }, 'priority'],
        [{ type: 'x', status: 'resolved' }, 'status'],
        [{ type: 'x', customer_id: 999999999 }, 'customer_id'],
        [{ type: 'x', onu_id: 999999999 }, 'onu_id'],
        [{ type: 'x', customer_id: 'a' }, 'customer_id'],
        [{ type: 'x', external_id: 'x'.repeat(191) }, 'external_id'],
      ];
      const before = await countRows('tickets', a.tenant.id);
      for (const [body, field] of cases) {
        const res = await app.request('POST', `${V1}/tickets`, { token: a.write, body });
        expect(res.status, JSON.stringify(body)).to.equal(422);
        expect(res.body.errors, JSON.stringify(body)).to.have.property(field);
      }
      expect(await countRows('tickets', a.tenant.id)).to.equal(before);
    });
  });
});
