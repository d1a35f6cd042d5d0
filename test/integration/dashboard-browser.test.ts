import { expect } from 'chai';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createMailApp } from '../../api/mail/app.js';
import { createOperator } from '../../api/mail/operators/service.js';
import { addDomain, type DomainView } from '../../api/mail/domains/service.js';
import { addMailbox, type MailboxView } from '../../api/mail/domains/mailboxes.js';
import { createMailboxClient } from '../../jobs/adapters/mailbox-client/index.js';
import { createQueues } from '../../jobs/queues.js';
import { ensureDebianPackage } from '../../lib/infra/apt.js';
import { createLogger } from '../../lib/logger.js';
import { env, registerCleanup } from '../helpers/env.js';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];
export const SHOT_KEY_CREATED = '/tmp/dashboard-key-created.png';
export const SHOT_KEYS_LIST = '/tmp/dashboard-keys-list.png';
export const SHOT_KEY_FORM = '/tmp/dashboard-key-form.png';

/**
 * The operator dashboard driven in real headless Chromium (Debian's chromium through
 * playwright-core) against the real Mailbox API app (issue 3 "Tests"): sign in, create a key, see
 * it once, use it against the API, revoke it in the browser, see 401.
 */
describe('mail dashboard in headless Chromium (issue 3 §5, end to end)', function () {
  this.timeout(120_000);
  let base: string;
  let context: BrowserContext;
  let page: Page;
  let domain: DomainView;
  let boxes: MailboxView[];
  const operator = {
    email: `browser-op-${randomBytes(3).toString('hex')}@example.test`,
    password: 'browser operator pw 1',
  };
  const logs: string[] = [];

  before(async function () {
    // Debian's chromium: present after .ci/run; installed here with apt-get when missing (root), which may take minutes
    this.timeout(600_000);
    const executablePath = await ensureDebianPackage('chromium', ['chromium'], (l) => console.log(l));
    const server = http.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const sink = new Writable({
      write(chunk, _enc, cb) {
        logs.push(chunk.toString());
        cb();
      },
    });
    const queues = createQueues(env.redisUrl, { prefix: `{browser-${randomBytes(3).toString('hex')}}` });
    const mailClient = createMailboxClient();
    const { app, close } = createMailApp({
      knex: env.knex,
      redis: env.redis,
      logger: createLogger('info', sink),
      queues,
      mailClient,
      config: {
        mailBaseUrl: base,
        appKey: randomBytes(32),
        rateLimit: { points: 100000, durationSeconds: 60 },
        rateLimitPrefix: `rl:browser:${randomBytes(3).toString('hex')}`,
      },
    });
    server.on('request', app.callback());
    registerCleanup(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await close();
      await queues.close();
      await mailClient.close();
    });

    await createOperator(env.knex, { email: operator.email, password: operator.password, name: 'Browser Operator' });
    domain = await addDomain(env.knex, randomBytes(32), {
      name: `browser-${randomBytes(3).toString('hex')}.test`,
      imap_host: '127.0.0.1',
      smtp_host: '127.0.0.1',
    });
    boxes = [
      await addMailbox(env.knex, { email: `support@${domain.name}`, display_name: 'Support' }),
      await addMailbox(env.knex, { email: `billing@${domain.name}` }),
    ];

    const userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'dash-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 860 },
    });
    registerCleanup(async () => {
      await context.close().catch(() => undefined);
      await fs.rm(userDataDir, { recursive: true, force: true });
    });
    page = context.pages()[0] ?? (await context.newPage());
  });

  after(async () => {
    await context?.close().catch(() => undefined);
  });

  const api = (key: string) =>
    fetch(`${base}/api/v1/mailboxes`, { headers: { authorization: `Bearer ${key}`, accept: 'application/json' } });

  it('signs in, creates a key shown once, uses it against the API, revokes it and sees 401', async () => {
    // not signed in: the dashboard sends the browser to the sign-in page
    await page.goto(`${base}/dashboard/keys`);
    expect(new URL(page.url()).pathname).to.equal('/login');
    await page.fill('#email', operator.email);
    await page.fill('#password', operator.password);
    await Promise.all([page.waitForURL(`${base}/dashboard`), page.click('button[type=submit]:has-text("Sign in")')]);
    expect(await page.textContent('h1')).to.equal('Overview');
    const session = (await context.cookies(base)).find((c) => c.name === 'mbx_session')!;
    expect(session).to.include({ httpOnly: true, sameSite: 'Strict', secure: false });

    // two steps: the domain, then its mailboxes and a permission set
    await page.click('a:has-text("API keys")');
    await page.click('a.btn:has-text("Create an API key")');
    await page.selectOption('#domain_id', String(domain.id));
    await Promise.all([page.waitForURL(/domain_id=/), page.click('button:has-text("Next")')]);
    expect(await page.textContent('h1')).to.equal(`Create an API key for ${domain.name}`);
    await page.fill('#name', 'Browser CMS');
    await page.check(`input[name=mailbox_ids][value="${boxes[0].id}"]`);
    await page.check('input[name=permission][value=reply]');
    await page.screenshot({ path: SHOT_KEY_FORM, fullPage: true });
    const [created] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${base}/dashboard/keys` && r.request().method() === 'POST'),
      page.click('button:has-text("Create key")'),
    ]);
    expect(created.status()).to.equal(201);
    expect(created.headers()['cache-control']).to.equal('no-store');
    await page.waitForSelector('#api-key');
    const key = (await page.textContent('#api-key'))!.trim();
    expect(key).to.match(/^mbxk_\d+_[0-9a-f]{72}$/);
    expect(await page.textContent('.alert.warn')).to.include('Copy it now, it will not be shown again.');
    await page.screenshot({ path: SHOT_KEY_CREATED, fullPage: true });

    // the key works against the Mailbox API and sees only the chosen mailbox
    const ok = await api(key);
    expect(ok.status).to.equal(200);
    const body = (await ok.json()) as { data: { email: string; imap_host: string; smtp_host: string }[] };
    expect(body.data.map((m) => m.email)).to.deep.equal([boxes[0].email]);
    expect(body.data[0]).to.include({ imap_host: '127.0.0.1', smtp_host: '127.0.0.1' });

    // the list shows it (prefix, scopes, mailbox, last use) but never the key again
    await page.click('a:has-text("Done: back to the keys")');
    await page.waitForURL(`${base}/dashboard/keys`);
    const id = Number(key.split('_')[1]);
    const row = page.locator(`tr[data-key-id="${id}"]`);
    const rowText = (await row.textContent())!;
    expect(rowText)
      .to.include('Browser CMS')
      .and.include(`mbxk_${id}_`)
      .and.include('emails:reply')
      .and.include(boxes[0].email)
      .and.include('active');
    expect(rowText).not.to.include('never'); // last use was written by the API call
    expect(await page.content()).not.to.include(key);
    await page.screenshot({ path: SHOT_KEYS_LIST, fullPage: true });

    // revoke with confirmation, in the browser
    await row.locator('a:has-text("Revoke")').click();
    await page.waitForURL(`${base}/dashboard/keys/${id}/revoke`);
    await page.check('input[name=confirm]');
    await Promise.all([page.waitForURL(/notice=key-revoked/), page.click('button:has-text("Revoke key")')]);
    expect(await page.textContent('.alert.ok')).to.include('The API key was revoked.');
    expect(await page.locator(`tr[data-key-id="${id}"] .revoked`).count()).to.equal(1);

    const refused = await api(key);
    expect(refused.status).to.equal(401);
    expect(await refused.json()).to.include({ ok: false, error: 'unauthorized' });
    expect(logs.join('')).not.to.include(key);
  });
});
