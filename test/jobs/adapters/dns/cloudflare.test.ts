import { expect } from 'chai';
import nock from 'nock';
import { createCloudflareDns, retryAfterMs } from '../../../../jobs/adapters/dns/cloudflare.js';
import { DnsProviderError } from '../../../../jobs/provisioning/contract.js';

const ROOT = 'https://api.cloudflare.com';
const ZONE = 'b'.repeat(32);
const TOKEN = 'cf_sentinel_token_0123456789';
const ok = (result: unknown, extra: Record<string, unknown> = {}) => ({
  success: true,
  errors: [],
  messages: [],
  result,
  ...extra,
});
const rec = (id: string, name: string, over: Record<string, unknown> = {}) => ({
  id,
  type: 'A',
  name,
  content: '203.0.113.10',
  proxied: true,
  ttl: 1,
  comment: 'isp-provisioning',
  ...over,
});

/** Rejects with a DnsProviderError; answers it. */
async function failure(p: Promise<unknown>): Promise<DnsProviderError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(DnsProviderError);
    return err as DnsProviderError;
  }
  throw new Error('expected a DnsProviderError');
}

/** Issue 13 item 5: the Cloudflare v4 DnsProvider, against nock. */
describe('Cloudflare DNS adapter (API v4)', () => {
  const dns = createCloudflareDns({ apiToken: TOKEN, zoneId: ZONE }, { timeoutMs: 2000 });
  afterEach(() => nock.cleanAll());

  it('verifies the token and reads the zone with the bearer token', async () => {
    const scope = nock(ROOT, { reqheaders: { authorization: `Bearer ${TOKEN}` } })
      .get('/client/v4/user/tokens/verify')
      .reply(200, ok({ id: 't1', status: 'active' }))
      .get(`/client/v4/zones/${ZONE}`)
      .reply(200, ok({ id: ZONE, name: 'example.net', status: 'active' }));
    expect(await dns.verifyToken()).to.deep.equal({ ok: true, message: 'The token is active.' });
    expect(await dns.zone()).to.deep.equal({ name: 'example.net', status: 'active' });
    expect(scope.isDone()).to.equal(true);
  });

  it('a disabled token is not ok', async () => {
    nock(ROOT)
      .get('/client/v4/user/tokens/verify')
      .reply(200, ok({ id: 't1', status: 'disabled' }));
    expect(await dns.verifyToken()).to.deep.equal({ ok: false, message: 'The token is disabled.' });
  });

  it('lists records by exact name and type across pages', async () => {
    nock(ROOT)
      .get(`/client/v4/zones/${ZONE}/dns_records`)
      .query({ name: 'isp.example.net', type: 'A', per_page: '100', page: '1' })
      .reply(200, ok([rec('r1', 'isp.example.net')], { result_info: { page: 1, total_pages: 2 } }))
      .get(`/client/v4/zones/${ZONE}/dns_records`)
      .query({ name: 'isp.example.net', type: 'A', per_page: '100', page: '2' })
      .reply(
        200,
        ok([rec('r2', 'isp.example.net', { proxied: false, comment: null })], {
          result_info: { page: 2, total_pages: 2 },
        }),
      );
    const list = await dns.listRecords({ name: 'isp.example.net', type: 'A' });
    expect(list).to.deep.equal([
      {
        id: 'r1',
        type: 'A',
        name: 'isp.example.net',
        content: '203.0.113.10',
        proxied: true,
        comment: 'isp-provisioning',
      },
      { id: 'r2', type: 'A', name: 'isp.example.net', content: '203.0.113.10', proxied: false, comment: null },
    ]);
  });

  it('creates a record with ttl auto and the comment; deletes by id (already gone resolves)', async () => {
    let sent: unknown;
    nock(ROOT)
      .post(`/client/v4/zones/${ZONE}/dns_records`, (b) => {
        sent = b;
        return true;
      })
      .reply(200, ok(rec('new1', 'isp.example.net')))
      .delete(`/client/v4/zones/${ZONE}/dns_records/new1`)
      .reply(200, ok({ id: 'new1' }))
      .delete(`/client/v4/zones/${ZONE}/dns_records/gone`)
      .reply(404, { success: false, errors: [{ code: 81044, message: 'Record does not exist.' }], result: null });
    const r = await dns.createRecord({
      type: 'A',
      name: 'isp.example.net',
      content: '203.0.113.10',
      proxied: true,
      comment: 'isp-provisioning',
    });
    expect(r.id).to.equal('new1');
    expect(sent).to.deep.equal({
      type: 'A',
      name: 'isp.example.net',
      content: '203.0.113.10',
      ttl: 1,
      proxied: true,
      comment: 'isp-provisioning',
    });
    await dns.deleteRecord('new1');
    await dns.deleteRecord('gone');
  });

  it('classifies 5xx, 429 (Retry-After) and network errors as retry, other errors as permanent; no token in messages', async () => {
    nock(ROOT)
      .get(`/client/v4/zones/${ZONE}`)
      .reply(502, 'bad gateway')
      .get(`/client/v4/zones/${ZONE}`)
      .reply(429, ok(null, { success: false }), { 'Retry-After': '7' })
      .get(`/client/v4/zones/${ZONE}`)
      .replyWithError('socket hang up')
      .get(`/client/v4/zones/${ZONE}`)
      .reply(403, { success: false, errors: [{ code: 9109, message: `Invalid access token ${TOKEN}` }], result: null })
      .post(`/client/v4/zones/${ZONE}/dns_records`)
      .reply(400, { success: false, errors: [{ code: 9005, message: 'Content for A record is invalid.' }] });
    const e502 = await failure(dns.zone());
    expect([e502.kind, e502.status]).to.deep.equal(['retry', 502]);
    const e429 = await failure(dns.zone());
    expect([e429.kind, e429.status, e429.retryAfterMs]).to.deep.equal(['retry', 429, 7000]);
    const net = await failure(dns.zone());
    expect([net.kind, net.message]).to.deep.equal(['retry', 'Cloudflare zone: unreachable']);
    const e403 = await failure(dns.zone());
    expect([e403.kind, e403.status]).to.deep.equal(['permanent', 403]);
    expect(e403.message).to.include('9109').and.not.include(TOKEN);
    const e400 = await failure(dns.createRecord({ type: 'A', name: 'x.example.net', content: 'bad', proxied: false }));
    expect([e400.kind, e400.message]).to.deep.equal([
      'permanent',
      'Cloudflare create record: HTTP 400 (9005: Content for A record is invalid.)',
    ]);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('3')).to.equal(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4000)).to.equal(6000);
    expect(retryAfterMs('soon')).to.equal(undefined);
    expect(retryAfterMs(null)).to.equal(undefined);
  });
});
