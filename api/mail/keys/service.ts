import type { Knex } from 'knex';
import { mintToken, parseToken, tokenMatches } from '../../../lib/token.js';

/**
 * Mailbox API keys (issue 3, document 3 "Authentication"): the shared token design of DESIGN.md §5
 * with prefix `mbxk`; stored as SHA-256 only, shown once at creation; limited to one domain, a set
 * of that domain's mailboxes and a set of scopes.
 */
export const MAIL_SCOPES = ['emails:read', 'emails:reply', 'emails:send', 'mailboxes:create'] as const;
export type MailScope = (typeof MAIL_SCOPES)[number];

/** The dashboard's permission sets (issue 3 §5). */
export const PERMISSION_SETS: Record<'read' | 'reply' | 'full', MailScope[]> = {
  read: ['emails:read'],
  reply: ['emails:read', 'emails:reply'],
  full: [...MAIL_SCOPES],
};

/** A verified key as the API middleware sees it. */
export interface ApiKeyInfo {
  id: number;
  name: string;
  scopes: MailScope[];
  domain_id: number;
  domain: string;
  /** lowercase e-mail addresses the key may use */
  mailboxes: string[];
  last_used_at: Date | null;
}

/** Key info shape for listings (never the hash, never the plain key). */
export interface ApiKeyListItem {
  id: number;
  name: string;
  prefix: string;
  scopes: MailScope[];
  domain: string;
  mailboxes: string[];
  last_used_at: string | null;
  created_at: string;
  revoked_at: string | null;
  created_by: string | null;
}

/**
 * Creates a key. Mailboxes must belong to the domain.
 * @param input.scopes subset of MAIL_SCOPES (non-empty)
 * @param input.mailboxIds ids of mail_mailboxes rows of the domain
 * @returns the list item and the plain key (show it once; it is not stored)
 * @throws Error with a field-named message for an unknown domain, a foreign mailbox or an unknown scope
 */
export async function createApiKey(
  knex: Knex,
  input: {
    name: string;
    domainId: number;
    mailboxIds: number[];
    scopes: string[];
    operatorId?: number | null;
    expiresAt?: Date | null;
  },
): Promise<{ data: ApiKeyListItem; key: string }> {
  const scopes = [...new Set(input.scopes)];
  if (!scopes.length || scopes.some((s) => !MAIL_SCOPES.includes(s as MailScope)))
    throw new KeyInputError('scopes', `scopes must be a non-empty subset of ${MAIL_SCOPES.join(', ')}`);
  if (!input.name?.trim()) throw new KeyInputError('name', 'name is required');
  return knex.transaction(async (trx) => {
    const domain = await trx('mail_domains').where({ id: input.domainId }).first('id', 'name');
    if (!domain) throw new KeyInputError('domain', 'unknown domain');
    const ids = [...new Set(input.mailboxIds.map(Number))];
    const boxes = ids.length
      ? await trx('mail_mailboxes').whereIn('id', ids).where({ domain_id: domain.id }).pluck('id')
      : [];
    if (boxes.length !== ids.length)
      throw new KeyInputError('mailboxes', 'every mailbox must belong to the chosen domain');
    const { rows } = await trx.raw(`SELECT nextval(pg_get_serial_sequence('mail_api_keys', 'id')) AS id`);
    const id = Number(rows[0].id);
    const minted = mintToken('mailbox', id);
    await trx('mail_api_keys').insert({
      id,
      name: input.name.trim().slice(0, 190),
      token_hash: minted.hash,
      scopes: JSON.stringify(MAIL_SCOPES.filter((s) => scopes.includes(s))),
      domain_id: domain.id,
      created_by: input.operatorId ?? null,
      expires_at: input.expiresAt ?? null,
    });
    if (ids.length) await trx('mail_api_key_mailboxes').insert(ids.map((mailbox_id) => ({ key_id: id, mailbox_id })));
    const [item] = await listApiKeys(trx, { id });
    return { data: item, key: minted.token };
  });
}

/** Field-named input error of the key service (the dashboard and the CLI show it). */
export class KeyInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Lists keys, newest first (revoked ones included, marked), optionally one id.
 * `prefix` is the non-secret head of the key (`mbxk_<id>_`), enough to recognise it.
 */
export async function listApiKeys(
  knex: Knex | Knex.Transaction,
  filter: { id?: number } = {},
): Promise<ApiKeyListItem[]> {
  const q = knex('mail_api_keys as k')
    .join('mail_domains as d', 'd.id', 'k.domain_id')
    .leftJoin('mail_operators as o', 'o.id', 'k.created_by')
    .select(
      'k.id',
      'k.name',
      'k.scopes',
      'k.last_used_at',
      'k.created_at',
      'k.revoked_at',
      'd.name as domain',
      'o.email as created_by',
      knex.raw(
        `coalesce((SELECT array_agg(m.email ORDER BY m.email) FROM mail_api_key_mailboxes km JOIN mail_mailboxes m ON m.id = km.mailbox_id WHERE km.key_id = k.id), '{}') AS mailboxes`,
      ),
    )
    .orderBy([
      { column: 'k.created_at', order: 'desc' },
      { column: 'k.id', order: 'desc' },
    ]);
  if (filter.id) q.where('k.id', filter.id);
  const rows = await q;
  return rows.map((r: any) => ({
    id: Number(r.id),
    name: r.name,
    prefix: `mbxk_${r.id}_`,
    scopes: r.scopes,
    domain: r.domain,
    mailboxes: r.mailboxes,
    last_used_at: r.last_used_at ? new Date(r.last_used_at).toISOString() : null,
    created_at: new Date(r.created_at).toISOString(),
    revoked_at: r.revoked_at ? new Date(r.revoked_at).toISOString() : null,
    created_by: r.created_by ?? null,
  }));
}

/** Revokes a key. @returns false when unknown or already revoked */
export async function revokeApiKey(knex: Knex, id: number): Promise<boolean> {
  const n = await knex('mail_api_keys')
    .where({ id })
    .whereNull('revoked_at')
    .update({ revoked_at: knex.fn.now(), updated_at: knex.fn.now() });
  return n > 0;
}

/**
 * Verifies a presented key: shape and checksum first (no query for garbage), then one query that
 * checks revocation and expiry, then a constant-time hash comparison. Writes last_used_at at most
 * once a minute.
 * @returns the key info, or null (-> 401 unauthorized)
 */
export async function verifyApiKey(knex: Knex, raw: string | null): Promise<ApiKeyInfo | null> {
  const parsed = parseToken(raw);
  if (!parsed || parsed.kind !== 'mailbox') return null;
  const row = await knex('mail_api_keys as k')
    .join('mail_domains as d', 'd.id', 'k.domain_id')
    .where('k.id', parsed.id)
    .whereNull('k.revoked_at')
    .where((q) => q.whereNull('k.expires_at').orWhere('k.expires_at', '>', knex.fn.now()))
    .first(
      'k.id',
      'k.name',
      'k.token_hash',
      'k.scopes',
      'k.domain_id',
      'k.last_used_at',
      'd.name as domain',
      knex.raw(
        `coalesce((SELECT array_agg(lower(m.email)) FROM mail_api_key_mailboxes km JOIN mail_mailboxes m ON m.id = km.mailbox_id WHERE km.key_id = k.id), '{}') AS mailboxes`,
      ),
    );
  if (!row || !tokenMatches(parsed.token, row.token_hash)) return null;
  if (!row.last_used_at || Date.now() - new Date(row.last_used_at).getTime() > 60_000) {
    await knex('mail_api_keys').where({ id: row.id }).update({ last_used_at: knex.fn.now() });
  }
  return {
    id: Number(row.id),
    name: row.name,
    scopes: row.scopes,
    domain_id: row.domain_id,
    domain: row.domain,
    mailboxes: row.mailboxes,
    last_used_at: row.last_used_at,
  };
}
