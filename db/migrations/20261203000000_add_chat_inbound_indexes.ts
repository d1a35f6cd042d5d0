import type { Knex } from 'knex';

/**
 * Issue 11 items 1 and 2: indexes of the chat bot's inbound path on `communication_messages`
 * (the inbound rows themselves are deduplicated by issue 9's `communication_messages_inbound_message_id`,
 * unique on (tenant_id, channel, account_ref, message_id) for direction `in`).
 * - `communication_messages_chat_out_message_id`: a provider's receipt finds the outbound row by
 *   its message id (tenant, channel, message_id) without scanning the outbox;
 * - `communication_messages_auto_reply_once`: unique (tenant_id, reply_to_id) of `auto_reply`
 *   rows: one inbound message never gets two auto-replies, whatever runs twice;
 * - `communication_messages_auto_reply_recent`: the "one auto-reply per sender per 60 s" check
 *   (tenant, counterpart, newest first) of `auto_reply` rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `CREATE INDEX communication_messages_chat_out_message_id
       ON communication_messages (tenant_id, channel, message_id)
       WHERE direction = 'out' AND message_id IS NOT NULL AND channel IN ('whatsapp', 'messenger')`,
  );
  await knex.raw(
    `CREATE UNIQUE INDEX communication_messages_auto_reply_once
       ON communication_messages (tenant_id, reply_to_id)
       WHERE source = 'auto_reply' AND reply_to_id IS NOT NULL`,
  );
  await knex.raw(
    `CREATE INDEX communication_messages_auto_reply_recent
       ON communication_messages (tenant_id, counterpart, created_at DESC)
       WHERE source = 'auto_reply'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS communication_messages_auto_reply_recent');
  await knex.raw('DROP INDEX IF EXISTS communication_messages_auto_reply_once');
  await knex.raw('DROP INDEX IF EXISTS communication_messages_chat_out_message_id');
}
