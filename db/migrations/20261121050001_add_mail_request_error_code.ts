import type { Knex } from 'knex';

/**
 * Mailbox creation requests (issue 3, docs/mailbox-api.md):
 * - error_code: why a request failed, so the API can answer the right code (exists -> 409
 *   mailbox_exists, no_panel -> 409 panel_not_configured, others -> 502 mail_server_error);
 * - a partial unique index: at most one pending request per address, the real guard against two
 *   concurrent creates of the same mailbox.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mail_mailbox_requests', (t) => {
    t.string('error_code', 40).nullable(); // exists, auth, permanent, transient, rate_limited, no_panel, secret_expired
  });
  await knex.raw(
    `CREATE UNIQUE INDEX mail_mailbox_requests_pending_unique ON mail_mailbox_requests (domain_id, lower(local_part)) WHERE status = 'pending'`,
  );
}

/** Reverts up(): drops the column and the index. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS mail_mailbox_requests_pending_unique');
  await knex.schema.alterTable('mail_mailbox_requests', (t) => {
    t.dropColumn('error_code');
  });
}
