import { expect } from 'chai';
import { createMailboxClient, type MailboxClient } from '../../../jobs/adapters/mailbox-client/index.js';
import { getTlsMailStack, type TlsMailStack } from '../../helpers/mail.js';
import { registerCleanup } from '../../helpers/env.js';
import {
  SENTINEL_MAILBOX_PASSWORD as PW,
  captureLogger,
  enc,
  makeDomain,
  makeKey,
  makeMailbox,
  startMailTestApp,
  uniq,
  type MailTestApp,
} from './support.js';

describe('Mailbox API over TLS: real client trusting the test CA (issue "TLS for mail")', () => {
  let app: MailTestApp;
  let client: MailboxClient;
  let good: TlsMailStack;
  let foreign: TlsMailStack;
  let goodBox: { id: number; email: string };
  let badBox: { id: number; email: string };
  let key: string;
  let badKey: string;

  before(async function () {
    this.timeout(120_000);
    good = await getTlsMailStack('good');
    foreign = await getTlsMailStack('foreign');
    client = createMailboxClient({ idleMs: 2000, tls: { ca: good.pki.ca.certPem }, logger: captureLogger() });
    registerCleanup(() => client.close());
    app = await startMailTestApp({ mailClient: client });
    // one domain per stack: STARTTLS on the good servers, implicit TLS on the ones with a foreign certificate
    const goodDomain = await makeDomain({ imap: good.endpoints.starttls.imap, smtp: good.endpoints.starttls.smtp });
    const badDomain = await makeDomain({ imap: foreign.endpoints.ssl.imap, smtp: foreign.endpoints.ssl.smtp });
    goodBox = await makeMailbox(goodDomain, `tls-${uniq()}`);
    badBox = await makeMailbox(badDomain, `tls-${uniq()}`);
    await good.addMailbox(goodBox.email, PW);
    await foreign.addMailbox(badBox.email, PW);
    key = (await makeKey(goodDomain, [goodBox.id], ['emails:read', 'emails:send'])).key;
    badKey = (await makeKey(badDomain, [badBox.id], ['emails:read', 'emails:send'])).key;
  });

  it('200 over STARTTLS with a verified certificate: send, then list', async function () {
    this.timeout(20_000);
    const m = enc(goodBox.email);
    const subject = `TLS via API ${uniq()}`;
    const sent = await app.request('POST', `/api/v1/mailboxes/${m}/send`, {
      key,
      password: PW,
      body: { to: goodBox.email, subject, body: 'over STARTTLS' },
    });
    expect(sent.status).to.equal(200);
    expect(sent.body.ok).to.equal(true);
    const list = await app.request('GET', `/api/v1/mailboxes/${m}/emails`, { key, password: PW });
    expect(list.status).to.equal(200);
    expect(list.body.data.map((e: { subject: string; message_id: string }) => [e.subject, e.message_id])).to.deep.equal(
      [[subject, sent.body.message_id]],
    );
  });

  it('502 mail_server_error (not 500 or 401) for a certificate of an untrusted CA; the log has why', async () => {
    const m = enc(badBox.email);
    const before = app.logs.length;
    const list = await app.request('GET', `/api/v1/mailboxes/${m}/emails`, { key: badKey, password: PW });
    const send = await app.request('POST', `/api/v1/mailboxes/${m}/send`, {
      key: badKey,
      password: PW,
      body: { to: badBox.email, subject: 'never sent', body: 'x' },
    });
    for (const res of [list, send]) {
      expect(res.status).to.equal(502);
      expect(res.body).to.deep.equal({
        ok: false,
        error: 'mail_server_error',
        message: 'The mail server could not be reached or refused the request.',
      });
    }
    const logged = app.logs.slice(before).join('\n');
    expect(logged).to.contain('TLS_CERT_UNTRUSTED');
    expect(logged).to.contain('TLS certificate of the mail server could not be verified (IMAP: ');
    expect(logged).to.contain('TLS certificate of the mail server could not be verified (SMTP: ');
    expect(foreign.relays.ssl.authAttempts).to.deep.equal([]);
    expect(await foreign.imapLoginLines(badBox.email)).to.deep.equal([]);
  });
});
