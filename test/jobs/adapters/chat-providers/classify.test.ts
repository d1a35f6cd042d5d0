import { expect } from 'chai';
import {
  CHAT_PROVIDERS,
  DEFAULT_RATE_LIMIT_WAIT_MS,
  PROVIDERS,
  getChatProvider,
  isProviderName,
  type ProviderName,
  type ProviderOutcome,
} from '../../../../jobs/adapters/chat-providers/index.js';

const AT = Date.UTC(2030, 0, 1, 0, 0, 0);

function response(
  provider: ProviderName,
  status: number,
  body: unknown,
  retryAfter: string | null = null,
): ProviderOutcome {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { kind: 'response', call: 'send', provider, status, retryAfter, receivedAt: AT, text, json };
}

describe('chat providers: registry and the shared classification (pure)', () => {
  it("lists the seven providers in the spec's order and looks them up by name", () => {
    expect(PROVIDERS).to.deep.equal(['wablas', 'fonnte', 'ruangwa', 'waha', 'messenger', 'watzap', 'starsender']);
    expect(Object.keys(CHAT_PROVIDERS)).to.deep.equal([...PROVIDERS]);
    for (const name of PROVIDERS) expect(getChatProvider(name).name).to.equal(name);
    expect(isProviderName('wablas')).to.equal(true);
    expect(isProviderName('WABLAS')).to.equal(false);
    expect(() => getChatProvider('twilio')).to.throw(/Unknown chat provider: "twilio"/);
    expect(() => getChatProvider('__proto__')).to.throw(/Unknown chat provider/);
  });

  it('declares the base-URL rule of item 1 for each provider', () => {
    const rules = Object.fromEntries(PROVIDERS.map((p) => [p, CHAT_PROVIDERS[p].baseUrlRule]));
    expect(rules).to.deep.equal({
      wablas: 'required',
      fonnte: 'fixed',
      ruangwa: 'optional',
      waha: 'required',
      messenger: 'replaceable',
      watzap: 'fixed',
      starsender: 'fixed',
    });
    expect(CHAT_PROVIDERS.ruangwa.defaultBaseUrl).to.equal('https://app.ruangwa.id/api');
    expect(CHAT_PROVIDERS.messenger.defaultBaseUrl).to.match(/^https:\/\/graph\.facebook\.com\/v\d+\.\d+$/);
  });

  for (const name of PROVIDERS) {
    describe(name, () => {
      const p = CHAT_PROVIDERS[name];

      it('network: not written -> retry; written -> ambiguous', () => {
        const base = { kind: 'network', call: 'send', provider: name, code: 'ECONNREFUSED', detail: 'x' } as const;
        expect(p.classify({ ...base, written: false })).to.deep.include({ kind: 'retry', retryAfterMs: null });
        expect(p.classify({ ...base, written: true, code: 'ETIMEDOUT' }).kind).to.equal('ambiguous');
      });

      it('rejected before any request -> permanent with its code', () => {
        const c = p.classify({
          kind: 'rejected',
          call: 'send',
          provider: name,
          code: 'invalid_recipient',
          detail: 'd',
        });
        expect(c).to.deep.equal({ kind: 'permanent', code: 'invalid_recipient', detail: 'd' });
      });

      it('429 -> rate_limited with Retry-After (seconds or HTTP date), else the default wait', () => {
        expect(p.classify(response(name, 429, 'slow', '7'))).to.deep.include({
          kind: 'rate_limited',
          retryAfterMs: 7000,
        });
        const date = new Date(AT + 90_000).toUTCString();
        expect(p.classify(response(name, 429, '', date))).to.deep.include({ retryAfterMs: 90_000 });
        expect(p.classify(response(name, 429, {}))).to.deep.include({ retryAfterMs: DEFAULT_RATE_LIMIT_WAIT_MS });
      });

      it('500, 502, 504, 408 and a 2xx that says nothing -> ambiguous', () => {
        for (const s of [500, 502, 504, 408])
          expect(p.classify(response(name, s, 'oops')).kind, String(s)).to.equal('ambiguous');
        expect(p.classify(response(name, 200, '<html>maintenance</html>')).kind).to.equal('ambiguous');
        expect(p.classify(response(name, 200, '')).kind).to.equal('ambiguous');
        expect(p.classify(response(name, 200, { unrelated: 1 })).kind).to.equal('ambiguous');
      });

      it('503 -> retry (known not processed), with Retry-After when given', () => {
        expect(p.classify(response(name, 503, 'down', '30'))).to.deep.include({ kind: 'retry', retryAfterMs: 30_000 });
        expect(p.classify(response(name, 503, 'down'))).to.deep.include({ kind: 'retry', retryAfterMs: null });
      });

      it('401, 403 -> permanent auth_failed; 3xx -> unexpected_redirect; 501 -> request_rejected', () => {
        expect(p.classify(response(name, 401, 'Unauthorized'))).to.deep.include({
          kind: 'permanent',
          code: 'auth_failed',
        });
        expect(p.classify(response(name, 403, ''))).to.deep.include({ kind: 'permanent', code: 'auth_failed' });
        expect(p.classify(response(name, 302, ''))).to.deep.include({ code: 'unexpected_redirect' });
        expect(p.classify(response(name, 501, ''))).to.deep.include({ code: 'request_rejected' });
      });
    });
  }
});
