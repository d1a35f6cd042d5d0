import type { Knex } from 'knex';

/**
 * The chat bot's send path (issue 10 item 3) on `communication_messages` (an outbound WhatsApp or
 * Messenger row is written `queued` by enqueueChatMessage, jobs/wabot/enqueue.ts, and sent by the
 * `wabot-send` job). The chat account the message was routed to is `account_ref` (the account id of
 * the tenant's chat settings; the column already holds the e-mail account for e-mail). New columns:
 * - `recipient_kind`: phone, group or conversation (how the adapter addresses `counterpart`);
 * - `manual`: sent by a person's explicit action (the Test and Resend routes): settings.enabled
 *   false does not stop it, where automated sends fail `bot_disabled`;
 * - `resent_from_id`: the failed row a resend copies (SET NULL when that row goes);
 * - `available_at`: when the send may happen next (the limiter's or a provider's wait), null when
 *   it may happen now; the Test route reports it and the sweeper skips rows waiting for it;
 * - `send_attempts`: requests started for this row (1 at most unless a `retry` outcome said the
 *   request never reached the provider);
 * - a partial index for the sweeper (queued outbound chat rows by queue time).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('communication_messages', (t) => {
    t.text('recipient_kind').nullable();
    t.boolean('manual').notNullable().defaultTo(false);
    t.bigInteger('resent_from_id').nullable().references('id').inTable('communication_messages').onDelete('SET NULL');
    t.timestamp('available_at', { useTz: true }).nullable();
    t.integer('send_attempts').notNullable().defaultTo(0);
  });
  await knex.raw(
    `ALTER TABLE communication_messages
       ADD CONSTRAINT communication_messages_recipient_kind_check
         CHECK (recipient_kind IN ('phone', 'group', 'conversation'))`,
  );
  await knex.raw(
    `CREATE INDEX communication_messages_chat_queued ON communication_messages (queued_at, id)
     WHERE status = 'queued' AND direction = 'out' AND channel IN ('whatsapp', 'messenger')`,
  );
  await knex.raw(
    `CREATE INDEX communication_messages_resent_from ON communication_messages (tenant_id, resent_from_id)
     WHERE resent_from_id IS NOT NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS communication_messages_resent_from');
  await knex.raw('DROP INDEX IF EXISTS communication_messages_chat_queued');
  await knex.raw(
    'ALTER TABLE communication_messages DROP CONSTRAINT IF EXISTS communication_messages_recipient_kind_check',
  );
  await knex.schema.alterTable('communication_messages', (t) => {
    t.dropColumn('send_attempts');
    t.dropColumn('available_at');
    t.dropColumn('resent_from_id');
    t.dropColumn('manual');
    t.dropColumn('recipient_kind');
  });
}
