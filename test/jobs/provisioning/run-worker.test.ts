import { expect } from 'chai';
import { Writable } from 'node:stream';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant } from '../../helpers/fixtures.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { createLogger } from '../../../lib/logger.js';
import { startWorkers } from '../../../workers/main.js';
import * as provisioningRun from '../../../jobs/provisioning-run.js';
import { dumpStores } from '../../api/mail/support.js';
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
