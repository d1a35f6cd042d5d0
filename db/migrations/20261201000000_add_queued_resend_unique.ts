import type { Knex } from 'knex';

/**
 * One resend in flight per failed chat message (issue 10 item 5, `POST
 * /api/communications/{id}/resend`): at most one row with a given `resent_from_id` may be `queued`.
 * The route locks the original and answers 409 itself; this partial unique index is the guard that
 * holds whatever the code does (a second insert fails with a unique violation, mapped to 409).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `CREATE UNIQUE INDEX communication_messages_one_queued_resend
       ON communication_messages (resent_from_id)
       WHERE resent_from_id IS NOT NULL AND status = 'queued'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS communication_messages_one_queued_resend');
}
