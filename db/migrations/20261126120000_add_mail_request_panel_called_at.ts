import type { Knex } from 'knex';

/**
 * mail_mailbox_requests.panel_called_at (issue 7 item 4, DESIGN.md §3 "processors are idempotent"):
 * set by the mailbox-create job, and committed, just before it asks the mail panel to create the
 * mailbox. A later run of the same request that hears "already exists" from the panel knows an
 * earlier run may have created it (a worker killed with -9 after the panel call, a timed-out call),
 * and completes the request instead of failing it. BullMQ's attempt counter cannot tell: a stalled
 * job runs again with attemptsMade unchanged.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mail_mailbox_requests', (t) => {
    t.timestamp('panel_called_at', { useTz: true }).nullable();
  });
}

/** Reverts up(): drops the column. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mail_mailbox_requests', (t) => {
    t.dropColumn('panel_called_at');
  });
}
