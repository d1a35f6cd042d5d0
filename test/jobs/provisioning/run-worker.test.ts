import { expect } from 'chai';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant } from '../../helpers/fixtures.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { createLogger } from '../../../lib/logger.js';
import { startWorkers } from '../../../workers/main.js';
import * as provisioningRun from '../../../jobs/provisioning-run.js';
import { dumpStores } from '../../api/mail/support.js';
import { getMailStack } from '../../helpers/mail.js';
import { DEMO_ZONE_NAME, demoProvisioningTarget, startProvisioningFakes } from '../../../bin/dev-provisioning.js';
import { seedDemoProvisioning } from '../../../db/seeds/demo-provisioning.js';
import { runProvisioningCheck } from '../../../jobs/provisioning-check.js';
import { platformAdminToken } from '../../api/platform/support.js';
import { FakeDns, FakePanel, RUN_PANEL_PW, RUN_TOKEN, dns502, fakeRuntime } from '../../api/platform/runs-fakes.js';

const ZONE = 'worker-zone.test';

/**
 * Issue 13 item 8 with a real (in-process) worker on the `provisioning` queue: the flow's children
 * run, Cloudflare's 502 twice is retried with backoff, the finish parent runs after its children
 * and sets the run succeeded. The only test file of the runs that starts a worker.
 */
describe('provisioning runs on a real worker (issue 13 item 8)', function () {
  this.timeout(60_000);
  let app: TestApp;
  const dns = new FakeDns(ZONE);
  const panel = new FakePanel();
  const rt = fakeRuntime(dns, panel);
  const workerLogs: string[] = [];

  before(async () => {
    app = await startTestApp({
      provisioning: { runtime: rt, mailDomain: 'mail.worker.test', dnsTarget: '203.0.113.20', backoffMs: 50 },
    });
    const sink = new Writable({
      write(chunk, _e, cb) {
        workerLogs.push(chunk.toString());
        cb();
      },
    });
    const handle = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      appKey: TEST_WEB_APP_KEY,
      prefix: app.queues.prefix,
      logger: createLogger('info', sink),
      queues: ['provisioning'],
      registry: { provisioning: { processor: provisioningRun.process, concurrency: 2 } },
      provisioning: rt,
    });
    registerCleanup(() => handle.close());
  });

  /** Polls the run until it is finished (bounded). */
  async function finished(id: number, boundMs = 30_000) {
    const until = Date.now() + boundMs;
    for (;;) {
      const run = await env.knex('provisioning_runs').where({ id }).first();
      if (run.finished_at) return run;
      if (Date.now() > until) throw new Error(`run ${id} not finished: ${JSON.stringify(run)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('provision with DNS 502 twice: retried, one record read back, active, mailbox, run succeeded; no secret anywhere', async () => {
    const ops = await platformAdminToken();
    const a = await makeTenant();
    dns.failures.createRecord = [dns502(), dns502()];
    const r = await app.request(
      'POST',
      `/api/platform/tenants/${a.tenant.slug}/provisioning/subscriber-domain/provision`,
      {
        token: ops.token,
        body: { confirm_phrase: 'PROVISION SUBSCRIBER DOMAIN' },
      },
    );
    expect(r.status, r.text).to.equal(202);
    const run = await finished(r.body.data.id);
    expect(run.status, JSON.stringify(run.steps)).to.equal('succeeded');
    expect(run.steps.dns).to.include({ status: 'succeeded', attempts: 3 });
    expect(run.steps.mailbox).to.include({ status: 'succeeded', attempts: 1 });
    expect(dns.records.filter((x) => x.name === `${a.tenant.slug}.${ZONE}`)).to.have.length(1);
    expect(dns.calls.filter((c) => c === 'createRecord')).to.have.length(3);
    const d = await env.knex('tenant_subscriber_domains').where({ tenant_id: a.tenant.id }).first();
    expect(d).to.include({ status: 'active', domain: `${a.tenant.slug}.${ZONE}` });
    expect(panel.boxes.has(`${a.tenant.slug}@mail.worker.test`)).to.equal(true);
    const q = app.queues.get('provisioning');
    expect(await (await q.getJob(`prov-${run.id}-finish`))?.getState()).to.equal('completed');
    const { db, redis } = await dumpStores();
    for (const s of [RUN_TOKEN, RUN_PANEL_PW]) {
      expect(workerLogs.join('')).to.not.include(s);
      expect(db).to.not.include(s);
      expect(redis).to.not.include(s);
    }
  });
});

/**
 * The same run with nothing injected: the sealed credentials store, the real Cloudflare and cPanel
 * adapters against the demo fakes of `npm start` (bin/dev-provisioning.ts), the new mailbox in the
 * test Dovecot: its initial password (shown once by GET .../provisioning) logs in over IMAP.
 */
describe('provisioning runs against the demo fakes with the real adapters (issue 13 items 6-8, 10)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let fakes: Awaited<ReturnType<typeof startProvisioningFakes>>;

  before(async () => {
    const stack = await getMailStack();
    fakes = await startProvisioningFakes({
      cloudflarePort: 0,
      cpanelPort: 0,
      stateDir: path.join(env.dir, `prov-run-demo-${randomBytes(3).toString('hex')}`),
      dovecotUsers: stack.dovecot.usersFile,
    });
    registerCleanup(() => fakes.close());
    await env.knex('provisioning_credentials').del();
    await env.knex('provisioning_settings').del();
    const port = Number(new URL(fakes.cloudflareUrl).port);
    const target = { ...demoProvisioningTarget(port), cpanelPort: fakes.cpanelPort };
    await seedDemoProvisioning(env.knex, TEST_WEB_APP_KEY, target, new Date());
    for (const p of ['cloudflare', 'mail_panel'] as const)
      expect((await runProvisioningCheck(env.knex, TEST_WEB_APP_KEY, p, () => new Date())).ok, p).to.equal(true);
    await env.knex('provisioning_settings').insert({ id: 1, enabled: true, backup_ready: true });
    app = await startTestApp({
      provisioning: { mailDomain: `mail.${DEMO_ZONE_NAME}`, dnsTarget: '127.0.0.1', backoffMs: 50 },
    });
    const handle = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      appKey: TEST_WEB_APP_KEY,
      prefix: app.queues.prefix,
      logger: createLogger('silent'),
      queues: ['provisioning'],
      registry: { provisioning: { processor: provisioningRun.process, concurrency: 2 } },
    });
    registerCleanup(() => handle.close());
  });

  it('provision: the record at the fake Cloudflare (ours), the mailbox logs in over IMAP with the password shown once', async () => {
    const ops = await platformAdminToken();
    const a = await makeTenant();
    const base = `/api/platform/tenants/${a.tenant.slug}/provisioning`;
    const r = await app.request('POST', `${base}/subscriber-domain/provision`, {
      token: ops.token,
      body: { confirm_phrase: 'PROVISION SUBSCRIBER DOMAIN', proxied: false },
    });
    expect(r.status, r.text).to.equal(202);
    const until = Date.now() + 30_000;
    let run = await env.knex('provisioning_runs').where({ id: r.body.data.id }).first();
    while (!run.finished_at && Date.now() < until) {
      await new Promise((res) => setTimeout(res, 100));
      run = await env.knex('provisioning_runs').where({ id: r.body.data.id }).first();
    }
    expect(run.status, JSON.stringify(run.steps)).to.equal('succeeded');
    const state = await app.request('GET', base, { token: ops.token });
    expect(state.body.data.domains[0]).to.include({ domain: `${a.tenant.slug}.${DEMO_ZONE_NAME}`, status: 'active' });
    const rec = fakes.records.filter((x) => x.name === `${a.tenant.slug}.${DEMO_ZONE_NAME}`);
    expect(rec.map((x) => [x.type, x.content, x.comment?.startsWith('isp-backoffice')])).to.deep.equal([
      ['A', '127.0.0.1', true],
    ]);
    const mb = state.body.data.mailbox[0];
    expect(mb.address).to.equal(`${a.tenant.slug}@mail.${DEMO_ZONE_NAME}`);
    const stack = await getMailStack();
    const bound = Date.now() + 10_000;
    for (;;) {
      // Dovecot re-reads its passwd-file at most once a second
      const imap = await stack.openImap(mb.address, mb.initial_password).catch(() => null);
      if (imap?.usable) {
        await imap.logout();
        break;
      }
      if (Date.now() > bound) throw new Error('the new mailbox did not log in over IMAP');
      await new Promise((res) => setTimeout(res, 200));
    }
    const preview = await app.request('POST', `${base}/preview`, { token: ops.token, body: { proxied: false } });
    expect(preview.body.data.record).to.include({ action: 'unchanged' });
    expect(preview.body.data.mailbox).to.include({ action: 'unchanged' });
  });
});
