import { expect } from 'chai';
import nock from 'nock';
import { CHAT_PROVIDERS, PROVIDERS } from '../../../../jobs/adapters/chat-providers/index.js';
import { FIXTURES, SECRET, TOKEN } from './fixtures.js';
import { intercept } from './helpers.js';

/** Each provider's answers over HTTP (nock) -> classify: ok, refusal in a 200, 401, 429, 500. */
describe('chat providers: answers -> classify (nock)', () => {
  afterEach(() => nock.cleanAll());

  for (const name of PROVIDERS) {
    describe(name, () => {
      const p = CHAT_PROVIDERS[name];
      const f = FIXTURES[name];
      const send = () => p.send(f.account, f.recipient, 'Tagihan Anda sudah terbit.');

      it('a documented success -> sent', async () => {
        const i = intercept(f.origin, 'post', f.sendPath, f.okStatus ?? 200, f.okBody);
        const out = await send();
        expect(i.done()).to.equal(true);
        expect(out).to.deep.include({ kind: 'response', call: 'send', provider: name, status: f.okStatus ?? 200 });
        const c = p.classify(out);
        expect(c.kind).to.equal('sent');
      });

      if (f.refusal) {
        const refusal = f.refusal;
        it(`a documented refusal inside an HTTP 200 -> permanent ${refusal.code}`, async () => {
          intercept(f.origin, 'post', f.sendPath, 200, refusal.body);
          const c = p.classify(await send());
          expect(c).to.deep.include({ kind: 'permanent', code: refusal.code });
        });
      }

      it('HTTP 401 -> permanent auth_failed', async () => {
        intercept(f.origin, 'post', f.sendPath, 401, { message: 'Unauthorized' });
        expect(p.classify(await send())).to.deep.include({ kind: 'permanent', code: 'auth_failed' });
      });

      it('HTTP 429 with Retry-After -> rate_limited after that many seconds', async () => {
        intercept(f.origin, 'post', f.sendPath, 429, { message: 'Too Many Requests' }, { 'Retry-After': '42' });
        const out = await send();
        expect(out).to.deep.include({ status: 429, retryAfter: '42' });
        expect(p.classify(out)).to.deep.include({ kind: 'rate_limited', retryAfterMs: 42_000 });
      });

      it('HTTP 500 -> ambiguous (it may have been sent)', async () => {
        intercept(f.origin, 'post', f.sendPath, 500, 'Internal Server Error');
        expect(p.classify(await send()).kind).to.equal('ambiguous');
      });

      it('HTTP 503 -> retry; 502 and 504 -> ambiguous', async () => {
        intercept(f.origin, 'post', f.sendPath, 503, 'Service Unavailable');
        expect(p.classify(await send()).kind).to.equal('retry');
        intercept(f.origin, 'post', f.sendPath, 502, 'Bad Gateway');
        expect(p.classify(await send()).kind).to.equal('ambiguous');
        intercept(f.origin, 'post', f.sendPath, 504, 'Gateway Timeout');
        expect(p.classify(await send()).kind).to.equal('ambiguous');
      });

      it('the token never appears in an outcome or a classification, even when the provider echoes it', async () => {
        intercept(f.origin, 'post', f.sendPath, f.echoStatus ?? 200, f.echo(TOKEN));
        const out = await send();
        const c = p.classify(out);
        expect(c.kind).to.equal('permanent');
        const all = JSON.stringify({ out, c });
        expect(all).not.to.include(TOKEN);
        expect(all).not.to.include(SECRET);
        expect(all).to.include('[redacted]');
      });
    });
  }
});
