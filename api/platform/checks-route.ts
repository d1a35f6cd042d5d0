import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import { AppError } from '../errors.js';
import { waitForJob } from '../email/sync.js';
import {
  enqueueProvisioningCheck,
  QUEUE as CHECK_QUEUE,
  type ProvisioningCheckResult,
} from '../../jobs/provisioning-check.js';
import type { CheckProvider } from '../../jobs/provisioning/checks.js';
import { recordPlatformAudit } from './audit.js';
import { checkResultOne, providerParams } from './credentials-schemas.js';
import { platformActorOf, platformBase } from './tenants-routes.js';

/** How long the check route waits for its job, in ms (issue 13 item 5: ≤ 20 s). */
export const CHECK_WAIT_MS = 20_000;

/** 422 of a check that failed, did not run or did not finish in time; `errors.provider` holds the reason. */
export class ProvisioningCheckFailed extends AppError {
  constructor(provider: string, reason: string, details: Record<string, unknown> = {}) {
    super(422, 'provisioning_check_failed', reason, {
      errors: { provider: [reason] },
      extra: { data: { provider, ok: false, details } },
    });
  }
}

/** POST /api/platform/provisioning/credentials/test/{provider} (issue 13 item 5). */
export const platformCheckRoutes: AnyWebRoute[] = [
  webRoute<{ provider: CheckProvider }>({
    ...platformBase,
    method: 'post',
    path: '/api/platform/provisioning/credentials/test/:provider',
    params: providerParams,
    summary:
      'Read-only check of saved credentials (tenant_db, cloudflare, mail_panel, storage, backup) on the provisioning-check queue, waited up to 20 s; records last_test',
    responses: {
      200: { description: '{data: {provider, ok: true, message, details}}', schema: checkResultOne },
      422: { description: 'provisioning_check_failed: the reason in message and errors.provider' },
    },
    async handler(ctx) {
      const { provider } = ctx.state.params;
      const queue = ctx.deps.queues.get(CHECK_QUEUE);
      const job = await enqueueProvisioningCheck(queue, provider);
      const waitMs = ctx.deps.config.provisioningCheckWaitMs ?? CHECK_WAIT_MS;
      let result: ProvisioningCheckResult | undefined;
      try {
        result = await waitForJob<ProvisioningCheckResult>(queue, job, waitMs);
      } catch {
        throw new ProvisioningCheckFailed(provider, 'The check could not run.');
      }
      if (!result) throw new ProvisioningCheckFailed(provider, `The check did not finish in ${waitMs / 1000} s.`);
      await recordPlatformAudit(ctx.deps.knex, {
        userId: platformActorOf(ctx).userId,
        action: 'platform.provisioning_credentials_test',
        subject: { type: 'provisioning_credentials', id: null },
        after: { provider, ok: result.ok },
        ip: ctx.ip,
      });
      if (!result.ok) throw new ProvisioningCheckFailed(provider, result.message, result.details);
      ctx.body = { data: result };
    },
  }),
];
