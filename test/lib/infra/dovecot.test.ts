import { expect } from 'chai';
import fs from 'node:fs/promises';
import net from 'node:net';
import tls from 'node:tls';
import { dovecotConfig } from '../../../lib/infra/dovecot-config.js';
import { getMailStack, getTlsMailStack, type MailStack } from '../../helpers/mail.js';

/** The first line a server sends on a fresh connection (plain TCP, or TLS trusting `ca`). */
function greeting(port: number, ca?: string): Promise<{ line: string; authorized: boolean | null }> {
  return new Promise((resolve, reject) => {
    const s = ca
      ? tls.connect({ host: '127.0.0.1', port, ca, rejectUnauthorized: true })
      : net.connect(port, '127.0.0.1');
    let buf = '';
    s.on('data', (d: Buffer) => {
      buf += d.toString();
      if (buf.includes('\r\n')) {
        resolve({ line: buf.split('\r\n')[0], authorized: s instanceof tls.TLSSocket ? s.authorized : null });
        s.destroy();
      }
    });
    s.on('error', reject);
  });
}

/** Sends POP3 commands one by one (each after the previous answer) and returns the whole transcript. */
function popSession(port: number, commands: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let buf = '';
    const queue = [...commands];
    s.on('data', (d: Buffer) => {
      buf += d.toString();
      // an answer is complete at its line end (UIDL: at the terminating dot)
      const multi = buf.trimEnd().endsWith('UIDL') || /UIDL\r\n\+OK[^\r]*\r\n(?![\s\S]*\r\n\.\r\n)/.test(buf);
      if (!multi && buf.endsWith('\r\n')) {
        const next = queue.shift();
        if (next === undefined) s.end();
        else {
          buf += `${next}\r\n`;
          s.write(`${next}\r\n`);
        }
      }
    });
    s.on('close', () => resolve(buf));
    s.on('error', reject);
  });
}

describe('lib/infra/dovecot.ts (the real Dovecot of the tests and the demo)', () => {
  let stack: MailStack;
  before(async function () {
    this.timeout(60_000);
    stack = await getMailStack();
  });

  it('a user appended to the passwd-file while Dovecot runs can log in as soon as addUser resolves', async () => {
    const email = `late-${Date.now()}@mail.test`;
    await stack.addMailbox(email, 'late-password-1');
    const c = await stack.openImap(email, 'late-password-1');
    try {
      expect(c.authenticated).to.equal(true);
      const boxes = await c.list();
      expect(boxes.find((b) => b.specialUse === '\\Sent')?.path).to.equal('Sent');
    } finally {
      await c.logout();
    }
    expect(await fs.readFile(stack.dovecot.usersFile, 'utf8')).to.contain(`${email}:{PLAIN}late-password-1\n`);
  });

  it('checks logins against the passwd-file and refuses lines it cannot write safely', async () => {
    const [box] = await stack.newMailboxes([{ local: 'check' }]);
    expect(await stack.dovecot.checkPassword(box.email.toUpperCase(), box.password)).to.equal(true);
    expect(await stack.dovecot.checkPassword(box.email, `${box.password}x`)).to.equal(false);
    expect(await stack.dovecot.checkPassword('nobody-here@mail.test', box.password)).to.equal(false);
    expect(await stack.dovecot.hasUser(box.email.toUpperCase())).to.equal(true);
    for (const [email, pw] of [
      [box.email, 'other'],
      ['x@mail.test', 'a:b'],
      ['y@mail.test', 'a\nz@mail.test:{PLAIN}b'],
      ['not-an-address', 'pw'],
    ]) {
      let err: Error | null = null;
      try {
        await stack.dovecot.addUser(email, pw);
      } catch (e) {
        err = e as Error;
      }
      expect(err, `${email} / ${JSON.stringify(pw)}`).to.be.instanceOf(Error);
    }
    expect(await stack.dovecot.hasUser('z@mail.test')).to.equal(false);
  });

  it('dovecotConfig: plain by default (ssl = no, imaps port 0); tls: ssl = yes, files via "<", imaps listener', () => {
    const base = { dir: '/srv/dv', runDir: '/srv/dv/run', imapPort: 1143, lmtpPort: 1024, authFailureDelaySeconds: 0 };
    const plain = dovecotConfig(base);
    expect(plain).to.match(/^ssl = no$/m);
    expect(plain).to.match(/inet_listener imaps {\n {4}port = 0\n {2}}/);
    expect(plain).to.not.contain('ssl_cert');
    const tlsFiles = { certFile: '/srv/tls/c.pem', keyFile: '/srv/tls/k.key' };
    const withTls = dovecotConfig({ ...base, tls: { ...tlsFiles, imapsPort: 1993 } });
    expect(withTls).to.match(/^ssl = yes$/m);
    expect(withTls).to.match(/^ssl_cert = <\/srv\/tls\/c\.pem$/m);
    expect(withTls).to.match(/^ssl_key = <\/srv\/tls\/k\.key$/m);
    expect(withTls).to.match(/^ssl_min_protocol = TLSv1\.2$/m);
    expect(withTls).to.contain('inet_listener imaps {\n    address = 127.0.0.1\n    port = 1993\n    ssl = yes\n  }');
    const twoLines = { certFile: '/a\nb', keyFile: '/k', imapsPort: 1 };
    expect(() => dovecotConfig({ ...base, tls: twoLines })).to.throw(/one line/);
    // POP3 only with a port: its listener, and no flag changes by POP3 readers
    expect(plain).to.match(/^protocols = imap lmtp$/m);
    const pop3 = dovecotConfig({ ...base, pop3Port: 1110, tls: { ...tlsFiles, imapsPort: 1993, pop3sPort: 1995 } });
    expect(pop3).to.match(/^protocols = imap pop3 lmtp$/m);
    expect(pop3).to.contain('inet_listener pop3 {\n    address = 127.0.0.1\n    port = 1110\n  }');
    expect(pop3).to.contain('inet_listener pop3s {\n    address = 127.0.0.1\n    port = 1995\n    ssl = yes\n  }');
    expect(pop3).to.match(/^ {2}pop3_no_flag_updates = yes$/m);
  });

  it('serves POP3 on its own port: greeting, login, UIDL of a delivered message', async () => {
    const [box] = await stack.newMailboxes([{ local: 'pop' }]);
    await stack.deliver({ from: 'a@outside.test', to: box.email, subject: 'pop me', text: 'hi' });
    expect(stack.dovecot.pop3Port).to.be.a('number').and.not.equal(stack.dovecot.imapPort);
    expect((await greeting(stack.dovecot.pop3Port)).line).to.match(/^\+OK Dovecot/);
    const lines = await popSession(stack.dovecot.pop3Port, [
      `USER ${box.email}`,
      `PASS ${box.password}`,
      'UIDL',
      'QUIT',
    ]);
    expect(lines).to.match(/\+OK Logged in\./);
    expect(lines).to.match(/\r\n1 [0-9a-f]{16}\r\n\.\r\n/);
  });

  it('with TLS: STARTTLS on the IMAP port, verified TLS on imaps; the plain instance has neither', async () => {
    const tlsStack = await getTlsMailStack('good');
    expect(tlsStack.dovecot.imapsPort).to.be.a('number');
    const imaps = await greeting(tlsStack.dovecot.imapsPort!, tlsStack.pki.ca.certPem);
    expect(imaps.authorized).to.equal(true);
    expect(imaps.line).to.match(/^\* OK \[CAPABILITY .*\] Dovecot/);
    expect((await greeting(tlsStack.dovecot.imapPort)).line).to.match(/^\* OK \[CAPABILITY [^\]]*\bSTARTTLS\b/);
    expect(stack.dovecot.imapsPort).to.equal(null);
    const plain = await greeting(stack.dovecot.imapPort);
    expect(plain.line).to.match(/^\* OK \[CAPABILITY /);
    expect(plain.line).to.not.contain('STARTTLS');
  });
});
