import { expect } from 'chai';
import fs from 'node:fs/promises';
import { getMailStack, type MailStack } from '../../helpers/mail.js';

describe('lib/infra/dovecot.ts (the real Dovecot of the tests and the demo)', () => {
  let stack: MailStack;
  before(async function () { this.timeout(60_000); stack = await getMailStack(); });

  it('a user appended to the passwd-file while Dovecot runs can log in as soon as addUser resolves', async () => {
    const email = `late-${Date.now()}@mail.test`;
    await stack.addMailbox(email, 'late-password-1');
    const c = await stack.openImap(email, 'late-password-1');
    try {
      expect(c.authenticated).to.equal(true);
      const boxes = await c.list();
      expect(boxes.find((b) => b.specialUse === '\\Sent')?.path).to.equal('Sent');
    } finally { await c.logout(); }
    expect(await fs.readFile(stack.dovecot.usersFile, 'utf8')).to.contain(`${email}:{PLAIN}late-password-1\n`);
  });

  it('checks logins against the passwd-file and refuses lines it cannot write safely', async () => {
    const [box] = await stack.newMailboxes([{ local: 'check' }]);
    expect(await stack.dovecot.checkPassword(box.email.toUpperCase(), box.password)).to.equal(true);
    expect(await stack.dovecot.checkPassword(box.email, `${box.password}x`)).to.equal(false);
    expect(await stack.dovecot.checkPassword('nobody-here@mail.test', box.password)).to.equal(false);
    expect(await stack.dovecot.hasUser(box.email.toUpperCase())).to.equal(true);
    for (const [email, pw] of [[box.email, 'other'], ['x@mail.test', 'a:b'], ['y@mail.test', 'a\nz@mail.test:{PLAIN}b'], ['not-an-address', 'pw']]) {
      let err: Error | null = null;
      try { await stack.dovecot.addUser(email, pw); } catch (e) { err = e as Error; }
      expect(err, `${email} / ${JSON.stringify(pw)}`).to.be.instanceOf(Error);
    }
    expect(await stack.dovecot.hasUser('z@mail.test')).to.equal(false);
  });
});
