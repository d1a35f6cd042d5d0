import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import { idParams } from '../shared/schemas.js';
import { ticketRead, ticketStatusBody } from './schemas.js';
import { changeStatus, ticketById, type TicketStatus } from './service.js';

/** Admin ticket endpoints (document 2, "Tickets"; document 1 state table). */
export const ticketRoutes: AnyWebRoute[] = [
  webRoute<{ id: number }, Record<string, never>, { status: TicketStatus }>({
    method: 'patch',
    path: '/api/tickets/:id',
    tag: 'tickets',
    auth: 'login',
    tenant: true,
    permission: 'tickets.update',
    module: 'tickets',
    demoAction: 'tickets.status.update',
    summary: "Change a ticket's status; reopening a resolved or closed ticket needs Administrator or Super Admin",
    params: idParams,
    body: ticketStatusBody,
    responses: {
      200: { description: 'Updated ticket', schema: { type: 'object', properties: { data: ticketRead } } },
      404: { description: 'Not a ticket of the tenant' },
    },
    async handler(ctx) {
      const { id } = ctx.state.params;
      await changeStatus(ctx.state.scope!, id, ctx.state.body.status, ctx.state.auth!.roles);
      ctx.body = { data: await ticketById(ctx.state.scope!, id) };
    },
  }),
];
