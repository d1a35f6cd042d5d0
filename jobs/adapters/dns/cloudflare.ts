import {
  DnsProviderError,
  type CloudflareCredentials,
  type DnsProvider,
  type DnsRecord,
} from '../../provisioning/contract.js';

/**
 * The DnsProvider of jobs/provisioning/contract.ts over Cloudflare API v4 (issue 13 item 5):
 * `Authorization: Bearer <token>`, answers in the `{success, errors[{code, message}], messages,
 * result, result_info}` envelope. Endpoints: GET /user/tokens/verify, GET /zones/{zone_id},
 * GET/POST /zones/{zone_id}/dns_records, DELETE /zones/{zone_id}/dns_records/{id}.
 * Failures are DnsProviderError: `retry` for network errors and timeouts, 5xx and 429 (with
 * Retry-After), `permanent` for everything else. The token never appears in a message.
 */

/** Cloudflare's API root. */
export const CLOUDFLARE_API_ROOT = 'https://api.cloudflare.com/client/v4';
/** Per request, in ms. */
export const CLOUDFLARE_TIMEOUT_MS = 15_000;
/** Largest page of the records list Cloudflare serves. */
const PER_PAGE = 100;
/** Pages read at most by listRecords (records of one exact name: a handful). */
const MAX_PAGES = 20;

/** Options of createCloudflareDns. */
export interface CloudflareDeps {
  /** the fetch to use (default global fetch; nock intercepts it in tests) */
  fetch?: typeof fetch;
  /** per request, in ms (default CLOUDFLARE_TIMEOUT_MS) */
  timeoutMs?: number;
}

interface Envelope<T> {
  success?: boolean;
  errors?: { code?: number; message?: string }[];
  result?: T;
  result_info?: { page?: number; total_pages?: number };
}

/**
 * Milliseconds of a Retry-After header (delta seconds or an HTTP date), undefined when absent or unreadable.
 * @param now the current time in ms (for the date form)
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The record fields the runs use, from Cloudflare's record object. */
function toRecord(r: Record<string, unknown>): DnsRecord {
  return {
    id: String(r.id),
    type: String(r.type),
    name: String(r.name).replace(/\.$/, ''),
    content: String(r.content),
    proxied: r.proxied === true,
    comment: typeof r.comment === 'string' ? r.comment : null,
  };
}

/**
 * Creates the Cloudflare DnsProvider for one zone.
 * @param creds the API token, the zone id and optionally another API root (the demo fake, tests)
 * @param deps fetch and the per-request timeout
 */
export function createCloudflareDns(creds: CloudflareCredentials, deps: CloudflareDeps = {}): DnsProvider {
  const root = (creds.baseUrl ?? CLOUDFLARE_API_ROOT).replace(/\/+$/, '');
  const doFetch = deps.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const timeoutMs = deps.timeoutMs ?? CLOUDFLARE_TIMEOUT_MS;
  const zone = encodeURIComponent(creds.zoneId);
  const scrub = (s: string) => (creds.apiToken ? s.split(creds.apiToken).join('[redacted]') : s);

  /** One call; resolves with the envelope and status, throws DnsProviderError. */
  async function call<T>(
    what: string,
    method: string,
    path: string,
    body?: unknown,
    accept404 = false,
  ): Promise<{ status: number; env: Envelope<T> }> {
    let res: Response;
    try {
      res = await doFetch(`${root}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${creds.apiToken}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
    } catch (err) {
      const reason =
        err instanceof Error && err.name === 'TimeoutError' ? `no answer in ${timeoutMs} ms` : 'unreachable';
      throw new DnsProviderError('retry', `Cloudflare ${what}: ${reason}`);
    }
    let env: Envelope<T>;
    try {
      env = (await res.json()) as Envelope<T>;
    } catch {
      env = {};
    }
    if (accept404 && res.status === 404) return { status: 404, env };
    const first = env.errors?.[0];
    const detail = first ? ` (${first.code ?? '?'}: ${String(first.message ?? '').slice(0, 300)})` : '';
    if (res.status === 429 || res.status >= 500) {
      const wait = retryAfterMs(res.headers.get('retry-after'));
      throw new DnsProviderError('retry', scrub(`Cloudflare ${what}: HTTP ${res.status}${detail}`), res.status, wait);
    }
    if (!res.ok || env.success === false) {
      throw new DnsProviderError('permanent', scrub(`Cloudflare ${what}: HTTP ${res.status}${detail}`), res.status);
    }
    return { status: res.status, env };
  }

  return {
    async verifyToken() {
      const { env } = await call<{ status?: string }>('token verify', 'GET', '/user/tokens/verify');
      const status = env.result?.status ?? 'unknown';
      return status === 'active'
        ? { ok: true, message: 'The token is active.' }
        : { ok: false, message: `The token is ${status}.` };
    },
    async zone() {
      const { env } = await call<{ name?: string; status?: string }>('zone', 'GET', `/zones/${zone}`);
      return { name: String(env.result?.name ?? ''), status: String(env.result?.status ?? 'unknown') };
    },
    async listRecords(query) {
      const out: DnsRecord[] = [];
      for (let page = 1; page <= MAX_PAGES; page++) {
        const q = new URLSearchParams({ name: query.name, per_page: String(PER_PAGE), page: String(page) });
        if (query.type) q.set('type', query.type);
        const { env } = await call<Record<string, unknown>[]>('list records', 'GET', `/zones/${zone}/dns_records?${q}`);
        out.push(...(env.result ?? []).map(toRecord));
        if (page >= (env.result_info?.total_pages ?? 1)) break;
      }
      return out;
    },
    async createRecord(record) {
      const body = {
        type: record.type,
        name: record.name,
        content: record.content,
        ttl: 1,
        proxied: record.proxied,
        ...(record.comment ? { comment: record.comment } : {}),
      };
      const { env } = await call<Record<string, unknown>>('create record', 'POST', `/zones/${zone}/dns_records`, body);
      if (!env.result?.id) throw new DnsProviderError('permanent', 'Cloudflare create record: no record in the answer');
      return toRecord(env.result);
    },
    async deleteRecord(id) {
      await call('delete record', 'DELETE', `/zones/${zone}/dns_records/${encodeURIComponent(id)}`, undefined, true);
    },
  };
}
