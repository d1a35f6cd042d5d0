import { expect } from 'chai';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import crypto from 'node:crypto';
import {
  createMailboxClient,
  MailAuthError,
  MailServerError,
  type MailboxClient,
  type MailboxCredentials,
} from '../../../../jobs/adapters/mailbox-client/index.js';
import { getMailStack, type MailStack } from '../../../helpers/mail.js';
import { registerCleanup } from '../../../helpers/env.js';

/**
 * A TCP proxy in front of Dovecot's IMAP port that counts connections (= IMAP logins of the
 * client) and knows how many client connections are open right now (`open()`). While `hold` is
 * set, new connections are accepted but not forwarded (no greeting).
 */
async function countingProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  const clients = new Set<net.Socket>();
  const state = { connections: 0, hold: false, onConnection: null as null | (() => void) };
  const server = net.createServer((down) => {
    state.connections++;
    sockets.add(down);
    clients.add(down);
    down.on('close', () => {
      sockets.delete(down);
      clients.delete(down);
    });
    down.on('error', () => down.destroy());
    state.onConnection?.();
    if (state.hold) return;
    const up = net.connect(target.port, target.host);
    sockets.add(up);
    up.on('close', () => sockets.delete(up));
    up.on('error', () => {
      down.destroy();
      up.destroy();
    });
    down.on('close', () => up.destroy());
    down.pipe(up).pipe(down);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  registerCleanup(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, state, open: () => clients.size };
}

/** Polls `cond` every 20 ms, at most `ms` (no timing is asserted: the caller checks the state after). */
async function until(cond: () => boolean, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; !cond() && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
}

async function caught(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

describe('mailbox client: failures and connection reuse (real Dovecot + SMTP relay)', () => {
  let stack: MailStack;
  let client: MailboxClient;
  let box: MailboxCredentials;
  let peer: MailboxCredentials;
  let pooled: MailboxCredentials;
  // a sentinel mailbox password: it must never appear in any error text
  const SENTINEL = `Sentinel-${crypto.randomBytes(8).toString('hex')}`;
  const errors: Error[] = [];

  before(async function () {
    this.timeout(60_000);
    stack = await getMailStack();
    client = createMailboxClient();
    [box, peer, pooled] = await stack.newMailboxes([
      { local: 'fail', password: SENTINEL },
      { local: 'peer' },
      { local: 'pooled' },
    ]);
    await stack.deliver({ from: peer.email, to: box.email, subject: 'hello', text: 'x' });
    await stack.deliver({ from: peer.email, to: pooled.email, subject: 'pooled', text: 'x' });
  });
  after(async () => {
    await client.close();
    stack.relay.refuse(null);
    if (!stack.dovecot.running) await stack.startDovecot();
  });

  it('a wrong password gives MailAuthError over IMAP (list, detail, verifyLogin)', async () => {
    const wrong = { ...peer, password: SENTINEL };
    for (const p of [
      client.listEmails(wrong, { limit: 5, unseen: false }),
      client.getEmail(wrong, '1'),
      client.verifyLogin(wrong),
    ]) {
      const err = await caught(p);
      errors.push(err);
      expect(err).to.be.instanceOf(MailAuthError);
      expect((err as MailAuthError).protocol).to.equal('imap');
    }
  });

  it('a wrong password gives MailAuthError over SMTP (send) and nothing is delivered', async () => {
    const before = stack.relay.delivered;
    const err = await caught(client.send({ ...peer, password: SENTINEL }, { to: box.email, subject: 's', body: 'b' }));
    errors.push(err);
    expect(err).to.be.instanceOf(MailAuthError);
    expect((err as MailAuthError).protocol).to.equal('smtp');
    expect(stack.relay.delivered).to.equal(before);
  });

  it('an SMTP server that refuses the message gives MailServerError (and no Sent copy)', async () => {
    stack.relay.refuse({ code: 554, message: `Message refused by policy ${SENTINEL}` });
    try {
      const err = await caught(client.send(box, { to: peer.email, subject: 'refused one', body: 'b' }));
      errors.push(err);
      expect(err).to.be.instanceOf(MailServerError);
      expect((err as MailServerError).code).to.equal('SMTP_554');
      expect(err.message).to.contain('[redacted]');
    } finally {
      stack.relay.refuse(null);
    }
    const c = await stack.openImap(box.email, box.password);
    try {
      const status = await c.status('Sent', { messages: true });
      expect(status && status.messages).to.equal(0);
    } finally {
      await c.logout();
    }
  });

  it('Dovecot stopped gives MailServerError, also for a pooled connection; after a restart it works again', async function () {
    this.timeout(30_000);
    expect((await client.listEmails(box, { limit: 5, unseen: false })).map((m) => m.subject)).to.deep.equal(['hello']);
    await stack.stopDovecot();
    try {
      for (const p of [
        client.listEmails(box, { limit: 5, unseen: false }),
        client.getEmail(box, '1'),
        client.reply(box, '1', { body: 'x' }),
      ]) {
        const err = await caught(p);
        errors.push(err);
        expect(err).to.be.instanceOf(MailServerError);
        expect((err as MailServerError).code).to.equal('ECONNREFUSED');
      }
    } finally {
      await stack.startDovecot();
    }
    expect((await client.listEmails(box, { limit: 5, unseen: false })).map((m) => m.subject)).to.deep.equal(['hello']);
  });

  it('reuses one IMAP login for repeated calls within idleMs; another password or a closed pool does not reuse it', async () => {
    const proxy = await countingProxy(stack.imap);
    const viaProxy = { ...pooled, imap: { ...pooled.imap, port: proxy.port } };
    const c = createMailboxClient({ idleMs: 60_000 });
    try {
      await c.listEmails(viaProxy, { limit: 5, unseen: false });
      await c.listEmails(viaProxy, { limit: 5, unseen: true });
      await c.getEmail(viaProxy, '1');
      expect(proxy.state.connections).to.equal(1);
      // concurrent calls on the same login share the one connection (serialised by the mailbox lock)
      const all = await Promise.all([1, 2, 3, 4].map(() => c.listEmails(viaProxy, { limit: 5, unseen: false })));
      expect(all.map((l) => l.length)).to.deep.equal([1, 1, 1, 1]);
      expect(proxy.state.connections).to.equal(1);

      const err = await caught(c.listEmails({ ...viaProxy, password: SENTINEL }, { limit: 5, unseen: false }));
      errors.push(err);
      expect(err).to.be.instanceOf(MailAuthError);
      expect(proxy.state.connections).to.equal(2);
      // the good login's connection survived the other key's failure
      await c.listEmails(viaProxy, { limit: 5, unseen: false });
      expect(proxy.state.connections).to.equal(2);

      await c.close();
      await c.listEmails(viaProxy, { limit: 5, unseen: false });
      expect(proxy.state.connections).to.equal(3);
    } finally {
      await c.close();
    }
  });

  it('idleMs 0 logs in for every call', async () => {
    const proxy = await countingProxy(stack.imap);
    const viaProxy = { ...pooled, imap: { ...pooled.imap, port: proxy.port } };
    const c = createMailboxClient({ idleMs: 0 });
    try {
      await c.listEmails(viaProxy, { limit: 5, unseen: false });
      await c.listEmails(viaProxy, { limit: 5, unseen: false });
      expect(proxy.state.connections).to.equal(2);
    } finally {
      await c.close();
    }
  });

  it('an aborted signal ends the call with MailServerError ABORTED and closes the connection', async () => {
    const proxy = await countingProxy(stack.imap);
    const viaProxy = { ...pooled, imap: { ...pooled.imap, port: proxy.port } };
    const c = createMailboxClient();
    try {
      const pre = new AbortController();
      pre.abort();
      const early = await caught(c.listEmails(viaProxy, { limit: 5, unseen: false }, pre.signal));
      expect((early as MailServerError).code).to.equal('ABORTED');
      expect(proxy.state.connections).to.equal(0);

      // the server never greets (held): the call waits until the signal fires
      proxy.state.hold = true;
      const connected = new Promise<void>((r) => {
        proxy.state.onConnection = r;
      });
      const ac = new AbortController();
      const p = c.listEmails(viaProxy, { limit: 5, unseen: false }, ac.signal);
      await connected;
      ac.abort();
      proxy.state.hold = false;
      const err = await caught(p);
      expect(err).to.be.instanceOf(MailServerError);
      expect((err as MailServerError).code).to.equal('ABORTED');
      // the aborted connection is not reused
      await c.listEmails(viaProxy, { limit: 5, unseen: false });
      expect(proxy.state.connections).to.equal(2);
    } finally {
      await c.close();
    }
  });

  it('closes connections: at once after a failed login or an abort, a pooled one after idleMs; none is left open', async () => {
    const proxy = await countingProxy(stack.imap);
    const viaProxy = { ...pooled, imap: { ...pooled.imap, port: proxy.port } };
    // idleMs well above any pause between the calls and the checks below (a loaded machine), so
    // "pooled while idle" cannot miss; the close after idleMs is awaited by polling, not timed
    const c = createMailboxClient({ idleMs: 3000 });
    try {
      const err = await caught(c.listEmails({ ...viaProxy, password: SENTINEL }, { limit: 5, unseen: false }));
      errors.push(err);
      expect(err).to.be.instanceOf(MailAuthError);
      await until(() => proxy.open() === 0);
      expect(proxy.open(), 'after a failed login').to.equal(0);

      proxy.state.hold = true;
      const connected = new Promise<void>((r) => {
        proxy.state.onConnection = r;
      });
      const ac = new AbortController();
      const p = c.listEmails(viaProxy, { limit: 5, unseen: false }, ac.signal);
      await connected;
      expect(proxy.open()).to.equal(1);
      ac.abort();
      expect(await caught(p)).to.be.instanceOf(MailServerError);
      proxy.state.hold = false;
      await until(() => proxy.open() === 0);
      expect(proxy.open(), 'after an abort').to.equal(0);

      await c.listEmails(viaProxy, { limit: 5, unseen: false });
      expect(proxy.open(), 'pooled while idle').to.equal(1);
      await until(() => proxy.open() === 0);
      expect(proxy.open(), 'after idleMs').to.equal(0);
    } finally {
      await c.close();
    }
  });

  it('the sentinel password appears in none of the errors thrown above', () => {
    expect(errors.length).to.be.greaterThan(8);
    for (const e of errors) {
      const dump = `${e.name} ${e.message} ${e.stack} ${JSON.stringify(e)} ${String((e as { cause?: unknown }).cause ?? '')}`;
      expect(dump).to.not.contain(SENTINEL);
    }
  });
});
