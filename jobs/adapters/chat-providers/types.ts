import type { Clock } from '../../../lib/clock.js';

/**
 * Types shared by the chat-gateway adapters (issue 10 item 1; `../shared/spec/admin-api.md`
 * "Chat-bot configuration" and "Chat bot"). An adapter turns one account and one recipient into the
 * HTTP request its provider documents, and reports what happened as a ProviderOutcome; its pure
 * `classify()` maps the outcome to what the send job does next (Classification). Adapters never
 * log, never throw for provider or network failures, and never put a token or secret key in an
 * outcome or a classification (they are redacted even when a provider echoes them).
 */

/** The seven providers, in the spec's order (its <provider_1> .. <provider_7>; decision). */
export const PROVIDERS = ['wablas', 'fonnte', 'ruangwa', 'waha', 'messenger', 'watzap', 'starsender'] as const;

/** One of the seven provider identifiers. */
export type ProviderName = (typeof PROVIDERS)[number];

/**
 * A sending account with its secrets in plain text (the caller decrypts them just before the call
 * and drops them afterwards). What each field means per provider (spec "Chat-bot configuration",
 * issue 10 item 1):
 * - wablas: token = device token, secret_key = optional secret key (sent as `token.secret_key`),
 *   base_url = the account's Wablas server, required (e.g. https://bdg.wablas.com)
 * - fonnte: token = device token; no secret key; no base URL (fixed https://api.fonnte.com)
 * - ruangwa: token = API key; no secret key; base_url optional (default https://app.ruangwa.id/api)
 * - waha: token = X-Api-Key (may be empty when the server has none), secret_key = session name
 *   (default `default`), base_url = the WAHA server, required
 * - messenger: token = page access token, secret_key = page id, both required; base_url optional
 *   (replaces the Graph API root)
 * - watzap: token = api_key, secret_key = number_key, both required; no base URL
 * - starsender: token = device API key; no secret key; no base URL
 */
export interface ChatAccount {
  /** the account id in the tenant's settings (for messages only) */
  id?: string;
  provider: ProviderName;
  token?: string | null;
  secret_key?: string | null;
  /** the account's own number (not used to send) */
  number?: string | null;
  base_url?: string | null;
}

/** The kinds of recipient an adapter may be asked to reach. */
export type RecipientKind = 'phone' | 'group' | 'conversation';

/**
 * Who receives a message. Phones are normalised (phone.ts) to E.164 digits without `+`; group and
 * conversation ids are passed to the provider untouched.
 */
export interface Recipient {
  kind: RecipientKind;
  /** phone as typed (`0812-3456 7890`, `+62 812...`), group id, or Messenger conversation (PSID) */
  value: string;
}

/** Per-call options of send and checkConnection. */
export interface CallOptions {
  /** aborts the call; an abort before the connection is made is a `retry`, after it `ambiguous` */
  signal?: AbortSignal;
  /** deadline of the whole exchange (connect, request, response, body) in ms; default 10000 */
  timeoutMs?: number;
  /** the tenant's country calling code for phones written with a leading 0 (default '62') */
  callingCode?: string;
  /** stamps `receivedAt` of responses (Retry-After as an HTTP date); default the system clock */
  clock?: Clock;
  /**
   * Replaces the API root whatever the provider's base-URL rule (tests and the fake gateway reach a
   * loopback server with it); never taken from tenant settings.
   */
  rootOverride?: string;
}

/** Whether an exchange was a send or a connection check (classify reads both). */
export type CallKind = 'send' | 'check';

/**
 * What one call produced. Exactly one of:
 * - `response`: the provider answered with an HTTP status (any status); the body was read whole.
 *   `text` is the body with secrets redacted, `json` its parse (undefined when not JSON).
 * - `network`: no complete answer. `written` false means the connection (TCP, and TLS for https)
 *   was never established, so the provider cannot have seen the request; true means the request
 *   may have reached it (timeout, reset or abort after connecting, or a body that broke off).
 * - `rejected`: refused before any request: recipient or configuration unusable.
 * - `not_checked`: a connection check of a provider that documents no read-only call (ruangwa);
 *   the configuration is complete but the credentials were not verified.
 */
export type ProviderOutcome =
  | {
      kind: 'response';
      call: CallKind;
      provider: ProviderName;
      status: number;
      /** the Retry-After header as sent, or null */
      retryAfter: string | null;
      /** when the response arrived, ms since the epoch */
      receivedAt: number;
      text: string;
      json: unknown;
    }
  | {
      kind: 'network';
      call: CallKind;
      provider: ProviderName;
      written: boolean;
      /** error code: ECONNREFUSED, ENOTFOUND, ECONNRESET, ETIMEDOUT (our deadline), ABORTED, ... */
      code: string;
      /** a short description without secrets */
      detail: string;
    }
  | {
      kind: 'rejected';
      call: CallKind;
      provider: ProviderName;
      code: RejectCode;
      detail: string;
    }
  | { kind: 'not_checked'; call: 'check'; provider: ProviderName; detail: string };

/** Why a call was refused before any request. */
export type RejectCode = 'invalid_recipient' | 'unsupported_recipient' | 'invalid_config' | 'invalid_message';

/**
 * Permanent failure codes (the `error` code of a failed outbox row, issue 10 item 3):
 * auth_failed (token, key or session refused), invalid_recipient, unsupported_recipient (a kind the
 * provider cannot reach, e.g. a phone on Messenger), invalid_config (missing base URL, page id,
 * ...), invalid_message (empty text), device_disconnected (the gateway's WhatsApp device or WAHA
 * session is not connected), provider_refused (another documented refusal: quota, expiry, policy),
 * request_rejected (other 4xx, 501, 505), unexpected_redirect (3xx: wrong base URL).
 */
export type PermanentCode =
  RejectCode | 'auth_failed' | 'device_disconnected' | 'provider_refused' | 'request_rejected' | 'unexpected_redirect';

/**
 * What the send job does with an outcome (issue 10 item 1):
 * - sent: accepted; `state` 'pending' when the provider queued it and reports a trackable id
 *   (wablas, fonnte), else 'sent'. For a connection check: the provider accepted the credentials.
 * - retry: known not sent (DNS, refused, connect/TLS failure, 503): try again with backoff.
 * - rate_limited: 429 or a documented rate-limit refusal: wait `retryAfterMs` (Retry-After, else
 *   60000), no attempt used.
 * - permanent: will not succeed as is; `code` says why.
 * - ambiguous: the provider may or may not have sent it (timeout or reset after the request was
 *   written, 500, 502, 504, a 2xx body that does not say): never retried automatically.
 * `detail` is a short human text without secrets.
 */
export type Classification =
  | { kind: 'sent'; messageId: string | null; state: 'pending' | 'sent'; detail: string }
  | { kind: 'retry'; retryAfterMs: number | null; detail: string }
  | { kind: 'rate_limited'; retryAfterMs: number; detail: string }
  | { kind: 'permanent'; code: PermanentCode; detail: string }
  | { kind: 'ambiguous'; detail: string };

/** How a provider's API root is found (issue 10 item 1). */
export type BaseUrlRule =
  /** settings' base URL, required (wablas, waha) */
  | 'required'
  /** settings' base URL, the documented root when empty (ruangwa) */
  | 'optional'
  /** a fixed root that a given base URL replaces (messenger) */
  | 'replaceable'
  /** fixed; a base URL is a configuration error (fonnte, watzap, starsender) */
  | 'fixed';

/** One chat gateway. */
export interface ChatProvider {
  readonly name: ProviderName;
  readonly baseUrlRule: BaseUrlRule;
  /** the documented API root, null when the provider has none (self-hosted) */
  readonly defaultBaseUrl: string | null;
  /** the recipient kinds this provider can reach */
  readonly recipientKinds: readonly RecipientKind[];
  /**
   * Sends one text message. Never throws for provider or network failures (see ProviderOutcome);
   * a bad recipient or account configuration is a `rejected` outcome without any request.
   * @param message the text, non-empty
   */
  send(account: ChatAccount, recipient: Recipient, message: string, opts?: CallOptions): Promise<ProviderOutcome>;
  /** Makes the provider's cheapest authenticated read-only call (no message is sent). */
  checkConnection(account: ChatAccount, opts?: CallOptions): Promise<ProviderOutcome>;
  /** Pure: what the outcome means for this provider (documented refusals inside a 200 included). */
  classify(outcome: ProviderOutcome): Classification;
}
