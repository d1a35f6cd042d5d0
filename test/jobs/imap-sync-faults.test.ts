import { expect } from 'chai';
import net from 'node:net';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { env, registerCleanup } from '../helpers/env.js';
import { getMailStack, type MailStack } from '../helpers/mail.js';
import { TEST_WEB_APP_KEY } from '../helpers/http.js';
import { accountFixture, pop3AccountFixture } from '../helpers/email.js';
import { configureJobDeps } from '../../jobs/deps.js';
import * as imapSync from '../../jobs/imap-sync.js';
import type { JobLike } from '../../jobs/queues.js';
import { createStorage } from '../../lib/storage/index.js';
import { ManualClock } from '../../lib/clock.js';

type Account = { id: number; tenant_id: number };
type Data = imapSync.ImapSyncData;

/** A fake job whose updateProgress awaits `onProgress` (e.g. to stop Dovecot after the first batch). */
function job(account: Account, mode: 'sync' | 'test', onProgress?: (n: number) => Promise<void>) {
  const logs: string[] = [];
  let calls = 0;
  const j: JobLike<Data> = {
    id: 'fault-1',
    name: imapSync.ACCOUNT_JOB,
    data: { tenant_id: account.tenant_id, account_id: account.id, mode },
    async updateProgress() {
      await onProgress?.(++calls);
    },
    async log(line) {
      logs.push(line);
      return logs.length;
    },
  };
  return { j, logs };
}

async function run(account: Account, mode: 'sync' | 'test' = 'sync', onProgress?: (n: number) => Promise<void>) {
  const { j } = job(account, mode, onProgress);
  try {
    return { result: await imapSync.process(j), error: null };
  } catch (e) {
    return { result: null, error: e as Error };
  }
}

const rows = (tenantId: number) => env.knex('communication_messages').where({ tenant_id: tenantId }).orderBy('id');

/** A TCP server that accepts connections and never says a word (a hung mail server). */
async function silentServer() {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  registerCleanup(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });
  return (server.address() as AddressInfo).port;
}

/** A message mailparser refuses (more than 1000 MIME parts: EMAXLEN). */
function unparseable(to: string) {
  const parts = Array.from({ length: 1001 }, (_v, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join(
    '',
  );
  return `From: broken@outside.test\r\nTo: ${to}\r\nSubject: broken\r\nMessage-ID: <broken-${Date.now()}@outside.test>\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${parts}--b--\r\n`;
}

const protocols = [
  { name: 'IMAP', fixture: accountFixture, prefix: 'IMAP' },
  { name: 'POP3', fixture: (s: MailStack) => pop3AccountFixture(s), prefix: 'POP3' },
] as const;

/** Issue 9 "Bad input and failure": the sync's failure cases on the real Dovecot, IMAP and POP3. */
describe('imap-sync job: failure cases (real Dovecot, IMAP and POP3)', function () {
  this.timeout(120_000);
  let stack: MailStack;
  const storage = createStorage({
    driver: 'local',
    root: path.join(process.env.TMPDIR ?? '/tmp', `isp-sync-faults-${process.pid}`),
  });

  before(async () => {
    stack = await getMailStack();
    configureJobDeps(deps());
  });
  /** The job dependencies: the default mail-server bound (10 s) unless given. */
  const deps = (mailTimeoutMs?: number) => ({
    knex: env.knex,
    appKey: TEST_WEB_APP_KEY,
    clock: new ManualClock(),
    storage,
    mailTimeoutMs,
  });

  for (const p of protocols) {
    it(`${p.name}: a server that accepts TCP and never answers -> test code timeout; sync failed, readable reason`, async () => {
      const port = await silentServer();
      const { account } = await p.fixture(stack);
      await env.knex('external_email_accounts').where({ id: account.id }).update({ incoming_port: port });
      // a short silence bound instead of the default 10 s
      configureJobDeps(deps(500));
      let t, s;
      try {
        t = await run(account, 'test');
        s = await run(account);
      } finally {
        configureJobDeps(deps());
      }
      expect((t.result as { ok: boolean; error: { code: string } }).error.code).to.equal('timeout');
      expect(s.error?.message).to.match(new RegExp(`^${p.prefix} server did not answer in time`));
      const acc = await env.knex('external_email_accounts').where({ id: account.id }).first();
      expect(acc.sync_status).to.equal('failed');
      expect(acc.last_error).to.equal(s.error?.message);
    });

    it(`${p.name}: an unparseable message is kept text-only with parse_error and does not block the next`, async () => {
      const { t, box, account } = await p.fixture(stack);
      await stack.deliver({ from: 'a@outside.test', to: box.email, subject: 'before', text: 'one' });
      await stack.deliver({ from: 'broken@outside.test', to: box.email, raw: unparseable(box.email) });
      await stack.deliver({ from: 'a@outside.test', to: box.email, subject: 'after', text: 'three' });
      const s = await run(account);
      expect(s.error).to.equal(null);
      expect(s.result).to.include({ fetched: 3, imported: 3 });
      const list = await rows(t.tenant.id);
      expect(list.map((r) => r.subject)).to.deep.equal(['before', null, 'after']);
      expect(list[1]).to.include({ error_code: 'parse_error', error_message: 'Max allowed child nodes exceeded' });
      expect(list[1].body_text).to.match(/^Return-Path|^Received|^From/m);
      expect(list[1].body_text).to.contain('part 1000');
      expect(list[1].body_html).to.equal(null);
      expect(list[2]).to.include({ body_text: 'three\n', error_code: null });
    });

    it(`${p.name}: Dovecot down in the middle of a sync -> failed with a readable reason; the next sync resumes`, async () => {
      const { t, box, account } = await p.fixture(stack);
      for (let i = 1; i <= 30; i++) await stack.deliver({ from: 'a@outside.test', to: box.email, subject: `m ${i}` });
      let down = false;
      const s = await run(account, 'sync', async (n) => {
        if (n === 1) {
          down = true;
          await stack.stopDovecot();
        }
      });
      try {
        expect(down).to.equal(true);
        expect(s.error).to.be.instanceOf(Error);
        // the session cut, refused, or (on a loaded machine, before the cut) silent: a readable reason each
        expect(s.error?.message).to.match(
          new RegExp(
            `^${p.prefix} (connection closed by the server|connection failed \\(E|server did not answer in time)`,
          ),
        );
        const acc = await env.knex('external_email_accounts').where({ id: account.id }).first();
        expect(acc).to.include({ sync_status: 'failed', last_error: s.error?.message });
        // the first batch (25) was committed with its cursor
        expect(await rows(t.tenant.id)).to.have.length(25);
      } finally {
        await stack.startDovecot();
      }
      const again = await run(account);
      expect(again.error).to.equal(null);
      expect(again.result).to.include({ imported: 5 });
      const subjects = (await rows(t.tenant.id)).map((r) => r.subject);
      expect(subjects).to.deep.equal(Array.from({ length: 30 }, (_v, i) => `m ${i + 1}`));
    });
  }
});
