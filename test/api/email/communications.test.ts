import { expect } from 'chai';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { getMailStack, type MailStack } from '../../helpers/mail.js';
import { accountFixture } from '../../helpers/email.js';
import { fakeJob } from '../../jobs/fake-job.js';
import { configureJobDeps } from '../../../jobs/deps.js';
import * as imapSync from '../../../jobs/imap-sync.js';
import { ManualClock } from '../../../lib/clock.js';
import { MODULES } from '../../../api/tenants/catalog.js';

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000000020001e221bc330000000049454e44ae426082',
  'hex',
);

/** Issue 9 item 4: GET /api/communications (+ filters), detail, attachment download, DELETE tombstone. */
describe('/api/communications', function () {
  this.timeout(60_000);
  let app: TestApp;
  let stack: MailStack;
  let f: TenantFixture;
  let account: { id: number; tenant_id: number };
  let box: { email: string };

  const sync = async () => {
    const fj = fakeJob({ tenant_id: account.tenant_id, account_id: account.id, mode: 'sync' as const });
    return imapSync.process(fj.job);
  };
  const get = (p: string, token = f.adminToken) => app.request('GET', p, { token });

  before(async () => {
    app = await startTestApp();
    stack = await getMailStack();
    configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY, clock: new ManualClock(), storage: app.storage });
    const fx = await accountFixture(stack);
    f = fx.t;
    account = fx.account;
    box = fx.box;
    await env.knex('customers').insert({
      tenant_id: f.tenant.id,
      code: 'C-1',
      name: 'Budi',
      phone: '0812',
      address: 'Jl. 1',
      email: 'budi@cust.test',
    });
    await stack.deliver({ from: 'budi@cust.test', to: box.email, subject: 'Router rusak', text: 'Lampu LOS merah' });
    await stack.deliver({
      from: 'other@outside.test',
      to: box.email,
      subject: 'Newsletter',
      html: '<p>Hi<script>alert(1)</script><img src="cid:logo@x" onerror="y()"><a href="javascript:z()">x</a></p>',
      attachments: [{ filename: 'logo.png', content: PNG, contentType: 'image/png', cid: 'logo@x' }],
    });
    await sync();
  });

  it('lists newest first with snippets, no bodies; filters search, customer_id, direction, account_ref, dates', async () => {
    const res = await get('/api/communications');
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ current_page: 1, per_page: 20, total: 2 });
    const [newest, oldest] = res.body.data;
    expect(newest).to.include({ subject: 'Newsletter', channel: 'email', direction: 'in', has_attachments: true });
    expect(oldest).to.include({ subject: 'Router rusak', snippet: 'Lampu LOS merah', has_attachments: false });
    expect(oldest).not.to.have.property('body_text');
    const byText = await get('/api/communications?search=los%20MERAH');
    expect(byText.body.data.map((m: { subject: string }) => m.subject)).to.deep.equal(['Router rusak']);
    const byCustomer = await get(`/api/communications?customer_id=${oldest.customer_id}`);
    expect(byCustomer.body.total).to.equal(1);
    expect((await get('/api/communications?direction=out')).body.total).to.equal(0);
    expect((await get(`/api/communications?account_ref=${encodeURIComponent(box.email)}`)).body.total).to.equal(2);
    const today = new Date().toISOString().slice(0, 10);
    expect((await get(`/api/communications?date_from=2000-01-01&date_to=2000-01-02`)).body.total).to.equal(0);
    expect((await get(`/api/communications?date_from=${today}`)).body.total).to.be.at.least(1);
    expect((await get('/api/communications?channel=sms')).status).to.equal(422);
  });

  it('detail: sanitised HTML with the cid image pointing at the attachment; byte-equal download', async () => {
    const list = await get('/api/communications?search=Newsletter');
    const id = list.body.data[0].id;
    const res = await get(`/api/communications/${id}`);
    expect(res.status).to.equal(200);
    const d = res.body.data;
    expect(d.body_html).not.to.match(/script|onerror|javascript:/);
    expect(d.attachments).to.have.length(1);
    const att = d.attachments[0];
    expect(att).to.include({
      filename: 'logo.png',
      content_type: 'image/png',
      size_bytes: PNG.length,
      available: true,
    });
    expect(d.body_html).to.include(`src="${att.url}"`);
    const dl = await fetch(app.url + att.url, { headers: { authorization: `Bearer ${f.adminToken}` } });
    expect(dl.status).to.equal(200);
    expect(dl.headers.get('content-type')).to.equal('image/png');
    expect(Buffer.from(await dl.arrayBuffer()).equals(PNG)).to.equal(true);
  });

  it('delete: 200, gone from list and detail, files removed, audited; the next sync does not re-import it', async () => {
    const list = await get('/api/communications?search=Newsletter');
    const id = list.body.data[0].id;
    const att = await env.knex('communication_attachments').where({ message_id: id }).first();
    const res = await app.request('DELETE', `/api/communications/${id}`, { token: f.adminToken });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.deep.equal({ id, deleted: true });
    expect((await get(`/api/communications/${id}`)).status).to.equal(404);
    expect(await app.storage.exists(att.storage_key)).to.equal(false);
    const row = await env.knex('communication_messages').where({ id }).first();
    expect(row).to.include({ body_text: null, body_html: null });
    expect(row.deleted_at).to.be.instanceOf(Date);
    const audit = await env
      .knex('audit_log')
      .where({ tenant_id: f.tenant.id, action: 'communications.deleted', subject_id: id })
      .first();
    expect(audit.after).to.deep.equal({ deleted: true });
    // the cursor forgotten: the whole mailbox is read again, nothing comes back
    await env.knex('external_email_accounts').where({ id: account.id }).update({ imap_last_uid: null });
    const again = await sync();
    expect(again).to.include({ fetched: 2, imported: 0, skipped: 2 });
    expect((await get('/api/communications')).body.total).to.equal(1);
  });

  it('foreign id 404; technician/staff 403; module off 403 module_disabled; nothing changed', async () => {
    const other = await makeTenant();
    const mine = (await get('/api/communications')).body.data[0].id;
    expect((await get(`/api/communications/${mine}`, other.adminToken)).status).to.equal(404);
    const del = await app.request('DELETE', `/api/communications/${mine}`, { token: other.adminToken });
    expect(del.status).to.equal(404);
    for (const role of ['technician', 'staff']) {
      const u = await makeUser(f.tenant.id, role);
      const res = await get('/api/communications', u.token);
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('FORBIDDEN');
      expect((await get(`/api/communications/${mine}`, u.token)).status).to.equal(403);
    }
    await env
      .knex('tenants')
      .where({ id: f.tenant.id })
      .update({ modules: JSON.stringify(MODULES.filter((m) => m !== 'email' && m !== 'wabot')) });
    try {
      const off = await get('/api/communications');
      expect(off.status).to.equal(403);
      expect(off.body.code).to.equal('module_disabled');
    } finally {
      await env
        .knex('tenants')
        .where({ id: f.tenant.id })
        .update({ modules: JSON.stringify(MODULES) });
    }
    const row = await env.knex('communication_messages').where({ id: mine }).first();
    expect(row.deleted_at).to.equal(null);
  });
});
