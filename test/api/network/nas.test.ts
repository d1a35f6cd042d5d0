import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { openCredentials } from '../../../db/credentials.js';

/** A password no answer, log line or audit row may ever show. */
const SECRET = 'nas-Secret-pw-41be07';

/** Issue 8 item 3: /api/nas CRUD, nas_key unique per tenant (409), write-only credentials, audit, confinement. */
describe('/api/nas', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let tech: { id: number; token: string };
  let seq = 0;
  const texts: string[] = [];

  const key = () => `NAS-${Date.now().toString(36)}-${++seq}`;
  const create = async (body: Record<string, unknown>, f: TenantFixture = a) => {
    const res = await app.request('POST', '/api/nas', { token: f.adminToken, body });
    texts.push(res.text);
    return res;
  };
  const audits = (action: string, id: number) =>
    env.knex('audit_log').where({ tenant_id: a.tenant.id, action, subject_type: 'nas', subject_id: id });

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    tech = await makeUser(a.tenant.id, 'technician');
  });

  it('creates a NAS: 201 with defaults (driver fake, port 8728, active), has_credentials, sealed at rest, audited', async () => {
    const k = key();
    const res = await create({
      name: 'Core router Dago',
      nas_key: k,
      host: '10.20.0.1',
      credentials: { username: 'api', password: SECRET },
      isolation_profile: 'isolir',
    });
    expect(res.status).to.equal(201);
    const d = res.body.data;
    expect(d).to.include({
      name: 'Core router Dago',
      nas_key: k,
      driver: 'fake',
      host: '10.20.0.1',
      port: 8728,
      has_credentials: true,
      isolation_profile: 'isolir',
      is_active: true,
    });
    expect(d).not.to.have.property('credentials');
    const row = await env.knex('nas').where({ id: d.id }).first();
    expect(row.credentials_enc).not.to.include(SECRET);
    expect(openCredentials(app.appKey, 'nas', a.tenant.id, row.credentials_enc)).to.deep.equal({
      username: 'api',
      password: SECRET,
    });
    const [audit] = await audits('nas.created', d.id);
    expect(audit.after).to.include({ nas_key: k, has_credentials: true });
    const shown = await app.request('GET', `/api/nas/${d.id}`, { token: tech.token });
    texts.push(shown.text);
    expect(shown.body.data).to.deep.equal(d);
    const refused = await app.request('PUT', `/api/nas/${d.id}`, { token: tech.token, body: { name: 'x' } });
    expect(refused.status).to.equal(403);
    expect(refused.body.message).to.include('network.manage');
  });

  it('409 CONFLICT for a nas_key the tenant has, in any case; another tenant may use it', async () => {
    const k = key();
    expect((await create({ name: 'one', nas_key: k, host: 'nas1.example.net' })).status).to.equal(201);
    const dup = await create({ name: 'two', nas_key: k.toLowerCase(), host: 'nas2.example.net' });
    expect(dup.status).to.equal(409);
    expect(dup.body.code).to.equal('CONFLICT');
    expect((await create({ name: 'b', nas_key: k, host: 'nas1.example.net' }, b)).status).to.equal(201);
    const other = (await create({ name: 'three', nas_key: key(), host: '10.0.0.3' })).body.data.id;
    const rename = await app.request('PUT', `/api/nas/${other}`, { token: a.adminToken, body: { nas_key: k } });
    expect(rename.status).to.equal(409);
    const same = await app.request('PUT', `/api/nas/${other}`, { token: a.adminToken, body: { port: 8729 } });
    expect(same.status).to.equal(200);
  });

  it('refuses bad bodies with 422 field errors', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ nas_key: key(), host: '10.0.0.1' }, 'name'],
      [{ name: 'n', host: '10.0.0.1' }, 'nas_key'],
      [{ name: 'n', nas_key: 'has space', host: '10.0.0.1' }, 'nas_key'],
      [{ name: 'n', nas_key: key() }, 'host'],
      [{ name: 'n', nas_key: key(), host: 'bad host!' }, 'host'],
      [{ name: 'n', nas_key: key(), host: '10.0.0.1', port: 70000 }, 'port'],
      [{ name: 'n', nas_key: key(), host: '10.0.0.1', driver: 'cisco' }, 'driver'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(Object.keys(res.body.errors), JSON.stringify(body)).to.include(field);
    }
  });

  it('PUT keeps left-out fields and credentials, null removes them; lists with search and is_active', async () => {
    const k = key();
    const id = (await create({ name: 'edge', nas_key: k, host: '10.0.0.9', credentials: { password: SECRET } })).body
      .data.id;
    const res = await app.request('PUT', `/api/nas/${id}`, { token: a.adminToken, body: { is_active: false } });
    texts.push(res.text);
    expect(res.body.data).to.include({ is_active: false, has_credentials: true, host: '10.0.0.9' });
    const cleared = await app.request('PUT', `/api/nas/${id}`, { token: a.adminToken, body: { credentials: null } });
    expect(cleared.body.data.has_credentials).to.equal(false);
    const list = await app.request('GET', `/api/nas?search=${k}&is_active=false`, { token: tech.token });
    texts.push(list.text);
    expect(list.body.data.map((r: { id: number }) => r.id)).to.deep.equal([id]);
    expect(list.body.per_page).to.equal(20);
    expect(
      (await app.request('GET', `/api/nas?search=${k}&is_active=true`, { token: tech.token })).body.total,
    ).to.equal(0);
    expect(await audits('nas.updated', id)).to.have.length(2);
  });

  it("answers 404 for another tenant's NAS and changes nothing; never shows the credentials", async () => {
    const id = (await create({ name: 'b-nas', nas_key: key(), host: '10.1.1.1' }, b)).body.data.id;
    const before = await env.knex('nas').where({ id }).first();
    expect((await app.request('GET', `/api/nas/${id}`, { token: a.adminToken })).status).to.equal(404);
    const put = await app.request('PUT', `/api/nas/${id}`, { token: a.adminToken, body: { name: 'hijack' } });
    expect(put.status).to.equal(404);
    expect(await env.knex('nas').where({ id }).first()).to.deep.equal(before);
    for (const t of texts) expect(t).not.to.include(SECRET);
    expect(app.logs.join('\n')).not.to.include(SECRET);
    expect(JSON.stringify(await env.knex('audit_log').where({ tenant_id: a.tenant.id }))).not.to.include(SECRET);
  });
});
