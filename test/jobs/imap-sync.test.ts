import { expect } from 'chai';
import path from 'node:path';
import { UnrecoverableError } from 'bullmq';
import { env } from '../helpers/env.js';
import { getMailStack, type MailStack } from '../helpers/mail.js';
import { TEST_WEB_APP_KEY } from '../helpers/http.js';
import { fakeJob } from './fake-job.js';
import { makeTenant } from '../helpers/fixtures.js';
import { createQueues } from '../../jobs/queues.js';
import { MODULES } from '../../api/tenants/catalog.js';
import { accountFixture } from '../helpers/email.js';
import { configureJobDeps } from '../../jobs/deps.js';
import * as imapSync from '../../jobs/imap-sync.js';
import { saveEmailSettings } from '../../api/email/settings.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { createStorage } from '../../lib/storage/index.js';
import { ManualClock } from '../../lib/clock.js';
import type { MailboxCredentials } from '../../jobs/adapters/mailbox-client/index.js';

/** Runs one account job through the processor. */
async function runSync(account: { id: number; tenant_id: number }, mode: 'sync' | 'test' = 'sync') {
  const fj = fakeJob({ tenant_id: account.tenant_id, account_id: account.id, mode });
  const result = await imapSync.process(fj.job);
  return { result, ...fj };
}

const rows = (tenantId: number) => env.knex('communication_messages').where({ tenant_id: tenantId }).orderBy('id');

/** Issue 9 item 3: the imap-sync job against the real Dovecot. */
describe('imap-sync job (real Dovecot)', function () {
  this.timeout(120_000);
  let stack: MailStack;
  const storage = createStorage({
    driver: 'local',
    root: path.join(process.env.TMPDIR ?? '/tmp', `isp-sync-${process.pid}`),
  });

  before(async () => {
    stack = await getMailStack();
    configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY, clock: new ManualClock(), storage });
  });

  const deliverN = async (box: MailboxCredentials, n: number, from = 'someone@outside.test', tag = 'm') => {
    for (let i = 1; i <= n; i++) {
      await stack.deliver({ from, to: box.email, subject: `${tag} ${i}`, text: `Body of ${tag} ${i}` });
    }
  };

  it('imports 5 new messages; again: 0 more; server flags and counts unchanged; customer matched', async () => {
    const { t, box, account } = await accountFixture(stack);
    const [c] = await env
      .knex('customers')
      .insert({
        tenant_id: t.tenant.id,
        code: `C-${t.tenant.id}`,
        name: 'Matched Customer',
        phone: '0811',
        address: 'Jl. Test 1',
        email: 'Customer@Outside.test',
        status: 'active',
      })
      .returning('id');
    await deliverN(box, 4);
    await stack.deliver({ from: 'customer@outside.test', to: box.email, subject: 'from customer', text: 'hello' });
    const first = await runSync(account);
    expect(first.result).to.include({ kind: 'sync', outcome: 'synced', fetched: 5, imported: 5, skipped: 0 });
    expect(first.progress.at(-1)).to.deep.equal({ fetched: 5, imported: 5, skipped: 0 });
    expect(first.logs[0]).to.match(/^batch 1: UIDs 1\.\.5; fetched 5, imported 5, skipped 0$/);
    const list = await rows(t.tenant.id);
    expect(list.map((r) => r.subject)).to.deep.equal(['m 1', 'm 2', 'm 3', 'm 4', 'from customer']);
    expect(list[4]).to.include({
      channel: 'email',
      direction: 'in',
      status: 'received',
      source: 'imap',
      account_ref: box.email,
      counterpart: 'customer@outside.test',
      customer_id: c.id,
      body_text: 'hello\n',
    });
    expect(list[0].customer_id).to.equal(null);
    expect(list[0].external_key).to.match(/^imap:\d+:1$/);
    const acc = await env.knex('external_email_accounts').where({ id: account.id }).first();
    expect(acc).to.include({ sync_status: 'ok', imap_last_uid: 5, last_error: null });
    expect(acc.last_synced_at).to.be.instanceOf(Date);

    const again = await runSync(account);
    expect(again.result).to.include({ fetched: 0, imported: 0 });
    expect(await rows(t.tenant.id)).to.have.length(5);

    const imap = await stack.openImap(box.email, box.password);
    try {
      const lock = await imap.getMailboxLock('INBOX');
      try {
        expect(imap.mailbox && imap.mailbox.exists).to.equal(5);
        const msgs = await imap.fetchAll('1:*', { uid: true, flags: true });
        // \Recent is still there: the sync's EXAMINE did not even claim it
        for (const m of msgs) expect([...(m.flags ?? [])]).to.deep.equal(['\\Recent']);
      } finally {
        lock.release();
      }
    } finally {
      await imap.logout();
    }
  });

  it('two jobs at once import each message once', async () => {
    const { t, box, account } = await accountFixture(stack);
    await deliverN(box, 5);
    const [a, b] = await Promise.all([runSync(account), runSync(account)]);
    expect((a.result as imapSync.ImapSyncResult).imported + (b.result as imapSync.ImapSyncResult).imported).to.equal(5);
    expect(await rows(t.tenant.id)).to.have.length(5);
  });

  it('a new UIDVALIDITY re-reads the window but imports no duplicate (Message-ID)', async () => {
    const { t, box, account } = await accountFixture(stack);
    await deliverN(box, 3);
    await runSync(account);
    // as if the server had renumbered INBOX: the stored keys and cursor are of another UIDVALIDITY
    await env.knex('external_email_accounts').where({ id: account.id }).update({ imap_uidvalidity: 7 });
    await env
      .knex('communication_messages')
      .where({ tenant_id: t.tenant.id })
      .update({ external_key: env.knex.raw(`regexp_replace(external_key, '^imap:\\d+:', 'imap:7:')`) });
    const again = await runSync(account);
    expect(again.result).to.include({ fetched: 3, imported: 0, skipped: 3 });
    expect(await rows(t.tenant.id)).to.have.length(3);
  });

  it('first sync: only the newest 200 of the last 30 days', async () => {
    const { t, box, account } = await accountFixture(stack);
    const imap = await stack.openImap(box.email, box.password);
    try {
      const old = new Date(Date.now() - 40 * 86_400_000);
      const raw = (i: number, d: Date) =>
        `From: bulk@outside.test\r\nTo: ${box.email}\r\nSubject: bulk ${i}\r\nMessage-ID: <bulk-${i}-${account.id}@outside.test>\r\nDate: ${d.toUTCString()}\r\n\r\nbulk ${i}\r\n`;
      for (let i = 1; i <= 10; i++) await imap.append('INBOX', raw(i, old), [], old);
      for (let i = 11; i <= 250; i++) await imap.append('INBOX', raw(i, new Date()), []);
    } finally {
      await imap.logout();
    }
    const first = await runSync(account);
    expect(first.result).to.include({ fetched: 200, imported: 200 });
    expect(first.logs).to.have.length(8);
    const subjects = (await rows(t.tenant.id)).map((r) => r.subject);
    expect(subjects[0]).to.equal('bulk 51');
    expect(subjects.at(-1)).to.equal('bulk 250');
    const acc = await env.knex('external_email_accounts').where({ id: account.id }).first();
    expect(acc.imap_last_uid).to.equal(250);
    await deliverN(box, 1, 'x@outside.test', 'later');
    const next = await runSync(account);
    expect(next.result).to.include({ fetched: 1, imported: 1 });
  });

  it('script, onerror, javascript: stripped; attachment stored with its detected type', async () => {
    const { t, box, account } = await accountFixture(stack);
    const png = Buffer.from(
      '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
        '1f15c4890000000d49444154789c6360000000020001e221bc330000000049454e44ae426082',
      'hex',
    );
    await stack.deliver({
      from: 'html@outside.test',
      to: box.email,
      subject: 'html',
      html: '<p onclick="x()">Hi<script>alert(1)</script><img src="https://track.test/p.gif" onerror="y()"><img src="cid:logo@x"><a href="javascript:alert(2)">j</a></p>',
      attachments: [{ filename: 'logo.bin', content: png, contentType: 'application/octet-stream', cid: 'logo@x' }],
    });
    await runSync(account);
    const [m] = await rows(t.tenant.id);
    expect(m.body_html).not.to.match(/script|onerror|onclick|javascript:|track\.test/);
    expect(m.body_html).to.include('src="cid:logo@x"');
    const [att] = await env.knex('communication_attachments').where({ message_id: m.id });
    expect(att).to.include({
      filename: 'logo.bin',
      content_type: 'image/png',
      size_bytes: png.length,
      content_id: 'logo@x',
    });
    const got = await storage.get(att.storage_key);
    const chunks: Buffer[] = [];
    for await (const c of got.stream) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(png)).to.equal(true);
  });

  it('test mode: imports at most the newest one, cursor and state unchanged', async () => {
    const { t, box, account } = await accountFixture(stack);
    await deliverN(box, 3);
    const r = await runSync(account, 'test');
    expect(r.result).to.deep.include({ kind: 'test', ok: true });
    const data = (r.result as { data: { communication_id: number } }).data;
    expect(data).to.include({ protocol: 'imap', messages_on_server: 3, synced: 1 });
    const list = await rows(t.tenant.id);
    expect(list.map((x) => x.subject)).to.deep.equal(['m 3']);
    expect(data.communication_id).to.equal(Number(list[0].id));
    const acc = await env.knex('external_email_accounts').where({ id: account.id }).first();
    expect(acc).to.include({ sync_status: 'never', imap_last_uid: null });
    const sync = await runSync(account);
    expect(sync.result).to.include({ fetched: 3, imported: 2, skipped: 1 });
  });

  it('bad password: auth_failed, UnrecoverableError, no password in the error; test mode answers auth_failed', async () => {
    const { account } = await accountFixture(stack);
    const wrong = 'Wrong-Sentinel-pw-3131';
    const f = await env.knex('tenants').where({ id: account.tenant_id }).first();
    await saveEmailSettings(
      new TenantScope(env.knex, f.id),
      TEST_WEB_APP_KEY,
      { userId: null },
      { ...(await settingsOf(account.id)), incoming_password: wrong },
    );
    const t = await runSync(account, 'test');
    expect(t.result).to.deep.include({ ok: false });
    expect((t.result as { error: { code: string } }).error.code).to.equal('auth_failed');
    let err: unknown;
    try {
      await runSync(account);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(UnrecoverableError);
    expect(String((err as Error).message)).not.to.include(wrong);
    const acc = await env.knex('external_email_accounts').where({ id: account.id }).first();
    expect(acc.sync_status).to.equal('auth_failed');
    expect(acc.last_error).to.match(/login failed/i);
  });

  it('port closed: test connect_failed; sync with Dovecot down fails with a readable reason, then recovers', async () => {
    const { box, account } = await accountFixture(stack);
    await deliverN(box, 1);
    await stack.stopDovecot();
    try {
      const t = await runSync(account, 'test');
      expect((t.result as { error: { code: string } }).error.code).to.equal('connect_failed');
      let err: unknown;
      try {
        await runSync(account);
      } catch (e) {
        err = e;
      }
      expect((err as Error).message).to.equal('IMAP connection failed (ECONNREFUSED)');
      const acc = await env.knex('external_email_accounts').where({ id: account.id }).first();
      expect(acc).to.include({ sync_status: 'failed', last_error: 'IMAP connection failed (ECONNREFUSED)' });
    } finally {
      await stack.startDovecot();
    }
    const ok = await runSync(account);
    expect(ok.result).to.include({ imported: 1 });
  });
  it('the sweep enqueues a sync per eligible account: not demo, module on, not auth_failed', async () => {
    const queues = createQueues(env.redisUrl, { prefix: `{sweep-${process.pid}}` });
    configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY, clock: new ManualClock(), storage, queues });
    try {
      const ok = await accountFixture(stack);
      const failed = await accountFixture(stack);
      await env.knex('external_email_accounts').where({ id: failed.account.id }).update({ sync_status: 'auth_failed' });
      const off = await accountFixture(stack);
      await env
        .knex('tenants')
        .where({ id: off.t.tenant.id })
        .update({ modules: JSON.stringify(MODULES.filter((m) => m !== 'email')) });
      const demo = await accountFixture(stack, await makeTenant({ demo: true }));
      const fj = fakeJob({});
      fj.job.name = imapSync.SWEEP_JOB;
      const res = (await imapSync.process(fj.job)) as imapSync.ImapSweepResult;
      expect(res.kind).to.equal('sweep');
      const jobs = await queues.get(imapSync.QUEUE).getJobs(['waiting']);
      const accounts = jobs.map((j) => j.data.account_id);
      expect(accounts).to.include(ok.account.id);
      for (const a of [failed, off, demo]) expect(accounts).not.to.include(a.account.id);
      expect(jobs.find((j) => j.data.account_id === ok.account.id)!.data).to.deep.equal({
        tenant_id: ok.t.tenant.id,
        account_id: ok.account.id,
        mode: 'sync',
      });
    } finally {
      await queues.get(imapSync.QUEUE).obliterate({ force: true });
      await queues.close();
      configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY, clock: new ManualClock(), storage });
    }
  });
});

/** The saved settings of an account as a PUT body (without passwords). */
async function settingsOf(id: number) {
  const a = await env.knex('external_email_accounts').where({ id }).first();
  return {
    email: a.email,
    incoming_protocol: a.incoming_protocol,
    incoming_host: a.incoming_host,
    incoming_port: a.incoming_port,
    incoming_encryption: a.incoming_encryption,
    incoming_username: a.incoming_username,
    outgoing_host: a.outgoing_host,
    outgoing_port: a.outgoing_port,
    outgoing_encryption: a.outgoing_encryption,
    outgoing_username: a.outgoing_username,
  };
}
