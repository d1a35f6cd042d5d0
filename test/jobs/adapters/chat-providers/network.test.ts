import { expect } from 'chai';
import nock from 'nock';
import {
  CHAT_PROVIDERS,
  PROVIDERS,
  type ChatAccount,
  type ProviderName,
  type Recipient,
} from '../../../../jobs/adapters/chat-providers/index.js';
import { closedPort, loopback, rawJson, type Loopback } from './helpers.js';

/**
 * Network failures against real loopback sockets (nock cannot tell "connected" from "not"): the
 * exchange must say whether the provider can have seen the request.
 */

const TOKEN = 'SENTINEL-token-3f9a1c77e2';
const SECRET = 'SENTINEL-secret-b81d0e';

const ACCOUNTS: Record<ProviderName, ChatAccount> = {
  wablas: { provider: 'wablas', token: TOKEN, secret_key: SECRET, base_url: 'https://bdg.wablas.example' },
  fonnte: { provider: 'fonnte', token: TOKEN },
  ruangwa: { provider: 'ruangwa', token: TOKEN },
  waha: { provider: 'waha', token: TOKEN, secret_key: 'default', base_url: 'https://waha.example' },
  messenger: { provider: 'messenger', token: TOKEN, secret_key: '1029384756' },
  watzap: { provider: 'watzap', token: TOKEN, secret_key: SECRET },
  starsender: { provider: 'starsender', token: TOKEN },
};
const recipientOf = (p: ProviderName): Recipient =>
  p === 'messenger' ? { kind: 'conversation', value: '24012345678901234' } : { kind: 'phone', value: '0812-3456 7890' };

describe('chat providers: network failures on real sockets', function () {
  this.timeout(20_000);
  const servers: Loopback[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  for (const name of PROVIDERS) {
    describe(name, () => {
      const p = CHAT_PROVIDERS[name];
      const account = ACCOUNTS[name];

      it('connection refused -> not written -> retry', async () => {
        const port = await closedPort();
        const out = await p.send(account, recipientOf(name), 'hello', { rootOverride: `http://127.0.0.1:${port}/api` });
        expect(out).to.deep.include({ kind: 'network', written: false, code: 'ECONNREFUSED' });
        expect(p.classify(out).kind).to.equal('retry');
      });

      it('timeout after the request was written -> ambiguous', async () => {
        const s = await loopback('silent');
        servers.push(s);
        const out = await p.send(account, recipientOf(name), 'hello', {
          rootOverride: `http://127.0.0.1:${s.port}/api`,
          timeoutMs: 300,
        });
        expect(out).to.deep.include({ kind: 'network', written: true, code: 'ETIMEDOUT' });
        expect(s.received()).to.match(/^POST \/api\//);
        expect(s.received()).to.include('hello');
        const c = p.classify(out);
        expect(c.kind).to.equal('ambiguous');
        expect(JSON.stringify([out, c]))
          .not.to.include(TOKEN)
          .and.not.to.include(SECRET);
      });

      it('connection reset after the request was written -> ambiguous', async () => {
        const s = await loopback('reset');
        servers.push(s);
        const out = await p.send(account, recipientOf(name), 'hello', { rootOverride: `http://127.0.0.1:${s.port}` });
        expect(out).to.deep.include({ kind: 'network', written: true });
        expect((out as { code: string }).code).to.match(/^(ECONNRESET|EPIPE)$/);
        expect(p.classify(out).kind).to.equal('ambiguous');
      });

      it('a TLS handshake that fails (https to a plain port) -> not written -> retry', async () => {
        const s = await loopback('garbage');
        servers.push(s);
        const out = await p.send(account, recipientOf(name), 'hello', {
          rootOverride: `https://127.0.0.1:${s.port}`,
          timeoutMs: 2_000,
        });
        expect(out).to.deep.include({ kind: 'network', written: false });
        expect(s.received()).not.to.include('hello');
        expect(p.classify(out).kind).to.equal('retry');
      });
    });
  }

  it('an abort before connecting is a retry; an abort after writing is ambiguous', async () => {
    const p = CHAT_PROVIDERS.wablas;
    const ac = new AbortController();
    ac.abort();
    const before = await p.send(ACCOUNTS.wablas, recipientOf('wablas'), 'hi', { signal: ac.signal });
    expect(before).to.deep.include({ kind: 'network', written: false, code: 'ABORTED' });
    expect(p.classify(before).kind).to.equal('retry');

    const s = await loopback('silent');
    servers.push(s);
    const ac2 = new AbortController();
    const pending = p.send(ACCOUNTS.wablas, recipientOf('wablas'), 'hi', {
      signal: ac2.signal,
      rootOverride: `http://127.0.0.1:${s.port}`,
    });
    while (!s.received().includes('\r\n\r\n')) await new Promise((r) => setTimeout(r, 10));
    ac2.abort();
    const after = await pending;
    expect(after).to.deep.include({ kind: 'network', written: true, code: 'ABORTED' });
    expect(p.classify(after).kind).to.equal('ambiguous');
  });

  it('a TLS handshake still open at the deadline is not written -> retry (nock off: its pass-through socket would throw)', async () => {
    const s = await loopback('silent');
    servers.push(s);
    nock.restore();
    try {
      const out = await CHAT_PROVIDERS.wablas.send(ACCOUNTS.wablas, recipientOf('wablas'), 'hi', {
        rootOverride: `https://127.0.0.1:${s.port}`,
        timeoutMs: 300,
      });
      expect(out).to.deep.include({ kind: 'network', written: false, code: 'ETIMEDOUT' });
      expect(CHAT_PROVIDERS.wablas.classify(out).kind).to.equal('retry');
    } finally {
      nock.activate();
    }
  });

  it('a real answer over a socket is read and classified (wablas accepted -> pending with its id)', async () => {
    const s = await loopback(
      'answer',
      rawJson(200, {
        status: true,
        message: 'Message is pending and waiting to be processed',
        data: { messages: [{ id: 'f1e2d3', phone: '6281234567890', message: 'hi', status: 'pending' }] },
      }),
    );
    servers.push(s);
    const out = await CHAT_PROVIDERS.wablas.send(
      { ...ACCOUNTS.wablas, base_url: `http://127.0.0.1:${s.port}` },
      recipientOf('wablas'),
      'hi',
    );
    expect(out).to.deep.include({ kind: 'response', status: 200 });
    expect(CHAT_PROVIDERS.wablas.classify(out)).to.deep.include({
      kind: 'sent',
      messageId: 'f1e2d3',
      state: 'pending',
    });
    expect(s.received()).to.include(`authorization: ${TOKEN}.${SECRET}`);
  });

  it('a body that breaks off is ambiguous (the provider answered, we cannot read it)', async () => {
    const s = await loopback('answer', 'HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{"status":true');
    servers.push(s);
    const out = await CHAT_PROVIDERS.fonnte.send(ACCOUNTS.fonnte, recipientOf('fonnte'), 'hi', {
      rootOverride: `http://127.0.0.1:${s.port}`,
    });
    expect(out).to.deep.include({ kind: 'network', written: true });
    expect(CHAT_PROVIDERS.fonnte.classify(out).kind).to.equal('ambiguous');
  });
});
