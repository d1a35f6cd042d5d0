/**
 * MAC address normalisation for customers (document 1, "Customer, create payload": MAC rule;
 * DESIGN.md §6: field `mac_address`, stored as uppercase colon form).
 *
 * Accepted forms (hex digits in any case, nothing else, no surrounding blanks):
 * - `AA:BB:CC:DD:EE:FF` (six colon-separated pairs)
 * - `AABB.CCDD.EEFF` (three dot-separated groups of four, Cisco style)
 * - `AABBCCDDEEFF` (twelve bare hex digits)
 * Everything else is invalid: other separators (`-`, spaces), mixed separators, misplaced
 * separators, non-hex characters, wrong length, the empty string. Only the syntax is checked.
 */

const COLON = /^[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5}$/;
const DOTTED = /^[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}$/;
const BARE = /^[0-9A-Fa-f]{12}$/;

/**
 * Normalises a MAC address to `AA:BB:CC:DD:EE:FF`.
 * @param value the MAC as sent by the client (any type; only strings can be valid)
 * @returns the uppercase colon form, or null when the value is not one of the accepted forms
 */
export function normaliseMac(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  if (!COLON.test(value) && !DOTTED.test(value) && !BARE.test(value)) return null;
  const hex = value.replace(/[:.]/g, '').toUpperCase();
  return hex.match(/../g)!.join(':');
}

/** Service types for which a MAC address is required (document 1: dhcp and static). */
export const MAC_REQUIRED_SERVICE_TYPES: readonly string[] = ['dhcp', 'static'];
