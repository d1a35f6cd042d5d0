/**
 * Operator CLI (issue 2 §10): `npm run cli -- <command> [options]`.
 * Prints one JSON object on stdout; errors as one JSON object `{error: {code, message, errors?}}` on
 * stderr with exit code 2 (bad arguments) or 1 (refused or failed). Works against DATABASE_URL when
 * set, else against the embedded PostgreSQL of .data/ (DATA_DIR): the running one of `npm start`
 * when it is up, otherwise started for the command and stopped afterwards. Passwords given on the
 * command line are never printed back.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { AppError } from '../api/errors.js';
import { createPlatformAdmin, createTenant, createUser, setDemoMode } from '../api/tenants/service.js';
import { ROLES } from '../api/tenants/catalog.js';
import { createKnex, migrateLatest, type Knex } from '../db/knex.js';
import { Model } from 'objection';
import { resolveDatabase } from '../lib/infra/embedded.js';
import { dataDirSetting, inheritedEnv } from '../lib/config.js';
import { MAIL_COMMANDS } from './cli-mail.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

type Opt = { type: 'string' | 'boolean'; required?: boolean; help: string };

/** One CLI command: its options and what it does with a database. */
interface Command {
  summary: string;
  options: Record<string, Opt>;
  /** Extra checks beyond required options; returns an error message or null. */
  check?: (v: Record<string, string | boolean | undefined>) => string | null;
  /** `env`: the environment main() was given (APP_KEY, DATA_DIR, ...) */
  run: (
    knex: Knex,
    v: Record<string, string | boolean | undefined>,
    env: NodeJS.ProcessEnv,
  ) => Promise<Record<string, unknown>>;
}

/** Where main() writes: stdout gets the one JSON result (or the usage), stderr the JSON error. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

const processIo: CliIo = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
};

const s = (v: unknown) => v as string;

/** The command table (also the source of `help`). */
export const COMMANDS: Record<string, Command> = {
  'platform-admin:create': {
    summary: 'Create a platform admin (may open bull-board and provisioning)',
    options: {
      email: { type: 'string', required: true, help: 'login e-mail' },
      password: { type: 'string', required: true, help: 'at least 8 characters' },
      name: { type: 'string', help: 'display name (default "Platform Admin")' },
    },
    run: async (knex, v) => ({
      platform_admin: await createPlatformAdmin(knex, {
        email: s(v.email),
        password: s(v.password),
        name: v.name as string | undefined,
      }),
    }),
  },
  'tenant:create': {
    summary: 'Create a tenant and its Super Admin user',
    options: {
      slug: { type: 'string', required: true, help: 'a-z, 0-9 and dashes, 2-63 characters' },
      name: { type: 'string', required: true, help: 'display name' },
      'admin-email': { type: 'string', required: true, help: "e-mail of the tenant's Super Admin" },
      'admin-password': { type: 'string', required: true, help: 'at least 8 characters' },
      demo: { type: 'boolean', help: 'create the tenant in demo mode' },
    },
    run: async (knex, v) => {
      const { tenant, admin } = await createTenant(knex, {
        slug: s(v.slug),
        name: s(v.name),
        adminEmail: s(v['admin-email']),
        adminPassword: s(v['admin-password']),
        demo: v.demo === true,
      });
      return { tenant, admin };
    },
  },
  'user:create': {
    summary: 'Create a user in a tenant with a built-in role',
    options: {
      tenant: { type: 'string', required: true, help: 'tenant slug or id' },
      email: { type: 'string', required: true, help: 'login e-mail' },
      password: { type: 'string', required: true, help: 'at least 8 characters' },
      role: { type: 'string', required: true, help: ROLES.map((r) => `"${r}"`).join(', ') },
      name: { type: 'string', help: "display name (default: the e-mail's local part)" },
    },
    run: async (knex, v) => ({
      user: await createUser(knex, {
        tenant: s(v.tenant),
        email: s(v.email),
        password: s(v.password),
        role: s(v.role),
        name: v.name as string | undefined,
      }),
    }),
  },
  'tenant:demo-mode': {
    summary: "Switch a tenant's demo mode on or off",
    options: {
      tenant: { type: 'string', required: true, help: 'tenant slug or id' },
      on: { type: 'boolean', help: 'switch demo mode on' },
      off: { type: 'boolean', help: 'switch demo mode off' },
    },
    check: (v) => (v.on === v.off ? 'Give exactly one of --on or --off.' : null),
    run: async (knex, v) => ({ tenant: await setDemoMode(knex, s(v.tenant), v.on === true) }),
  },
  'demo:seed': {
    summary: 'Seed demo data: into one tenant (--tenant), or the whole demo platform into an empty database',
    options: {
      tenant: { type: 'string', help: 'tenant slug or id (omit: whole demo platform, empty database only)' },
      size: { type: 'string', help: 'full (50 customers) or small (12); default small for demo-mode tenants' },
    },
    check: (v) =>
      v.size !== undefined && v.size !== 'full' && v.size !== 'small' ? 'Option --size must be full or small.' : null,
    run: async (knex, v) => {
      // imported here: the seeds are a large module tree every other command would load for nothing
      const { DEMO_LOGINS, DEMO_PASSWORD, seedDemo } = await import('../db/seeds/demo.js');
      const r = await seedDemo(knex, {
        tenant: v.tenant as string | undefined,
        size: v.size as 'full' | 'small' | undefined,
      });
      const logins =
        r.seeded && v.tenant === undefined ? DEMO_LOGINS.map((l) => ({ ...l, password: DEMO_PASSWORD })) : undefined;
      return { ...r, ...(logins ? { logins } : {}) };
    },
  },
  // issue 3 §6: mail:operator:create, mail:domain:add, mail:mailbox:add, mail:key:create, mail:key:revoke
  ...MAIL_COMMANDS,
};

/** Usage text (stdout for `help`). */
export function usage(): string {
  const lines = ['Usage: npm run cli -- <command> [options]', '', 'Commands:'];
  for (const [name, c] of Object.entries(COMMANDS)) {
    lines.push(`  ${name}`, `      ${c.summary}`);
    for (const [o, d] of Object.entries(c.options))
      lines.push(`      --${o}${d.type === 'string' ? ' <value>' : ''}${d.required ? ' (required)' : ''}  ${d.help}`);
  }
  lines.push(
    '  help',
    '      Show this text',
    '',
    'Database: DATABASE_URL when set; else the embedded PostgreSQL in .data/ (DATA_DIR), running or not.',
    'Output: one JSON object on stdout; errors as JSON on stderr (exit 2: bad arguments, 1: refused or failed).',
  );
  return lines.join('\n');
}

/** A command-line mistake: exit code 2. */
export class UsageError extends Error {}

/**
 * Parses argv (without node and script) into a command and its option values.
 * @throws UsageError naming the unknown command, unknown option, missing value or missing required option
 */
export function parseCommand(
  argv: string[],
): { name: string; values: Record<string, string | boolean | undefined> } | 'help' {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') return 'help';
  const cmd = COMMANDS[name];
  if (!cmd) throw new UsageError(`Unknown command "${name}". Commands: ${Object.keys(COMMANDS).join(', ')}, help.`);
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: rest,
      strict: true,
      allowPositionals: false,
      options: Object.fromEntries(Object.entries(cmd.options).map(([k, o]) => [k, { type: o.type }])),
    }) as { values: Record<string, string | boolean | undefined> });
  } catch (e) {
    const err = e as { code?: string; message: string };
    const opt = /'(--?[^'= <]+)/.exec(err.message)?.[1];
    const known = Object.keys(cmd.options)
      .map((o) => `--${o}`)
      .join(', ');
    if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
      throw new UsageError(`Unknown option ${opt} for ${name}. Options: ${known}.`);
    if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
      throw new UsageError(
        `Option ${opt} of ${name} needs a value (write --option=value when the value starts with a dash).`,
      );
    // never echo the argument: it may be part of a password that was not quoted
    if (err.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
      throw new UsageError(
        `${name} takes no positional arguments (quote values that contain spaces). Options: ${known}.`,
      );
    throw new UsageError(`Bad arguments for ${name}.`);
  }
  for (const [k, o] of Object.entries(cmd.options)) {
    if (o.required && (values[k] === undefined || values[k] === ''))
      throw new UsageError(`Missing required option --${k} for ${name}.`);
  }
  const problem = cmd.check?.(values);
  if (problem) throw new UsageError(`${name}: ${problem}`);
  return { name, values };
}

function fail(io: CliIo, code: string, message: string, exit: number, errors?: Record<string, string[]>): number {
  io.err(`${JSON.stringify({ error: { code, message, ...(errors ? { errors } : {}) } })}\n`);
  return exit;
}

/**
 * Runs the CLI: parse, connect (starting the embedded PostgreSQL when needed), run, print.
 * Objection's Model binding is restored afterwards, so a caller in the same process (the tests) keeps
 * its own knex.
 * @param argv the arguments after the script name
 * @param env the environment (DATABASE_URL, DATA_DIR, APP_KEY, ...)
 * @param io where the JSON result and the JSON error go (default: the process's stdout and stderr)
 * @returns the process exit code: 0 done, 1 refused or failed, 2 bad arguments
 */
export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv = inheritedEnv(),
  io: CliIo = processIo,
): Promise<number> {
  let parsed;
  try {
    parsed = parseCommand(argv);
  } catch (e) {
    if (e instanceof UsageError) return fail(io, 'USAGE', `${e.message} Run "npm run cli -- help" for usage.`, 2);
    throw e;
  }
  if (parsed === 'help') {
    io.out(`${usage()}\n`);
    return 0;
  }

  const dataDir = path.resolve(ROOT, dataDirSetting(env));
  let db;
  try {
    db = await resolveDatabase(env, dataDir, { reuseRunning: true });
  } catch (e) {
    return fail(io, 'DATABASE_UNAVAILABLE', e instanceof Error ? e.message : String(e), 1);
  }
  const bound = (() => {
    try {
      return Model.knex();
    } catch {
      return undefined;
    }
  })();
  const knex = createKnex(db.url, { min: 0, max: 2 });
  try {
    // a server started here may be a fresh data dir: bring its schema up to date
    if (db.source === 'started') await migrateLatest(knex);
    const result = await COMMANDS[parsed.name].run(knex, parsed.values, env);
    io.out(`${JSON.stringify({ command: parsed.name, ...result })}\n`);
    return 0;
  } catch (e) {
    if (e instanceof AppError) return fail(io, e.code, e.message, 1, e.errors);
    const pgCode = (e as { code?: string }).code;
    if (pgCode === '42P01')
      return fail(
        io,
        'SCHEMA_MISSING',
        'The database has no schema yet: run the migrations first (npm run release).',
        1,
      );
    if (pgCode === 'ECONNREFUSED' || pgCode === '28P01' || pgCode === '3D000') {
      return fail(io, 'DATABASE_UNAVAILABLE', `Cannot use the database (${pgCode}): check DATABASE_URL.`, 1);
    }
    return fail(io, 'FAILED', e instanceof Error ? e.message.split('\n')[0] : String(e), 1);
  } finally {
    await knex.destroy();
    if (bound) Model.knex(bound);
    await db.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      process.exit(fail(processIo, 'FAILED', e instanceof Error ? e.message : String(e), 1));
    },
  );
}
