import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { open } from '../../lib/crypto.js';
import { hashToken } from '../../lib/token.js';
import { verifyApiKey } from '../../api/mail/keys/service.js';
import { PANEL_PASSWORD_AAD } from '../../api/mail/domains/service.js';
import { env } from '../helpers/env.js';
import { main } from '../../bin/cli.js';

describe("mail CLI commands (issue 3 §6), through the CLI's main()", function () {
  this.timeout(60_000);
  const appKey = randomBytes(32);
  const domain = `cli-${randomBytes(4).toString('hex')}.test`;

  /** Runs bin/cli.ts's main() in this process, one call at a time (main() binds Objection's Model while it runs). */
  let queue: Promise<unknown> = Promise.resolve();
  async function cli(...args: string[]): Promise<{ code: number; out: any; err: any; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const run = queue.then(() =>
      main(
        args,
        {
          ...process.env,
          DATABASE_URL: env.databaseUrl,
          APP_KEY: appKey.toString('hex'),
          DATA_DIR: path.join(env.dir, 'cli-data'),
          LOG_LEVEL: 'silent',
        },
        { out: (t) => (stdout += t), err: (t) => (stderr += t) },
      ),
    );
    queue = run.catch(() => 0);
    const code = await run;
    const parse = (s: string) => {
      try {
        return JSON.parse(s);
      } catch {
        return null;
      }
    };
    return {
      code,
      out: parse(stdout),
      err: parse(stderr.trim().split('\n').pop() ?? ''),
      stdout,
      stderr,
    };
  }

  it('mail:operator:create prints the operator as JSON, never the password; a taken e-mail fails with field errors', async () => {
    const email = `cli-op-${randomBytes(3).toString('hex')}@example.test`;
    const password = 'cli operator secret 1';
    const r = await cli('mail:operator:create', '--email', email, '--password', password, '--name', 'CLI Op');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.out.command).to.equal('mail:operator:create');
    expect(r.out.operator).to.include({ email, name: 'CLI Op' });
    expect(r.stdout + r.stderr).not.to.include(password);
    const row = await env.knex('mail_operators').where({ id: r.out.operator.id }).first();
    expect(row.password_hash).to.match(/^\$argon2id\$/);
    const dup = await cli('mail:operator:create', '--email', email.toUpperCase(), '--password', password);
    expect(dup.code).to.equal(1);
    expect(dup.err.error.code).to.equal('VALIDATION_FAILED');
    expect(dup.err.error.errors).to.have.property('email');
    expect(dup.stdout + dup.stderr).not.to.include(password);
  });

  it('mail:domain:add stores the panel password sealed under APP_KEY and prints only "set"; bad input fails by field', async () => {
    const secret = `cli-panel-${randomBytes(4).toString('hex')}`;
    const r = await cli(
      'mail:domain:add',
      '--name',
      domain,
      '--imap-host',
      'imap.example.test',
      '--imap-port',
      '993',
      '--imap-security',
      'ssl',
      '--smtp-host',
      'smtp.example.test',
      '--smtp-port',
      '587',
      '--smtp-security',
      'starttls',
      '--panel-type',
      'directadmin',
      '--panel-host',
      'da.example.test',
      '--panel-user',
      'admin',
      '--panel-password',
      secret,
      '--no-panel-ssl',
    );
    expect(r.code, r.stderr).to.equal(0);
    expect(r.out.domain).to.deep.include({ name: domain, imap_port: 993, smtp_port: 587, smtp_security: 'starttls' });
    expect(r.out.domain.panel).to.deep.equal({
      type: 'directadmin',
      host: 'da.example.test',
      port: 2222,
      user: 'admin',
      ssh_key_path: null,
      ssl: false,
      password: 'set',
    });
    expect(r.stdout + r.stderr).not.to.include(secret);
    const row = await env.knex('mail_domains').where({ name: domain }).first();
    expect(row.panel_password_enc).not.to.include(secret);
    expect(open(appKey, row.panel_password_enc, PANEL_PASSWORD_AAD)).to.equal(secret);
    const bad = await cli(
      'mail:domain:add',
      '--name',
      `x-${domain}`,
      '--imap-host',
      'i.test',
      '--imap-security',
      'tls',
      '--smtp-host',
      's.test',
    );
    expect(bad.code).to.equal(1);
    expect(bad.err.error.errors).to.have.property('imap_security');
    const missing = await cli('mail:domain:add', '--name', `y-${domain}`, '--smtp-host', 's.test');
    expect(missing.code).to.equal(2);
    expect(missing.err.error.message).to.include('--imap-host');
  });

  it('mail:mailbox:add registers a mailbox of an existing domain only', async () => {
    for (const lp of ['info', 'Sales']) {
      const r = await cli('mail:mailbox:add', '--email', `${lp}@${domain.toUpperCase()}`);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.out.mailbox).to.include({ email: `${lp.toLowerCase()}@${domain}`, domain });
    }
    const r = await cli('mail:mailbox:add', '--email', 'info@no-such-domain.test');
    expect(r.code).to.equal(1);
    expect(r.err.error.errors.email[0]).to.equal('The domain no-such-domain.test is not registered.');
  });

  it('mail:key:create prints the key once (hash only in the database); mail:key:revoke makes it fail verification', async () => {
    const r = await cli(
      'mail:key:create',
      '--name',
      'CLI key',
      '--scopes',
      'emails:read,emails:reply',
      '--mailboxes',
      `info@${domain},sales@${domain}`,
    );
    expect(r.code, r.stderr).to.equal(0);
    const key: string = r.out.key;
    expect(key).to.match(/^mbxk_\d+_[0-9a-f]{72}$/);
    expect(r.out.data).to.deep.include({
      name: 'CLI key',
      scopes: ['emails:read', 'emails:reply'],
      domain,
      mailboxes: [`info@${domain}`, `sales@${domain}`],
    });
    const row = await env.knex('mail_api_keys').where({ id: r.out.data.id }).first();
    expect(Buffer.compare(row.token_hash, hashToken(key))).to.equal(0);
    expect((await verifyApiKey(env.knex, key))!.mailboxes.sort()).to.deep.equal([`info@${domain}`, `sales@${domain}`]);
    const list = await cli('mail:key:list');
    expect(list.code).to.equal(0);
    expect(list.stdout).not.to.include(key);
    expect(list.out.data.find((k: { id: number }) => k.id === r.out.data.id)).to.include({
      prefix: `mbxk_${r.out.data.id}_`,
    });

    const revoke = await cli('mail:key:revoke', '--id', String(r.out.data.id));
    expect(revoke.code, revoke.stderr).to.equal(0);
    expect(revoke.out).to.include({ revoked: true, already_revoked: false });
    expect(revoke.out.data.revoked_at).to.be.a('string');
    expect(await verifyApiKey(env.knex, key)).to.equal(null);
    const again = await cli('mail:key:revoke', '--id', String(r.out.data.id));
    expect(again.out).to.include({ revoked: false, already_revoked: true });
    const unknown = await cli('mail:key:revoke', '--id', '987654321');
    expect(unknown.code).to.equal(1);
    expect(unknown.err.error.code).to.equal('NOT_FOUND');
  });

  it('mail:key:create refuses unknown scopes and mailboxes, a foreign domain and a missing name, creating nothing', async () => {
    const before = Number((await env.knex('mail_api_keys').count({ n: '*' }).first())!.n);
    const scope = await cli(
      'mail:key:create',
      '--name',
      'k',
      '--scopes',
      'emails:read,admin',
      '--mailboxes',
      `info@${domain}`,
    );
    expect(scope.code).to.equal(1);
    expect(scope.err.error.errors).to.have.property('scopes');
    const box = await cli(
      'mail:key:create',
      '--name',
      'k',
      '--scopes',
      'emails:read',
      '--mailboxes',
      `nobody@${domain}`,
    );
    expect(box.code).to.equal(1);
    expect(box.err.error.errors.mailboxes[0]).to.include(`nobody@${domain}`);
    const other = await cli(
      'mail:key:create',
      '--name',
      'k',
      '--permission',
      'read',
      '--mailboxes',
      `info@${domain}`,
      '--domain',
      'no-such-domain.test',
    );
    expect(other.code).to.equal(1);
    expect(other.err.error.errors).to.have.property('domain');
    const noName = await cli('mail:key:create', '--scopes', 'emails:read', '--mailboxes', `info@${domain}`);
    expect(noName.code).to.equal(2);
    expect(noName.err.error.code).to.equal('USAGE');
    expect(Number((await env.knex('mail_api_keys').count({ n: '*' }).first())!.n)).to.equal(before);
  });
});
