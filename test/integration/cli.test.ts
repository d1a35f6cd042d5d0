import { expect } from 'chai';
import { execa } from 'execa';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { verifyPassword } from '../../api/auth/service.js';
import { startEmbeddedPostgres } from '../../lib/infra/postgres.js';
import { portOpen } from '../../lib/infra/free-port.js';
import { removeSystemState } from '../../lib/infra/system-dirs.js';
import { makeTenant } from '../helpers/fixtures.js';
import { env } from '../helpers/env.js';
import { main } from '../../bin/cli.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const uniq = () => randomBytes(4).toString('hex');

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
  error: any;
}

const parse = (s: string) => {
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
};

const result = (code: number, stdout: string, stderr: string): CliResult => ({
  code,
  stdout,
  stderr,
  json: parse(stdout),
  error: parse(stderr)?.error ?? null,
});

/**
 * Runs the CLI's main() in this process (the command table, parsing, database, output and exit code
 * are the same as a subprocess's; only node's start-up is saved) with only PATH, HOME and `vars` as
 * its environment.
 */
async function cli(
  args: string[],
  vars: Record<string, string> = { DATABASE_URL: env.databaseUrl },
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  // one at a time: main() binds Objection's Model to its knex while it runs
  const run = queue.then(() =>
    main(
      args,
      { PATH: process.env.PATH, HOME: process.env.HOME, ...vars },
      { out: (t) => (stdout += t), err: (t) => (stderr += t) },
    ),
  );
  queue = run.catch(() => 0);
  return result(await run, stdout, stderr);
}
let queue: Promise<number> = Promise.resolve(0);

/** Runs bin/cli.ts as a subprocess (node + tsx), as `npm run cli` does, with only PATH, HOME and `vars`. */
async function spawnCli(
  args: string[],
  vars: Record<string, string> = { DATABASE_URL: env.databaseUrl },
): Promise<CliResult> {
  const r = await execa(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bin', 'cli.ts'), ...args], {
    cwd: ROOT,
    reject: false,
    extendEnv: false,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...vars },
  });
  return result(r.exitCode ?? -1, r.stdout as string, r.stderr as string);
}

/** Asserts a secret appears in neither output stream. */
function expectNotPrinted(r: CliResult, secret: string) {
  expect(r.stdout).not.to.include(secret);
  expect(r.stderr).not.to.include(secret);
}

describe('operator CLI (bin/cli.ts)', function () {
  this.timeout(180_000); // a few cases start node + tsx; generous for a loaded CI box

  it('help (as a subprocess, the npm run cli path) and no command print the usage with every command, exit 0', async () => {
    for (const r of [await spawnCli(['help']), await cli([])]) {
      expect(r.code).to.equal(0);
      for (const c of ['platform-admin:create', 'tenant:create', 'user:create', 'tenant:demo-mode', 'demo:seed'])
        expect(r.stdout).to.include(c);
    }
  });

  it('platform-admin:create: one JSON object, the row with a hash of the password, the password never printed', async () => {
    const email = `ops-${uniq()}@example.test`;
    const password = `pw-${uniq()}-secret`;
    const r = await cli(['platform-admin:create', '--email', email, '--password', password]);
    expect(r.code).to.equal(0);
    expect(r.stdout.trim().split('\n')).to.have.length(1);
    expect(r.json.command).to.equal('platform-admin:create');
    expect(r.json.platform_admin).to.include({ email, is_platform_admin: true });
    expectNotPrinted(r, password);
    const row = await env.knex('users').where({ email }).first();
    expect(row).to.include({ id: r.json.platform_admin.id, is_platform_admin: true, tenant_id: null });
    expect(await verifyPassword(row.password_hash, password)).to.equal(true);

    const dup = await cli(['platform-admin:create', '--email', email.toUpperCase(), '--password', password]);
    expect(dup.code).to.equal(1);
    expect(dup.stdout).to.equal('');
    expect(dup.error).to.deep.equal({
      code: 'CONFLICT',
      message: `A user with e-mail ${email.toUpperCase()} already exists.`,
    });
    expectNotPrinted(dup, password);
  });

  it('tenant:create (with --demo) creates the tenant and its Super Admin', async () => {
    const slug = `cli-${uniq()}`;
    const password = `adm-${uniq()}-pass`;
    const r = await cli([
      'tenant:create',
      '--slug',
      slug,
      '--name',
      'CLI Net',
      '--admin-email',
      `admin@${slug}.test`,
      '--admin-password',
      password,
      '--demo',
    ]);
    expect(r.code).to.equal(0);
    expect(r.json.tenant).to.include({ slug, name: 'CLI Net', demo_mode: true });
    expect(r.json.admin).to.include({ email: `admin@${slug}.test`, tenant_id: r.json.tenant.id });
    expect(r.json.admin.roles).to.deep.equal(['Super Admin']);
    expectNotPrinted(r, password);
    const t = await env.knex('tenants').where({ slug }).first();
    expect(t.demo_mode).to.equal(true);

    const dup = await cli([
      'tenant:create',
      '--slug',
      slug,
      '--name',
      'Again',
      '--admin-email',
      `other@${slug}.test`,
      '--admin-password',
      password,
    ]);
    expect(dup.code).to.equal(1);
    expect(dup.error).to.include({ code: 'CONFLICT', message: `Tenant ${slug} already exists.` });

    const bad = await cli([
      'tenant:create',
      '--slug',
      'Bad Slug!',
      '--name',
      'x',
      '--admin-email',
      'a@b.test',
      '--admin-password',
      password,
    ]);
    expect(bad.code).to.equal(1);
    expect(bad.error.code).to.equal('VALIDATION_FAILED');
    expect(bad.error.errors).to.have.keys(['slug']);
    expect(await env.knex('tenants').where({ slug: 'Bad Slug!' }).first()).to.equal(undefined);
  });

  it('user:create gives the user the role; unknown role, unknown tenant and short password are refused with their messages', async () => {
    const f = await makeTenant();
    const email = `tech-${uniq()}@example.test`;
    const password = `tech-${uniq()}-pw`;
    const r = await cli([
      'user:create',
      '--tenant',
      f.tenant.slug,
      '--email',
      email,
      '--password',
      password,
      '--role',
      'technician',
      '--name',
      'Budi',
    ]);
    expect(r.code).to.equal(0);
    expect(r.json.user).to.include({ email, tenant_id: f.tenant.id, name: 'Budi' });
    expectNotPrinted(r, password);
    const roles = await env
      .knex('user_roles as ur')
      .join('roles as r', 'r.id', 'ur.role_id')
      .where('ur.user_id', r.json.user.id)
      .pluck('r.name');
    expect(roles).to.deep.equal(['technician']);

    const role = await cli([
      'user:create',
      '--tenant',
      f.tenant.slug,
      '--email',
      `x-${uniq()}@example.test`,
      '--password',
      password,
      '--role',
      'boss',
    ]);
    expect(role.code).to.equal(1);
    expect(role.error).to.deep.equal({
      code: 'VALIDATION_FAILED',
      message: 'The role must be one of: Super Admin, Administrator, technician, staff.',
      errors: { role: ['The role must be one of: Super Admin, Administrator, technician, staff.'] },
    });

    const tenant = await cli([
      'user:create',
      '--tenant',
      'no-such-tenant',
      '--email',
      `y-${uniq()}@example.test`,
      '--password',
      password,
      '--role',
      'staff',
    ]);
    expect(tenant.code).to.equal(1);
    expect(tenant.error).to.deep.equal({ code: 'NOT_FOUND', message: 'Tenant no-such-tenant not found.' });

    const short = await cli([
      'user:create',
      '--tenant',
      f.tenant.slug,
      '--email',
      `z-${uniq()}@example.test`,
      '--password',
      'short7!',
      '--role',
      'staff',
    ]);
    expect(short.code).to.equal(1);
    expect(short.error.errors).to.deep.equal({ password: ['The password field must be at least 8 characters.'] });
    expectNotPrinted(short, 'short7!');
  });

  it('tenant:demo-mode switches the flag on and off; both or neither flag is a usage error', async () => {
    const f = await makeTenant();
    const on = await cli(['tenant:demo-mode', '--tenant', f.tenant.slug, '--on']);
    expect(on.code).to.equal(0);
    expect(on.json.tenant).to.include({ id: f.tenant.id, demo_mode: true });
    expect((await env.knex('tenants').where({ id: f.tenant.id }).first()).demo_mode).to.equal(true);
    const off = await cli(['tenant:demo-mode', '--tenant', String(f.tenant.id), '--off']);
    expect(off.json.tenant.demo_mode).to.equal(false);
    expect((await env.knex('tenants').where({ id: f.tenant.id }).first()).demo_mode).to.equal(false);
    for (const flags of [['--on', '--off'], []]) {
      const r = await cli(['tenant:demo-mode', '--tenant', f.tenant.slug, ...flags]);
      expect(r.code).to.equal(2);
      expect(r.error.message).to.match(/exactly one of --on or --off/);
    }
  });

  it('demo:seed --tenant seeds the demo data once', async () => {
    const f = await makeTenant();
    const r = await cli(['demo:seed', '--tenant', f.tenant.slug]);
    expect(r.code).to.equal(0);
    expect(r.json).to.include({ command: 'demo:seed', seeded: true });
    expect(r.json.tenants[0]).to.include({ slug: f.tenant.slug, customers: 50 });
    const again = await cli(['demo:seed', '--tenant', f.tenant.slug]);
    expect(again.json.seeded).to.equal(false);
    const n = await f.scope.table('customers').count({ n: '*' }).first();
    expect(Number(n!.n)).to.equal(50);
    const whole = await cli(['demo:seed']);
    expect(whole.json).to.include({ seeded: false });
    expect(whole.json.reason).to.match(/already has tenants/);
  });

  it('bad arguments: exit 2 with a message naming the command or option; nothing written; values never echoed', async () => {
    const secret = `s3cret-${uniq()}`;
    const cases: [string[], RegExp][] = [
      [['tenant:destroy'], /Unknown command "tenant:destroy"/],
      [
        ['platform-admin:create', '--email', 'a@b.test', '--password', secret, '--admin'],
        /Unknown option --admin for platform-admin:create/,
      ],
      [
        ['platform-admin:create', '--email', 'a@b.test'],
        /Missing required option --password for platform-admin:create/,
      ],
      [['user:create', '--tenant', 'x', '--email', 'a@b.test', '--password', secret], /Missing required option --role/],
      [
        ['platform-admin:create', '--email', 'a@b.test', '--password'],
        /Option --password of platform-admin:create needs a value/,
      ],
      [['platform-admin:create', '--email', 'a@b.test', '--password', 'two', secret], /takes no positional arguments/],
      [['demo:seed', '--size', 'huge'], /--size must be full or small/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(args)));
    for (const [i, [args, message]] of cases.entries()) {
      const r = results[i];
      expect(r.code, args.join(' ')).to.equal(2);
      expect(r.error.code).to.equal('USAGE');
      expect(r.error.message).to.match(message);
      expect(r.stdout).to.equal('');
      expectNotPrinted(r, secret);
    }
    // the subprocess exits with main()'s code and prints the same JSON error
    const spawned = await spawnCli(cases[0][0]);
    expect(spawned.code).to.equal(2);
    expect(spawned.error.message).to.match(cases[0][1]);
    expect(await env.knex('users').where({ email: 'a@b.test' }).first()).to.equal(undefined);
  });

  it('without DATABASE_URL: starts the embedded server of the data dir for the command (initialised and migrated) and stops it', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-cli-'));
    try {
      const r = await spawnCli(
        ['platform-admin:create', '--email', 'first@example.test', '--password', 'first-pass-1'],
        {
          DATA_DIR: dataDir,
        },
      );
      expect(r.code, r.stderr).to.equal(0);
      expect(r.json.platform_admin.email).to.equal('first@example.test');
      const meta = JSON.parse(await fs.readFile(path.join(dataDir, 'postgres.json'), 'utf8'));
      expect(await portOpen(meta.port)).to.equal(false);
      // the same database again: the admin is there
      const dup = await spawnCli(
        ['platform-admin:create', '--email', 'first@example.test', '--password', 'first-pass-1'],
        {
          DATA_DIR: dataDir,
        },
      );
      expect(dup.error.code).to.equal('CONFLICT');
      expect(await portOpen(meta.port)).to.equal(false);

      // while the platform runs (a server on that data dir is up): the CLI uses it and leaves it running
      const pg = await startEmbeddedPostgres(path.join(dataDir, 'postgres'), 'isp');
      try {
        const t = await spawnCli(
          [
            'tenant:create',
            '--slug',
            'live-net',
            '--name',
            'Live',
            '--admin-email',
            'admin@live.test',
            '--admin-password',
            'live-pass-1',
          ],
          { DATA_DIR: dataDir },
        );
        expect(t.code, t.stderr).to.equal(0);
        expect(await portOpen(pg.port)).to.equal(true);
        const { default: knexPkg } = await import('knex');
        const k = knexPkg.knex({ client: 'pg', connection: pg.url });
        try {
          expect(await k('tenants').pluck('slug')).to.deep.equal(['live-net']);
          expect(await k('users').orderBy('id').pluck('email')).to.deep.equal([
            'first@example.test',
            'admin@live.test',
          ]);
        } finally {
          await k.destroy();
        }
      } finally {
        await pg.stop();
      }
    } finally {
      await removeSystemState(dataDir); // as root the cluster lives outside dataDir
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
