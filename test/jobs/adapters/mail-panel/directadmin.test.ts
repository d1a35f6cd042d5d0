import { expect } from 'chai';
import nock from 'nock';
import {
  createMailPanel,
  PanelError,
  type CreateMailboxInput,
  type MailPanelConfig,
} from '../../../../jobs/adapters/mail-panel/index.js';
import { directAdminCreateForm } from '../../../../jobs/adapters/mail-panel/directadmin.js';

const LOGIN_KEY = 'daLoginKey-4f9c2e7a1b';
const cfg: MailPanelConfig = {
  type: 'directadmin',
  host: 'da.example.test',
  port: 2222,
  user: 'admin|owner',
  password: LOGIN_KEY,
  ssl: true,
};
const BASE = 'https://da.example.test:2222';
const BASIC = `Basic ${Buffer.from(`admin|owner:${LOGIN_KEY}`).toString('base64')}`;
const input: CreateMailboxInput = {
  domain: 'Example.com',
  local_part: 'sales',
  password: 'p&ss=word&passwd2=x 1',
  real_name: null,
  quota: '500M',
};

async function rejection(p: Promise<unknown>): Promise<PanelError> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(PanelError);
    return e as PanelError;
  }
  throw new Error('expected a rejection');
}

describe('mail panel adapters: DirectAdmin CMD_API_POP (nock)', () => {
  afterEach(() => {
    nock.cleanAll();
  });

  it('createMailbox POSTs CMD_API_POP action=create with Basic auth and the documented fields', async () => {
    let seen: { uri: string; body: string; headers: Record<string, unknown> } | undefined;
    const scope = nock(BASE)
      .post('/CMD_API_POP')
      .query({ json: 'yes' })
      .reply(function (uri, body) {
        seen = { uri, body: String(body), headers: this.req.headers };
        return [200, { success: 'E-Mail account created', result: '' }];
      });
    await createMailPanel(cfg).createMailbox(input);
    expect(scope.isDone()).to.equal(true);
    expect(seen!.uri).to.equal('/CMD_API_POP?json=yes');
    expect(seen!.headers.authorization).to.equal(BASIC);
    expect(seen!.headers['content-type']).to.equal('application/x-www-form-urlencoded');
    const form = new URLSearchParams(seen!.body);
    expect([...form.keys()]).to.deep.equal(['action', 'domain', 'user', 'passwd', 'passwd2', 'quota']);
    expect(Object.fromEntries(form)).to.deep.equal({
      action: 'create',
      domain: 'example.com',
      user: 'sales',
      passwd: input.password,
      passwd2: input.password,
      quota: '500',
    });
  });

  it('sends quota 0 (unlimited) when the quota is null, 2048 for 2G', async () => {
    const bodies: string[] = [];
    nock(BASE)
      .post('/CMD_API_POP')
      .query(true)
      .twice()
      .reply(200, (_u, b) => {
        bodies.push(String(b));
        return 'error=0&text=Created&details=';
      });
    await createMailPanel(cfg).createMailbox({ ...input, quota: null });
    await createMailPanel(cfg).createMailbox({ ...input, quota: '2G' });
    expect(bodies.map((b) => new URLSearchParams(b).get('quota'))).to.deep.equal(['0', '2048']);
  });

  it('detects error=1 inside a 200 body in the urlencoded (legacy) form: exists', async () => {
    nock(BASE)
      .post('/CMD_API_POP')
      .query(true)
      .reply(200, 'error=1&text=Unable%20to%20create%20E-Mail%20account&details=That%20user%20already%20exists');
    const err = await rejection(createMailPanel(cfg).createMailbox(input));
    expect(err.kind).to.equal('exists');
    expect(err.status).to.equal(200);
    expect(err.message).to.include('Unable to create E-Mail account');
  });

  it('detects error=1 inside a 200 body in the JSON form: permanent for other errors', async () => {
    nock(BASE)
      .post('/CMD_API_POP')
      .query(true)
      .reply(200, { error: '1', text: 'Unable to create E-Mail account', details: 'Quota exceeds the domain limit' });
    const err = await rejection(createMailPanel(cfg).createMailbox(input));
    expect(err.kind).to.equal('permanent');
    expect(err.message).to.include('Quota exceeds');
  });

  it('never puts the password or the login key in a message, even when the panel echoes them', async () => {
    nock(BASE)
      .post('/CMD_API_POP')
      .query(true)
      .reply(200, `error=1&text=Bad&details=${encodeURIComponent(`password ${input.password} key ${LOGIN_KEY}`)}`);
    const err = await rejection(createMailPanel(cfg).createMailbox(input));
    expect(err.message).not.to.include(input.password);
    expect(err.message).not.to.include(LOGIN_KEY);
    expect(err.message).to.include('[redacted]');
  });

  it('a 200 login page (X-DirectAdmin: unauthorized) is auth, a 401 too', async () => {
    nock(BASE)
      .post('/CMD_API_POP')
      .query(true)
      .reply(200, '<html><title>DirectAdmin Login</title></html>', { 'X-DirectAdmin': 'unauthorized' });
    expect((await rejection(createMailPanel(cfg).createMailbox(input))).kind).to.equal('auth');
    nock(BASE).post('/CMD_API_POP').query(true).reply(401, 'error=1&text=Invalid login');
    expect((await rejection(createMailPanel(cfg).createMailbox(input))).kind).to.equal('auth');
  });

  it('5xx and network errors are transient; 429 is rate_limited with retryAfterMs', async () => {
    nock(BASE).post('/CMD_API_POP').query(true).reply(503, 'busy');
    expect((await rejection(createMailPanel(cfg).createMailbox(input))).kind).to.equal('transient');
    nock(BASE).post('/CMD_API_POP').query(true).replyWithError({ code: 'ETIMEDOUT', message: 'connect ETIMEDOUT' });
    expect((await rejection(createMailPanel(cfg).createMailbox(input))).kind).to.equal('transient');
    nock(BASE).post('/CMD_API_POP').query(true).reply(429, '', { 'Retry-After': '30' });
    const limited = await rejection(createMailPanel(cfg).createMailbox(input));
    expect(limited.kind).to.equal('rate_limited');
    expect(limited.retryAfterMs).to.equal(30_000);
  });

  it('rejects an injection attempt in local_part before any request; the form encodes it anyway', async () => {
    let requests = 0;
    nock(BASE)
      .post(/.*/)
      .query(true)
      .reply(() => {
        requests++;
        return [200, 'error=0'];
      });
    const err = await rejection(createMailPanel(cfg).createMailbox({ ...input, local_part: 'x&quota=0' }));
    expect(err.fields).to.have.property('local_part');
    expect(requests).to.equal(0);
    const form = new URLSearchParams(
      directAdminCreateForm({ ...input, local_part: 'x&quota=0&action=delete', quota: '1M' }).toString(),
    );
    expect(form.getAll('quota')).to.deep.equal(['1']);
    expect(form.getAll('action')).to.deep.equal(['create']);
    expect(form.get('user')).to.equal('x&quota=0&action=delete');
  });

  it('mailboxExists lists with action=list (JSON and urlencoded answers)', async () => {
    const queries: Record<string, string>[] = [];
    nock(BASE, { reqheaders: { authorization: BASIC } })
      .get('/CMD_API_POP')
      .query(true)
      .reply((uri) => {
        queries.push(Object.fromEntries(new URL(uri, BASE).searchParams));
        return [200, ['info', 'sales']];
      });
    expect(await createMailPanel(cfg).mailboxExists('example.com', 'Sales')).to.equal(true);
    expect(queries[0]).to.deep.equal({ action: 'list', domain: 'example.com', json: 'yes' });

    nock(BASE).get('/CMD_API_POP').query(true).reply(200, 'list[]=info&list[]=support');
    expect(await createMailPanel(cfg).mailboxExists('example.com', 'sales')).to.equal(false);
    nock(BASE).get('/CMD_API_POP').query(true).reply(200, 'error=1&text=Domain does not belong to you');
    expect((await rejection(createMailPanel(cfg).mailboxExists('example.com', 'sales'))).kind).to.equal('auth');
  });

  it('testConnection calls CMD_API_SHOW_DOMAINS with Basic auth', async () => {
    const scope = nock(BASE, { reqheaders: { authorization: BASIC } })
      .get('/CMD_API_SHOW_DOMAINS')
      .query({ json: 'yes' })
      .reply(200, ['example.com']);
    await createMailPanel(cfg).testConnection();
    expect(scope.isDone()).to.equal(true);
    nock(BASE).get('/CMD_API_SHOW_DOMAINS').query(true).reply(403, 'denied');
    expect((await rejection(createMailPanel(cfg).testConnection())).kind).to.equal('auth');
  });
});
