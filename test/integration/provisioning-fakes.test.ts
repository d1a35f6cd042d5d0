import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { env, registerCleanup } from '../helpers/env.js';
import { getMailStack } from '../helpers/mail.js';
import {
  demoProvisioningTarget,
  DEMO_ZONE_NAME,
  startProvisioningFakes,
  type ProvisioningFakes,
} from '../../bin/dev-provisioning.js';
import { seedDemoProvisioning } from '../../db/seeds/demo-provisioning.js';
import { createCloudflareDns } from '../../jobs/adapters/dns/cloudflare.js';
import { createMailPanel, PanelError } from '../../jobs/adapters/mail-panel/index.js';
import { openCredentials, readProvisioningRows } from '../../jobs/provisioning/credentials.js';
import { runProvisioningCheck } from '../../jobs/provisioning-check.js';
import { getCredentials } from '../../api/platform/credentials-service.js';

/**
 * Issue 13 item 10: the fakes of `npm start` speak what the real adapters send: Cloudflare v4
 * (token verify, zone, records) and cPanel UAPI (add_pop into the demo Dovecot: the new mailbox
 * logs in over IMAP); the seed saves them untested, `fake: true`, and the checks pass against them.
 */
describe('provisioning demo fakes (Cloudflare v4, cPanel UAPI) and their seed', function () {
  this.timeout(60_000);
  const key = randomBytes(32);
  let fakes: ProvisioningFakes;

  before(async () => {
    const stack = await getMailStack();
    const stateDir = path.join(env.dir, `prov-demo-${randomBytes(3).toString('hex')}`);
    fakes = await startProvisioningFakes({
      cloudflarePort: 0,
      cpanelPort: 0,
      stateDir,
      dovecotUsers: stack.dovecot.usersFile,
    });
    registerCleanup(() => fakes.close());
    await env.knex('provisioning_credentials').del();
    await env.knex('provisioning_settings').del();
  });

  it('seeds untested fake credentials once; the checks pass against the fakes', async () => {
    const port = Number(new URL(fakes.cloudflareUrl).port);
    const target = { ...demoProvisioningTarget(port), cpanelPort: fakes.cpanelPort };
    expect(await seedDemoProvisioning(env.knex, key, target, new Date())).to.deep.equal(['cloudflare', 'mail_panel']);
    expect(await seedDemoProvisioning(env.knex, key, target, new Date())).to.deep.equal([]);
    const shown = await getCredentials(env.knex);
    expect(shown.cloudflare).to.deep.include({ fake: true, last_test: null, api_token_set: true });
    expect(shown.cloudflare).to.not.have.property('base_url');
    expect(shown.mail_panel).to.deep.include({ fake: true, type: 'cpanel', host: '127.0.0.1', ssl: false });
    const cf = await runProvisioningCheck(env.knex, key, 'cloudflare', () => new Date());
    expect(cf).to.deep.include({ ok: true, message: `The token is active; the zone ${DEMO_ZONE_NAME} is active.` });
    const mp = await runProvisioningCheck(env.knex, key, 'mail_panel', () => new Date());
    expect(mp.ok, mp.message).to.equal(true);
  });

  it('the Cloudflare fake creates, lists, refuses duplicates and deletes records, kept on disk', async () => {
    const creds = openCredentials(await readProvisioningRows(env.knex), key).cloudflare!;
    const dns = createCloudflareDns(creds);
    const name = `isp-${randomBytes(3).toString('hex')}.${DEMO_ZONE_NAME}`;
    const rec = await dns.createRecord({ type: 'A', name, content: '203.0.113.7', proxied: true, comment: 'ours' });
    expect(rec).to.deep.include({ type: 'A', name, content: '203.0.113.7', proxied: true, comment: 'ours' });
    expect((await dns.listRecords({ name, type: 'A' })).map((r) => r.id)).to.deep.equal([rec.id]);
    const dup = await dns
      .createRecord({ type: 'A', name, content: '203.0.113.7', proxied: true })
      .catch((e: unknown) => e);
    expect(dup).to.have.property('kind', 'permanent');
    const outside = await dns
      .createRecord({ type: 'A', name: 'x.example.org', content: '1.2.3.4', proxied: false })
      .catch((e: unknown) => e);
    expect(outside).to.have.property('kind', 'permanent');
    expect(fakes.records.some((r) => r.id === rec.id)).to.equal(true);
    await dns.deleteRecord(rec.id);
    await dns.deleteRecord(rec.id);
    expect(await dns.listRecords({ name })).to.deep.equal([]);
    const bad = createCloudflareDns({ ...creds, apiToken: 'wrong' });
    expect(await bad.verifyToken().catch((e: unknown) => e)).to.have.property('status', 401);
  });

  it('the cPanel fake adds a mailbox to the demo Dovecot (IMAP login works); a second add is `exists`', async () => {
    const stack = await getMailStack();
    const cfg = openCredentials(await readProvisioningRows(env.knex), key).mailPanel!;
    const panel = createMailPanel(cfg);
    const local = `prov${randomBytes(3).toString('hex')}`;
    const password = `Pw-${randomBytes(8).toString('hex')}`;
    await panel.createMailbox({ domain: 'mail.test', local_part: local, password, quota: '1024M' });
    expect(await panel.mailboxExists('mail.test', local)).to.equal(true);
    const again = await panel
      .createMailbox({ domain: 'mail.test', local_part: local, password, quota: null })
      .catch((e: unknown) => e);
    expect(again).to.be.instanceOf(PanelError).and.have.property('kind', 'exists');
    expect(fs.readFileSync(stack.dovecot.usersFile, 'utf8')).to.include(`${local}@mail.test:`);
    await new Promise((r) => setTimeout(r, 1100)); // Dovecot re-reads the passwd-file at most once a second
    const imap = await stack.openImap(`${local}@mail.test`, password);
    expect(imap.usable).to.equal(true);
    await imap.logout();
  });
});
