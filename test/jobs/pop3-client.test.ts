import { expect } from 'chai';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { MailServerError } from '../../jobs/adapters/mailbox-client/index.js';
import { Pop3Session } from '../../jobs/email/pop3-client.js';
import { mailTls } from '../../jobs/adapters/mailbox-client/tls.js';
import { getTlsMailStack } from '../helpers/mail.js';

/**
 * A scripted POP3 server on loopback: greets, accepts any login, and answers RETR with `retr`
 * (a list of writes, each flushed on its own after the previous one was read by the client).
 */
async function scriptedServer(o: { greet?: boolean; retr?: (s: net.Socket) => Promise<void> }) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
    if (o.greet === false) return; // accepts TCP, never answers
    s.write('+OK ready\r\n');
    let buf = '';
    s.on('data', (d) => {
      buf += d.toString();
      for (let i = buf.indexOf('\r\n'); i >= 0; i = buf.indexOf('\r\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (line.startsWith('RETR') && o.retr) void o.retr(s);
        else if (line === 'QUIT') s.end('+OK bye\r\n');
        else s.write('+OK\r\n');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Writes the parts one by one, each in its own TCP segment (Nagle off, a tick in between). */
async function writeApart(s: net.Socket, parts: string[]) {
  s.setNoDelay(true);
  for (const p of parts) {
    s.write(p);
    await new Promise((r) => setTimeout(r, 30));
  }
}

const read = async (r: NodeJS.ReadableStream) => {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

describe('jobs/email/pop3-client (node-pop3 with a split-safe reader)', function () {
  this.timeout(20_000);

  it('a terminator split over two TCP reads ends the answer; stuffed dots are removed', async () => {
    const srv = await scriptedServer({
      retr: (s) => writeApart(s, ['+OK 30 octets\r\nSubject: a\r\n\r\n..dot line\r\nlast\r', '\n.', '\r\n']),
    });
    try {
      const s = await Pop3Session.open({ host: '127.0.0.1', port: srv.port, security: 'none' }, 'u', 'p', {
        timeoutMs: 3000,
      });
      expect(await read(await s.retr(1))).to.equal('Subject: a\r\n\r\n.dot line\r\nlast\r\n');
      // the connection is usable after it: a second message
      expect(await read(await s.retr(2))).to.equal('Subject: a\r\n\r\n.dot line\r\nlast\r\n');
      await s.quit();
    } finally {
      await srv.close();
    }
  });

  it('a server that accepts TCP and never answers: ETIMEDOUT after timeoutMs, not a hang', async () => {
    const srv = await scriptedServer({ greet: false });
    const started = Date.now();
    let err: unknown;
    try {
      await Pop3Session.open({ host: '127.0.0.1', port: srv.port, security: 'none' }, 'u', 'p', { timeoutMs: 300 });
    } catch (e) {
      err = e;
    } finally {
      await srv.close();
    }
    expect(err).to.be.instanceOf(MailServerError);
    expect(err).to.include({ code: 'ETIMEDOUT', message: 'POP3 server did not answer in time' });
    expect(Date.now() - started).to.be.lessThan(5000);
  });

  it('the server closing in the middle of a message fails the read with EConnectionClosed', async () => {
    const srv = await scriptedServer({
      retr: async (s) => {
        await writeApart(s, ['+OK\r\nSubject: half\r\n\r\nsome']);
        s.destroy();
      },
    });
    try {
      const s = await Pop3Session.open({ host: '127.0.0.1', port: srv.port, security: 'none' }, 'u', 'p', {
        timeoutMs: 3000,
      });
      let err: unknown;
      try {
        await read(await s.retr(1));
      } catch (e) {
        err = e;
      }
      expect(err).to.include({ code: 'EConnectionClosed', message: 'POP3 connection closed by the server' });
      await s.quit();
    } finally {
      await srv.close();
    }
  });

  it('POP3S (security ssl) on the TLS Dovecot: verified against the trusted CA; an untrusted certificate is refused', async () => {
    const good = await getTlsMailStack('good');
    const [box] = await good.newMailboxes([{ security: 'ssl' }]);
    const ep = { host: '127.0.0.1', port: good.dovecot.pop3sPort!, security: 'ssl' as const };
    const s = await Pop3Session.open(ep, box.email, box.password, {
      timeoutMs: 5000,
      tlsFor: mailTls({ ca: good.pki.ca.certPem }),
    });
    expect(await s.count()).to.equal(0);
    await s.quit();
    const foreign = await getTlsMailStack('foreign');
    const [other] = await foreign.newMailboxes([{ security: 'ssl' }]);
    let err: unknown;
    try {
      await Pop3Session.open({ ...ep, port: foreign.dovecot.pop3sPort! }, other.email, other.password, {
        timeoutMs: 5000,
        tlsFor: mailTls({ ca: good.pki.ca.certPem }),
      });
    } catch (e) {
      err = e;
    }
    expect(err).to.include({ code: 'TLS_CERT_UNTRUSTED' });
  });

  it('the AbortSignal closes the session: ABORTED', async () => {
    const srv = await scriptedServer({ retr: async () => undefined });
    const ac = new AbortController();
    try {
      const s = await Pop3Session.open({ host: '127.0.0.1', port: srv.port, security: 'none' }, 'u', 'p', {
        timeoutMs: 3000,
        signal: ac.signal,
      });
      const pending = s.retr(1);
      ac.abort();
      let err: unknown;
      try {
        await pending;
      } catch (e) {
        err = e;
      }
      expect(err).to.include({ code: 'ABORTED' });
    } finally {
      await srv.close();
    }
  });
});
