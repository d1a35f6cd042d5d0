import { expect } from 'chai';
import { hashToken } from '../../../lib/token.js';
import { verifyApiKey } from '../../../api/mail/keys/service.js';
import { addDomain, type DomainView } from '../../../api/mail/domains/service.js';
import { addMailbox, type MailboxView } from '../../../api/mail/domains/mailboxes.js';
import { escapeHtml, html } from '../../../api/mail/dashboard/html.js';
import { env } from '../../helpers/env.js';
import {
  Client,
  csrfOf,
  domainName,
  fieldOf,
  makeOperator,
  OP_PASSWORD,
  startDashboard,
  type DashServer,
} from './dashboard-client.js';

const ENDPOINTS = { imap_host: 'imap.example.test', smtp_host: 'smtp.example.test' };

describe('mail dashboard: API keys (issue 3 §5)', () => {
  let dash: DashServer;
  let c: Client;
  let domain: DomainView;
  let other: DomainView;
  let boxes: MailboxView[];
  let foreignBox: MailboxView;

  before(async () => {
    dash = await startDashboard();
    const op = await makeOperator();
    c = new Client(dash.url);
    expect((await c.login(op.email, OP_PASSWORD)).status).to.equal(303);
    domain = await addDomain(env.knex, dash.appKey, { name: domainName(), ...ENDPOINTS });
    other = await addDomain(env.knex, dash.appKey, { name: domainName(), ...ENDPOINTS });
    boxes = [
      await addMailbox(env.knex, { email: `info@${domain.name}` }),
      await addMailbox(env.knex, { email: `sales@${domain.name}` }),
      await addMailbox(env.knex, { email: `hr@${domain.name}` }),
    ];
    foreignBox = await addMailbox(env.knex, { email: `info@${other.name}` });
  });

  async function createKey(
    name: string,
    mailboxIds: number[],
    permission: string,
  ): Promise<{ page: Awaited<ReturnType<Client['post']>>; formId: string; csrf: string }> {
    const form = await c.get(`/dashboard/keys/new?domain_id=${domain.id}`);
    const formId = fieldOf(form.text, 'form_id');
    const csrf = csrfOf(form.text);
    const page = await c.post('/dashboard/keys', {
      _csrf: csrf,
      domain_id: String(domain.id),
      form_id: formId,
      name,
      permission,
      mailbox_ids: mailboxIds.map(String),
    });
    return { page, formId, csrf };
  }

  const keyOf = (text: string) => /<code class="key" id="api-key">([^<]+)<\/code>/.exec(text)?.[1] ?? null;

  it("step 1 offers the domains; step 2 offers only the chosen domain's mailboxes and the three permission sets", async () => {
    const step1 = await c.get('/dashboard/keys/new');
    expect(step1.status).to.equal(200);
    expect(step1.text).to.include(`<option value="${domain.id}">${domain.name} (3 mailboxes)</option>`);
    expect(step1.text).to.include('method="get" action="/dashboard/keys/new"');
    const step2 = await c.get(`/dashboard/keys/new?domain_id=${domain.id}`);
    for (const b of boxes) expect(step2.text).to.include(`name="mailbox_ids" value="${b.id}"`).and.include(b.email);
    expect(step2.text).not.to.include(foreignBox.email);
    for (const p of ['read', 'reply', 'full']) expect(step2.text).to.include(`name="permission" value="${p}"`);
    expect(step2.text).to.include('emails:read, emails:reply, emails:send, mailboxes:create');
    expect(step2.text).to.match(/name="form_id"\s+value="[0-9a-f]{32}"/);
  });

  it('creates a key: 201 page with the key once (no-store), only its hash in the database, a reload cannot mint a second key', async () => {
    const { page, formId, csrf } = await createKey('CMS reader', [boxes[0].id, boxes[1].id], 'reply');
    expect(page.status).to.equal(201);
    expect(page.headers.get('cache-control')).to.equal('no-store');
    expect(page.text).to.include('Copy it now, it will not be shown again.');
    const key = keyOf(page.text)!;
    expect(key).to.match(/^mbxk_\d+_[0-9a-f]{72}$/);
    const id = Number(key.split('_')[1]);
    const row = await env.knex('mail_api_keys').where({ id }).first();
    expect(Buffer.compare(row.token_hash, hashToken(key))).to.equal(0);
    expect(row.scopes).to.deep.equal(['emails:read', 'emails:reply']);
    expect(row.domain_id).to.equal(domain.id);
    const linked = await env.knex('mail_api_key_mailboxes').where({ key_id: id }).pluck('mailbox_id');
    expect(linked.map(Number).sort()).to.deep.equal([boxes[0].id, boxes[1].id].sort());
    const dump = JSON.stringify(
      await Promise.all(
        ['mail_api_keys', 'mail_api_key_mailboxes', 'mail_operator_sessions'].map((t) => env.knex(t).select('*')),
      ),
    );
    expect(dump).not.to.include(key);
    expect(dash.logs.join('')).not.to.include(key);
    for (const path of [
      '/dashboard/keys',
      '/dashboard',
      `/dashboard/keys/${id}/revoke`,
      `/dashboard/keys/new?domain_id=${domain.id}`,
    ]) {
      expect((await c.get(path)).text, path).not.to.include(key);
    }
    const again = await c.post('/dashboard/keys', {
      _csrf: csrf,
      domain_id: String(domain.id),
      form_id: formId,
      name: 'CMS reader',
      permission: 'reply',
      mailbox_ids: [String(boxes[0].id)],
    });
    expect(again.status).to.equal(303);
    expect(again.location).to.equal('/dashboard/keys?notice=already-submitted');
    expect(keyOf(again.text)).to.equal(null);
    expect(
      Number((await env.knex('mail_api_keys').where({ name: 'CMS reader' }).count({ n: '*' }).first())!.n),
    ).to.equal(1);
  });

  it('maps the permission sets to scopes (read only, full)', async () => {
    const read = keyOf((await createKey('read set', [boxes[2].id], 'read')).page.text)!;
    const full = keyOf((await createKey('full set', [boxes[2].id], 'full')).page.text)!;
    expect((await verifyApiKey(env.knex, read))!.scopes).to.deep.equal(['emails:read']);
    expect((await verifyApiKey(env.knex, full))!.scopes).to.deep.equal([
      'emails:read',
      'emails:reply',
      'emails:send',
      'mailboxes:create',
    ]);
  });

  it("answers 422 with field errors for a missing name, permission or mailbox, and for another domain's mailbox; creates nothing", async () => {
    const before = Number((await env.knex('mail_api_keys').count({ n: '*' }).first())!.n);
    const cases: [string, number[], string, string][] = [
      ['', [boxes[0].id], 'read', 'The name field is required.'],
      ['x', [boxes[0].id], 'admin', 'Choose a permission set.'],
      ['x', [], 'read', 'Choose at least one mailbox.'],
      ['x', [foreignBox.id], 'read', 'every mailbox must belong to the chosen domain'],
    ];
    for (const [name, ids, permission, message] of cases) {
      const { page } = await createKey(name, ids, permission);
      expect(page.status, message).to.equal(422);
      expect(page.text, message).to.include(message);
      expect(keyOf(page.text)).to.equal(null);
    }
    expect(Number((await env.knex('mail_api_keys').count({ n: '*' }).first())!.n)).to.equal(before);
  });

  it('lists keys with prefix, scopes, domain, mailboxes, last use and creator; never the key', async () => {
    const key = keyOf((await createKey('Listed key', [boxes[1].id], 'full')).page.text)!;
    const id = Number(key.split('_')[1]);
    const rowOf = (text: string) => new RegExp(`<tr data-key-id="${id}">([\\s\\S]*?)</tr>`).exec(text)![1];
    let row = rowOf((await c.get('/dashboard/keys')).text);
    expect(row)
      .to.include('Listed key')
      .and.include(`mbxk_${id}_…`)
      .and.include(domain.name)
      .and.include(boxes[1].email)
      .and.include('mailboxes:create')
      .and.include('never')
      .and.include('active');
    expect(await verifyApiKey(env.knex, key)).to.not.equal(null);
    row = rowOf((await c.get('/dashboard/keys')).text);
    const used = await env.knex('mail_api_keys').where({ id }).first('last_used_at');
    expect(row).to.include(`${used.last_used_at.toISOString().slice(0, 16).replace('T', ' ')} UTC`);
  });

  it('revokes after confirmation: the confirmation page, then POST; verifyApiKey answers null afterwards', async () => {
    const key = keyOf((await createKey('To revoke', [boxes[0].id], 'read')).page.text)!;
    const id = Number(key.split('_')[1]);
    const confirm = await c.get(`/dashboard/keys/${id}/revoke`);
    expect(confirm.status).to.equal(200);
    expect(confirm.text).to.include('Revoke API key').and.include('name="confirm" value="revoke"');
    const unconfirmed = await c.post(`/dashboard/keys/${id}/revoke`, { _csrf: csrfOf(confirm.text) });
    expect(unconfirmed.status).to.equal(303);
    expect(await verifyApiKey(env.knex, key)).to.not.equal(null);
    const noCsrf = await c.post(`/dashboard/keys/${id}/revoke`, { confirm: 'revoke' });
    expect(noCsrf.status).to.equal(403);
    expect(await verifyApiKey(env.knex, key)).to.not.equal(null);
    const done = await c.post(`/dashboard/keys/${id}/revoke`, { _csrf: csrfOf(confirm.text), confirm: 'revoke' });
    expect(done.status).to.equal(303);
    expect(done.location).to.equal('/dashboard/keys?notice=key-revoked');
    expect(await verifyApiKey(env.knex, key)).to.equal(null);
    const list = await c.get('/dashboard/keys?notice=key-revoked');
    expect(list.text).to.include('The API key was revoked.');
    expect(new RegExp(`<tr data-key-id="${id}">[\\s\\S]*?revoked[\\s\\S]*?</tr>`).test(list.text)).to.equal(true);
    expect((await c.get('/dashboard/keys/999999999/revoke')).status).to.equal(404);
  });

  it('escapes every interpolated value: key name, mailbox display name, reflected login e-mail, unknown notices', async () => {
    const evil = '<img src=x onerror=alert(1)>"\'`';
    await createKey(evil, [boxes[0].id], 'read');
    const list = await c.get('/dashboard/keys');
    expect(list.text).not.to.include('<img src=x');
    expect(list.text).to.include('&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&#96;');
    const box = await addMailbox(env.knex, {
      domainId: domain.id,
      local_part: 'xss',
      display_name: '<script>alert("d")</script>',
    });
    const boxesPage = await c.get(`/dashboard/domains/${domain.id}/mailboxes`);
    expect(boxesPage.text)
      .to.include(box.email)
      .and.include('&lt;script&gt;alert(&quot;d&quot;)&lt;/script&gt;')
      .and.not.include('<script>');
    const anon = new Client(dash.url);
    const login = await anon.login('"><script>alert(2)</script>@x.test', 'whatever-password');
    expect(login.status).to.equal(401);
    expect(login.text).to.include('value="&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;@x.test"');
    expect(login.text).not.to.include('<script>');
    const bogus = await c.get('/dashboard/keys?notice=%3Cscript%3E');
    expect(bogus.text).not.to.include('<script>');
  });

  it('html`` escapes values, keeps nested fragments and drops null/false', () => {
    expect(escapeHtml(`&<>"'\``)).to.equal('&amp;&lt;&gt;&quot;&#39;&#96;');
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p>${inner}${null}${false}${undefined}${[html`<br />`, '<x>']}${0}</p>`.value).to.equal(
      '<p><b>&lt;i&gt;</b><br />&lt;x&gt;0</p>',
    );
  });
});
