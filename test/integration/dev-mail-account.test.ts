import { expect } from 'chai';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startMailDemo, DEMO_MAIL_DOMAIN, DEMO_OPERATOR_EMAIL, type MailDemo } from '../../bin/dev-mail.js';
import { DEMO_ACCOUNT_EMAIL } from '../../bin/dev-mail-account.js';
import { removeSystemState } from '../../lib/infra/system-dirs.js';
import { openEmailPassword } from '../../db/credentials.js';
import { seedDemoCommunications } from '../../db/seeds/demo-communications.js';
import { createMailboxClient } from '../../jobs/adapters/mailbox-client/index.js';
import { configureJobDeps } from '../../jobs/deps.js';
import * as imapSync from '../../jobs/imap-sync.js';
import { ManualClock } from '../../lib/clock.js';
import { Pop3Session } from '../../jobs/email/pop3-client.js';
import { fakeJob } from '../jobs/fake-job.js';
import { makeTenant } from '../helpers/fixtures.js';
import { env, registerCleanup } from '../helpers/env.js';

/** The cs@ line of the banner: its password. */
const accountPassword = (banner: string[]) =>
  banner.join('\n').match(new RegExp(`e-mail account\\s+${DEMO_ACCOUNT_EMAIL}\\s+password (\\S+)`))?.[1] ?? null;

/** Issue 9 "Done when": npm start's demo e-mail account (cs@demo.mail.test) of demo-isp. */
describe("bin/dev-mail.ts: the demo tenant's e-mail account on cs@demo.mail.test", function () {
  this.timeout(90_000);
  let dataDir: string;
  let demo: MailDemo | null = null;
  const appKey = crypto.randomBytes(32);
  const lines: string[] = [];
  const client = createMailboxClient({ idleMs: 0 });
  let tenant: Awaited<ReturnType<typeof makeTenant>>;

  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-devmail-acct-'));
    registerCleanup(() => fs.rm(dataDir, { recursive: true, force: true }));
    registerCleanup(() => removeSystemState(dataDir));
    // stands for demo-isp: a tenant with customers that have e-mail addresses, and the seed's demo inbox
    tenant = await makeTenant();
    for (let i = 1; i <= 4; i++)
      await env.knex('customers').insert({
        tenant_id: tenant.tenant.id,
        code: `DM-${tenant.tenant.id}-${i}`,
        name: `Demo Customer ${i}`,
        phone: `08120000${i}`,
        address: 'Jl. Demo',
        email: `demo.customer${i}.${tenant.tenant.id}@example.test`,
        status: 'active',
      });
    await seedDemoCommunications(tenant.scope, { now: new ManualClock().now() });
  });
  after(async () => {
    await client.close();
    if (demo) await demo.stop();
    await env.knex('mail_domains').where({ name: DEMO_MAIL_DOMAIN }).del();
    await env.knex('mail_operators').whereRaw('lower(email) = ?', [DEMO_OPERATOR_EMAIL]).del();
  });

  const start = () =>
    startMailDemo({
      dataDir,
      env: { DATABASE_URL: env.databaseUrl, APP_KEY: appKey.toString('hex') },
      log: (l) => lines.push(l),
      accountTenant: tenant.tenant.slug,
    });
  const account = () => env.knex('external_email_accounts').where({ tenant_id: tenant.tenant.id }).first();
  const imapPortOf = (banner: string[]) => Number(banner.join('\n').match(/IMAP 127\.0\.0\.1:(\d+)/)?.[1]);

  it("saves the tenant's account on the demo Dovecot (password sealed with APP_KEY); cs@ holds the customers' e-mails", async () => {
    demo = await start();
    const password = accountPassword(demo.banner);
    expect(password).to.match(/^demo-[0-9a-f]{12}$/);
    const a = await account();
    expect(a).to.include({
      email: DEMO_ACCOUNT_EMAIL,
      incoming_protocol: 'imap',
      incoming_host: '127.0.0.1',
      incoming_port: imapPortOf(demo.banner),
      incoming_encryption: 'none',
      incoming_username: DEMO_ACCOUNT_EMAIL,
      sync_status: 'never',
    });
    expect(a.incoming_password_enc).to.not.contain(password);
    expect(openEmailPassword(appKey, 'incoming', tenant.tenant.id, a.incoming_password_enc)).to.equal(password);

    const creds = {
      email: DEMO_ACCOUNT_EMAIL,
      password: password!,
      imap: { host: '127.0.0.1', port: a.incoming_port, security: 'none' as const },
      smtp: { host: '127.0.0.1', port: a.outgoing_port, security: 'none' as const },
    };
    const list = await client.listEmails(creds, { limit: 20, unseen: false });
    expect(list.map((m) => m.from).sort()).to.deep.equal(
      [1, 2, 3].map((i) => `Demo Customer ${i} <demo.customer${i}.${tenant.tenant.id}@example.test>`).sort(),
    );
    expect(list.map((m) => m.subject)).to.deep.equal([
      'Upgrade paket',
      'Pertanyaan tagihan bulan ini',
      'Internet mati sejak pagi',
    ]);
    // the demo Dovecot serves POP3 on the port the banner prints
    const pop3Port = Number(demo.banner.join('\n').match(/POP3 127\.0\.0\.1:(\d+)/)?.[1]);
    const pop = await Pop3Session.open(
      { host: '127.0.0.1', port: pop3Port, security: 'none' },
      DEMO_ACCOUNT_EMAIL,
      password!,
      {
        timeoutMs: 5000,
      },
    );
    try {
      expect(await pop.count()).to.equal(3);
    } finally {
      await pop.quit();
    }
  });

  it('a sync of the account finds the seeded inbox rows (same Message-IDs): nothing twice', async () => {
    configureJobDeps({ knex: env.knex, appKey, clock: new ManualClock() });
    const a = await account();
    const fj = fakeJob({ tenant_id: tenant.tenant.id, account_id: a.id, mode: 'sync' as const });
    const result = await imapSync.process(fj.job);
    expect(result).to.include({ kind: 'sync', fetched: 3, imported: 0, skipped: 3 });
    const rows = await env.knex('communication_messages').where({ tenant_id: tenant.tenant.id });
    expect(rows).to.have.length(3);
    expect(rows.every((r) => r.customer_id !== null)).to.equal(true);
  });

  it('a restart (existing data) delivers nothing twice and keeps the account; a lost account is saved again', async () => {
    const before = await account();
    await demo!.stop();
    demo = null;
    demo = await start();
    const after = await account();
    expect(after.updated_at.toISOString()).to.equal(before.updated_at.toISOString());
    const creds = {
      email: DEMO_ACCOUNT_EMAIL,
      password: accountPassword(demo.banner)!,
      imap: { host: '127.0.0.1', port: after.incoming_port, security: 'none' as const },
      smtp: { host: '127.0.0.1', port: after.outgoing_port, security: 'none' as const },
    };
    expect(await client.listEmails(creds, { limit: 20, unseen: false })).to.have.length(3);

    await env.knex('external_email_accounts').where({ id: after.id }).del();
    await demo.stop();
    demo = null;
    demo = await start();
    const again = await account();
    expect(again).to.include({ email: DEMO_ACCOUNT_EMAIL, incoming_port: after.incoming_port });
    expect(await client.listEmails(creds, { limit: 20, unseen: false })).to.have.length(3);
  });

  it('a tenant that saved another mailbox keeps it', async () => {
    await env.knex('external_email_accounts').where({ tenant_id: tenant.tenant.id }).update({ email: 'own@isp.test' });
    await demo!.stop();
    demo = null;
    demo = await start();
    expect((await account()).email).to.equal('own@isp.test');
  });
});
