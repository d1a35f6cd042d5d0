import { parseInbound as fonnte } from './fonnte.js';
import { parseInbound as messenger } from './messenger.js';
import { parseInbound as ruangwa } from './ruangwa.js';
import { parseInbound as starsender } from './starsender.js';
import { parseInbound as wablas } from './wablas.js';
import { parseInbound as waha } from './waha.js';
import { parseInbound as watzap } from './watzap.js';
import type { InboundParse, InboundParser } from './inbound.js';
import type { ProviderName } from './types.js';

export * from './inbound.js';

/** Each provider's webhook reader (issue 11 item 1), by provider name. */
export const INBOUND_PARSERS: Readonly<Record<ProviderName, InboundParser>> = Object.freeze({
  wablas,
  fonnte,
  ruangwa,
  waha,
  messenger,
  watzap,
  starsender,
});

/**
 * Reads a webhook body with the first of `providers` (in that order) whose parser recognises it.
 * @param providers the providers to try, e.g. the tenant's accounts' providers in configuration order
 * @returns the provider and its items, or null when none of them reads the body
 */
export function parseInboundWith(
  providers: readonly ProviderName[],
  body: Record<string, unknown>,
): InboundParse | null {
  for (const provider of providers) {
    const items = INBOUND_PARSERS[provider](body);
    if (items) return { provider, items };
  }
  return null;
}
