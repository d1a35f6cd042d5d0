import { isIP } from 'node:net';
import { PanelError, type CreateMailboxInput, type PanelType } from './types.js';

/**
 * Input rules for mailbox creation, shared by the Mailbox API (document 3, "Create mailbox
 * payload") and the panel adapters, which re-check before any connection so that nothing unchecked
 * ever reaches a URL, a form body or a shell command. Pure functions.
 */

/** Local part: an RFC 5321 dot-atom subset; letters, digits and . _ + -, 1 to 64 characters. */
export const LOCAL_PART_PATTERN = /^[a-z0-9](?:[a-z0-9._+-]{0,62}[a-z0-9])?$/i;
/** Quota as the API takes it: a whole number followed by M (MiB) or G (GiB). */
export const QUOTA_PATTERN = /^[0-9]+[MG]$/;
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 128;
export const REAL_NAME_MAX_LENGTH = 190;
/** Largest quota any of the panels stores (a signed 32-bit count of MB). */
export const QUOTA_MAX_MB = 2_147_483_647;

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;
// C0 controls and DEL: NUL, CR and LF would end a header, a form field or a line of a file.
// eslint-disable-next-line no-control-regex -- matches control characters to refuse them
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Whether `s` is an acceptable local part (case-insensitive, no `..`). */
export function isValidLocalPart(s: unknown): s is string {
  return typeof s === 'string' && LOCAL_PART_PATTERN.test(s) && !s.includes('..');
}

/**
 * Whether `s` is a mail domain name by hostname rules: ASCII (IDNs in their xn-- form), at most
 * 253 characters, at least two labels of 1-63 letters, digits or inner hyphens, a TLD that is not
 * all digits. No trailing dot.
 */
export function isValidDomain(s: unknown): s is string {
  if (typeof s !== 'string' || s.length > 253) return false;
  const labels = s.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return false;
  return !/^[0-9]+$/.test(labels[labels.length - 1]!);
}

/** Whether `s` is a panel host: a hostname (one label allowed, e.g. `localhost`) or an IP address. */
export function isValidHost(s: unknown): s is string {
  if (typeof s !== 'string' || s.length === 0 || s.length > 253) return false;
  if (isIP(s) !== 0) return true;
  return s.split('.').every((l) => LABEL.test(l));
}

/** Whether `s` is acceptable as a mailbox password: 10-128 characters, none of them a control character. */
export function isValidMailboxPassword(s: unknown): s is string {
  if (typeof s !== 'string' || CONTROL.test(s)) return false;
  const n = [...s].length;
  return n >= PASSWORD_MIN_LENGTH && n <= PASSWORD_MAX_LENGTH;
}

/**
 * Converts the API's quota to megabytes (MiB), the unit all three panels take.
 * @param quota '500M' -> 500, '2G' -> 2048, null -> null (panel default/unlimited); '0M' -> 0,
 *   which every panel reads as unlimited
 * @throws RangeError when the quota does not match ^[0-9]+[MG]$ or exceeds QUOTA_MAX_MB
 */
export function quotaToMegabytes(quota: string | null): number | null {
  if (quota === null) return null;
  if (typeof quota !== 'string' || !QUOTA_PATTERN.test(quota))
    throw new RangeError('quota must be a number followed by M or G');
  const n = Number(quota.slice(0, -1));
  const mb = quota.endsWith('G') ? n * 1024 : n;
  if (!Number.isSafeInteger(mb) || mb > QUOTA_MAX_MB) throw new RangeError(`quota must be at most ${QUOTA_MAX_MB}M`);
  return mb;
}

/**
 * Validates a create-mailbox input.
 * @returns field errors in the Laravel layout (`{field: [reason, ...]}`); an empty object when valid.
 *   Fields: domain, local_part, password, real_name, quota. Reasons never echo the password.
 */
export function validateCreateMailbox(
  input: Partial<Record<keyof CreateMailboxInput, unknown>>,
): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (field: string, reason: string) => {
    (errors[field] ??= []).push(reason);
  };
  const { domain, local_part: local, password, real_name: realName, quota } = input ?? {};

  if (typeof domain !== 'string' || domain === '') add('domain', 'The domain is required.');
  else if (!isValidDomain(domain)) add('domain', 'The domain must be a valid domain name (ASCII, xn-- for IDNs).');

  if (typeof local !== 'string' || local === '') add('local_part', 'The local part is required.');
  else if (local.length > 64) add('local_part', 'The local part may have at most 64 characters.');
  else if (!isValidLocalPart(local)) {
    add(
      'local_part',
      'The local part may contain only letters, digits and . _ + -, must start and end with a letter or digit and may not contain "..".',
    );
  }

  if (typeof password !== 'string' || password === '') add('password', 'The password is required.');
  else if ([...password].length < PASSWORD_MIN_LENGTH)
    add('password', `The password must be at least ${PASSWORD_MIN_LENGTH} characters.`);
  else if ([...password].length > PASSWORD_MAX_LENGTH)
    add('password', `The password may have at most ${PASSWORD_MAX_LENGTH} characters.`);
  else if (CONTROL.test(password))
    add('password', 'The password may not contain control characters (line breaks, NUL, tabs).');

  if (realName !== undefined && realName !== null) {
    if (typeof realName !== 'string') add('real_name', 'The real name must be a string.');
    else if ([...realName].length > REAL_NAME_MAX_LENGTH)
      add('real_name', `The real name may have at most ${REAL_NAME_MAX_LENGTH} characters.`);
    else if (CONTROL.test(realName)) add('real_name', 'The real name may not contain control characters.');
  }

  if (quota !== undefined && quota !== null) {
    if (typeof quota !== 'string' || !QUOTA_PATTERN.test(quota))
      add('quota', 'The quota must be a whole number followed by M or G, e.g. 500M or 2G.');
    else {
      try {
        quotaToMegabytes(quota);
      } catch {
        add('quota', `The quota may be at most ${QUOTA_MAX_MB}M.`);
      }
    }
  }
  return errors;
}

/**
 * Adapter guard: validates the input and returns it normalised (domain and local part lowercase).
 * @throws PanelError kind 'permanent' with `fields` (field names only in the message) when invalid
 */
export function assertValidCreateInput(input: CreateMailboxInput, panel: PanelType): CreateMailboxInput {
  const fields = validateCreateMailbox(input);
  if (Object.keys(fields).length > 0) {
    throw new PanelError('permanent', `${panel}: invalid mailbox input (${Object.keys(fields).join(', ')})`, {
      fields,
      panel,
    });
  }
  return { ...input, domain: input.domain.toLowerCase(), local_part: input.local_part.toLowerCase() };
}

/**
 * Adapter guard for a mailbox address given as domain and local part.
 * @returns the pair lowercased
 * @throws PanelError kind 'permanent' with `fields` when either part is invalid
 */
export function assertValidAddress(
  domain: string,
  localPart: string,
  panel: PanelType,
): { domain: string; local_part: string } {
  const fields: Record<string, string[]> = {};
  if (!isValidDomain(domain)) fields.domain = ['The domain must be a valid domain name (ASCII, xn-- for IDNs).'];
  if (!isValidLocalPart(localPart)) fields.local_part = ['The local part is not valid.'];
  if (Object.keys(fields).length > 0) {
    throw new PanelError('permanent', `${panel}: invalid mailbox address (${Object.keys(fields).join(', ')})`, {
      fields,
      panel,
    });
  }
  return { domain: domain.toLowerCase(), local_part: localPart.toLowerCase() };
}
