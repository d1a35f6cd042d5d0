import { InvalidRecipientError, recipientAddress } from './phone.js';
import { exchange, type ExchangeRequest } from './http.js';
import { classifyOutcome, type BodyReader } from './classify.js';
import type {
  BaseUrlRule,
  CallKind,
  CallOptions,
  ChatAccount,
  ChatProvider,
  ProviderName,
  ProviderOutcome,
  RecipientKind,
  RejectCode,
} from './types.js';

/**
 * Builds a ChatProvider from a provider's request builders and body reader, so that each provider
 * file holds only what its documentation says: the base-URL rule, the credentials it needs, the
 * send and check requests and the meaning of its answers.
 */

/** What a provider file describes. */
export interface ProviderSpec {
  name: ProviderName;
  baseUrlRule: BaseUrlRule;
  defaultBaseUrl: string | null;
  recipientKinds: readonly RecipientKind[];
  /** field errors of the account beyond the base URL (missing token, page id, ...), or null */
  checkAccount(account: ChatAccount): string | null;
  /** the send request for a normalised address */
  sendRequest(
    ctx: RequestContext,
    address: string,
    kind: RecipientKind,
    message: string,
  ): Omit<ExchangeRequest, 'call' | 'provider' | 'secrets'>;
  /** the check request, or null when the provider documents no read-only call */
  checkRequest(ctx: RequestContext): Omit<ExchangeRequest, 'call' | 'provider' | 'secrets'> | null;
  read: BodyReader;
}

/** What the request builders get: the account and its resolved API root (no trailing slash). */
export interface RequestContext {
  account: ChatAccount;
  root: string;
}

/** Joins an API root and a path (`/send`), keeping the root's own path. */
export function endpoint(root: string, path: string, query?: Record<string, string>): URL {
  const u = new URL(root.replace(/\/+$/, '') + path);
  if (query) u.search = new URLSearchParams(query).toString();
  return u;
}

function validBaseUrl(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  if (u.username || u.password || u.search || u.hash) return null;
  return u.toString().replace(/\/+$/, '');
}

/**
 * The API root of an account by its provider's rule.
 * @returns the root, or a reason the configuration is unusable
 */
export function resolveRoot(
  spec: Pick<ProviderSpec, 'name' | 'baseUrlRule' | 'defaultBaseUrl'>,
  account: ChatAccount,
): { root: string } | { error: string } {
  const given = (account.base_url ?? '').trim();
  if (spec.baseUrlRule === 'fixed') {
    if (given !== '') return { error: `${spec.name} has a fixed API root; leave the base URL empty.` };
    return { root: spec.defaultBaseUrl! };
  }
  if (given === '') {
    if (spec.baseUrlRule === 'required') return { error: `${spec.name} needs the base URL of its server.` };
    return { root: spec.defaultBaseUrl! };
  }
  const root = validBaseUrl(given);
  return root
    ? { root }
    : { error: 'The base URL must be an http or https URL without credentials, query or fragment.' };
}

/** Creates the adapter described by spec. */
export function defineProvider(spec: ProviderSpec): ChatProvider {
  const rejected = (call: CallKind, code: RejectCode, detail: string): ProviderOutcome => ({
    kind: 'rejected',
    call,
    provider: spec.name,
    code,
    detail: `${spec.name}: ${detail}`,
  });

  function prepare(account: ChatAccount, call: CallKind, opts: CallOptions): RequestContext | ProviderOutcome {
    if (account?.provider !== spec.name)
      return rejected(call, 'invalid_config', `the account is not a ${spec.name} account.`);
    const root = opts.rootOverride ? { root: opts.rootOverride.replace(/\/+$/, '') } : resolveRoot(spec, account);
    if ('error' in root) return rejected(call, 'invalid_config', root.error);
    const problem = spec.checkAccount(account);
    if (problem) return rejected(call, 'invalid_config', problem);
    return { account, root: root.root };
  }

  const secretsOf = (a: ChatAccount) => [a.token, a.secret_key];

  return {
    name: spec.name,
    baseUrlRule: spec.baseUrlRule,
    defaultBaseUrl: spec.defaultBaseUrl,
    recipientKinds: spec.recipientKinds,

    async send(account, recipient, message, opts: CallOptions = {}) {
      const ctx = prepare(account, 'send', opts);
      if (!('root' in ctx)) return ctx;
      if (!spec.recipientKinds.includes(recipient?.kind))
        return rejected('send', 'unsupported_recipient', `cannot send to a ${String(recipient?.kind)} recipient.`);
      if (typeof message !== 'string' || message.trim() === '')
        return rejected('send', 'invalid_message', 'the message is empty.');
      let address: string;
      try {
        address = recipientAddress(spec.name, recipient, opts.callingCode);
      } catch (err) {
        if (err instanceof InvalidRecipientError) return rejected('send', 'invalid_recipient', err.message);
        throw err;
      }
      const req = spec.sendRequest(ctx, address, recipient.kind, message);
      return exchange({ ...req, call: 'send', provider: spec.name, secrets: secretsOf(account) }, opts);
    },

    async checkConnection(account, opts: CallOptions = {}) {
      const ctx = prepare(account, 'check', opts);
      if (!('root' in ctx)) return ctx;
      const req = spec.checkRequest(ctx);
      if (!req) {
        return {
          kind: 'not_checked',
          call: 'check',
          provider: spec.name,
          detail: `${spec.name}: configuration complete; the provider documents no status call, so the key was not verified`,
        };
      }
      return exchange({ ...req, call: 'check', provider: spec.name, secrets: secretsOf(account) }, opts);
    },

    classify(outcome) {
      return classifyOutcome(outcome, spec.read);
    },
  };
}

/** Whether a credential field holds a usable value (non-empty, no control characters). */
export function present(v: string | null | undefined): v is string {
  // eslint-disable-next-line no-control-regex -- control characters would break a header or a form
  return typeof v === 'string' && v.trim() !== '' && !/[\u0000-\u001f\u007f]/.test(v);
}
