import { expect } from 'chai';
import { mintToken } from '../../../lib/token.js';
import { createApiKey, revokeApiKey } from '../../../api/mail/keys/service.js';
import { createMailboxClient, type MailboxClient } from '../../../jobs/adapters/mailbox-client/index.js';
import { getMailStack, type MailStack } from '../../helpers/mail.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { makeTenant, makeIntegrationToken } from '../../helpers/fixtures.js';
import {
  SENTINEL_MAILBOX_PASSWORD as PW,
  captureLogger,
  enc,
  makeDomain,
  makeKey,
  makeMailbox,
  startMailTestApp,
  uniq,
  type DomainFixture,
  type MailTestApp,
} from './support.js';

/**
 * Access errors of document 3's table, each produced by its real condition, against the real
 * mailbox client and Dovecot: unauthorized, forbidden, mailbox_not_found, mailbox_not_allowed,
 * invalid_request, mailbox_password_required, mailbox_auth_failed, mail_server_error, and the
 * order in which they are checked; plus the per-key rate limit.
 */
describe('Mailbox API: access errors and their order (document 3 "Errors")', () => {
  let app: MailTestApp;
  let stack: MailStack;
  let client: MailboxClient;
  let domain: DomainFixture;
  let other: DomainFixture;
  let box: { id: number; email: string };
  let notChosen: { id: number; email: string };
  let foreignBox: { id: number; email: string };
  let full: string;
  let readOnly: string;

  before(async function () {
    this.timeout(120_000);
    stack = await getMailStack();
    client = createMailboxClient({ idleMs: 500, logger: captureLogger() });
    registerCleanup(() => client.close());
    app = await startMailTestApp({ mailClient: client });
    domain = await makeDomain({ imap: stack.imap, smtp: stack.smtp });
    other = await makeDomain({ imap: stack.imap, smtp: stack.smtp });
    box = await makeMailbox(domain, `acc-${uniq()}`);
    notChosen = await makeMailbox(domain);
    foreignBox = await makeMailbox(other);
    for (const b of [box, notChosen, foreignBox]) await stack.addMailbox(b.email, PW);
    await stack.deliver({ from: 'someone@outside.test', to: box.email, subject: 'Access test', text: 'hello' });
    full = (await makeKey(domain, [box.id], ['emails:read', 'emails:reply', 'emails:send', 'mailboxes:create'])).key;
    readOnly = (await makeKey(domain, [box.id], ['emails:read'])).key;
  });

  /** The six protected endpoints, for the mailbox `m`. */
  const endpoints = (m: string) => [
    { method: 'GET', path: '/api/v1/mailboxes', body: undefined },
    { method: 'GET', path: `/api/v1/mailboxes/${enc(m)}/emails`, body: undefined },
    { method: 'GET', path: `/api/v1/mailboxes/${enc(m)}/emails/1`, body: undefined },
    { method: 'POST', path: `/api/v1/mailboxes/${enc(m)}/emails/1/reply`, body: { body: 'Thanks' } },
    {
      method: 'POST',
      path: `/api/v1/mailboxes/${enc(m)}/send`,
      body: { to: 'x@outside.test', subject: 'Hi', body: 'Hello' },
    },
    {
      method: 'POST',
      path: `/api/v1/domains/${domain.name}/mailboxes`,
      body: { local_part: 'newbox', password: 'long enough password' },
    },
  ];

  it('401 unauthorized: missing, malformed, wrong-kind, wrong-secret, revoked and expired keys, on every protected endpoint', async () => {
    const t = await makeTenant();
    const integration = (await makeIntegrationToken(t)).token;
    const revoked = await makeKey(domain, [box.id], ['emails:read']);
    await revokeApiKey(env.knex, revoked.id);
    const expired = await createApiKey(env.knex, {
      name: 'expired',
      domainId: domain.id,
      mailboxIds: [box.id],
      scopes: ['emails:read'],
      expiresAt: new Date(Date.now() - 3600_000),
    });
    const wrongSecret = mintToken('mailbox', (await makeKey(domain, [box.id], ['emails:read'])).id).token;
    const cases: [string, Record<string, string>][] = [
      ['no header', {}],
      ['garbage', { authorization: 'Bearer garbage' }],
      ['basic scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
      ['integration token', { authorization: `Bearer ${integration}` }],
      ['wrong secret', { authorization: `Bearer ${wrongSecret}` }],
      ['revoked', { authorization: `Bearer ${revoked.key}` }],
      ['expired', { authorization: `Bearer ${expired.key}` }],
    ];
    for (const [name, headers] of cases) {
      for (const e of endpoints(box.email)) {
        const res = await app.request(e.method, e.path, { headers, password: PW, body: e.body });
        expect(res.status, `${name} ${e.method} ${e.path}`).to.equal(401);
        expect(res.body).to.deep.equal({
          ok: false,
          error: 'unauthorized',
          message: 'The bearer token (API key) is missing or wrong.',
        });
      }
    }
    expect((await app.request('GET', '/api/v1')).status).to.equal(200);
  });

  it("403 forbidden: a key without the endpoint's scope", async () => {
    const sendOnly = (await makeKey(domain, [box.id], ['emails:send'])).key;
    for (const e of endpoints(box.email)) {
      const key =
        e.path.endsWith('/reply') || e.path.endsWith('/send') || e.path.startsWith('/api/v1/domains')
          ? readOnly
          : sendOnly;
      const res = await app.request(e.method, e.path, { key, password: PW, body: e.body });
      expect(res.status, `${e.method} ${e.path}`).to.equal(403);
      expect(res.body.ok).to.equal(false);
      expect(res.body.error).to.equal('forbidden');
      expect(res.body.message).to.match(/scope (emails|mailboxes):/);
    }
  });

  it('404 mailbox_not_found for an address not registered; 403 mailbox_not_allowed for a registered one the key was not given', async () => {
    for (const e of endpoints(`nobody-${uniq()}@${domain.name}`).slice(1, 5)) {
      const res = await app.request(e.method, e.path, { key: full, password: PW, body: e.body });
      expect(res.status, e.path).to.equal(404);
      expect(res.body.error).to.equal('mailbox_not_found');
    }
    for (const m of [notChosen.email, foreignBox.email]) {
      for (const e of endpoints(m).slice(1, 5)) {
        const res = await app.request(e.method, e.path, { key: full, password: PW, body: e.body });
        expect(res.status, e.path).to.equal(403);
        expect(res.body.error).to.equal('mailbox_not_allowed');
      }
    }
  });

  it('the mailbox in the path is URL-decoded and case-insensitive', async () => {
    const res = await app.request('GET', `/api/v1/mailboxes/${enc(box.email.toUpperCase())}/emails`, {
      key: full,
      password: PW,
    });
    expect(res.status).to.equal(200);
    expect(res.body.data.map((e: { subject: string }) => e.subject)).to.include('Access test');
    const raw = await app.request('GET', `/api/v1/mailboxes/${box.email}/emails?limit=1`, { key: full, password: PW });
    expect(raw.status).to.equal(200);
    expect(raw.body.data).to.have.length(1);
  });

  it('422 invalid_request with field errors for bad query, id and payloads', async () => {
    const m = enc(box.email);
    const cases: [string, string, unknown, string][] = [
      ['GET', `/api/v1/mailboxes/${m}/emails?limit=0`, undefined, 'limit'],
      ['GET', `/api/v1/mailboxes/${m}/emails?limit=101`, undefined, 'limit'],
      ['GET', `/api/v1/mailboxes/${m}/emails?limit=abc`, undefined, 'limit'],
      ['GET', `/api/v1/mailboxes/${m}/emails?limit=1.5`, undefined, 'limit'],
      ['GET', `/api/v1/mailboxes/${m}/emails?unseen=yes`, undefined, 'unseen'],
      ['GET', `/api/v1/mailboxes/${m}/emails/0`, undefined, 'id'],
      ['GET', `/api/v1/mailboxes/${m}/emails/abc`, undefined, 'id'],
      ['GET', `/api/v1/mailboxes/${m}/emails/-3`, undefined, 'id'],
      ['GET', `/api/v1/mailboxes/${m}/emails/99999999999`, undefined, 'id'],
      ['POST', `/api/v1/mailboxes/${m}/emails/1/reply`, {}, 'body'],
      ['POST', `/api/v1/mailboxes/${m}/emails/1/reply`, { body: '' }, 'body'],
      ['POST', `/api/v1/mailboxes/${m}/emails/1/reply`, { body: '   ' }, 'body'],
      ['POST', `/api/v1/mailboxes/${m}/emails/1/reply`, { body: 42 }, 'body'],
      ['POST', `/api/v1/mailboxes/${m}/emails/1/reply`, { body: 'ok', mailbox_password: 42 }, 'mailbox_password'],
      ['POST', `/api/v1/mailboxes/${m}/send`, { subject: 'x', body: 'y' }, 'to'],
      ['POST', `/api/v1/mailboxes/${m}/send`, { to: 'not-an-address', subject: 'x', body: 'y' }, 'to'],
      ['POST', `/api/v1/mailboxes/${m}/send`, { to: 'a@outside.test, b@outside.test', subject: 'x', body: 'y' }, 'to'],
      ['POST', `/api/v1/mailboxes/${m}/send`, { to: 'a@outside.test', body: 'y' }, 'subject'],
      [
        'POST',
        `/api/v1/mailboxes/${m}/send`,
        { to: 'a@outside.test', subject: 'x\r\nBcc: evil@outside.test', body: 'y' },
        'subject',
      ],
      ['POST', `/api/v1/mailboxes/${m}/send`, { to: 'a@outside.test', subject: 'x' }, 'body'],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await app.request(method, path, { key: full, password: PW, body });
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).to.equal(422);
      expect(res.body.ok).to.equal(false);
      expect(res.body.error).to.equal('invalid_request');
      expect(res.body.errors, `${path} ${JSON.stringify(body)}`).to.have.property(field);
    }
    const bad = await app.request('POST', `/api/v1/mailboxes/${m}/send`, {
      key: full,
      password: PW,
      raw: `{"to": "a@outside.test", "mailbox_password": "${PW}"`,
    });
    expect(bad.status).to.equal(422);
    expect(bad.body.error).to.equal('invalid_request');
    expect(bad.text).not.to.include(PW);
  });

  it('422 mailbox_password_required when neither the header nor the body carries a password', async () => {
    const m = enc(box.email);
    for (const e of endpoints(box.email).slice(1, 5)) {
      for (const headers of [{}, { 'x-mailbox-password': '' }] as Record<string, string>[]) {
        const res = await app.request(e.method, e.path, {
          key: full,
          headers,
          body: e.body ? { ...e.body, mailbox_password: '' } : undefined,
        });
        expect(res.status, e.path).to.equal(422);
        expect(res.body.error).to.equal('mailbox_password_required');
      }
    }
    const viaBody = await app.request('POST', `/api/v1/mailboxes/${m}/emails/999999/reply`, {
      key: full,
      body: { body: 'x', mailbox_password: PW },
    });
    expect(viaBody.status).to.equal(404);
    expect(viaBody.body.error).to.equal('email_not_found');
  });

  it('401 mailbox_auth_failed for a wrong mailbox password, over IMAP and SMTP alike', async () => {
    const m = enc(box.email);
    for (const e of endpoints(box.email).slice(1, 5)) {
      const res = await app.request(e.method, e.path, { key: full, password: 'wrong-password', body: e.body });
      expect(res.status, e.path).to.equal(401);
      expect(res.body).to.deep.include({ ok: false, error: 'mailbox_auth_failed' });
    }
    // the header wins over the body field
    const both = await app.request('POST', `/api/v1/mailboxes/${m}/emails/999999/reply`, {
      key: full,
      password: 'wrong-password',
      body: { body: 'x', mailbox_password: PW },
    });
    expect(both.body.error).to.equal('mailbox_auth_failed');
  });

  it('404 email_not_found for a UID that is not in INBOX', async () => {
    const res = await app.request('GET', `/api/v1/mailboxes/${enc(box.email)}/emails/4000000000`, {
      key: full,
      password: PW,
    });
    expect(res.status).to.equal(404);
    expect(res.body.error).to.equal('email_not_found');
  });

  it('502 mail_server_error while Dovecot is stopped (IMAP and the SMTP delivery path), fine again after restart', async function () {
    this.timeout(60_000);
    const m = enc(box.email);
    await stack.stopDovecot();
    try {
      const list = await app.request('GET', `/api/v1/mailboxes/${m}/emails`, { key: full, password: PW });
      expect(list.status).to.equal(502);
      expect(list.body).to.deep.equal({
        ok: false,
        error: 'mail_server_error',
        message: 'The mail server could not be reached or refused the request.',
      });
      const detail = await app.request('GET', `/api/v1/mailboxes/${m}/emails/1`, { key: full, password: PW });
      expect(detail.status).to.equal(502);
      expect(detail.body.error).to.equal('mail_server_error');
      const send = await app.request('POST', `/api/v1/mailboxes/${m}/send`, {
        key: full,
        password: PW,
        body: { to: box.email, subject: 'While down', body: 'x' },
      });
      expect(send.status).to.equal(502);
      expect(send.body.error).to.equal('mail_server_error');
    } finally {
      await stack.startDovecot();
    }
    const again = await app.request('GET', `/api/v1/mailboxes/${m}/emails`, { key: full, password: PW });
    expect(again.status).to.equal(200);
  });

  it('checks in the documented order: unauthorized, forbidden, mailbox_not_found, mailbox_not_allowed, invalid_request, mailbox_password_required', async () => {
    const unknown = enc(`nobody-${uniq()}@${domain.name}`);
    const m = enc(box.email);
    const n = enc(notChosen.email);
    const table: [string, string, { key?: string; password?: string; body?: unknown }, number, string][] = [
      ['GET', `/api/v1/mailboxes/${unknown}/emails?limit=0`, {}, 401, 'unauthorized'],
      ['POST', `/api/v1/mailboxes/${unknown}/send`, { key: readOnly, body: {} }, 403, 'forbidden'],
      ['GET', `/api/v1/mailboxes/${unknown}/emails?limit=0`, { key: full }, 404, 'mailbox_not_found'],
      ['GET', `/api/v1/mailboxes/${n}/emails?limit=0`, { key: full }, 403, 'mailbox_not_allowed'],
      ['POST', `/api/v1/mailboxes/${m}/send`, { key: full, body: { to: 'bad' } }, 422, 'invalid_request'],
      ['GET', `/api/v1/mailboxes/${m}/emails?limit=5`, { key: full }, 422, 'mailbox_password_required'],
      [
        'GET',
        `/api/v1/mailboxes/${m}/emails?limit=5`,
        { key: full, password: 'wrong-password' },
        401,
        'mailbox_auth_failed',
      ],
    ];
    for (const [method, path, o, status, error] of table) {
      const res = await app.request(method, path, o);
      expect(res.status, `${method} ${path}`).to.equal(status);
      expect(res.body.error, `${method} ${path}`).to.equal(error);
    }
  });

  it('429 rate_limited per key with Retry-After and X-RateLimit-* headers; another key is not affected', async () => {
    const limited = await startMailTestApp({
      mailClient: client,
      config: { rateLimit: { points: 3, durationSeconds: 60 } },
    });
    const k1 = (await makeKey(domain, [box.id], ['emails:read'])).key;
    const k2 = (await makeKey(domain, [box.id], ['emails:read'])).key;
    const first = await limited.request('GET', '/api/v1/mailboxes', { key: k1 });
    expect(first.status).to.equal(200);
    expect(first.headers.get('x-ratelimit-limit')).to.equal('3');
    expect(first.headers.get('x-ratelimit-remaining')).to.equal('2');
    await limited.request('GET', '/api/v1/mailboxes', { key: k1 });
    await limited.request('GET', '/api/v1/mailboxes', { key: k1 });
    const over = await limited.request('GET', '/api/v1/mailboxes', { key: k1 });
    expect(over.status).to.equal(429);
    expect(over.body).to.deep.include({ ok: false, error: 'rate_limited' });
    expect(Number(over.headers.get('retry-after'))).to.be.within(1, 60);
    expect(over.headers.get('x-ratelimit-remaining')).to.equal('0');
    expect(Number(over.headers.get('x-ratelimit-reset'))).to.be.greaterThan(Date.now() / 1000);
    expect((await limited.request('GET', '/api/v1/mailboxes', { key: k2 })).status).to.equal(200);
    expect((await limited.request('GET', '/api/v1')).status).to.equal(200);
  });
});
