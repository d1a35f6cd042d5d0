import type { Knex } from 'knex';
import { forEachTenantDatabase } from '../../db/tenant-routing.js';
import { ValidationFailed } from '../errors.js';

/**
 * A customer mailbox address is unique across tenants (issue 13 item 9), but after cutovers the
 * customer_mailboxes rows live in several databases (issue 15 item 4), where no unique index can
 * span them. The claim is made atomic on the SHARED database: an advisory transaction lock on the
 * lower-cased address is held around "is it taken anywhere" and the insert, so two creations of
 * one address (two tenants, two databases) run one after the other and the second sees the first.
 */

/** Advisory-lock class of a mailbox address claim (`pg_advisory_xact_lock(class, hashtext(address))`). */
export const MAILBOX_CLAIM_LOCK_CLASS = 15_017;

/** The documented refusal of an address some tenant already has (422 VALIDATION_FAILED `local_part`). */
export function addressTaken(address: string): ValidationFailed {
  return new ValidationFailed({ local_part: [`${address} is taken.`] });
}

/**
 * Whether an address is taken in any database holding customer_mailboxes (the shared one without the
 * cut-over tenants, then each cut-over tenant's; case-insensitive). A tenant database that cannot be
 * reached is skipped (as before the claim: its outage must not stop every tenant's mailboxes).
 * @param shared the shared database
 */
export async function addressIsTaken(shared: Knex, appKey: Buffer, address: string): Promise<boolean> {
  let taken = false;
  await forEachTenantDatabase(shared, appKey, async (t) => {
    if (taken) return;
    const q = t.knex('customer_mailboxes').whereRaw('lower(address) = lower(?)', [address]);
    if (t.excludeTenantIds.length) q.whereNotIn('tenant_id', t.excludeTenantIds);
    taken = !!(await q.first('id'));
  });
  return taken;
}

/**
 * Claims an address: under the shared database's advisory lock on it, checks every database and,
 * when free, runs `insert` (which must commit before it returns: the lock ends with this
 * function's shared transaction, after it).
 * @param shared the shared database (one connection is held for the claim)
 * @param insert writes the customer_mailboxes row (autocommit, in the tenant's database)
 * @returns what `insert` returned
 * @throws ValidationFailed (422 `local_part` "... is taken.") when another row has the address; the
 *   database error when a database cannot be asked
 */
export async function claimMailboxAddress<T>(
  shared: Knex,
  appKey: Buffer,
  address: string,
  insert: () => Promise<T>,
): Promise<T> {
  return shared.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(?, hashtext(?))', [MAILBOX_CLAIM_LOCK_CLASS, address.toLowerCase()]);
    if (await addressIsTaken(shared, appKey, address)) throw addressTaken(address);
    return insert();
  });
}
