import type { Knex } from 'knex';
import { TenantScope } from '../tenant-scope.js';
import { stockIn } from '../../api/inventory/stock-in.js';
import { createRequest, type Requester } from '../../api/inventory/requests/service.js';
import { transitionRequest, type RequestAction } from '../../api/inventory/requests/transitions.js';
import { createCount } from '../../api/inventory/counts.js';

/**
 * Demo inventory (issue 16 item 7): a central warehouse, a POP and the demo technician's van;
 * two suppliers with buy prices; ONTs tracked by serial number, cable and small parts received
 * through the stock-in service (so the ledger, the serials and the purchases are real); one stock
 * count; one inventory request in each of the eight states (made through the request services);
 * the warehouse and the POP mapped to the tenant's first home base. A tenant that has any
 * inventory location is left alone, so it runs in the demo seed and on every `npm start` against
 * an existing `.data` (bin/dev.ts) without doubling anything.
 */

/** The demo catalogue: name, sku, category, unit, type, tracking, sell price, min stock, buy price. */
const ITEMS = [
  ['ONT ZTE F609', 'ZTE-F609', 'ONT', 'pcs', 'device', 'serial', 450000, 5, 315000],
  ['ONT Huawei HG8245H', 'HW-HG8245H', 'ONT', 'pcs', 'device', 'serial', 500000, 5, 350000],
  ['Kabel drop 1 core', 'DROP-1C', 'Kabel', 'm', 'material', 'quantity', 3500, 500, 2100],
  ['Patch cord SC-UPC 3 m', 'PC-SC-3', 'Aksesoris', 'pcs', 'goods', 'quantity', 25000, 20, 12500],
  ['Splitter 1:8 PLC', 'SPL-18', 'Pasif', 'pcs', 'goods', 'quantity', 150000, 5, 95000],
  ['Closure 24 core', 'CL-24', 'Pasif', 'pcs', 'goods', 'quantity', 350000, 2, 240000],
] as const;

/** What seedDemoInventory did. */
export type DemoInventoryResult = 'seeded' | 'exists';

/**
 * Seeds the demo inventory of one tenant (see the file comment) unless it has inventory locations.
 * @param knex the seed's transaction (or knex: the services open their own transactions)
 * @param opts.technicianId the technician who holds the van and asks for the requests (null: none)
 * @param opts.serialPrefix makes the ONT serial numbers of the tenant distinct and stable
 */
export async function seedDemoInventory(
  knex: Knex | Knex.Transaction,
  tenantId: number,
  opts: { technicianId: number | null; serialPrefix: string },
): Promise<DemoInventoryResult> {
  const scope = new TenantScope(knex, tenantId);
  if (await scope.table('inventory_locations').first('id')) return 'exists';
  const now = new Date();
  const at = { created_at: now, updated_at: now };
  const location = async (name: string, type: string, holder: number | null = null, address: string | null = null) =>
    (await scope.insert('inventory_locations', { name, type, holder_user_id: holder, address, ...at })).id;
  const warehouse = await location('Gudang Pusat', 'warehouse', null, 'Jl. Soekarno-Hatta 120, Bandung');
  const pop = await location('POP Dago', 'pop', null, 'Jl. Ir. H. Juanda 200, Bandung');
  const van = opts.technicianId ? await location('Stok teknisi (van 1)', 'technician', opts.technicianId) : null;
  const suppliers = [
    await scope.insert('suppliers', {
      name: 'PT Fiberindo Nusantara',
      contact: 'Andi Pratama',
      phone: '+6281322200011',
      email: 'sales@fiberindo.example',
      address: 'Kawasan Industri Jababeka, Bekasi',
      ...at,
    }),
    await scope.insert('suppliers', {
      name: 'CV Kabel Jaya',
      contact: 'Dewi Lestari',
      phone: '+6281322200022',
      email: 'order@kabeljaya.example',
      address: 'Jl. Cibaduyut 45, Bandung',
      ...at,
    }),
  ];
  const ids: number[] = [];
  for (const [i, [name, sku, category, unit, itemType, tracking, sell, min, buy]] of ITEMS.entries()) {
    const item = await scope.insert('inventory_items', {
      name,
      sku,
      category,
      unit,
      item_type: itemType,
      tracking,
      sell_price: sell,
      min_stock: min,
      ...at,
    });
    ids.push(item.id);
    await scope.insert('supplier_items', {
      supplier_id: suppliers[i < 2 ? 0 : 1].id,
      item_id: item.id,
      cost_price: buy,
      ...at,
    });
  }
  const [zte, huawei, drop, patch, splitter, closure] = ids;
  const sn = (p: string, from: number, n: number) =>
    Array.from({ length: n }, (_, k) => `${p}${opts.serialPrefix}${String(from + k).padStart(4, '0')}`);
  const actor = { userId: null, audit: false }; // the opening stock is nobody's action in the audit log
  const receive = (item: number, loc: number, quantity: number, cost: number, serials?: string[], supplier = 0) =>
    stockIn(scope, actor, item, {
      quantity,
      unit_cost: cost,
      location_id: loc,
      supplier_id: suppliers[supplier].id,
      serials,
      note: 'Demo opening stock',
    });
  const zteSerials = sn('ZTEG', 1, 12);
  const hwSerials = sn('HWTC', 1, 6);
  await receive(zte, warehouse, 12, 315000, zteSerials);
  await receive(huawei, warehouse, 6, 350000, hwSerials);
  await receive(drop, warehouse, 3000, 2100, undefined, 1);
  await receive(patch, warehouse, 80, 12500, undefined, 1);
  await receive(splitter, warehouse, 10, 95000, undefined, 1);
  await receive(closure, pop, 4, 240000, undefined, 1);
  await receive(drop, pop, 500, 2100, undefined, 1);
  await createCount(scope, actor, {
    location_id: pop,
    reason: 'Stock opname POP Dago',
    lines: [
      { item_id: drop, counted_quantity: 496.5 },
      { item_id: closure, counted_quantity: 4 },
    ],
  });

  // one request per state, asked by the technician when there is one
  const who: Requester = { userId: opts.technicianId, manager: true, audit: false };
  const plans: [string, RequestAction[], Record<string, unknown>?][] = [
    ['draft', []],
    ['pending', []],
    ['deferred', ['defer']],
    ['approved', ['approve']],
    ['rejected', ['reject']],
    ['processing', ['approve', 'process']],
    ['completed', ['approve', 'process', 'complete']],
    ['cancelled', ['cancel']],
  ];
  for (const [i, [state, actions]] of plans.entries()) {
    const serialItem = state === 'processing' || state === 'completed';
    const id = await createRequest(scope, who, {
      type: van && i % 2 === 1 ? 'transfer' : 'stock_out',
      source_location_id: warehouse,
      destination_location_id: van && i % 2 === 1 ? van : null,
      note: `Demo request (${state})`,
      draft: state === 'draft',
      items: serialItem
        ? [
            { item_id: zte, quantity: 1, note: 'ONT for an installation' },
            { item_id: drop, quantity: 150 },
          ]
        : [
            { item_id: patch, quantity: 2 + i },
            { item_id: splitter, quantity: 1 },
          ],
    });
    for (const action of actions) {
      const body =
        action === 'process'
          ? { items: [{ item_id: zte, serials: [zteSerials[11 - i]] }] }
          : action === 'reject' || action === 'defer'
            ? { reason: action === 'reject' ? 'Stock reserved for the new cluster' : 'Wait for the next delivery' }
            : {};
      await transitionRequest(scope, who, id, action, body);
    }
  }
  const homeBase = await scope.table('home_bases').orderBy('id').first('id');
  if (homeBase) {
    await knex('home_base_inventory_locations').insert([
      { tenant_id: tenantId, home_base_id: homeBase.id, location_id: warehouse },
      { tenant_id: tenantId, home_base_id: homeBase.id, location_id: pop },
    ]);
  }
  return 'seeded';
}

/**
 * Gives demo-isp and demo-sandbox their demo inventory when they have none (bin/dev.ts, on every
 * start, so an existing `.data` gets it too). Each tenant in its own transaction.
 * @returns per slug what happened (absent tenants are skipped)
 */
export async function ensureDemoInventory(
  knex: Knex,
  log: (line: string) => void = () => {},
): Promise<Record<string, DemoInventoryResult>> {
  const out: Record<string, DemoInventoryResult> = {};
  for (const slug of ['demo-isp', 'demo-sandbox']) {
    const tenant = await knex('tenants').where({ slug }).first('id');
    if (!tenant) continue;
    const tech = await knex('users as u')
      .join('user_roles as ur', 'ur.user_id', 'u.id')
      .join('roles as r', 'r.id', 'ur.role_id')
      .where({ 'u.tenant_id': tenant.id, 'r.name': 'technician' })
      .orderBy('u.id')
      .first('u.id');
    out[slug] = await knex.transaction((trx) =>
      seedDemoInventory(trx, tenant.id, { technicianId: tech?.id ?? null, serialPrefix: serialPrefixOf(slug) }),
    );
    if (out[slug] === 'seeded') log(`demo inventory: ${slug} has its warehouse, ONTs, suppliers and requests`);
  }
  return out;
}

/** A short stable tag of a tenant slug for its demo serial numbers (upper-case hex). */
export function serialPrefixOf(slug: string): string {
  let h = 2166136261;
  for (const c of slug) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  return h.toString(16).toUpperCase().padStart(8, '0').slice(0, 6);
}
