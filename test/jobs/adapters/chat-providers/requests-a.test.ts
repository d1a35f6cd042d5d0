import { expect } from 'chai';
import nock from 'nock';
import { fonnte } from '../../../../jobs/adapters/chat-providers/fonnte.js';
import { ruangwa } from '../../../../jobs/adapters/chat-providers/ruangwa.js';
import { wablas } from '../../../../jobs/adapters/chat-providers/wablas.js';
import { FIXTURES, PHONE, PHONE_DIGITS, PSID, SECRET, TOKEN } from './fixtures.js';
import { intercept } from './helpers.js';

/** The exact requests of wablas, fonnte and ruangwa (method, URL, headers, body), and their checks. */

const form = (body: string) => Object.fromEntries(new URLSearchParams(body));
const MSG = 'Tagihan #INV-0042 & "diskon" 10%';

describe('chat providers: wablas requests (nock)', () => {
  afterEach(() => nock.cleanAll());
  const account = FIXTURES.wablas.account;

  it('phone: POST {base}/api/send-message, Authorization token.secret_key, form phone/message/isGroup=false', async () => {
    const i = intercept('https://bdg.wablas.example', 'post', '/api/send-message', 200, FIXTURES.wablas.okBody);
    const out = await wablas.send(account, PHONE, MSG);
    const seen = i.seen();
    expect(seen.method).to.equal('POST');
    expect(seen.path).to.equal('/api/send-message');
    expect(seen.headers.authorization).to.equal(`${TOKEN}.${SECRET}`);
    expect(seen.headers['content-type']).to.equal('application/x-www-form-urlencoded');
    expect(form(seen.body)).to.deep.equal({ phone: PHONE_DIGITS, message: MSG, isGroup: 'false' });
    expect(wablas.classify(out)).to.deep.equal({
      kind: 'sent',
      messageId: '5be46e84-650c',
      state: 'pending',
      detail: 'wablas: Message is pending and waiting to be processed',
    });
  });

  it('without a secret key the header is the token alone; a trailing slash of the base URL is dropped', async () => {
    const i = intercept('https://solo.wablas.example', 'post', '/api/send-message', 200, FIXTURES.wablas.okBody);
    await wablas.send({ ...account, secret_key: '', base_url: 'https://solo.wablas.example/' }, PHONE, 'hi');
    expect(i.seen().headers.authorization).to.equal(TOKEN);
  });

  it('group: the group id untouched and isGroup=true', async () => {
    const i = intercept('https://bdg.wablas.example', 'post', '/api/send-message', 200, FIXTURES.wablas.okBody);
    await wablas.send(account, { kind: 'group', value: '6281218444-87687324' }, 'rapat jam 9');
    expect(form(i.seen().body)).to.deep.equal({
      phone: '6281218444-87687324',
      message: 'rapat jam 9',
      isGroup: 'true',
    });
  });

  it('refuses without a request: no base URL, a conversation, a bad phone, an empty message', async () => {
    expect(await wablas.send({ ...account, base_url: '' }, PHONE, 'hi')).to.deep.include({
      kind: 'rejected',
      code: 'invalid_config',
    });
    expect(await wablas.send({ ...account, base_url: 'ftp://x.example' }, PHONE, 'hi')).to.deep.include({
      code: 'invalid_config',
    });
    expect(await wablas.send({ ...account, token: '' }, PHONE, 'hi')).to.deep.include({ code: 'invalid_config' });
    expect(await wablas.send(account, PSID, 'hi')).to.deep.include({ code: 'unsupported_recipient' });
    expect(await wablas.send(account, { kind: 'phone', value: '0812' }, 'hi')).to.deep.include({
      code: 'invalid_recipient',
    });
    expect(await wablas.send(account, PHONE, '  ')).to.deep.include({ code: 'invalid_message' });
    expect(wablas.classify(await wablas.send({ ...account, base_url: null }, PHONE, 'hi'))).to.deep.include({
      kind: 'permanent',
      code: 'invalid_config',
    });
  });

  it('refusals in a 200: bad recipient, disconnected device', async () => {
    intercept('https://bdg.wablas.example', 'post', '/api/send-message', 200, {
      status: false,
      message: 'phone number invalid',
    });
    expect(wablas.classify(await wablas.send(account, PHONE, 'hi'))).to.deep.include({ code: 'invalid_recipient' });
    intercept('https://bdg.wablas.example', 'post', '/api/send-message', 200, {
      status: false,
      message: 'device disconnected, please scan qr',
    });
    expect(wablas.classify(await wablas.send(account, PHONE, 'hi'))).to.deep.include({ code: 'device_disconnected' });
  });

  it('refusal texts: credentials before recipients, quotas are not rate limits', async () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ['Invalid Number Key', { code: 'auth_failed' }],
      ['secret key invalid', { code: 'auth_failed' }],
      ['quota limit exceeded, please renew', { kind: 'permanent', code: 'provider_refused' }],
      ['device expired', { code: 'provider_refused' }],
      ['Too many requests, slow down', { kind: 'rate_limited', retryAfterMs: 60_000 }],
      ['nomor tidak terdaftar di WhatsApp', { code: 'invalid_recipient' }],
    ];
    for (const [message, expected] of cases) {
      intercept('https://bdg.wablas.example', 'post', '/api/send-message', 200, { status: false, message });
      expect(wablas.classify(await wablas.send(account, PHONE, 'hi')), message).to.deep.include(expected);
    }
  });

  it('checkConnection: GET /api/device/info?token=...; connected -> sent, disconnected -> device_disconnected', async () => {
    const i = intercept('https://bdg.wablas.example', 'get', '/api/device/info', 200, {
      status: true,
      data: { name: 'isp', serial: 'WYE9xx', sender: '628122988', quota: 91, active: true, status: 'connected' },
    });
    const out = await wablas.checkConnection(account);
    expect(i.seen().path).to.equal(`/api/device/info?token=${TOKEN}`);
    expect(wablas.classify(out)).to.deep.include({ kind: 'sent', detail: 'wablas: device connected' });
    expect(JSON.stringify(out)).not.to.include(TOKEN);
    intercept('https://bdg.wablas.example', 'get', '/api/device/info', 200, {
      status: true,
      data: { status: 'disconnected' },
    });
    expect(wablas.classify(await wablas.checkConnection(account))).to.deep.include({ code: 'device_disconnected' });
  });
});

describe('chat providers: fonnte requests (nock)', () => {
  afterEach(() => nock.cleanAll());
  const account = FIXTURES.fonnte.account;

  it('phone: POST https://api.fonnte.com/send, Authorization token, form target/message/countryCode=0', async () => {
    const i = intercept('https://api.fonnte.com', 'post', '/send', 200, FIXTURES.fonnte.okBody);
    const out = await fonnte.send(account, PHONE, MSG);
    const seen = i.seen();
    expect(seen.headers.authorization).to.equal(TOKEN);
    expect(seen.headers['content-type']).to.equal('application/x-www-form-urlencoded');
    expect(form(seen.body)).to.deep.equal({ target: PHONE_DIGITS, message: MSG, countryCode: '0' });
    expect(fonnte.classify(out)).to.deep.include({ kind: 'sent', messageId: '80367170', state: 'pending' });
  });

  it('group: the group id goes in target untouched', async () => {
    const i = intercept('https://api.fonnte.com', 'post', '/send', 200, FIXTURES.fonnte.okBody);
    await fonnte.send(account, { kind: 'group', value: '120363025246125486@g.us' }, 'hi');
    expect(form(i.seen().body).target).to.equal('120363025246125486@g.us');
  });

  it('a base URL is a configuration error (fixed root); token invalid in a 200 -> auth_failed', async () => {
    expect(await fonnte.send({ ...account, base_url: 'https://proxy.example' }, PHONE, 'hi')).to.deep.include({
      kind: 'rejected',
      code: 'invalid_config',
    });
    intercept('https://api.fonnte.com', 'post', '/send', 200, { reason: 'token invalid', status: false });
    expect(fonnte.classify(await fonnte.send(account, PHONE, 'hi'))).to.deep.include({ code: 'auth_failed' });
  });

  it('checkConnection: POST /device; connect -> sent; disconnect, token invalid -> permanent', async () => {
    const i = intercept('https://api.fonnte.com', 'post', '/device', 200, {
      device: '6282227097005',
      device_status: 'connect',
      status: true,
    });
    expect(fonnte.classify(await fonnte.checkConnection(account))).to.deep.include({ kind: 'sent' });
    expect(i.seen().headers.authorization).to.equal(TOKEN);
    intercept('https://api.fonnte.com', 'post', '/device', 200, { device_status: 'disconnect', status: true });
    expect(fonnte.classify(await fonnte.checkConnection(account))).to.deep.include({ code: 'device_disconnected' });
    intercept('https://api.fonnte.com', 'post', '/device', 200, { reason: 'token invalid', status: false });
    expect(fonnte.classify(await fonnte.checkConnection(account))).to.deep.include({ code: 'auth_failed' });
  });
});

describe('chat providers: ruangwa requests (nock)', () => {
  afterEach(() => nock.cleanAll());
  const account = FIXTURES.ruangwa.account;

  it('phone: POST https://app.ruangwa.id/api/send_message (documented root), form api_key/number/message', async () => {
    const i = intercept('https://app.ruangwa.id', 'post', '/api/send_message', 200, FIXTURES.ruangwa.okBody);
    const out = await ruangwa.send(account, PHONE, MSG);
    const seen = i.seen();
    expect(seen.headers.authorization).to.equal(undefined);
    expect(seen.headers['content-type']).to.equal('application/x-www-form-urlencoded');
    expect(form(seen.body)).to.deep.equal({ api_key: TOKEN, number: PHONE_DIGITS, message: MSG });
    expect(ruangwa.classify(out)).to.deep.include({ kind: 'sent', messageId: '918273', state: 'sent' });
  });

  it('a manual base URL replaces the root; a group id goes in number untouched', async () => {
    const i = intercept('https://wa.reseller.example', 'post', '/api/send_message', 200, FIXTURES.ruangwa.okBody);
    await ruangwa.send(
      { ...account, base_url: 'https://wa.reseller.example/api/' },
      { kind: 'group', value: '62812-1501489476' },
      'hi',
    );
    expect(form(i.seen().body).number).to.equal('62812-1501489476');
  });

  it('checkConnection makes no request (no documented status call): sent, not verified', async () => {
    const out = await ruangwa.checkConnection(account);
    expect(out.kind).to.equal('not_checked');
    expect(ruangwa.classify(out)).to.deep.include({ kind: 'sent', messageId: null });
    expect(await ruangwa.checkConnection({ ...account, token: null })).to.deep.include({ code: 'invalid_config' });
  });
});
