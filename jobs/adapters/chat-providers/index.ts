import { fonnte } from './fonnte.js';
import { messenger } from './messenger.js';
import { ruangwa } from './ruangwa.js';
import { starsender } from './starsender.js';
import { wablas } from './wablas.js';
import { waha } from './waha.js';
import { watzap } from './watzap.js';
import { PROVIDERS, type ChatProvider, type ProviderName } from './types.js';

/**
 * The chat-gateway adapters (issue 10 item 1): one ChatProvider per provider of the spec, in its
 * order. The send job looks an account's provider up with getChatProvider, calls send (or the Test
 * route checkConnection) and acts on classify(outcome). Importing this module opens nothing.
 */

export * from './types.js';
export {
  normalizePhone,
  recipientAddress,
  checkRecipientId,
  InvalidRecipientError,
  DEFAULT_CALLING_CODE,
} from './phone.js';
export { DEFAULT_RATE_LIMIT_WAIT_MS } from './classify.js';
export { DEFAULT_TIMEOUT_MS } from './http.js';
export { resolveRoot } from './define.js';

/** The adapters by provider name, in the spec's order. */
export const CHAT_PROVIDERS: Readonly<Record<ProviderName, ChatProvider>> = Object.freeze({
  wablas,
  fonnte,
  ruangwa,
  waha,
  messenger,
  watzap,
  starsender,
});

/** Whether a string is one of the seven provider identifiers. */
export function isProviderName(name: unknown): name is ProviderName {
  return typeof name === 'string' && (PROVIDERS as readonly string[]).includes(name);
}

/**
 * The adapter of a provider.
 * @throws Error when name is not one of PROVIDERS (configuration is validated before this is reached)
 */
export function getChatProvider(name: string): ChatProvider {
  if (!isProviderName(name)) throw new Error(`Unknown chat provider: ${JSON.stringify(String(name).slice(0, 40))}`);
  return CHAT_PROVIDERS[name];
}
