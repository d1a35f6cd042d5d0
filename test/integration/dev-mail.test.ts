import { expect } from 'chai';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  startMailDemo,
  dovecotDirFor,
  DEMO_MAIL_DOMAIN,
  DEMO_OPERATOR_EMAIL,
  DEMO_KEY_NAME,
  type MailDemo,
} from '../../bin/dev-mail.js';
import { isRoot, removeSystemState, stateKey, stateRoot } from '../../lib/infra/system-dirs.js';
import { verifyApiKey } from '../../api/mail/keys/service.js';
import { verifyPassword } from '../../api/auth/service.js';
import { DEMO_PASSWORD } from '../../db/seeds/demo.js';
import { createMailboxClient, type MailboxCredentials } from '../../jobs/adapters/mailbox-client/index.js';
import { env, registerCleanup } from '../helpers/env.js';

/** Reads the demo key and the mailbox logins back from the banner lines. */
function parseBanner(banner: string[]) {
  const text = banner.join('\n');
  const key = text.match(/demo API key\s+(mbxk_\S+)/)?.[1] ?? null;
  const passwords = Object.fromEntries(
    [...text.matchAll(/mailbox\s+(\S+@\S+)\s+password (\S+)/g)].map((m) => [m[1], m[2]]),
  );
  const ports = text.match(/IMAP 127\.0\.0\.1:(\d+), SMTP 127\.0\.0\.1:(\d+)/);
  return { key, passwords, imapPort: Number(ports?.[1]), smtpPort: Number(ports?.[2]) };
}

describe('bin/dev-mail.ts startMailDemo (the demo mail server of npm start)', function () {
  this.timeout(60_000);
  let dataDir: string;
  let demo: MailDemo | null = null;
  const lines: string[] = [];
  const client = createMailboxClient({ idleMs: 0 });

  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-devmail-'));
    registerCleanup(() => fs.rm(dataDir, { recursive: true, force: true }));
    // runs first (cleanups run in reverse): it finds the state directory through dataDir
    registerCleanup(() => removeSystemState(dataDir));
  });
  after(async () => {
    await client.close();
    if (demo) await demo.stop();
    // leave the shared test database as other suites expect it
    await env.knex('mail_domains').where({ name: DEMO_MAIL_DOMAIN }).del();
    await env.knex('mail_operators').whereRaw('lower(email) = ?', [DEMO_OPERATOR_EMAIL]).del();
  });

  const start = () =>
    startMailDemo({
      dataDir,
      env: { DATABASE_URL: env.databaseUrl, MAIL_BASE_URL: 'http://127.0.0.1:3901' },
      log: (l) => lines.push(l),
    });
  const creds = (email: string, password: string, b: ReturnType<typeof parseBanner>): MailboxCredentials => ({
    email,
    password,
    imap: { host: '127.0.0.1', port: b.imapPort, security: 'none' },
    smtp: { host: '127.0.0.1', port: b.smtpPort, security: 'none' },
  });

  it('starts Dovecot + relay, registers the demo domain, mailboxes, operator and a working full-scope key', async () => {
    demo = await start();
    const b = parseBanner(demo.banner);
    expect(b.key).to.match(/^mbxk_/);

    const domain = await env.knex('mail_domains').where({ name: DEMO_MAIL_DOMAIN }).first();
    expect(domain).to.include({
      imap_host: '127.0.0.1',
      imap_port: b.imapPort,
      imap_security: 'none',
      smtp_host: '127.0.0.1',
      smtp_port: b.smtpPort,
      smtp_security: 'none',
      panel_type: null,
    });
    const boxes = await env.knex('mail_mailboxes').where({ domain_id: domain.id }).orderBy('email').pluck('email');
    expect(boxes).to.deep.equal([`info@${DEMO_MAIL_DOMAIN}`, `support@${DEMO_MAIL_DOMAIN}`]);
    expect(Object.keys(b.passwords).sort()).to.deep.equal(boxes);

    const op = await env.knex('mail_operators').whereRaw('lower(email) = ?', [DEMO_OPERATOR_EMAIL]).first();
    expect(op.password_hash).to.match(/^\$argon2id\$/);
    expect(await verifyPassword(op.password_hash, DEMO_PASSWORD)).to.equal(true);
    expect(demo.banner.join('\n')).to.contain(`${DEMO_OPERATOR_EMAIL} / ${DEMO_PASSWORD}`);

    const info = await verifyApiKey(env.knex, b.key);
    expect(info?.name).to.equal(DEMO_KEY_NAME);
    expect(info?.scopes).to.deep.equal(['emails:read', 'emails:reply', 'emails:send', 'mailboxes:create']);
    expect([...(info?.mailboxes ?? [])].sort()).to.deep.equal(boxes);

    // the printed mailbox passwords log in to the demo Dovecot, which holds the demo e-mails
    const infoList = await client.listEmails(creds(boxes[0], b.passwords[boxes[0]], b), { limit: 20, unseen: false });
    expect(infoList.map((m) => m.subject)).to.deep.equal([
      'Maintenance window on Sunday',
      'Invoice INV-2026-0042',
      'Question about fibre plans',
    ]);
    const supportList = await client.listEmails(creds(boxes[1], b.passwords[boxes[1]], b), {
      limit: 20,
      unseen: false,
    });
    expect(supportList.map((m) => m.subject)).to.deep.equal([
      'Re: Internet down since this morning',
      'Internet down since this morning',
    ]);
  });

  it('the demo relay sends from a demo mailbox to the other one', async () => {
    const b = parseBanner(demo!.banner);
    const [infoAddr, supportAddr] = [`info@${DEMO_MAIL_DOMAIN}`, `support@${DEMO_MAIL_DOMAIN}`];
    const res = await client.send(creds(infoAddr, b.passwords[infoAddr], b), {
      to: supportAddr,
      subject: 'internal note',
      body: 'hi',
    });
    const list = await client.listEmails(creds(supportAddr, b.passwords[supportAddr], b), { limit: 1, unseen: false });
    expect(list[0]).to.include({ subject: 'internal note', message_id: res.message_id });
  });

  it('a restart reuses ports, users and e-mails without duplicates and replaces the demo key', async () => {
    const first = parseBanner(demo!.banner);
    await demo!.stop();
    demo = null;
    demo = await start();
    const second = parseBanner(demo.banner);
    expect([second.imapPort, second.smtpPort]).to.deep.equal([first.imapPort, first.smtpPort]);
    expect(second.passwords).to.deep.equal(first.passwords);

    const count = async (q: ReturnType<typeof env.knex>) => Number((await q.count({ n: '*' }).first())?.n);
    expect(await count(env.knex('mail_domains').where({ name: DEMO_MAIL_DOMAIN }))).to.equal(1);
    expect(await count(env.knex('mail_mailboxes').where('email', 'like', `%@${DEMO_MAIL_DOMAIN}`))).to.equal(2);
    expect(await count(env.knex('mail_operators').whereRaw('lower(email) = ?', [DEMO_OPERATOR_EMAIL]))).to.equal(1);

    const infoAddr = `info@${DEMO_MAIL_DOMAIN}`;
    const list = await client.listEmails(creds(infoAddr, second.passwords[infoAddr], second), {
      limit: 20,
      unseen: false,
    });
    expect(list.length).to.equal(3);

    expect(second.key).to.not.equal(first.key);
    expect(await verifyApiKey(env.knex, first.key)).to.equal(null);
    expect((await verifyApiKey(env.knex, second.key))?.name).to.equal(DEMO_KEY_NAME);
    expect(await count(env.knex('mail_api_keys').where({ name: DEMO_KEY_NAME }).whereNull('revoked_at'))).to.equal(1);
  });

  it('Dovecot lives where its users reach it (as root: outside the 0700 data dir, whose mode stays)', async () => {
    const real = await fs.realpath(dataDir);
    const expected = isRoot()
      ? path.join(stateRoot(), stateKey(real), 'dovecot')
      : path.resolve(dataDir, 'mail', 'dovecot');
    expect(await dovecotDirFor(dataDir)).to.equal(expected);
    expect((await fs.stat(path.join(expected, 'users'))).isFile()).to.equal(true);
    expect((await fs.stat(dataDir)).mode & 0o777).to.equal(0o700);
  });
});
