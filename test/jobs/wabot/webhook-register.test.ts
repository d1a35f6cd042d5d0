import { expect } from 'chai';
import nock from 'nock';
import { env } from '../../helpers/env.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { ACCOUNTS } from '../../api/wabot/inbound-support.js';
import { configureJobDeps } from '../../../jobs/deps.js';
import { loadChatSendConfig } from '../../../jobs/wabot/load-config.js';
import { process as registerProcess, QUEUE, type RegisterData } from '../../../jobs/wabot-webhook-register.js';
import { fakeJob } from '../fake-job.js';

/** Issue 11 item 6: webhook_auto_register: the config save enqueues, the job registers and stores the result. */
describe('wabot webhook_auto_register (wabot-webhook-register)', function () {
  this.timeout(60_000);
  let app: TestApp;
  const [WABLAS, FONNTE, , WAHA, , WATZAP] = ACCOUNTS;
  const PUBLIC = 'https://isp.example.test';

  before(async () => {
    app = await startTestApp({ publicBaseUrl: PUBLIC });
    configureJobDeps({
      knex: env.knex,
      appKey: app.appKey,
      chatConfig: (id) => loadChatSendConfig(env.knex, app.appKey, id),
      chatSend: { timeoutMs: 3000 },
    });
  });
  afterEach(() => nock.cleanAll());

  const save = (f: TenantFixture, autoRegister: boolean) =>
    app.request('PUT', '/api/wabot/config', {
      token: f.adminToken,
      body: {
        provider: 'wablas',
        settings: {
          base_url: 'https://wablas.test',
          enabled: true,
          webhook_auto_register: autoRegister,
          accounts: [WABLAS, WATZAP, FONNTE, { ...WAHA, enabled: false }],
        },
      },
    });
  const jobsOf = async (f: TenantFixture) => {
    const jobs = await app.queues.get(QUEUE).getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']);
    return jobs.filter((j) => j.data.tenant_id === f.tenant.id).map((j) => j.data as RegisterData);
  };
  const states = async (f: TenantFixture) => {
    const res = await app.request('GET', '/api/wabot/config', { token: f.adminToken });
    return Object.fromEntries(
      res.body.data.accounts.map(
        (a: { id: string; webhook_registration: { status: string; error: string | null } | null }) => [
          a.id,
          a.webhook_registration && [a.webhook_registration.status, a.webhook_registration.error],
        ],
      ),
    );
  };

  it('save with the switch on: one job per enabled account (no key in job data), pending; the job registers wablas and watzap, fonnte unsupported', async () => {
    const f = await makeTenant();
    const res = await save(f, true);
    expect(res.status, res.text).to.equal(200);
    const accounts = res.body.data.accounts as { id: string; webhook_registration: { status: string } | null }[];
    expect(accounts.map((a) => [a.id, a.webhook_registration?.status ?? null])).to.deep.equal([
      [WABLAS.id, 'pending'],
      [WATZAP.id, 'pending'],
      [FONNTE.id, 'pending'],
      [WAHA.id, null],
    ]);
    const jobs = await jobsOf(f);
    expect(jobs.map((j) => j.account_id).sort()).to.deep.equal([FONNTE.id, WABLAS.id, WATZAP.id].sort());
    expect(jobs[0].public_base_url).to.equal(PUBLIC);
    const key = new URL(res.body.data.webhook_url).searchParams.get('key')!;
    expect(JSON.stringify(jobs)).to.not.include(key);

    const urls: string[] = [];
    for (const p of ['/api/device/change-webhook-url', '/api/device/change-tracking-url'])
      nock('https://wablas.test')
        .post(p)
        .reply(200, (_u, body) => {
          urls.push(Object.values(Object.fromEntries(new URLSearchParams(String(body))))[0]);
          return { status: true, message: 'webhook url successfully changed' };
        });
    nock('https://api.watzap.id')
      .post('/v1/set_webhook')
      .reply(200, { status: '200', message: 'Sucessfully set Web Hook', ack: 'successfully' });
    for (const j of jobs) await registerProcess(fakeJob(j).job);
    expect(urls).to.deep.equal([
      `${res.body.data.webhook_url}&account=${WABLAS.id}`,
      `${res.body.data.webhook_url}&account=${WABLAS.id}`,
    ]);
    expect(await states(f)).to.deep.equal({
      [WABLAS.id]: ['registered', null],
      [WATZAP.id]: ['registered', null],
      [FONNTE.id]: ['unsupported', null],
      [WAHA.id]: null,
    });
  });

  it('a transient failure is stored failed "(retrying)" and thrown; the retry registers', async () => {
    const f = await makeTenant();
    await save(f, true);
    const job = (await jobsOf(f)).find((j) => j.account_id === WABLAS.id)!;
    nock('https://wablas.test').post('/api/device/change-webhook-url').reply(503, 'maintenance');
    let thrown: Error | null = null;
    await registerProcess(fakeJob(job).job).catch((e: Error) => (thrown = e));
    expect(thrown).to.be.instanceOf(Error);
    const [status, error] = (await states(f))[WABLAS.id];
    expect(status).to.equal('failed');
    expect(error).to.include('HTTP 503').and.include('(retrying)');
    nock('https://wablas.test').post('/api/device/change-webhook-url').reply(200, { status: true, message: 'ok' });
    nock('https://wablas.test').post('/api/device/change-tracking-url').reply(200, { status: true, message: 'ok' });
    expect(await registerProcess(fakeJob(job).job)).to.deep.equal({
      status: 'registered',
      error: null,
      transient: false,
    });
    expect((await states(f))[WABLAS.id]).to.deep.equal(['registered', null]);
  });

  it('switch off: no job, nothing pending; a demo tenant: no job, and a job is skipped without a call', async () => {
    const off = await makeTenant();
    await save(off, false);
    expect(await jobsOf(off)).to.deep.equal([]);
    expect(Object.values(await states(off))).to.deep.equal([null, null, null, null]);
    const demo = await makeTenant({ demo: true });
    const res = await save(demo, true);
    expect(res.status, res.text).to.equal(200);
    expect(await jobsOf(demo)).to.deep.equal([]);
    const out = await registerProcess(
      fakeJob({ tenant_id: demo.tenant.id, account_id: WABLAS.id, public_base_url: PUBLIC }).job,
    );
    expect(out).to.deep.equal({ status: 'skipped', reason: 'demo tenant' });
    expect(Object.values(await states(demo))).to.deep.equal([null, null, null, null]);
  });
});
