import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { sandboxedForkOptions } from '../../workers/main.js';

/** Runs `node <execArgv> -e <code>`; resolves with its exit and output. */
function run(execArgv: string[], code: string): Promise<{ code: number | null; signal: string | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...execArgv, '-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (c, s) => resolve({ code: c, signal: s, out }));
  });
}

describe('sandboxed children: the early-signals preload (workers/sandboxed/early-signals.mjs)', function () {
  this.timeout(60_000);
  // the child signals itself before its own code goes on: as a Ctrl-C of the process group that
  // lands while the child boots, before BullMQ's child main installs its handlers
  const selfSignal = `process.kill(process.pid, 'SIGINT'); process.kill(process.pid, 'SIGTERM');
    setTimeout(() => console.log('still booting, alive'), 200);`;

  it('a child forked with the options survives SIGINT and SIGTERM during boot; without the preload it dies', async () => {
    const { execArgv } = sandboxedForkOptions(undefined);
    expect(execArgv[0]).to.equal('--import');
    expect(execArgv[1]).to.match(/^file:\/\/.*\/workers\/sandboxed\/early-signals\.mjs$/);
    const withPreload = await run(execArgv, selfSignal);
    expect(withPreload, withPreload.out).to.deep.include({ code: 0, signal: null });
    expect(withPreload.out).to.include('still booting, alive');

    const without = await run(process.execArgv, selfSignal);
    expect(without.signal).to.equal('SIGINT');
    expect(without.out).to.not.include('alive');
  });

  it('keeps the registry entry flags after this process flags, and its environment', () => {
    const env = { DATABASE_URL: 'postgres://x/y' };
    const o = sandboxedForkOptions({ execArgv: ['--max-old-space-size=256'], env });
    expect(o.env).to.equal(env);
    expect(o.execArgv.slice(2)).to.deep.equal([...process.execArgv, '--max-old-space-size=256']);
  });
});
