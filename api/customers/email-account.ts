import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import type { AppContext } from '../context.js';
import { AppError, NotFound, ValidationFailed } from '../errors.js';
import { idParams } from '../shared/schemas.js';
import { waitForJob } from '../email/sync.js';
import { seal, open } from '../../lib/crypto.js';
import { systemClock } from '../../lib/clock.js';
import { assertUnlocked } from '../platform/readiness.js';
import { runsDeps } from '../platform/runs/service.js';
import { generateMailboxPassword } from '../../jobs/provisioning/steps.js';
import { addressTaken, claimMailboxAddress } from './mailbox-claim.js';
import {
  customerMailboxAad,
  enqueueCustomerMailbox,
  QUEUE,
  type CustomerMailboxResult,
} from '../../jobs/customer-mailbox.js';

/**
 * Customer e-mail accounts (issue 13 item 9): POST /api/customers/{id}/email-account creates the
 * customer's mailbox at the tenant's mail domain (customers.manage, demo guard, the provisioning
 * lock) through the `customer-mailbox` queue, waited up to 30 s; GET shows it and, once within 15
 * minutes of its creation, the generated initial password.
 */

/** How long POST waits for the job, in ms. */
export const CUSTOMER_MAILBOX_WAIT_MS = 30_000;
/** How long the initial password can be fetched (once), in ms. */
export const PASSWORD_WINDOW_MS = 15 * 60_000;

const LOCAL = '^[a-z0-9]([a-z0-9._+-]{0,62}[a-z0-9])?$';

/** 422 customer_mailbox_failed: the panel refused the mailbox (the reason, never a secret). */
export class CustomerMailboxFailed extends AppError {
  constructor(reason: string) {
    super(422, 'customer_mailbox_failed', `The mailbox could not be created: ${reason}`, {
      errors: { local_part: [reason] },
    });
  }
}

/**
 * The tenant's mail domain: the domain of its provisioned mailbox, else PLATFORM_MAIL_DOMAIN for a
 * non-master tenant.
 * @throws ValidationFailed when there is none
 */
async function mailDomainOf(ctx: AppContext, tenantId: number): Promise<string> {
  const knex = ctx.deps.knex;
  const mb = await knex('provisioning_mailboxes').where({ tenant_id: tenantId, created: true }).orderBy('id').first();
  if (mb) return String(mb.address).split('@')[1];
  const t = await knex('tenants').where({ id: tenantId }).first('is_master');
  const d = t?.is_master ? undefined : ctx.deps.config.provisioning?.mailDomain;
  if (!d)
    throw new ValidationFailed({ local_part: ["The tenant has no mail domain yet: provision the tenant's mailbox."] });
  return d.toLowerCase();
}

/** What GET and POST answer (the password only when given). */
function view(row: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    email: row.address,
    status: row.status,
    quota_mb: row.quota_mb,
    created: row.status === 'created',
    error: row.error ?? null,
    created_at: row.created_at,
    ...extra,
  };
}

/** Opens and drops the sealed password (shown once). */
async function takePassword(ctx: AppContext, row: Record<string, unknown>): Promise<string | null> {
  const appKey = ctx.deps.config.appKey;
  if (!appKey || !row.password_enc || row.status !== 'created') return null;
  if (systemClock.now().getTime() - new Date(row.created_at as Date).getTime() > PASSWORD_WINDOW_MS) return null;
  const n = await ctx.state
    .scope!.table('customer_mailboxes')
    .where({ id: row.id, password_enc: row.password_enc })
    .update({ password_enc: null });
  return n
    ? open(appKey, String(row.password_enc), customerMailboxAad(Number(row.tenant_id), String(row.address)))
    : null;
}

/**
 * POST: creates (or finds) the customer's mailbox.
 * @returns [status, body]: 201 created with the password, 200 when it existed, 202 while pending
 * @throws NotFound (foreign customer), ProvisioningLocked, ValidationFailed, CustomerMailboxFailed,
 *   QueueUnavailableError (503)
 */
async function createAccount(ctx: AppContext, id: number, body: { local_part?: string; quota_mb?: number }) {
  const scope = ctx.state.scope!;
  const customer = await scope.table('customers').where({ id }).first('id', 'code');
  if (!customer) throw new NotFound('Customer');
  const { rt } = runsDeps(ctx);
  await assertUnlocked(rt.source);
  const appKey = ctx.deps.config.appKey;
  if (!appKey) throw new Error('APP_KEY is not configured');
  let row = await scope.table('customer_mailboxes').where({ customer_id: id }).first();
  if (!row || row.status === 'failed') {
    if (row) await scope.table('customer_mailboxes').where({ id: row.id }).del();
    const slug = ctx.state.tenant!.slug;
    const local = (body.local_part ?? `${slug}.${String(customer.code)}`).toLowerCase();
    if (!new RegExp(LOCAL).test(local)) throw new ValidationFailed({ local_part: ['Not a valid mailbox name.'] });
    const address = `${local}@${await mailDomainOf(ctx, scope.tenantId)}`;
    // addresses are unique across tenants and databases: claimed under the shared database's lock
    // on the address (issue 15 item 4, api/customers/mailbox-claim.ts)
    const password = generateMailboxPassword();
    try {
      row = await claimMailboxAddress(ctx.deps.knex, appKey, address, () =>
        scope.insert('customer_mailboxes', {
          customer_id: id,
          address,
          quota_mb: body.quota_mb ?? 1024,
          status: 'pending',
          password_enc: seal(appKey, password, customerMailboxAad(scope.tenantId, address)),
        }),
      );
    } catch (err) {
      if ((err as { code?: string }).code !== '23505') throw err;
      row = await scope.table('customer_mailboxes').where({ customer_id: id }).first();
      if (!row) throw addressTaken(address);
    }
  }
  if (row.status === 'existed' || row.status === 'created') return [200, view(row, { created: false })] as const;
  const queue = ctx.deps.queues.get(QUEUE);
  const job = await enqueueCustomerMailbox(queue, Number(row.id), scope.tenantId);
  let result: CustomerMailboxResult | undefined;
  try {
    result = await waitForJob<CustomerMailboxResult>(
      queue,
      job,
      ctx.deps.config.provisioning?.customerMailboxWaitMs ?? CUSTOMER_MAILBOX_WAIT_MS,
    );
  } catch (err) {
    throw new CustomerMailboxFailed(err instanceof Error ? err.message : 'the job failed');
  }
  const fresh = await scope.table('customer_mailboxes').where({ id: row.id }).first();
  if (!result) return [202, view(fresh)] as const;
  if (result.status === 'existed') return [200, view(fresh, { created: false })] as const;
  return [201, view(fresh, { initial_password: await takePassword(ctx, fresh) })] as const;
}

const base = { tag: 'customers', auth: 'login', tenant: true, permission: 'customers.manage' } as const;

/** The customer e-mail account routes. */
export const customerEmailAccountRoutes: AnyWebRoute[] = [
  webRoute<{ id: number }, Input, { local_part?: string; quota_mb?: number }>({
    ...base,
    method: 'post',
    path: '/api/customers/:id/email-account',
    params: idParams,
    demoAction: 'customers.email_account',
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        local_part: { type: 'string', maxLength: 64, pattern: LOCAL, description: 'Default {tenant slug}.{code}.' },
        quota_mb: { type: 'integer', minimum: 0, maximum: 102400, description: '0 unlimited (default 1024).' },
      },
    },
    summary: "Create the customer's mailbox at the tenant's mail domain (waits up to 30 s; sets customers.email)",
    responses: {
      201: { description: '{data: {email, created: true, initial_password}}' },
      200: { description: '{data: {email, created: false}}: it existed' },
      202: { description: '{data: {email, status: pending}}: GET shows the password once when done' },
      404: { description: 'Not a customer of the tenant' },
      422: { description: 'VALIDATION_FAILED, provisioning_locked, customer_mailbox_failed' },
      503: { description: 'QUEUE_UNAVAILABLE' },
    },
    async handler(ctx) {
      const [status, data] = await createAccount(ctx, ctx.state.params.id, ctx.state.body);
      ctx.status = status;
      ctx.body = { data };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/customers/:id/email-account',
    params: idParams,
    summary: "The customer's mailbox; the initial password once, within 15 minutes of its creation",
    responses: {
      200: { description: '{data: {email, status, created, initial_password}}' },
      404: { description: 'Not a customer of the tenant, or no mailbox' },
    },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const row = await scope.table('customer_mailboxes').where({ customer_id: ctx.state.params.id }).first();
      if (!row) throw new NotFound('E-mail account');
      ctx.body = { data: view(row, { initial_password: await takePassword(ctx, row) }) };
    },
  }),
];
