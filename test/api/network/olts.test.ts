import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { openCredentials } from '../../../db/credentials.js';
import { createQueues } from '../../../jobs/queues.js';
import { configureJobDeps } from '../../../jobs/deps.js';
import { fakeReading } from '../../../jobs/adapters/olt/index.js';
import * as onuPoll from '../../../jobs/onu-poll.js';
import { fakeJob } from '../../jobs/fake-job.js';
import { ManualClock } from '../../../lib/clock.js';

/** A password no answer, log line, audit row or job may ever show. */
const SECRET = 'olt-Secret-pw-7f3a9c';

/** Issue 8 item 3: /api/olts CRUD, write-only credentials, POST /api/olts/{id}/poll, audit, tenant confinement. */
describe('/api/olts', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let tech: { id: number; token: string };
  let homeBase: number;
  let seq = 0;
  const texts: string[] = [];

  const create = async (body: Record<string, unknown>, f: TenantFixture = a) => {
    const res = await app.request('POST', '/api/olts', { token: f.adminToken, body });
    texts.push(res.text);
    return res;
  };
  const olt = (extra: Record<string, unknown> = {}) => ({
    name: `OLT-${++seq}`,
    vendor: 'ZTE',
    model: 'C320',
    ip_address: `10.9.0.${seq}`,
    location: 'POP Test',
    ...extra,
  });
  const audits = (action: string, id: number) =>
    env.knex('audit_log').where({ tenant_id: a.tenant.id, action, subject_type: 'olts', subject_id: id });

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    tech = await makeUser(a.tenant.id, 'technician');
    homeBase = (
      await app.request('POST', '/api/home-bases', {
        token: a.adminToken,
        body: { name: 'POP Dago', address: 'Jl. Dago 1', latitude: -6.89, longitude: 107.61 },
      })
    ).body.data.id;
  });

  it('creates an OLT: 201, offline until polled, home base, has_credentials, never the credentials; sealed at rest', async () => {
    const creds = { username: 'admin', password: SECRET };
    const res = await create(olt({ home_base_id: homeBase, credentials: creds, pon_ports: 8 }));
    expect(res.status).to.equal(201);
    const d = res.body.data;
    expect(d).to.include({
      status: 'offline',
      driver: 'fake',
      has_credentials: true,
      is_active: true,
      pon_ports: 8,
      home_base_id: homeBase,
      last_polled_at: null,
      last_poll_error: null,
    });
    expect(d.home_base).to.deep.equal({ id: homeBase, name: 'POP Dago' });
    expect(d).not.to.have.property('credentials');
    expect(d).not.to.have.property('credentials_enc');
    const row = await env.knex('olts').where({ id: d.id }).first();
    expect(row.credentials_enc).to.match(/^v1\./);
    expect(row.credentials_enc).not.to.include(SECRET);
    expect(openCredentials(app.appKey, 'olts', a.tenant.id, row.credentials_enc)).to.deep.equal(creds);
    expect(() => openCredentials(app.appKey, 'olts', b.tenant.id, row.credentials_enc)).to.throw();
    const [audit] = await audits('olts.created', d.id);
    expect(audit.after).to.include({ has_credentials: true, home_base_id: homeBase });
    expect(JSON.stringify(audit)).not.to.include(SECRET);
    const shown = await app.request('GET', `/api/olts/${d.id}`, { token: tech.token });
    texts.push(shown.text);
    expect(shown.body.data).to.deep.equal(d);
  });

  it('refuses bad bodies and foreign ids with 422 field errors and creates nothing', async () => {
    const foreignBase = (
      await app.request('POST', '/api/home-bases', {
        token: b.adminToken,
        body: { name: 'B base', address: 'x', latitude: 0, longitude: 0 },
      })
    ).body.data.id;
    const count = async () => Number((await env.knex('olts').where({ tenant_id: a.tenant.id }).count('* as n'))[0].n);
    const before = await count();
    const cases: [Record<string, unknown>, string][] = [
      [{ ip_address: '10.0.0.9' }, 'name'],
      [{ name: 'No IP' }, 'ip_address'],
      [olt({ ip_address: '10.0.0.300' }), 'ip_address'],
      [olt({ home_base_id: foreignBase }), 'home_base_id'],
      [olt({ driver: 'zte-telnet' }), 'driver'],
      [olt({ pon_ports: 0 }), 'pon_ports'],
      [olt({ credentials: {} }), 'credentials'],
      [olt({ credentials: { username: 'u', password: 12345 } }), 'credentials.password'],
      [olt({ credentials: { password: SECRET, token: 'x' } }), 'credentials.token'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(Object.keys(res.body.errors).join(','), JSON.stringify(body)).to.contain(field);
    }
    expect(await count()).to.equal(before);
  });

  it('updates with PUT: left-out fields and credentials are kept, null removes the credentials, status is refused', async () => {
    const id = (await create(olt({ credentials: { username: 'u', password: SECRET } }))).body.data.id;
    const sealed = (await env.knex('olts').where({ id }).first()).credentials_enc;
    const res = await app.request('PUT', `/api/olts/${id}`, {
      token: a.adminToken,
      body: { location: 'POP Moved', home_base_id: homeBase },
    });
    texts.push(res.text);
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({ location: 'POP Moved', vendor: 'ZTE', has_credentials: true });
    expect((await env.knex('olts').where({ id }).first()).credentials_enc).to.equal(sealed);
    const status = await app.request('PUT', `/api/olts/${id}`, { token: a.adminToken, body: { status: 'online' } });
    expect(status.status).to.equal(422);
    expect(status.body.errors.status[0]).to.match(/onu-poll/);
    const cleared = await app.request('PUT', `/api/olts/${id}`, { token: a.adminToken, body: { credentials: null } });
    expect(cleared.body.data.has_credentials).to.equal(false);
    expect((await env.knex('olts').where({ id }).first()).credentials_enc).to.equal(null);
    const audit = await audits('olts.updated', id);
    expect(audit.map((r) => [r.before.has_credentials, r.after.has_credentials])).to.deep.equal([
      [true, true],
      [true, false],
    ]);
  });

  it("answers 404 for another tenant's OLT on every route (poll included) and changes nothing", async () => {
    const id = (await create(olt())).body.data.id;
    const before = await env.knex('olts').where({ id }).first();
    for (const [method, path, body] of [
      ['GET', `/api/olts/${id}`, undefined],
      ['PUT', `/api/olts/${id}`, { name: 'hijack' }],
      ['POST', `/api/olts/${id}/poll`, undefined],
    ] as const) {
      const res = await app.request(method, path, { token: b.adminToken, body });
      expect(res.status, `${method} ${path}`).to.equal(404);
    }
    expect(await env.knex('olts').where({ id }).first()).to.deep.equal(before);
    expect(await app.queues.get(onuPoll.QUEUE).getJobCounts()).to.include({ waiting: 0 });
  });

  it('lists newest first with search, home_base_id, status and is_active filters; never another tenant', async () => {
    const tag = `LIST-${Date.now().toString(36)}`;
    const x = (await create(olt({ name: `${tag}-x`, home_base_id: homeBase }))).body.data.id;
    const y = (await create(olt({ name: `${tag}-y`, is_active: false }))).body.data.id;
    await create(olt({ name: `${tag}-b` }), b);
    const list = async (q: string) => {
      const res = await app.request('GET', `/api/olts?search=${tag}&${q}`, { token: tech.token });
      expect(res.status, q).to.equal(200);
      texts.push(res.text);
      return res.body.data.map((r: { id: number }) => r.id);
    };
    expect(await list('')).to.deep.equal([y, x]);
    expect(await list(`home_base_id=${homeBase}`)).to.deep.equal([x]);
    expect(await list('is_active=false')).to.deep.equal([y]);
    expect(await list('status=offline')).to.deep.equal([y, x]);
    expect(await list('status=online')).to.deep.equal([]);
  });

  it('POST /api/olts/{id}/poll: 202 with one job per OLT per minute (ids-only data); the job applies the readings', async () => {
    const id = (await create(olt({ credentials: { password: SECRET } }))).body.data.id;
    const serials = ['ZTEGPOLL0001', 'ZTEGPOLL0002', 'ZTEGPOLL0003'].map((s) => `${s}${id}`);
    for (const serial of serials) {
      const r = await app.request('POST', '/api/onus', {
        token: a.adminToken,
        body: { serial_number: serial, olt_id: id },
      });
      expect(r.status).to.equal(201);
    }
    const res = await app.request('POST', `/api/olts/${id}/poll`, { token: a.adminToken });
    texts.push(res.text);
    expect(res.status).to.equal(202);
    expect(res.body.data.olt_id).to.equal(id);
    expect(res.body.data.job_id).to.match(new RegExp(`^onu-poll-olt-${id}-m\\d+$`));
    const again = await app.request('POST', `/api/olts/${id}/poll`, { token: a.adminToken });
    // the same minute gives the same job; across a minute boundary a second job (both are fine)
    expect(again.status).to.equal(202);
    expect(again.body.data.job_id).to.match(new RegExp(`^onu-poll-olt-${id}-m\\d+$`));
    const job = (await app.queues.get(onuPoll.QUEUE).getJob(res.body.data.job_id))!;
    expect(job.name).to.equal(onuPoll.OLT_JOB);
    expect(job.data).to.deep.equal({ olt_id: id, tenant_id: a.tenant.id });
    texts.push(JSON.stringify(job.data), JSON.stringify(job.opts));

    const clock = new ManualClock();
    configureJobDeps({ knex: env.knex, clock, appKey: app.appKey });
    const { job: fake, logs } = fakeJob(job.data);
    const result = await onuPoll.process(fake);
    texts.push(JSON.stringify(result), ...logs);
    // a new ONU is offline without readings: only the serials the fake OLT reports otherwise change
    const differ = serials.filter((sn) => fakeReading(sn, clock.now()).status !== 'offline').length;
    expect(result).to.include({ kind: 'olt', outcome: 'polled', onus: 3, changed: differ });
    const row = await env.knex('olts').where({ id }).first();
    expect(row).to.include({ status: 'online', last_poll_error: null });
    expect(row.last_polled_at.toISOString()).to.equal(clock.now().toISOString());
    const onus = await env.knex('onus').whereIn('serial_number', serials).orderBy('serial_number');
    for (const o of onus) {
      const want = fakeReading(o.serial_number, clock.now());
      expect({
        status: o.status,
        rx: o.rx_power,
        tx: o.tx_power,
        up: o.uptime === null ? null : Number(o.uptime),
      }).to.deep.equal({ status: want.status, rx: want.rx_power, tx: want.tx_power, up: want.uptime });
    }
    const shown = await app.request('GET', `/api/olts/${id}`, { token: a.adminToken });
    expect(shown.body.data).to.include({ status: 'online', last_polled_at: clock.now().toISOString() });
  });

  it('refuses to poll an inactive OLT (422 INVALID_TRANSITION) and answers 503 QUEUE_UNAVAILABLE when Redis is down', async () => {
    const inactive = (await create(olt({ is_active: false }))).body.data.id;
    const res = await app.request('POST', `/api/olts/${inactive}/poll`, { token: a.adminToken });
    expect(res.status).to.equal(422);
    expect(res.body.code).to.equal('INVALID_TRANSITION');

    const down = await startTestApp();
    const dead = createQueues('redis://127.0.0.1:1', { prefix: `{olt-dead-${process.pid}}` });
    registerCleanup(() => dead.close());
    Object.assign(down.queues, { get: dead.get.bind(dead) });
    const active = (await create(olt())).body.data.id;
    const unavailable = await down.request('POST', `/api/olts/${active}/poll`, { token: a.adminToken });
    expect(unavailable.status).to.equal(503);
    expect(unavailable.body.code).to.equal('QUEUE_UNAVAILABLE');
  });

  it('never shows the credentials: not in any answer, log line, audit row or job', async () => {
    expect(texts.length).to.be.greaterThan(10);
    for (const t of texts) expect(t).not.to.include(SECRET);
    expect(app.logs.join('\n')).not.to.include(SECRET);
    const auditRows = await env.knex('audit_log').where({ tenant_id: a.tenant.id });
    expect(JSON.stringify(auditRows)).not.to.include(SECRET);
    const keys = await env.redis.keys(`${app.queues.prefix}*`);
    for (const k of keys) {
      const type = await env.redis.type(k);
      const dump =
        type === 'hash'
          ? JSON.stringify(await env.redis.hgetall(k))
          : type === 'list'
            ? JSON.stringify(await env.redis.lrange(k, 0, -1))
            : type === 'string'
              ? String(await env.redis.get(k))
              : '';
      expect(dump, k).not.to.include(SECRET);
    }
  });
});
