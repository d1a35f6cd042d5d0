import { startDovecot } from '../lib/infra/dovecot.js';
import { ImapFlow } from 'imapflow';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createMailboxClient } from '../jobs/adapters/mailbox-client/index.js';
const dir = await fs.mkdtemp(os.tmpdir() + '/dvtest-'); await fs.chmod(dir, 0o755);
const d = await startDovecot({ dir: dir + '/d', authFailureDelaySeconds: 0 });
const users = Array.from({ length: 45 }, (_, i) => ({ email: `u${i}@x.test`, password: 'pw' + i }));
await d.addUsers(users);
const f = new ImapFlow({ host: '127.0.0.1', port: d.imapPort, secure: false, doSTARTTLS: false, auth: { user: 'u0@x.test', pass: 'pw0' }, logger: false });
await f.connect();
for (let i = 1; i <= 1000; i++) await f.append('INBOX', `From: a@b.c\r\nTo: u0@x.test\r\nSubject: m ${i}\r\nMessage-ID: <m${i}@x>\r\nDate: Mon, 01 Jan 2026 00:00:00 +0000\r\n\r\nbody ${i}\r\n`);
await f.logout();
for (const u of users.slice(1)) await fs.symlink(path.join(d.dir, 'mail', 'u0@x.test'), path.join(d.dir, 'mail', u.email));
const ep = { host: '127.0.0.1', port: d.imapPort, security: 'none' as const };
async function bare() {
  const t = performance.now();
  const c = new ImapFlow({ host: '127.0.0.1', port: d.imapPort, secure: false, doSTARTTLS: false, auth: { user: 'u0@x.test', pass: 'pw0' }, logger: false });
  c.on('error', () => {});
  await c.connect(); const l = await c.getMailboxLock('INBOX'); const ex = (c.mailbox as any).exists;
  await c.fetchAll(`${ex - 49}:*`, { uid: true, envelope: true, flags: true }); l.release(); await c.logout();
  return performance.now() - t;
}
const client = createMailboxClient();
const B: number[] = [], F: number[] = [], R: number[] = [];
for (let i = 0; i < 40; i++) {
  B.push(await bare());
  const u = users[1 + i];
  let t = performance.now(); await client.listEmails({ ...u, imap: ep, smtp: ep }, { limit: 50, unseen: false }); F.push(performance.now() - t);
  t = performance.now(); await client.listEmails({ ...u, imap: ep, smtp: ep }, { limit: 50, unseen: false }); R.push(performance.now() - t);
}
const med = (x: number[]) => { const s = [...x].sort((a, b) => a - b); return s[Math.floor(s.length / 2)].toFixed(1); };
console.log('bare', med(B), 'first', med(F), 'repeat', med(R));
await client.close(); await d.stop(); await fs.rm(dir, { recursive: true });
