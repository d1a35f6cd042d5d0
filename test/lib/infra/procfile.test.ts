import { expect } from 'chai';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import {
  entryScript,
  isSimpleCommand,
  parseProcfile,
  ProcessGroup,
  ProcfileError,
  readProcfile,
  splitWords,
  type ExitInfo,
} from '../../../lib/infra/procfile.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** A stream that keeps what is written to it. */
function sink(): Writable & { text(): string } {
  const chunks: string[] = [];
  const w = new Writable({
    write(c, _e, cb) {
      chunks.push(c.toString());
      cb();
    },
  }) as Writable & { text(): string };
  w.text = () => chunks.join('');
  return w;
}

describe('Procfile parser (lib/infra/procfile.ts)', () => {
  it('parses name: command lines in order, skipping blank lines and comments', () => {
    const entries = parseProcfile(
      '# processes\nweb: tsx api/server.ts\n\n  worker:   tsx workers/main.ts --verbose  \r\nrelease:tsx bin/release.ts\n',
    );
    expect(entries.map((e) => [e.name, e.command])).to.deep.equal([
      ['web', 'tsx api/server.ts'],
      ['worker', 'tsx workers/main.ts --verbose'],
      ['release', 'tsx bin/release.ts'],
    ]);
    expect(entries[1].words).to.deep.equal(['tsx', 'workers/main.ts', '--verbose']);
  });

  it('reads the repository Procfile: release, web, worker, mail with their entry scripts', () => {
    const entries = readProcfile(ROOT);
    expect(entries.map((e) => e.name)).to.deep.equal(['release', 'web', 'worker', 'mail']);
    expect(entries.map(entryScript)).to.deep.equal([
      'bin/release.ts',
      'api/server.ts',
      'workers/main.ts',
      'api/mail/server.ts',
    ]);
  });

  it('refuses a line without a colon, an empty command and a duplicate name, naming the line', () => {
    expect(() => parseProcfile('web tsx api/server.ts')).to.throw(ProcfileError, /line 1/);
    expect(() => parseProcfile('web: tsx a.ts\nworker:   ')).to.throw(
      ProcfileError,
      /line 2: process type "worker" has no command/,
    );
    expect(() => parseProcfile('web: a\n\nweb: b')).to.throw(
      ProcfileError,
      /line 3: process type "web" is defined twice/,
    );
    expect(() => parseProcfile('my web: a')).to.throw(ProcfileError, /line 1/);
  });

  it('splits words with single and double quotes', () => {
    expect(splitWords(`node -e 'console.log(1 + 1)' "a b" c\\d`)).to.deep.equal([
      'node',
      '-e',
      'console.log(1 + 1)',
      'a b',
      'c\\d',
    ]);
    expect(splitWords('say "he said \\"hi\\""')).to.deep.equal(['say', 'he said "hi"']);
    expect(splitWords(`x ''`)).to.deep.equal(['x', '']);
    expect(() => splitWords(`node -e 'oops`)).to.throw(ProcfileError, /unterminated quote/);
  });

  it('tells simple commands (run with exec) from compound ones (operators outside quotes)', () => {
    expect(isSimpleCommand('tsx api/server.ts --port $PORT')).to.equal(true);
    expect(isSimpleCommand(`node -e "process.on('SIGINT', () => {}); x | y"`)).to.equal(true);
    expect(isSimpleCommand('bin/setup && node server.js')).to.equal(false);
    expect(isSimpleCommand('a; b')).to.equal(false);
    expect(isSimpleCommand('a | b')).to.equal(false);
    expect(isSimpleCommand('echo \\; b')).to.equal(true);
  });

  it('finds the entry script: first .ts/.js argument after the executable, null when none', () => {
    const [a, b, c] = parseProcfile(
      'a: tsx --tsconfig x.json api/mail/server.ts\nb: node dist/main.mjs --port 1\nc: redis-server --port 1',
    );
    expect(entryScript(a)).to.equal('api/mail/server.ts');
    expect(entryScript(b)).to.equal('dist/main.mjs');
    expect(entryScript(c)).to.equal(null);
  });
});

describe('ProcessGroup (lib/infra/procfile.ts)', () => {
  it('prefixes each output line with the process name and reports an unexpected exit', async () => {
    const out = sink();
    const err = sink();
    const crashes: ExitInfo[] = [];
    const entries = parseProcfile(
      [
        `hello: node -e "console.log('one'); console.log('two'); console.error('oops'); process.exit(3)"`,
        `sleeper: node -e "setInterval(() => {}, 1000)"`,
      ].join('\n'),
    );
    const group = new ProcessGroup(entries, { cwd: ROOT, env: process.env, color: false, out, err }, (i) =>
      crashes.push(i),
    );
    const [hello] = await Promise.all([group.processes[0].exited]);
    expect(hello).to.deep.equal({ name: 'hello', code: 3, signal: null });
    expect(out.text()).to.equal('hello   | one\nhello   | two\n');
    expect(err.text()).to.equal('hello   | oops\n');
    expect(crashes.map((c) => c.name)).to.deep.equal(['hello']);
    const exits = await group.stop({ signal: 'SIGTERM' });
    expect(exits.find((e) => e.name === 'sleeper')).to.deep.equal({ name: 'sleeper', code: null, signal: 'SIGTERM' });
    expect(crashes).to.have.length(1); // stopping is not a crash
  });

  it('forwards the stop signal to a process that handles it, which then exits cleanly', async () => {
    const out = sink();
    const entries = parseProcfile(
      `svc: node -e "process.on('SIGINT', () => { console.log('bye'); process.exit(0); }); console.log('ready'); setInterval(() => {}, 1000)"`,
    );
    const group = new ProcessGroup(entries, { cwd: ROOT, env: process.env, color: false, out, err: sink() }, () => {});
    while (!out.text().includes('ready')) await new Promise((r) => setTimeout(r, 20));
    const [exit] = await group.stop({ signal: 'SIGINT' });
    expect(exit).to.deep.equal({ name: 'svc', code: 0, signal: null });
    expect(out.text()).to.equal('svc | ready\nsvc | bye\n');
  });

  it('expands environment variables in the command (run through sh) and puts node_modules/.bin on PATH', async () => {
    const out = sink();
    const entries = parseProcfile('env: echo "port=$PORT" && command -v tsx');
    const group = new ProcessGroup(
      entries,
      { cwd: ROOT, env: { ...process.env, PORT: '4567' }, color: false, out, err: sink() },
      () => {},
    );
    const [exit] = await Promise.all([group.processes[0].exited]);
    expect(exit.code).to.equal(0);
    expect(out.text()).to.equal(`env | port=4567\nenv | ${path.join(ROOT, 'node_modules', '.bin', 'tsx')}\n`);
  });
});
