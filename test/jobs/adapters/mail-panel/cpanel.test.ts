import { expect } from 'chai';
import nock from 'nock';
import {
  createMailPanel,
  PanelError,
  type CreateMailboxInput,
  type MailPanelConfig,
} from '../../../../jobs/adapters/mail-panel/index.js';
import { cpanelAddPopForm } from '../../../../jobs/adapters/mail-panel/cpanel.js';
import { freePort } from '../../../../lib/infra/free-port.js';

const TOKEN = 'U7HMR63FHY282DQZ4H5BIH16JLYSO01M';
const cfg: MailPanelConfig = {
  type: 'cpanel',
  host: 'cpanel.example.test',
  port: 2083,
  user: 'cpuser',
  password: TOKEN,
  ssl: true,
};
const BASE = 'https://cpanel.example.test:2083';
const input: CreateMailboxInput = {
  domain: 'example.com',
  local_part: 'John.Doe',
  password: 'S3cret&quota=0#x',
  real_name: 'John',
  quota: '2G',
};

/** UAPI answers as cPanel documents them: HTTP 200 with status 1 or 0 in the body. */
const ok = (data: unknown = null) => ({ status: 1, errors: null, messages: null, warnings: null, metadata: {}, data });
const failed = (...errors: string[]) => ({
  status: 0,
  errors,
  messages: null,
  warnings: null,
  metadata: {},
  data: null,
});

interface Seen {
  path: string;
  body: string;
  headers: Record<string, unknown>;
}

async function rejection(p: Promise<unknown>): Promise<PanelError> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(PanelError);
    return e as PanelError;
  }
  throw new Error('expected a rejection');
}

describe('mail panel adapters: cPanel UAPI (nock)', () => {
  afterEach(() => {
    nock.cleanAll();
  });

  it("nock 14 intercepts global fetch (the adapters' transport)", async () => {
    const scope = nock(BASE).get('/probe').reply(200, 'intercepted');
    const res = await fetch(`${BASE}/probe`);
    expect(await res.text()).to.equal('intercepted');
    expect(scope.isDone()).to.equal(true);
  });

  it('createMailbox POSTs Email/add_pop with the documented fields, MB quota and the API token header', async () => {
    let seen: Seen | undefined;
    const scope = nock(BASE)
      .post('/execute/Email/add_pop')
      .reply(function (uri, body) {
        seen = { path: uri, body: String(body), headers: this.req.headers };
        return [200, ok('john.doe+example.com')];
      });
    await createMailPanel(cfg).createMailbox(input);
    expect(scope.isDone()).to.equal(true);
    expect(seen!.path).to.equal('/execute/Email/add_pop');
    expect(seen!.headers.authorization).to.equal(`cpanel cpuser:${TOKEN}`);
    expect(seen!.headers['content-type']).to.equal('application/x-www-form-urlencoded');
    const form = new URLSearchParams(seen!.body);
    expect([...form.keys()]).to.deep.equal(['email', 'domain', 'password', 'quota']);
    expect(Object.fromEntries(form)).to.deep.equal({
      email: 'john.doe',
      domain: 'example.com',
      password: 'S3cret&quota=0#x',
      quota: '2048',
    });
    expect(form.getAll('quota')).to.deep.equal(['2048']);
  });

  it('leaves quota out when null (the account default) and uses http on 2082 when ssl is false', async () => {
    let body = '';
    nock('http://cpanel.example.test:2082')
      .post('/execute/Email/add_pop')
      .reply(200, (_uri, b) => {
        body = String(b);
        return ok();
      });
    await createMailPanel({ ...cfg, ssl: false, port: 2082 }).createMailbox({ ...input, quota: null });
    expect(new URLSearchParams(body).has('quota')).to.equal(false);
    expect(new URLSearchParams(body).get('email')).to.equal('john.doe');
  });

  it('detects "already exists" inside an HTTP 200 body: kind exists, message without the password', async () => {
    nock(BASE).post('/execute/Email/add_pop').reply(200, failed('The account john.doe@example.com already exists!'));
    const err = await rejection(createMailPanel(cfg).createMailbox(input));
    expect(err.kind).to.equal('exists');
    expect(err.status).to.equal(200);
    expect(err.message).to.include('already exists');
  });

  it('other errors inside a 200 body are permanent; a WHM-style {result} wrapper is read too', async () => {
    nock(BASE)
      .post('/execute/Email/add_pop')
      .reply(200, { apiversion: 3, module: 'Email', func: 'add_pop', result: failed('The password is too weak.') });
    const err = await rejection(createMailPanel(cfg).createMailbox(input));
    expect(err.kind).to.equal('permanent');
    expect(err.message).to.include('too weak');
  });

  it('a 200 that is not UAPI JSON is an error, not a success', async () => {
    nock(BASE).post('/execute/Email/add_pop').reply(200, '<html>Maintenance</html>');
    const err = await rejection(createMailPanel(cfg).createMailbox(input));
    expect(err.kind).to.equal('permanent');
  });

  it('never puts the mailbox password or the token in a message, even when the panel echoes them', async () => {
    nock(BASE)
      .post('/execute/Email/add_pop')
      .reply(
        200,
        failed(`Invalid password “${input.password}” for token ${TOKEN} (${encodeURIComponent(input.password)})`),
      );
    const err = await rejection(createMailPanel(cfg).createMailbox(input));
    expect(err.message).not.to.include(input.password);
    expect(err.message).not.to.include(encodeURIComponent(input.password));
    expect(err.message).not.to.include(TOKEN);
    expect(err.message).to.include('[redacted]');
  });

  for (const [status, kind] of [
    [401, 'auth'],
    [403, 'auth'],
    [500, 'transient'],
    [502, 'transient'],
    [503, 'transient'],
    [404, 'permanent'],
  ] as const) {
    it(`HTTP ${status} -> ${kind}`, async () => {
      nock(BASE)
        .post('/execute/Email/add_pop')
        .reply(status, status === 401 ? 'Access denied' : { status: 0, errors: ['x'] });
      const err = await rejection(createMailPanel(cfg).createMailbox(input));
      expect(err.kind).to.equal(kind);
      expect(err.status).to.equal(status);
    });
  }

  it('HTTP 429 -> rate_limited with retryAfterMs from Retry-After', async () => {
    nock(BASE).post('/execute/Email/add_pop').reply(429, 'slow down', { 'Retry-After': '90' });
    const err = await rejection(createMailPanel(cfg).createMailbox(input));
    expect(err.kind).to.equal('rate_limited');
    expect(err.retryAfterMs).to.equal(90_000);
  });

  it('network errors: refused (real socket) and reset are transient, certificate errors permanent', async () => {
    const port = await freePort();
    const refused = await rejection(
      createMailPanel({ ...cfg, host: '127.0.0.1', port, ssl: false }).createMailbox(input),
    );
    expect(refused.kind).to.equal('transient');
    expect(refused.message).to.include('ECONNREFUSED');
    expect(refused.cause).to.be.instanceOf(Error);

    nock(BASE).post('/execute/Email/add_pop').replyWithError({ code: 'ECONNRESET', message: 'socket hang up' });
    expect((await rejection(createMailPanel(cfg).createMailbox(input))).kind).to.equal('transient');
    nock(BASE)
      .post('/execute/Email/add_pop')
      .replyWithError({ code: 'CERT_HAS_EXPIRED', message: 'certificate has expired' });
    expect((await rejection(createMailPanel(cfg).createMailbox(input))).kind).to.equal('permanent');
  });

  it('a panel slower than timeoutMs is a transient failure', async () => {
    nock(BASE).post('/execute/Email/add_pop').delay(2_000).reply(200, ok());
    const err = await rejection(createMailPanel(cfg, { timeoutMs: 50 }).createMailbox(input));
    expect(err.kind).to.equal('transient');
    expect(err.message).to.include('timed out after 50 ms');
  });

  it("honours the caller's AbortSignal", async () => {
    nock(BASE).post('/execute/Email/add_pop').delay(2_000).reply(200, ok());
    const ac = new AbortController();
    const p = createMailPanel(cfg).createMailbox(input, ac.signal);
    setImmediate(() => ac.abort(new Error('job cancelled')));
    const err = await rejection(p);
    expect(err.kind).to.equal('transient');
    expect(err.message).to.include('aborted');
  });

  it('rejects an injection attempt in local_part before any request', async () => {
    let requests = 0;
    nock(BASE)
      .post(/.*/)
      .reply(() => {
        requests++;
        return [200, ok()];
      });
    const err = await rejection(createMailPanel(cfg).createMailbox({ ...input, local_part: 'john&quota=0' }));
    expect(err.kind).to.equal('permanent');
    expect(err.fields).to.have.property('local_part');
    expect(requests).to.equal(0);
  });

  it('even an unvalidated hostile local part could not add a parameter: the form encodes it', () => {
    const form = cpanelAddPopForm({ ...input, local_part: 'john&quota=0&domain=evil.test', quota: '1M' });
    const parsed = new URLSearchParams(form.toString());
    expect(parsed.getAll('quota')).to.deep.equal(['1']);
    expect(parsed.getAll('domain')).to.deep.equal(['example.com']);
    expect(parsed.get('email')).to.equal('john&quota=0&domain=evil.test');
    expect(form.toString()).to.include('email=john%26quota%3D0%26domain%3Devil.test');
  });

  it('mailboxExists GETs Email/list_pops with an exact escaped regex and compares exactly', async () => {
    let query: URLSearchParams | undefined;
    nock(BASE, { reqheaders: { authorization: `cpanel cpuser:${TOKEN}` } })
      .get('/execute/Email/list_pops')
      .query(true)
      .twice()
      .reply((uri) => {
        query = new URL(uri, BASE).searchParams;
        return [
          200,
          ok([
            { email: 'john.doe@example.com', login: 'john.doe@example.com', suspended_incoming: 0, suspended_login: 0 },
            { email: 'cpuser', login: 'Main Account' },
          ]),
        ];
      });
    const panel = createMailPanel(cfg);
    expect(await panel.mailboxExists('Example.com', 'John.Doe')).to.equal(true);
    expect(query!.get('regex')).to.equal('^john\\.doe\\@example\\.com$');
    expect(await panel.mailboxExists('example.com', 'john')).to.equal(false);
  });

  it('mailboxExists answers false on an empty list and throws on an error body', async () => {
    nock(BASE).get('/execute/Email/list_pops').query(true).reply(200, ok([]));
    expect(await createMailPanel(cfg).mailboxExists('example.com', 'nobody')).to.equal(false);
    nock(BASE).get('/execute/Email/list_pops').query(true).reply(200, failed('Access denied to the Email module.'));
    expect((await rejection(createMailPanel(cfg).mailboxExists('example.com', 'nobody'))).kind).to.equal('auth');
  });

  it('testConnection calls Email/count_pops with the token; 401 -> auth', async () => {
    const scope = nock(BASE, { reqheaders: { authorization: `cpanel cpuser:${TOKEN}` } })
      .get('/execute/Email/count_pops')
      .reply(200, ok(3));
    await createMailPanel(cfg).testConnection();
    expect(scope.isDone()).to.equal(true);
    nock(BASE).get('/execute/Email/count_pops').reply(401, 'Access denied');
    expect((await rejection(createMailPanel({ ...cfg, password: 'wrong-token' }).testConnection())).kind).to.equal(
      'auth',
    );
  });
});
