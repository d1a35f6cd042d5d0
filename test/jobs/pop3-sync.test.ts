import { expect } from 'chai';
import path from 'node:path';
import { UnrecoverableError } from 'bullmq';
import { env } from '../helpers/env.js';
import { getMailStack, type MailStack } from '../helpers/mail.js';
import { TEST_WEB_APP_KEY } from '../helpers/http.js';
import { fakeJob } from './fake-job.js';
import { pop3AccountFixture } from '../helpers/email.js';
import { configureJobDeps } from '../../jobs/deps.js';
import * as imapSync from '../../jobs/imap-sync.js';
import { Pop3Session } from '../../jobs/email/pop3-client.js';
import { headerDate } from '../../jobs/email/pop3-source.js';
import { createStorage } from '../../lib/storage/index.js';
import { ManualClock } from '../../lib/clock.js';
import type { MailboxCredentials } from '../../jobs/adapters/mailbox-client/index.js';

type Account = { id: number; tenant_id: number };

/** Runs one account job through the processor. */
async function runSync(account: Account, mode: 'sync' | 'test' = 'sync') {
  const fj = fakeJob({ tenant_id: account.tenant_id, account_id: account.id, mode });
  const result = await imapSync.process(fj.job);
  return { result, ...fj };
}

const rows = (tenantId: number) => env.knex('communication_messages').where({ tenant_id: tenantId }).orderBy('id');
const seenCount = async (accountId: number) =>
  Number((await env.knex('email_seen_uidls').where({ account_id: accountId }).count({ n: '*' }).first())?.n);

/** Issue 9 item 3, POP3: the imap-sync job on a POP3 account against the real Dovecot's POP3. */
describe('imap-sync job, POP3 accounts (real Dovecot, node-pop3)', function () {
  this.timeout(120_000);
  let stack: MailStack;
  const storage = createStorage({
    driver: 'local',
    root: path.join(process.env.TMPDIR ?? '/tmp', `isp-pop3-${process.pid}`),
  });

  before(async () => {
    stack = await getMailStack();
    configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY, clock: new ManualClock(), storage });
  });

  const deliverN = async (box: MailboxCredentials, n: number, from = 'someone@outside.test', tag = 'p') => {
    for (let i = 1; i <= n; i++) {
      await stack.deliver({ from, to: box.email, subject: `${tag} ${i}`, text: `Body of ${tag} ${i}` });
    }
  };
  /** The maildrop as a POP3 client sees it (count and UIDLs). */
  const maildrop = async (box: MailboxCredentials) => {
    const s = await Pop3Session.open(
      { host: stack.dovecot.host, port: stack.dovecot.pop3Port, security: 'none' },
      box.email,
      box.password,
      { timeoutMs: 5000 },
    );
    try {
      return { count: await s.count(), uidls: (await s.uidls()).map((m) => m.uidl) };
    } finally {
      await s.quit();
    }
  };

  it('5 new -> 5 imported (source pop3, key pop3:<uidl>, customer matched); again -> 0 more; the maildrop unchanged', async () => {
    const { t, box, account } = await pop3AccountFixture(stack);
    const [c] = await env
      .knex('customers')
      .insert({
        tenant_id: t.tenant.id,
        code: `C-${t.tenant.id}`,
        name: 'Pop Customer',
        phone: '0812',
        address: 'Jl. Pop 1',
        email: 'Customer@Outside.test',
        status: 'active',
      })
      .returning('id');
    await deliverN(box, 4);
    await stack.deliver({ from: 'customer@outside.test', to: box.email, subject: 'from customer', text: 'hello' });
    const before = await maildrop(box);
    expect(before.count).to.equal(5);

    const first = await runSync(account);
    expect(first.result).to.include({ kind: 'sync', outcome: 'synced', fetched: 5, imported: 5, skipped: 0 });
    expect(first.progress.at(-1)).to.deep.equal({ fetched: 5, imported: 5, skipped: 0 });
    expect(first.logs).to.deep.equal(['batch 1: messages 1..5; fetched 5, imported 5, skipped 0']);
    const list = await rows(t.tenant.id);
    expect(list.map((r) => r.subject)).to.deep.equal(['p 1', 'p 2', 'p 3', 'p 4', 'from customer']);
    expect(list.map((r) => r.external_key)).to.deep.equal(before.uidls.map((u) => `pop3:${u}`));
    expect(list[4]).to.include({
      channel: 'email',
      direction: 'in',
      status: 'received',
      source: 'pop3',
      account_ref: box.email,
      counterpart: 'customer@outside.test',
      customer_id: c.id,
      body_text: 'hello\n',
      error_code: null,
    });
    expect(await seenCount(account.id)).to.equal(5);
    const acc = await env.knex('external_email_accounts').where({ id: account.id }).first();
    expect(acc).to.include({ sync_status: 'ok', last_error: null });

    const again = await runSync(account);
    expect(again.result).to.include({ fetched: 0, imported: 0, skipped: 0 });
    expect(await rows(t.tenant.id)).to.have.length(5);

    // nothing deleted or changed on the server: same count, same UIDLs, no \Seen set by the reads
    expect(await maildrop(box)).to.deep.equal(before);
    const imap = await stack.openImap(box.email, box.password);
    try {
      const lock = await imap.getMailboxLock('INBOX', { readOnly: true });
      try {
        expect(imap.mailbox && imap.mailbox.exists).to.equal(5);
        const msgs = await imap.fetchAll('1:*', { uid: true, flags: true });
        for (const m of msgs) expect([...(m.flags ?? [])]).to.not.include.members(['\\Seen', '\\Deleted']);
      } finally {
        lock.release();
      }
    } finally {
      await imap.logout();
    }
  });

  it('two jobs at once import each message once', async () => {
    const { t, box, account } = await pop3AccountFixture(stack);
    await deliverN(box, 5);
    const [a, b] = await Promise.all([runSync(account), runSync(account)]);
    const sum = (a.result as imapSync.ImapSyncResult).imported + (b.result as imapSync.ImapSyncResult).imported;
    expect(sum).to.equal(5);
    expect(await rows(t.tenant.id)).to.have.length(5);
    expect(await seenCount(account.id)).to.equal(5);
  });

  it('first sync: only messages of the last 30 days; the older ones are marked seen, never imported', async () => {
    const { t, box, account } = await pop3AccountFixture(stack);
    const old = new Date(Date.now() - 40 * 86_400_000);
    for (let i = 1; i <= 3; i++)
      await stack.deliver({ from: 'old@outside.test', to: box.email, subject: `old ${i}`, text: 'old', date: old });
    await deliverN(box, 2, 'new@outside.test', 'new');
    const first = await runSync(account);
    expect(first.result).to.include({ fetched: 2, imported: 2 });
    expect((await rows(t.tenant.id)).map((r) => r.subject)).to.deep.equal(['new 1', 'new 2']);
    expect(await seenCount(account.id)).to.equal(5);
    await deliverN(box, 1, 'x@outside.test', 'later');
    const next = await runSync(account);
    expect(next.result).to.include({ fetched: 1, imported: 1 });
    expect((await rows(t.tenant.id)).map((r) => r.subject)).to.deep.equal(['new 1', 'new 2', 'later 1']);
  });

  it('test mode: imports at most the newest one, answers protocol pop3; seen UIDLs and state unchanged', async () => {
    const { t, box, account } = await pop3AccountFixture(stack);
    await deliverN(box, 3);
    const r = await runSync(account, 'test');
    expect(r.result).to.deep.include({ kind: 'test', ok: true });
    const data = (r.result as { data: { communication_id: number } }).data;
    expect(data).to.include({ protocol: 'pop3', messages_on_server: 3, synced: 1 });
    const list = await rows(t.tenant.id);
    expect(list.map((x) => x.subject)).to.deep.equal(['p 3']);
    expect(data.communication_id).to.equal(Number(list[0].id));
    expect(await seenCount(account.id)).to.equal(0);
    const acc = await env.knex('external_email_accounts').where({ id: account.id }).first();
    expect(acc.sync_status).to.equal('never');
    const sync = await runSync(account);
    expect(sync.result).to.include({ fetched: 3, imported: 2, skipped: 1 });
  });

  it('dot-stuffed lines, 8-bit text and a binary attachment arrive byte-exact', async () => {
    const { t, box, account } = await pop3AccountFixture(stack);
    const bin = Buffer.from(Array.from({ length: 3000 }, (_v, i) => (i * 7 + 13) % 256));
    const text = '.starts with a dot\r\n..two dots\r\nSchöne Grüße – ünïcode\r\n.\r\nend';
    await stack.deliver({
      from: 'dots@outside.test',
      to: box.email,
      subject: 'dots',
      text,
      attachments: [{ filename: 'blob.bin', content: bin, contentType: 'application/octet-stream' }],
    });
    await runSync(account);
    const [m] = await rows(t.tenant.id);
    expect(m.body_text.replace(/\r\n/g, '\n')).to.equal(text.replace(/\r\n/g, '\n'));
    const [att] = await env.knex('communication_attachments').where({ message_id: m.id });
    expect(att).to.include({ filename: 'blob.bin', size_bytes: bin.length });
    const got = await storage.get(att.storage_key);
    const chunks: Buffer[] = [];
    for await (const ch of got.stream) chunks.push(ch as Buffer);
    expect(Buffer.concat(chunks).equals(bin)).to.equal(true);
  });

  it('a deleted message is not imported again', async () => {
    const { t, box, account } = await pop3AccountFixture(stack);
    await deliverN(box, 2);
    await runSync(account);
    const [first] = await rows(t.tenant.id);
    await env
      .knex('communication_messages')
      .where({ id: first.id })
      .update({ deleted_at: new Date(), body_text: null });
    // as if the seen list were lost: the tombstone alone keeps it out
    await env.knex('email_seen_uidls').where({ account_id: account.id }).del();
    const again = await runSync(account);
    expect(again.result).to.include({ imported: 0, skipped: 2 });
    expect(await rows(t.tenant.id)).to.have.length(2);
  });

  it('bad password: auth_failed (test mode and sync), UnrecoverableError, no password in the error', async () => {
    const wrong = 'Wrong-Pop3-pw-5151';
    const { account } = await pop3AccountFixture(stack, { incoming_password: wrong });
    const tst = await runSync(account, 'test');
    expect(tst.result).to.deep.include({ ok: false });
    expect((tst.result as { error: { code: string; message: string } }).error).to.deep.equal({
      code: 'auth_failed',
      message: 'POP3 login failed: mailbox address or password wrong',
    });
    let err: unknown;
    try {
      await runSync(account);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(UnrecoverableError);
    expect(String((err as Error).message)).not.to.include(wrong);
    const acc = await env.knex('external_email_accounts').where({ id: account.id }).first();
    expect(acc).to.include({
      sync_status: 'auth_failed',
      last_error: 'POP3 login failed: mailbox address or password wrong',
    });
  });

  it('STARTTLS asked for: refused as tls_failed before anything is sent in clear', async () => {
    const { account } = await pop3AccountFixture(stack, { incoming_encryption: 'starttls' });
    const r = await runSync(account, 'test');
    expect((r.result as { error: { code: string } }).error.code).to.equal('tls_failed');
  });

  it('headerDate reads a folded Date header; none or garbage -> null', () => {
    const at = new Date(Math.floor(new ManualClock().now().getTime() / 1000) * 1000);
    const folded = at.toUTCString().replace(/ (\d\d:)/, '\r\n $1');
    expect(headerDate(`Subject: x\r\nDate: ${folded}\r\n\r\n`)?.toISOString()).to.equal(at.toISOString());
    expect(headerDate('Subject: x\r\n\r\n')).to.equal(null);
    expect(headerDate('Date: not a date\r\n')).to.equal(null);
  });
});
