import type { ProviderName, Recipient } from './types.js';

/**
 * Recipient normalisation of the chat gateways (issue 10 item 1): phones become E.164 digits
 * without `+`; group and conversation ids pass untouched; WAHA addresses a phone as
 * `<digits>@c.us`. Pure.
 */

/** The calling code of a tenant that has not set one (decision: Indonesia, the spec's market). */
export const DEFAULT_CALLING_CODE = '62';

/** E.164 length bounds after normalisation (ITU-T E.164: at most 15 digits; 8 as a sane floor). */
export const PHONE_MIN_DIGITS = 8;
export const PHONE_MAX_DIGITS = 15;

/** Longest group or conversation id accepted (ids of the providers are far shorter). */
export const RECIPIENT_ID_MAX_LENGTH = 200;

/** A phone number, group id or conversation id that cannot be used. */
export class InvalidRecipientError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidRecipientError';
  }
}

// spaces (also NBSP), dashes, dots, slashes and parentheses people type inside numbers
const SEPARATORS = /[\s\u00a0\-./()]/g;

/**
 * Normalises a phone number to E.164 digits without `+`.
 * Rules: separators (spaces, `-`, `.`, `/`, parentheses) are dropped; a leading `+` or `00`
 * (international prefix) marks a number that already carries its country code; a single leading
 * `0` (national trunk prefix) is replaced by the calling code; digits without either are taken as
 * already international. The result must have 8 to 15 digits.
 * @param raw the number as typed, e.g. `0812-3456 7890`, `+62 812 3456 7890`
 * @param callingCode the tenant's country calling code, digits only (default '62')
 * @returns e.g. `6281234567890`
 * @throws InvalidRecipientError for letters or other characters, or a length outside 8..15
 * @throws RangeError when callingCode is not 1 to 3 digits
 */
export function normalizePhone(raw: string, callingCode: string = DEFAULT_CALLING_CODE): string {
  if (!/^[1-9][0-9]{0,2}$/.test(callingCode)) throw new RangeError('The calling code must be 1 to 3 digits.');
  if (typeof raw !== 'string') throw new InvalidRecipientError('The phone number must be a string.');
  let s = raw.trim().replace(SEPARATORS, '');
  let international = false;
  if (s.startsWith('+')) {
    international = true;
    s = s.slice(1);
  } else if (s.startsWith('00')) {
    international = true;
    s = s.slice(2);
  }
  if (!/^[0-9]+$/.test(s)) throw new InvalidRecipientError('The phone number may contain only digits and separators.');
  if (!international && s.startsWith('0')) s = callingCode + s.slice(1);
  if (s.startsWith('0')) throw new InvalidRecipientError('The phone number has no country code.');
  if (s.length < PHONE_MIN_DIGITS || s.length > PHONE_MAX_DIGITS) {
    throw new InvalidRecipientError(
      `The phone number must have ${PHONE_MIN_DIGITS} to ${PHONE_MAX_DIGITS} digits with its country code.`,
    );
  }
  return s;
}

// NUL, CR, LF and the other control characters would break a form or a header
// eslint-disable-next-line no-control-regex -- matches control characters to refuse them
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Checks a group or conversation id, which is passed to the provider as given (trimmed).
 * @throws InvalidRecipientError when empty, longer than 200 characters or containing control characters
 */
export function checkRecipientId(raw: string): string {
  const s = typeof raw === 'string' ? raw.trim() : '';
  if (s === '' || s.length > RECIPIENT_ID_MAX_LENGTH || CONTROL.test(s))
    throw new InvalidRecipientError(`The id must have 1 to ${RECIPIENT_ID_MAX_LENGTH} characters.`);
  return s;
}

/**
 * The address a provider expects for a recipient: normalised digits for phones (WAHA:
 * `<digits>@c.us`), the id untouched for groups and conversations.
 * @throws InvalidRecipientError (see normalizePhone and checkRecipientId)
 */
export function recipientAddress(provider: ProviderName, recipient: Recipient, callingCode?: string): string {
  if (recipient.kind === 'phone') {
    const digits = normalizePhone(recipient.value, callingCode);
    return provider === 'waha' ? `${digits}@c.us` : digits;
  }
  return checkRecipientId(recipient.value);
}
