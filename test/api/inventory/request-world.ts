import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { makeItem, makeLocation, stockIn } from './support.js';

/** The setup the inventory request tests share (requests.test.ts, request-processing.test.ts). */
export interface RequestWorld {
  app: TestApp;
  /** The tenant under test; `b` another tenant. */
  a: TenantFixture;
  b: TenantFixture;
  /** Two technicians of `a`. */
  tech: { id: number; token: string };
  tech2: { id: number; token: string };
  warehouse: number;
  pop: number;
  /** tech's own stock (a technician location). */
  van: number;
  /** A quantity item with 100,000 in the warehouse. */
  cable: number;
  ticketId: number;
  /** POST /api/inventory/requests (default: as tech). */
  create(body: Record<string, unknown>, token?: string): ReturnType<TestApp['request']>;
  /** POST /api/inventory/requests/{id}/{action} (default: as a's admin). */
  act(id: number, action: string, body?: unknown, token?: string): ReturnType<TestApp['request']>;
  /** A stock_out request from the warehouse (default: as tech). */
  stockOut(items: unknown[], extra?: Record<string, unknown>, token?: string): ReturnType<TestApp['request']>;
}

/** Starts an app, two tenants, two technicians, the locations and the cable stock of `a`. */
export async function requestWorld(): Promise<RequestWorld> {
  const app = await startTestApp();
  const a = await makeTenant();
  const b = await makeTenant();
  const tech = await makeUser(a.tenant.id, 'technician');
  const tech2 = await makeUser(a.tenant.id, 'technician');
  const warehouse = await makeLocation(app, a.adminToken, { name: 'Gudang Utama' });
  const pop = await makeLocation(app, a.adminToken, { name: 'POP Dago', type: 'pop' });
  const van = await makeLocation(app, a.adminToken, { name: 'Van', type: 'technician', holder_user_id: tech.id });
  const cable = await makeItem(app, a.adminToken, { name: 'Drop cable', unit: 'm', item_type: 'material' });
  await stockIn(app, a.adminToken, cable, warehouse, 100000);
  const ticketId = (await seedBasics(a)).ticketId;
  const create = (body: Record<string, unknown>, token = tech.token) =>
    app.request('POST', '/api/inventory/requests', { token, body });
  return {
    app,
    a,
    b,
    tech,
    tech2,
    warehouse,
    pop,
    van,
    cable,
    ticketId,
    create,
    act: (id, action, body, token = a.adminToken) =>
      app.request('POST', `/api/inventory/requests/${id}/${action}`, { token, body }),
    stockOut: (items, extra = {}, token = tech.token) =>
      create({ type: 'stock_out', source_location_id: warehouse, items, ...extra }, token),
  };
}
