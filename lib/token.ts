import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * One token design for every kind of bearer token (DESIGN.md §5):
 * `<prefix>_<id>_<secret><checksum>` where prefix names the kind, id is the row id (decimal),
 * secret is 256 random bits as 64 hex characters and checksum is the CRC-32 of everything before
 * it as 8 hex characters. Only the SHA-256 of the whole token is stored; comparison is constant
 * time; a malformed token (wrong shape or checksum) is rejected before any database query.
 */
export const TOKEN_PREFIX = {
  login: 'ispl',
  integration: 'ispi',
  pilot: 'ispp',
  mailbox: 'mbxk',
  operator: 'mbxs',
  board: 'ispb',
} as const;

/** A token kind: login, integration, pilot, mailbox, operator or board. */
export type TokenKind = keyof typeof TOKEN_PREFIX;

const KIND_BY_PREFIX = Object.fromEntries(Object.entries(TOKEN_PREFIX).map(([k, p]) => [p, k])) as Record<
  string,
  TokenKind
>;
const SHAPE = /^([a-z]{4})_([1-9][0-9]{0,17})_([0-9a-f]{64})([0-9a-f]{8})$/;

function checksum(body: string): string {
  return (crc32(body) >>> 0).toString(16).padStart(8, '0');
}

/** A freshly minted token: `token` is the plain text (show once), `hash` the 32-byte SHA-256 to store. */
export interface MintedToken {
  token: string;
  hash: Buffer;
}

/**
 * Mints a token for the row `id`.
 * @param kind token kind (decides the prefix)
 * @param id positive integer row id the token is stored under
 */
export function mintToken(kind: TokenKind, id: number | string): MintedToken {
  const body = `${TOKEN_PREFIX[kind]}_${id}_${randomBytes(32).toString('hex')}`;
  const token = body + checksum(body);
  return { token, hash: hashToken(token) };
}

/** A token that passed the shape and checksum test (not yet checked against the database). */
export interface ParsedToken {
  kind: TokenKind;
  id: number;
  token: string;
}

/**
 * Checks shape and checksum without touching any store.
 * @returns the parsed token, or null when malformed, of an unknown kind, or with a bad checksum
 */
export function parseToken(raw: string | undefined | null): ParsedToken | null {
  if (!raw || raw.length > 120) return null;
  const m = SHAPE.exec(raw);
  if (!m) return null;
  const kind = KIND_BY_PREFIX[m[1]];
  if (!kind) return null;
  if (checksum(raw.slice(0, raw.length - 8)) !== m[4]) return null;
  const id = Number(m[2]);
  if (!Number.isSafeInteger(id)) return null;
  return { kind, id, token: raw };
}

/** SHA-256 of the whole token (32 bytes): the only form in which tokens are stored. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** Constant-time comparison of a presented token against a stored hash. */
export function tokenMatches(token: string, storedHash: Buffer | null | undefined): boolean {
  if (!storedHash || storedHash.length !== 32) return false;
  return timingSafeEqual(hashToken(token), storedHash);
}

/**
 * Reads a bearer token from an Authorization header value.
 * @returns the token text, or null when the header is missing or not of the Bearer scheme
 */
export function bearer(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}
