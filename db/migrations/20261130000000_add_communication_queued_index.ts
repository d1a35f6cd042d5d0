import type { Knex } from 'knex';

/**
 * Issue 9 item 5: the email-send sweep (every minute, platform-wide) looks for outbound rows still
 * `queued` a minute after they were queued. A partial index keeps that a lookup among the few queued
 * rows instead of a scan of every message of every tenant.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `CREATE INDEX communication_messages_queued
       ON communication_messages (queued_at, id)
       WHERE status = 'queued' AND deleted_at IS NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS communication_messages_queued');
}
