import { expect } from 'chai';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  createMailPanel,
  PanelError,
  type CreateMailboxInput,
  type MailPanelConfig,
  type MailPanelDeps,
} from '../../../../jobs/adapters/mail-panel/index.js';
import { freePort } from '../../../../lib/infra/free-port.js';
import { startFakeHestia, type FakeHestia } from './fake-hestia.js';

async function rejection(p: Promise<unknown>): Promise<PanelError> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(PanelError);
    return e as PanelError;
  }
  throw new Error('expected a rejection');
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}

describe('mail panel adapters: HestiaCP over SSH (in-process ssh2 server)', () => {
  let fake: FakeHestia;
  let cfg: MailPanelConfig;
  let deps: MailPanelDeps;
  const input: CreateMailboxInput = {
    domain: 'Example.com',
    local_part: 'John.Doe',
    password: 'correct-horse-battery',
    real_name: 'John',
    quota: '500M',
  };

  before(async () => {
    fake = await startFakeHestia();
  });
  after(async () => {
    await fake.close();
  });
  beforeEach(async () => {
    await fake.reset();
    cfg = {
      type: 'hestia',
      host: '127.0.0.1',
      port: fake.port,
      user: 'root',
      panel_user: 'admin',
      ssh_key_path: fake.keyPath,
      password: null,
      ssl: true,
    };
    deps = { hestiaDir: fake.hestiaDir };
  });

  it('creates the mailbox: the exact command, the argv Hestia gets, the password only via a private temp file', async () => {
    await createMailPanel(cfg, deps).createMailbox(input);
    const bin = `${fake.hestiaDir}/bin/v-add-mail-account`;
    expect(fake.commands).to.deep.equal([
      `umask 077; f=$(mktemp /tmp/mbx.XXXXXXXXXX) || exit 75; trap 'rm -f "$f"; exit 129' HUP INT TERM; cat > "$f" || { rm -f "$f"; exit 75; }; '${bin}' 'admin' 'example.com' 'john.doe' "$f" '500'; rc=$?; rm -f "$f"; exit $rc`,
    ]);
    expect(fake.commands[0]).not.to.include(input.password);
    const argv = await fake.recordedArgs('add');
    expect(argv).to.have.length(5);
    expect(argv.slice(0, 3)).to.deep.equal(['admin', 'example.com', 'john.doe']);
    expect(argv[3]).to.match(/^\/tmp\/mbx\.[A-Za-z0-9]{10}$/);
    expect(argv[4]).to.equal('500');
    expect(await fake.readLog('add-password')).to.equal(`${input.password}\n`);
    expect(await fake.readLog('add-password-mode')).to.equal('600\n');
    expect(await exists(argv[3]!)).to.equal(false);
    expect(await createMailPanel(cfg, deps).mailboxExists('example.com', 'john.doe')).to.equal(true);
  });

  it('omits the quota argument when null (Hestia default: unlimited); 2G becomes 2048', async () => {
    await createMailPanel(cfg, deps).createMailbox({ ...input, local_part: 'a1', quota: null });
    expect((await fake.recordedArgs('add')).length).to.equal(4);
    await createMailPanel(cfg, deps).createMailbox({ ...input, local_part: 'a2', quota: '2G' });
    expect((await fake.recordedArgs('add'))[4]).to.equal('2048');
  });

  it('a password full of shell syntax arrives as exactly the same bytes and runs nothing', async () => {
    // the fake runs commands in its temp dir: a successful injection would create these files there
    const password = `pa'ss; touch pwned1; $(touch pwned2) \`touch pwned3\` "q" \\ end $HOME *`;
    const markers = ['pwned1', 'pwned2', 'pwned3'].map((m) => path.join(fake.dir, m));
    await createMailPanel(cfg, deps).createMailbox({ ...input, password });
    expect(fake.commands[0]).not.to.include('pwned');
    expect(await fake.readLog('add-password')).to.equal(`${password}\n`);
    for (const m of markers) expect(await exists(m), m).to.equal(false);
  });

  it('rejects an injection attempt in local_part (or domain) before connecting', async () => {
    const before = fake.connections;
    for (const bad of [
      { local_part: "x'; touch /tmp/pwned; '" },
      { local_part: 'x$(id)' },
      { domain: 'example.com; id' },
    ]) {
      const err = await rejection(createMailPanel(cfg, deps).createMailbox({ ...input, ...bad }));
      expect(err.kind).to.equal('permanent');
      expect(Object.keys(err.fields!)).to.have.length(1);
    }
    expect(fake.connections).to.equal(before);
    expect(fake.commands).to.deep.equal([]);
  });

  it("E_EXISTS (4) -> exists, with Hestia's message and the exit code", async () => {
    await createMailPanel(cfg, deps).createMailbox(input);
    const err = await rejection(createMailPanel(cfg, deps).createMailbox(input));
    expect(err.kind).to.equal('exists');
    expect(err.exitCode).to.equal(4);
    expect(err.message).to.include('mail account john.doe already exists');
  });

  it('E_NOTEXIST for the mail domain is permanent; E_LA (14) transient; E_LIMIT (8) permanent; no password in messages', async () => {
    const noDomain = await rejection(createMailPanel(cfg, deps).createMailbox({ ...input, domain: 'other.example' }));
    expect(noDomain.kind).to.equal('permanent');
    expect(noDomain.exitCode).to.equal(3);
    await fake.forceExit(14);
    const busy = await rejection(createMailPanel(cfg, deps).createMailbox(input));
    expect(busy.kind).to.equal('transient');
    expect(busy.exitCode).to.equal(14);
    // the stub prints the password in its error line: the adapter must redact it
    expect(busy.message).to.include('forced failure');
    expect(busy.message).not.to.include(input.password);
    await fake.forceExit(8);
    expect((await rejection(createMailPanel(cfg, deps).createMailbox(input))).kind).to.equal('permanent');
  });

  it('mailboxExists: v-list-mail-account USER DOMAIN ACCOUNT json; 3 for account or domain -> false, for the user -> error', async () => {
    expect(await createMailPanel(cfg, deps).mailboxExists('example.com', 'nobody')).to.equal(false);
    expect(await fake.recordedArgs('list')).to.deep.equal(['admin', 'example.com', 'nobody', 'json']);
    expect(fake.commands[0]).to.equal(
      `'${fake.hestiaDir}/bin/v-list-mail-account' 'admin' 'example.com' 'nobody' 'json'`,
    );
    expect(await createMailPanel(cfg, deps).mailboxExists('unknown.example', 'nobody')).to.equal(false);
    const err = await rejection(
      createMailPanel({ ...cfg, panel_user: 'ghost' }, deps).mailboxExists('example.com', 'nobody'),
    );
    expect(err.kind).to.equal('permanent');
    expect(err.message).to.include("user ghost doesn't exist");
  });

  it('testConnection runs v-list-user for the Hestia user', async () => {
    await createMailPanel(cfg, deps).testConnection();
    expect(fake.commands).to.deep.equal([`'${fake.hestiaDir}/bin/v-list-user' 'admin' 'json'`]);
    const err = await rejection(createMailPanel({ ...cfg, panel_user: 'ghost' }, deps).testConnection());
    expect(err.kind).to.equal('permanent');
    expect(err.exitCode).to.equal(3);
  });

  it('a non-root login goes through sudo -n; panel_user defaults to the login user', async () => {
    fake.mode = 'record';
    await createMailPanel({ ...cfg, user: 'admin', panel_user: null }, deps).testConnection();
    expect(fake.commands).to.deep.equal([`sudo -n '${fake.hestiaDir}/bin/v-list-user' 'admin' 'json'`]);
  });

  it('authenticates with a password when no key is configured; wrong credentials -> auth', async () => {
    await createMailPanel({ ...cfg, ssh_key_path: null, password: fake.loginPassword }, deps).testConnection();
    const badPw = await rejection(
      createMailPanel({ ...cfg, ssh_key_path: null, password: 'wrong-password' }, deps).testConnection(),
    );
    expect(badPw.kind).to.equal('auth');
    expect(badPw.message).not.to.include('wrong-password');
    const badKey = await rejection(
      createMailPanel({ ...cfg, ssh_key_path: fake.strangerKeyPath }, deps).testConnection(),
    );
    expect(badKey.kind).to.equal('auth');
  });

  it('checks the host key when a fingerprint is configured', async () => {
    await createMailPanel({ ...cfg, host_key_sha256: fake.hostKeySha256 }, deps).testConnection();
    const err = await rejection(
      createMailPanel({ ...cfg, host_key_sha256: `SHA256:${'A'.repeat(43)}` }, deps).testConnection(),
    );
    expect(err.kind).to.equal('permanent');
    expect(fake.commands).to.have.length(1);
  });

  it('an unreadable key file is permanent and opens no connection; a closed port is transient', async () => {
    const before = fake.connections;
    const noKey = await rejection(
      createMailPanel({ ...cfg, ssh_key_path: path.join(fake.dir, 'missing_key') }, deps).testConnection(),
    );
    expect(noKey.kind).to.equal('permanent');
    expect(noKey.message).to.include('ENOENT');
    expect(fake.connections).to.equal(before);
    const refused = await rejection(createMailPanel({ ...cfg, port: await freePort() }, deps).testConnection());
    expect(refused.kind).to.equal('transient');
  });

  it('honours the AbortSignal: rejects and closes the connection while the command runs', async () => {
    fake.mode = 'hang';
    const ac = new AbortController();
    const execSeen = fake.nextExec();
    const closed = fake.nextClose();
    const p = createMailPanel(cfg, deps).createMailbox(input, ac.signal);
    await execSeen;
    ac.abort(new Error('job cancelled'));
    const err = await rejection(p);
    expect(err.kind).to.equal('transient');
    expect(err.message).to.include('aborted');
    await closed;
    expect(fake.commands).to.have.length(1);
  });

  it('an already aborted signal makes no connection', async () => {
    const before = fake.connections;
    const ac = new AbortController();
    ac.abort();
    expect((await rejection(createMailPanel(cfg, deps).mailboxExists('example.com', 'x', ac.signal))).kind).to.equal(
      'transient',
    );
    expect(fake.connections).to.equal(before);
  });

  it('a command that does not end within timeoutMs is transient and its connection is closed', async () => {
    fake.mode = 'hang';
    const closed = fake.nextClose();
    const err = await rejection(createMailPanel(cfg, { ...deps, timeoutMs: 200 }).mailboxExists('example.com', 'x'));
    expect(err.kind).to.equal('transient');
    expect(err.message).to.include('timed out after 200 ms');
    await closed;
  });
});
