import type { TenantScope } from '../../db/tenant-scope.js';
import { WabotSetting } from '../../db/models/index.js';
import { newWebhookSecret, sealWabotSetting } from '../../db/wabot-secrets.js';
import { recordAudit } from '../audit-logs/service.js';
import { ValidationFailed } from '../errors.js';
import { webhookUrl, type Actor, type WebhookBase } from './service.js';

/**
 * `POST /api/wabot/webhook-secret/rotate` (issue 11 item 1, decision): a new 256-bit webhook
 * secret replaces the old one in the same statement, so the old key is refused from the commit on
 * (the inbound route reads the sealed secret on every call, nothing caches it). Audited as
 * `wabot.webhook_secret_rotated` without any secret.
 * @param appKey APP_KEY, to seal the new secret
 * @returns the new webhook_url (to paste into the provider's dashboard)
 * @throws ValidationFailed (422) before the first configuration save (there is no secret yet);
 *   Error when the app has no APP_KEY
 */
export async function rotateWebhookSecret(
  scope: TenantScope,
  appKey: Buffer | undefined,
  actor: Actor,
  base: WebhookBase,
): Promise<{ webhook_url: string }> {
  if (!appKey) throw new Error('APP_KEY is not configured: the webhook secret cannot be sealed');
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(WabotSetting).forUpdate().first();
    if (!row) {
      throw new ValidationFailed({
        config: ['Save the chat-bot configuration first: the webhook secret is made by the first save.'],
      });
    }
    const secret = newWebhookSecret();
    await s
      .query(WabotSetting)
      .where('id', row.id)
      .patch({
        webhook_secret_enc: sealWabotSetting(appKey, 'webhook_secret', s.tenantId, secret),
        updated_at: new Date(),
      });
    await recordAudit(s, {
      userId: actor.userId,
      action: 'wabot.webhook_secret_rotated',
      subject: { type: 'wabot_settings', id: row.id },
      before: null,
      after: { webhook_secret: 'rotated' },
      ip: actor.ip ?? null,
    });
    return { webhook_url: webhookUrl(base, secret) };
  });
}
