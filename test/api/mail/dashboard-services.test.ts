import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { ValidationFailed } from '../../../api/errors.js';
import {
  createOperator,
  loginOperator,
  verifyOperatorSession,
  revokeOperatorSession,
} from '../../../api/mail/operators/service.js';
import { addDomain, domainPanelConfig, getDomain, updateDomain } from '../../../api/mail/domains/service.js';
import { addMailbox, listMailboxes } from '../../../api/mail/domains/mailboxes.js';
import { env } from '../../helpers/env.js';
import { domainName } from './dashboard-client.js';

async function fieldsOf(p: Promise<unknown>): Promise<Record<string, string[]>> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ValidationFailed) return e.errors ?? {};
    throw e;
  }
  throw new Error('expected a ValidationFailed');
}

describe('mail dashboard services: operators and domains (issue 3 §5, §6)', () => {
  const key = randomBytes(32);

  describe('operators', () => {
    it('creates an operator with an argon2id hash and refuses bad or duplicate input by field', async () => {
      const email = `Op-${randomBytes(4).toString('hex')}@Example.test`;
      const op = await createOperator(env.knex, { email, password: 'long enough pw' });
      expect(op).to.include({ email, name: email.split('@')[0] });
      const row = await env.knex('mail_operators').where({ id: op.id }).first();
      expect(row.password_hash).to.match(/^\$argon2id\$/);
      expect(
        await fieldsOf(createOperator(env.knex, { email: email.toLowerCase(), password: 'long enough pw' })),
      ).to.have.property('email');
      expect(
        await fieldsOf(createOperator(env.knex, { email: 'not-an-email', password: 'long enough pw' })),
      ).to.have.property('email');
      expect(await fieldsOf(createOperator(env.knex, { email: 'x@example.test', password: 'short' }))).to.deep.equal({
        password: ['The password field must be at least 10 characters.'],
      });
    });

    it('opens a session only for the right password; expired and revoked sessions do not verify', async () => {
      const email = `op-${randomBytes(4).toString('hex')}@example.test`;
      await createOperator(env.knex, { email, password: 'long enough pw' });
      expect(await loginOperator(env.knex, { email, password: 'wrong password' })).to.equal(null);
      const s = (await loginOperator(env.knex, { email, password: 'long enough pw' }))!;
      const v = (await verifyOperatorSession(env.knex, s.token))!;
      expect(v.operator.email).to.equal(email);
      expect(
        await verifyOperatorSession(env.knex, s.token.slice(0, -1) + (s.token.endsWith('0') ? '1' : '0')),
      ).to.equal(null);
      const s2 = (await loginOperator(env.knex, { email, password: 'long enough pw' }))!;
      await env
        .knex('mail_operator_sessions')
        .where({ id: Number(s2.token.split('_')[1]) })
        .update({ expires_at: new Date(Date.now() - 3600_000) });
      expect(await verifyOperatorSession(env.knex, s2.token)).to.equal(null);
      await revokeOperatorSession(env.knex, v.sessionId);
      expect(await verifyOperatorSession(env.knex, s.token)).to.equal(null);
    });
  });

  describe('domains', () => {
    it('defaults ports from the security, lowercases names and hosts, and hides the panel password', async () => {
      const name = domainName();
      const d = await addDomain(env.knex, key, {
        name: ` ${name.toUpperCase()}. `,
        imap_host: 'IMAP.Example.test',
        imap_security: 'starttls',
        smtp_host: '192.0.2.10',
        smtp_security: 'none',
        panel_type: 'hestia',
        panel_host: 'hestia.example.test',
        panel_user: 'admin',
        panel_ssh_key_path: '/etc/keys/hestia',
      });
      expect(d).to.deep.include({
        name,
        imap_host: 'imap.example.test',
        imap_port: 143,
        imap_security: 'starttls',
        smtp_host: '192.0.2.10',
        smtp_port: 25,
        smtp_security: 'none',
        mailbox_count: 0,
      });
      expect(d.panel).to.deep.equal({
        type: 'hestia',
        host: 'hestia.example.test',
        port: 22,
        user: 'admin',
        ssh_key_path: '/etc/keys/hestia',
        ssl: true,
        password: 'not set',
      });
      expect(await domainPanelConfig(env.knex, key, d.id)).to.deep.equal({
        type: 'hestia',
        host: 'hestia.example.test',
        port: 22,
        user: 'admin',
        ssh_key_path: '/etc/keys/hestia',
        ssl: true,
      });
      expect(
        await fieldsOf(addDomain(env.knex, key, { name, imap_host: 'a.test', smtp_host: 'b.test' })),
      ).to.deep.equal({ name: ['This domain is already registered.'] });
    });

    it('seals the panel password, opens it for the panel config, clears it on request and removes the panel when the type is emptied', async () => {
      const d = await addDomain(env.knex, key, {
        name: domainName(),
        imap_host: 'i.test',
        smtp_host: 's.test',
        panel_type: 'cpanel',
        panel_host: 'cp.test',
        panel_user: 'u',
        panel_password: 'pw-1',
        panel_ssl: false,
      });
      expect(d.panel).to.include({ password: 'set', port: 2083, ssl: false });
      expect(await domainPanelConfig(env.knex, key, d.id)).to.include({ password: 'pw-1', ssl: false });
      await expectRejects(domainPanelConfig(env.knex, randomBytes(32), d.id));
      const base = {
        imap_host: 'i.test',
        smtp_host: 's.test',
        panel_type: 'hestia',
        panel_host: 'h.test',
        panel_user: 'u',
        panel_ssh_key_path: '/k',
      };
      expect(
        (await updateDomain(env.knex, key, d.id, { ...base, clear_panel_password: true })).panel!.password,
      ).to.equal('not set');
      const none = await updateDomain(env.knex, key, d.id, {
        imap_host: 'i.test',
        smtp_host: 's.test',
        panel_type: '',
      });
      expect(none.panel).to.equal(null);
      const row = await env.knex('mail_domains').where({ id: d.id }).first();
      expect(row).to.include({ panel_type: null, panel_host: null, panel_password_enc: null });
    });

    it('registers mailboxes by e-mail (domain must exist) or by local part', async () => {
      const d = await addDomain(env.knex, key, { name: domainName(), imap_host: 'i.test', smtp_host: 's.test' });
      const m = await addMailbox(env.knex, { email: ` Info@${d.name.toUpperCase()} `, display_name: 'Info' });
      expect(m).to.include({ email: `info@${d.name}`, local_part: 'info', domain_id: d.id, display_name: 'Info' });
      expect(await fieldsOf(addMailbox(env.knex, { email: 'info@unknown-domain.test' }))).to.deep.equal({
        email: ['The domain unknown-domain.test is not registered.'],
      });
      expect(await fieldsOf(addMailbox(env.knex, { email: 'no-at-sign' }))).to.have.property('email');
      expect(await fieldsOf(addMailbox(env.knex, { domainId: d.id, local_part: '.lead' }))).to.have.property(
        'local_part',
      );
      expect(await fieldsOf(addMailbox(env.knex, { domainId: d.id, local_part: 'x'.repeat(65) }))).to.have.property(
        'local_part',
      );
      expect((await listMailboxes(env.knex, d.id)).map((x) => x.email)).to.deep.equal([`info@${d.name}`]);
      expect((await getDomain(env.knex, d.id))!.mailbox_count).to.equal(1);
    });
  });
});

async function expectRejects(p: Promise<unknown>): Promise<void> {
  let failed = false;
  try {
    await p;
  } catch {
    failed = true;
  }
  expect(failed).to.equal(true);
}
