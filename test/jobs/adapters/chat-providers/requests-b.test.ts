import { expect } from 'chai';
import nock from 'nock';
import { messenger } from '../../../../jobs/adapters/chat-providers/messenger.js';
import { starsender } from '../../../../jobs/adapters/chat-providers/starsender.js';
import { waha } from '../../../../jobs/adapters/chat-providers/waha.js';
import { watzap } from '../../../../jobs/adapters/chat-providers/watzap.js';
import { FIXTURES, PHONE, PHONE_DIGITS, PSID, SECRET, TOKEN } from './fixtures.js';
import { intercept } from './helpers.js';

/** The exact requests of waha, messenger, watzap and starsender, and their connection checks. */

const MSG = 'Gangguan di area Cibubur, estimasi pulih 14:00.';
const GROUP = { kind: 'group', value: '120363025246125486@g.us' } as const;

describe('chat providers: waha requests (nock)', () => {
  afterEach(() => nock.cleanAll());
  const account = FIXTURES.waha.account;

  it('phone: POST {base}/api/sendText, X-Api-Key, JSON {session, chatId: <digits>@c.us, text}', async () => {
    const i = intercept('https://waha.example', 'post', '/api/sendText', 201, FIXTURES.waha.okBody);
    const out = await waha.send(account, PHONE, MSG);
    const seen = i.seen();
    expect(seen.headers['x-api-key']).to.equal(TOKEN);
    expect(seen.headers['content-type']).to.equal('application/json');
    expect(JSON.parse(seen.body)).to.deep.equal({ session: 'ispdemo', chatId: `${PHONE_DIGITS}@c.us`, text: MSG });
    expect(waha.classify(out)).to.deep.include({
      kind: 'sent',
      messageId: 'true_6281234567890@c.us_3EB0C767D26A1D6A1F',
      state: 'sent',
    });
  });

  it('group id untouched; no key -> no X-Api-Key header; no session -> "default"', async () => {
    const i = intercept('https://waha.example', 'post', '/api/sendText', 201, {
      id: { _serialized: 'false_x@g.us_AB' },
    });
    const out = await waha.send({ ...account, token: '', secret_key: null }, GROUP, 'hi');
    expect(i.seen().headers['x-api-key']).to.equal(undefined);
    expect(JSON.parse(i.seen().body)).to.deep.equal({ session: 'default', chatId: GROUP.value, text: 'hi' });
    expect(waha.classify(out)).to.deep.include({ messageId: 'false_x@g.us_AB' });
  });

  it('no base URL -> invalid_config; 422 (session not WORKING) -> device_disconnected; 404 -> invalid_config', async () => {
    expect(await waha.send({ ...account, base_url: ' ' }, PHONE, 'hi')).to.deep.include({ code: 'invalid_config' });
    intercept('https://waha.example', 'post', '/api/sendText', 422, {
      message: 'Session status is not as expected',
      status: 'STOPPED',
    });
    expect(waha.classify(await waha.send(account, PHONE, 'hi'))).to.deep.include({ code: 'device_disconnected' });
    intercept('https://waha.example', 'post', '/api/sendText', 404, { message: 'Session "ispdemo" does not exist' });
    expect(waha.classify(await waha.send(account, PHONE, 'hi'))).to.deep.include({ code: 'invalid_config' });
  });

  it('checkConnection: GET /api/sessions/{session}; WORKING -> sent, SCAN_QR_CODE -> device_disconnected', async () => {
    const i = intercept('https://waha.example', 'get', '/api/sessions/ispdemo', 200, {
      name: 'ispdemo',
      status: 'WORKING',
    });
    expect(waha.classify(await waha.checkConnection(account))).to.deep.include({ kind: 'sent' });
    expect(i.seen().headers['x-api-key']).to.equal(TOKEN);
    intercept('https://waha.example', 'get', '/api/sessions/ispdemo', 200, { name: 'ispdemo', status: 'SCAN_QR_CODE' });
    expect(waha.classify(await waha.checkConnection(account))).to.deep.include({ code: 'device_disconnected' });
  });
});

describe('chat providers: messenger requests (nock)', () => {
  afterEach(() => nock.cleanAll());
  const account = FIXTURES.messenger.account;

  it('conversation: POST graph root/{page id}/messages, Bearer page token, JSON recipient/messaging_type/message', async () => {
    const i = intercept(
      'https://graph.facebook.com',
      'post',
      '/v21.0/1029384756/messages',
      200,
      FIXTURES.messenger.okBody,
    );
    const out = await messenger.send(account, PSID, MSG);
    const seen = i.seen();
    expect(seen.path).to.equal('/v21.0/1029384756/messages');
    expect(seen.path).not.to.include(TOKEN);
    expect(seen.headers.authorization).to.equal(`Bearer ${TOKEN}`);
    expect(JSON.parse(seen.body)).to.deep.equal({
      recipient: { id: PSID.value },
      messaging_type: 'RESPONSE',
      message: { text: MSG },
    });
    expect(messenger.classify(out)).to.deep.include({ kind: 'sent', state: 'sent' });
  });

  it('a given base URL replaces the Graph API root', async () => {
    const i = intercept(
      'https://graph.proxy.example',
      'post',
      '/v19.0/1029384756/messages',
      200,
      FIXTURES.messenger.okBody,
    );
    await messenger.send({ ...account, base_url: 'https://graph.proxy.example/v19.0' }, PSID, 'hi');
    expect(i.done()).to.equal(true);
  });

  it('refuses phones and groups, and accounts without page token or page id, without a request', async () => {
    expect(await messenger.send(account, PHONE, 'hi')).to.deep.include({ code: 'unsupported_recipient' });
    expect(await messenger.send(account, GROUP, 'hi')).to.deep.include({ code: 'unsupported_recipient' });
    expect(await messenger.send({ ...account, secret_key: '' }, PSID, 'hi')).to.deep.include({
      code: 'invalid_config',
    });
    expect(await messenger.send({ ...account, token: null }, PSID, 'hi')).to.deep.include({ code: 'invalid_config' });
  });

  it('Graph errors: 190 token, 2018001 no such user, 613 rate limit, 2 temporary', async () => {
    const path = '/v21.0/1029384756/messages';
    const cases: Array<[number, unknown, Record<string, unknown>]> = [
      [
        400,
        { error: { message: 'Error validating access token', type: 'OAuthException', code: 190 } },
        { code: 'auth_failed' },
      ],
      [
        400,
        { error: { message: 'No matching user found', type: 'OAuthException', code: 100, error_subcode: 2018001 } },
        { code: 'invalid_recipient' },
      ],
      [
        400,
        { error: { message: 'Calls to this api have exceeded the rate limit.', code: 613 } },
        { kind: 'rate_limited', retryAfterMs: 60_000 },
      ],
      [
        500,
        { error: { message: 'Service temporarily unavailable', code: 2, is_transient: true } },
        { kind: 'ambiguous' },
      ],
      [200, { error: { message: "This person isn't available right now.", code: 551 } }, { code: 'invalid_recipient' }],
    ];
    for (const [status, body, expected] of cases) {
      intercept('https://graph.facebook.com', 'post', path, status, body);
      expect(messenger.classify(await messenger.send(account, PSID, 'hi')), JSON.stringify(body)).to.deep.include(
        expected,
      );
    }
  });

  it('checkConnection: GET /{page id}?fields=id,name with the Bearer token', async () => {
    const i = intercept('https://graph.facebook.com', 'get', '/v21.0/1029384756', 200, {
      id: '1029384756',
      name: 'ISP Demo',
    });
    expect(messenger.classify(await messenger.checkConnection(account))).to.deep.include({ kind: 'sent' });
    expect(i.seen().path).to.equal('/v21.0/1029384756?fields=id%2Cname');
    expect(i.seen().headers.authorization).to.equal(`Bearer ${TOKEN}`);
  });
});

describe('chat providers: watzap requests (nock)', () => {
  afterEach(() => nock.cleanAll());
  const account = FIXTURES.watzap.account;

  it('phone: POST /v1/send_message JSON {api_key, number_key, phone_no, message}', async () => {
    const i = intercept('https://api.watzap.id', 'post', '/v1/send_message', 200, FIXTURES.watzap.okBody);
    const out = await watzap.send(account, PHONE, MSG);
    expect(i.seen().headers['content-type']).to.equal('application/json');
    expect(JSON.parse(i.seen().body)).to.deep.equal({
      api_key: TOKEN,
      number_key: SECRET,
      phone_no: PHONE_DIGITS,
      message: MSG,
    });
    expect(watzap.classify(out)).to.deep.include({ kind: 'sent', messageId: null, state: 'sent' });
  });

  it('group: POST /v1/send_message_group with group_id', async () => {
    const i = intercept('https://api.watzap.id', 'post', '/v1/send_message_group', 200, FIXTURES.watzap.okBody);
    await watzap.send(account, GROUP, 'hi');
    expect(JSON.parse(i.seen().body)).to.deep.equal({
      api_key: TOKEN,
      number_key: SECRET,
      group_id: GROUP.value,
      message: 'hi',
    });
  });

  it('codes in a 200: 1004 pairing -> device_disconnected, 1005 -> ambiguous; both keys required', async () => {
    intercept('https://api.watzap.id', 'post', '/v1/send_message', 200, {
      status: '1004',
      message: 'Pairing Failed, Access Denied',
    });
    expect(watzap.classify(await watzap.send(account, PHONE, 'hi'))).to.deep.include({ code: 'device_disconnected' });
    intercept('https://api.watzap.id', 'post', '/v1/send_message', 200, { status: 1005, message: 'Fatal Error' });
    expect(watzap.classify(await watzap.send(account, PHONE, 'hi')).kind).to.equal('ambiguous');
    expect(await watzap.send({ ...account, secret_key: '' }, PHONE, 'hi')).to.deep.include({ code: 'invalid_config' });
  });

  it("checkConnection: POST /v1/checking_key; the account's number key must be listed and connected", async () => {
    const licenses = (connected: boolean, key = SECRET) => ({
      status: true,
      message: 'Successfully',
      data: {
        name: 'ISP',
        licenses_key: [
          { key: 'OTHERKEY0000', is_connected: true },
          { key, is_connected: connected },
        ],
      },
    });
    const i = intercept('https://api.watzap.id', 'post', '/v1/checking_key', 200, licenses(true));
    expect(watzap.classify(await watzap.checkConnection(account))).to.deep.include({ kind: 'sent' });
    expect(JSON.parse(i.seen().body)).to.deep.equal({ api_key: TOKEN });
    intercept('https://api.watzap.id', 'post', '/v1/checking_key', 200, licenses(false));
    expect(watzap.classify(await watzap.checkConnection(account))).to.deep.include({ code: 'device_disconnected' });
    intercept('https://api.watzap.id', 'post', '/v1/checking_key', 200, licenses(true, 'SOMEONEELSE1'));
    expect(watzap.classify(await watzap.checkConnection(account))).to.deep.include({ code: 'auth_failed' });
  });
});

describe('chat providers: starsender requests (nock)', () => {
  afterEach(() => nock.cleanAll());
  const account = FIXTURES.starsender.account;

  it('phone: POST /api/send, Authorization device key, JSON {messageType: text, to, body}', async () => {
    const i = intercept('https://api.starsender.online', 'post', '/api/send', 200, FIXTURES.starsender.okBody);
    const out = await starsender.send(account, PHONE, MSG);
    expect(i.seen().headers.authorization).to.equal(TOKEN);
    expect(JSON.parse(i.seen().body)).to.deep.equal({ messageType: 'text', to: PHONE_DIGITS, body: MSG });
    expect(starsender.classify(out)).to.deep.include({ kind: 'sent', messageId: 'ss-77812' });
  });

  it('group id in `to` untouched; a refused device key in a 200 -> auth_failed', async () => {
    const i = intercept('https://api.starsender.online', 'post', '/api/send', 200, {
      success: false,
      message: 'Invalid device key',
    });
    const c = starsender.classify(await starsender.send(account, GROUP, 'hi'));
    expect(JSON.parse(i.seen().body).to).to.equal(GROUP.value);
    expect(c).to.deep.include({ code: 'auth_failed' });
  });

  it('checkConnection: GET /api/whatsapp/groups with the device key', async () => {
    const i = intercept('https://api.starsender.online', 'get', '/api/whatsapp/groups', 200, {
      success: true,
      data: [],
    });
    expect(starsender.classify(await starsender.checkConnection(account))).to.deep.include({ kind: 'sent' });
    expect(i.seen().headers.authorization).to.equal(TOKEN);
  });
});
