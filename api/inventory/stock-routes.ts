import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { assertDemoAllowed } from '../middleware/demo-guard.js';
import { idParams } from '../shared/schemas.js';
import { actorOf, inventoryBase } from './routes.js';
import {
  countBody,
  countList,
  countOne,
  countQuery,
  mutationList,
  mutationQuery,
  serialList,
  serialQuery,
  stockInBody,
  stockInOne,
  stockList,
  stockQuery,
} from './stock-schemas.js';
import { stockIn, type StockInInput } from './stock-in.js';
import {
  listMutations,
  listSerials,
  listStock,
  type MutationQuery,
  type SerialQuery,
  type StockQuery,
} from './stock.js';
import { countById, createCount, listCounts, type CountInput, type CountListQuery } from './counts.js';

/**
 * The ledger routes (issue 16 items 2, 3): stock-in, stock, mutations, serials and counts. Reads
 * need inventory.view; stock-in and counts inventory.manage. A paid stock-in is refused on a demo
 * tenant (403 demo_guard_blocked, action inventory.paid_stock_in); an unpaid one is allowed.
 */
export const inventoryStockRoutes: AnyWebRoute[] = [
  webRoute<{ id: number }, Record<string, never>, StockInInput>({
    ...inventoryBase,
    method: 'post',
    path: '/api/inventory/:id/stock-in',
    permission: 'inventory.manage',
    params: idParams,
    body: stockInBody,
    summary: 'Receive stock into a location: a stock_in mutation, the serials, and a purchase (finance_status pending)',
    responses: {
      201: { description: 'The purchase with its mutation', schema: stockInOne },
      403: {
        description:
          'FORBIDDEN: inventory.manage missing; module_disabled: the inventory module is off; demo_guard_blocked: a paid stock-in (finance_paid true) on a demo tenant.',
      },
      404: { description: 'Not an inventory item of the tenant' },
      422: {
        description:
          'VALIDATION_FAILED (fields, foreign location, supplier or finance account) or INSUFFICIENT_STOCK (a serial number the tenant knows already).',
      },
    },
    async handler(ctx) {
      if (ctx.state.body.finance_paid) assertDemoAllowed(ctx.state.tenant, 'inventory.paid_stock_in');
      ctx.status = 201;
      ctx.body = { data: await stockIn(ctx.state.scope!, actorOf(ctx), ctx.state.params.id, ctx.state.body) };
    },
  }),
  webRoute<Input, StockQuery>({
    ...inventoryBase,
    method: 'get',
    path: '/api/inventory/stock',
    permission: 'inventory.view',
    query: stockQuery,
    summary: 'Stock per item and location (rows above 0 unless include_zero)',
    responses: { 200: { description: 'Page of stock rows', schema: stockList } },
    async handler(ctx) {
      ctx.body = await listStock(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, MutationQuery>({
    ...inventoryBase,
    method: 'get',
    path: '/api/inventory/mutations',
    permission: 'inventory.view',
    query: mutationQuery,
    summary: 'The stock ledger, newest first (append-only; quantity signed, balance_after the stock after it)',
    responses: { 200: { description: 'Page of mutations', schema: mutationList } },
    async handler(ctx) {
      ctx.body = await listMutations(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, SerialQuery>({
    ...inventoryBase,
    method: 'get',
    path: '/api/inventory/serials',
    permission: 'inventory.view',
    query: serialQuery,
    summary: 'Serial numbers (in_stock, issued, written_off), newest first',
    responses: { 200: { description: 'Page of serials', schema: serialList } },
    async handler(ctx) {
      ctx.body = await listSerials(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, CountListQuery>({
    ...inventoryBase,
    method: 'get',
    path: '/api/inventory/counts',
    permission: 'inventory.view',
    query: countQuery,
    summary: 'Stock counts, newest first',
    responses: { 200: { description: 'Page of counts', schema: countList } },
    async handler(ctx) {
      ctx.body = await listCounts(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, CountInput>({
    ...inventoryBase,
    method: 'post',
    path: '/api/inventory/counts',
    permission: 'inventory.manage',
    body: countBody,
    summary: 'Record a stock count of a location: differences become adjustments, missing serials are written off',
    responses: { 201: { description: 'The count with its lines', schema: countOne } },
    async handler(ctx) {
      const id = await createCount(ctx.state.scope!, actorOf(ctx), ctx.state.body);
      ctx.status = 201;
      ctx.body = { data: await countById(ctx.state.scope!, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...inventoryBase,
    method: 'get',
    path: '/api/inventory/counts/:id',
    permission: 'inventory.view',
    params: idParams,
    summary: 'Show a count with its lines',
    responses: {
      200: { description: 'The count', schema: countOne },
      404: { description: 'Not a count of the tenant' },
    },
    async handler(ctx) {
      ctx.body = { data: await countById(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
];
