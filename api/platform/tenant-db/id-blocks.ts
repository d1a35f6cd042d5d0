import type { Knex } from 'knex';
import { ident } from './state.js';
import type { SyncTable } from './cutover-passes.js';
import { IDENTITY_TABLES } from '../../../db/tenant-routing.js';

/**
 * Id blocks of a cut-over tenant (issue 15 item 3 e): each sequence of the tenant database's moved
 * tables restarts at the start of a block of 1,000,000 ids reserved from the shared database's
 * sequence of the same table (MAXVALUE at the block's end), so an id made in the tenant database
 * can never collide with one made in the shared database, before or after a rollback. The
 * `tenant-db-id-blocks` scheduler moves a sequence to a new block once 80 % of its block is used.
 */

/** Ids per block. */
export const ID_BLOCK_SIZE = 1_000_000;
/** Share of a block used before the scheduler gives the sequence a new one. */
export const ID_BLOCK_REFILL = 0.8;

/** A reserved block, both ends included. */
export interface IdBlock {
  table: string;
  start: number;
  end: number;
}

const seqOf = async (k: Knex | Knex.Transaction, table: string): Promise<string> =>
  (await k.raw<{ rows: { s: string }[] }>(`SELECT pg_get_serial_sequence(?, 'id') AS s`, [table])).rows[0].s;

/**
 * Reserves the next block of a table's shared sequence: under ALTER SEQUENCE (which blocks
 * concurrent nextval until commit) the sequence jumps by ID_BLOCK_SIZE; the block is recorded in
 * tenant_db_id_blocks.
 * @param knex the shared database
 */
export async function reserveIdBlock(knex: Knex, tenantId: number, table: string): Promise<IdBlock> {
  return knex.transaction(async (trx) => {
    const seq = await seqOf(trx, table);
    await trx.raw(`ALTER SEQUENCE ${seq} INCREMENT BY ${ID_BLOCK_SIZE}`);
    const st = (await trx.raw<{ rows: { is_called: boolean }[] }>(`SELECT is_called FROM ${seq}`)).rows[0];
    if (!st.is_called) await trx.raw('SELECT nextval(?::regclass)', [seq]);
    const end = Number((await trx.raw<{ rows: { v: string }[] }>('SELECT nextval(?::regclass) AS v', [seq])).rows[0].v);
    await trx.raw(`ALTER SEQUENCE ${seq} INCREMENT BY 1`);
    const block = { table, start: end - ID_BLOCK_SIZE + 1, end };
    await trx('tenant_db_id_blocks').insert({
      tenant_id: tenantId,
      table_name: table,
      block_start: block.start,
      block_end: block.end,
    });
    return block;
  });
}

/**
 * Points a tenant database's sequence at a block (RESTART at its start, MAXVALUE its end).
 * @param tk the tenant database
 */
export async function applyIdBlock(tk: Knex | Knex.Transaction, block: IdBlock): Promise<void> {
  const seq = await seqOf(tk, block.table);
  await tk.raw(`ALTER SEQUENCE ${seq} MINVALUE 1 MAXVALUE ${block.end} RESTART WITH ${block.start}`);
}

/**
 * Gives every serial moved table of the plan its first block (the cutover, step e).
 * @returns the blocks
 */
export async function startIdBlocks(knex: Knex, tk: Knex, tenantId: number, plan: SyncTable[]): Promise<IdBlock[]> {
  const out: IdBlock[] = [];
  for (const t of plan) {
    if (!t.serial || (IDENTITY_TABLES as readonly string[]).includes(t.table)) continue;
    const block = await reserveIdBlock(knex, tenantId, t.table);
    await applyIdBlock(tk, block);
    out.push(block);
  }
  return out;
}

/**
 * The scheduler's check of one cut-over tenant: each sequence whose current block is 80 % used
 * moves to a new block.
 * @returns the new blocks
 */
export async function refillIdBlocks(knex: Knex, tk: Knex, tenantId: number): Promise<IdBlock[]> {
  const current = (await knex('tenant_db_id_blocks')
    .where({ tenant_id: tenantId })
    .distinctOn('table_name')
    .orderBy([{ column: 'table_name' }, { column: 'id', order: 'desc' }])
    .select('table_name', 'block_start', 'block_end')) as {
    table_name: string;
    block_start: string;
    block_end: string;
  }[];
  const out: IdBlock[] = [];
  for (const b of current) {
    const seq = await seqOf(tk, b.table_name);
    const st = (
      await tk.raw<{ rows: { last_value: string; is_called: boolean }[] }>(
        `SELECT last_value, is_called FROM ${seq.split('.').map(ident).join('.')}`,
      )
    ).rows[0];
    const used = st.is_called ? Number(st.last_value) - Number(b.block_start) + 1 : 0;
    if (used < ID_BLOCK_SIZE * ID_BLOCK_REFILL) continue;
    const block = await reserveIdBlock(knex, tenantId, b.table_name);
    await applyIdBlock(tk, block);
    out.push(block);
  }
  return out;
}
