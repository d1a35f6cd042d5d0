/**
 * Mailbox API commands of the operator CLI (issue 3 §6): `npm run cli -- mail:<...> [options]`.
 * The table is merged into bin/cli.ts's COMMANDS, which parses the options (node:util parseArgs),
 * opens the database (DATABASE_URL or the embedded one of .data/), prints `{command, ...result}` as
 * JSON on stdout and errors as JSON on stderr with a non-zero exit code. Passwords given here are
 * never printed back (the panel password shows as "set"); the plain API key of mail:key:create is
 * printed once and stored nowhere.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import { dataDirSetting, inheritedEnv, parseAppKey } from '../lib/config.js';
import { resolveAppKey } from '../lib/infra/embedded.js';
import { NotFound, ValidationFailed } from '../api/errors.js';
import { createOperator } from '../api/mail/operators/service.js';
import { addDomain, getDomainByName } from '../api/mail/domains/service.js';
import { addMailbox, findMailboxesByEmail } from '../api/mail/domains/mailboxes.js';
import {
  createApiKey,
  listApiKeys,
  revokeApiKey,
  KeyInputError,
  MAIL_SCOPES,
  PERMISSION_SETS,
} from '../api/mail/keys/service.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

type Values = Record<string, string | boolean | undefined>;

/** One mail command, in the shape of bin/cli.ts's command table. */
export interface MailCommand {
  summary: string;
  options: Record<string, { type: 'string' | 'boolean'; required?: boolean; help: string }>;
  /** Extra checks beyond required options; returns an error message or null. */
  check?: (v: Values) => string | null;
  /** `env`: the environment bin/cli.ts's main() was given (APP_KEY, DATA_DIR) */
  run: (knex: Knex, v: Values, env: NodeJS.ProcessEnv) => Promise<Record<string, unknown>>;
}

/**
 * APP_KEY for commands that seal secrets: APP_KEY from the environment, else `<DATA_DIR|.data>/app.key`
 * (generated there once if missing, as `npm start` would).
 * @throws ConfigError when the key is not 32 bytes
 */
export async function cliAppKey(env: NodeJS.ProcessEnv = inheritedEnv()): Promise<Buffer> {
  const { value } = await resolveAppKey(env, path.resolve(ROOT, dataDirSetting(env)));
  return parseAppKey(value);
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const csv = (v: unknown): string[] =>
  typeof v === 'string'
    ? v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : [];

/** The mail command table (merged into bin/cli.ts's COMMANDS). */
export const MAIL_COMMANDS: Record<string, MailCommand> = {
  'mail:operator:create': {
    summary: 'Create a Mailbox API dashboard operator (signs in at MAIL_BASE_URL/login)',
    options: {
      email: { type: 'string', required: true, help: 'login e-mail' },
      password: { type: 'string', required: true, help: 'at least 10 characters (stored as an argon2id hash)' },
      name: { type: 'string', help: "display name (default: the e-mail's local part)" },
    },
    run: async (knex, v) => ({
      operator: await createOperator(knex, { email: v.email, password: v.password, name: v.name }),
    }),
  },
  'mail:domain:add': {
    summary: 'Register a mail domain with its IMAP/SMTP servers and, optionally, its control panel',
    options: {
      name: { type: 'string', required: true, help: 'domain name, e.g. example.com' },
      'imap-host': { type: 'string', required: true, help: 'IMAP server host' },
      'imap-port': { type: 'string', help: 'IMAP port (default 993 for ssl, else 143)' },
      'imap-security': { type: 'string', help: 'ssl, starttls or none (default ssl)' },
      'smtp-host': { type: 'string', required: true, help: 'SMTP server host' },
      'smtp-port': { type: 'string', help: 'SMTP port (default 465 for ssl, 587 for starttls, 25 for none)' },
      'smtp-security': { type: 'string', help: 'ssl, starttls or none (default ssl)' },
      'panel-type': { type: 'string', help: 'cpanel, directadmin or hestia (omit: no panel)' },
      'panel-host': { type: 'string', help: 'panel host' },
      'panel-port': { type: 'string', help: 'panel port (default cpanel 2083, directadmin 2222, hestia 22)' },
      'panel-user': { type: 'string', help: 'panel user' },
      'panel-password': { type: 'string', help: 'panel password (stored encrypted under APP_KEY, never printed)' },
      'panel-ssh-key-path': { type: 'string', help: 'hestia: absolute path of the SSH private key file' },
      'panel-ssl': { type: 'boolean', help: 'use https for the panel API (default)' },
      'no-panel-ssl': { type: 'boolean', help: 'use plain http for the panel API' },
    },
    check: (v) => (v['panel-ssl'] && v['no-panel-ssl'] ? 'Give at most one of --panel-ssl and --no-panel-ssl.' : null),
    run: async (knex, v, env) => ({
      domain: await addDomain(knex, await cliAppKey(env), {
        name: str(v.name),
        imap_host: str(v['imap-host']),
        imap_port: str(v['imap-port']),
        imap_security: str(v['imap-security']),
        smtp_host: str(v['smtp-host']),
        smtp_port: str(v['smtp-port']),
        smtp_security: str(v['smtp-security']),
        panel_type: str(v['panel-type']) ?? null,
        panel_host: str(v['panel-host']),
        panel_port: str(v['panel-port']),
        panel_user: str(v['panel-user']),
        panel_password: str(v['panel-password']),
        panel_ssh_key_path: str(v['panel-ssh-key-path']),
        panel_ssl: v['no-panel-ssl'] === true ? false : true,
      }),
    }),
  },
  'mail:mailbox:add': {
    summary: 'Register an existing mailbox of a registered domain (its password is never asked for)',
    options: {
      email: { type: 'string', required: true, help: 'local_part@domain (lowercased)' },
      'display-name': { type: 'string', help: 'display name' },
    },
    run: async (knex, v) => ({ mailbox: await addMailbox(knex, { email: v.email, display_name: v['display-name'] }) }),
  },
  'mail:key:create': {
    summary: 'Create a Mailbox API key limited to mailboxes and scopes; prints the key once',
    options: {
      name: { type: 'string', required: true, help: 'key name' },
      scopes: { type: 'string', help: `comma list of ${MAIL_SCOPES.join(', ')}` },
      permission: {
        type: 'string',
        help: "instead of --scopes: read, reply or full (the dashboard's permission sets)",
      },
      mailboxes: { type: 'string', help: 'comma list of registered mailboxes, all of one domain' },
      domain: {
        type: 'string',
        help: "the key's domain (default: the mailboxes' domain; required without --mailboxes)",
      },
    },
    check: (v) => {
      if ((v.scopes === undefined) === (v.permission === undefined))
        return 'Give exactly one of --scopes or --permission.';
      if (v.permission !== undefined && !Object.hasOwn(PERMISSION_SETS, String(v.permission)))
        return 'Option --permission must be read, reply or full.';
      if (!csv(v.mailboxes).length && !v.domain) return 'Give --mailboxes (and/or --domain).';
      return null;
    },
    run: async (knex, v) => {
      const wanted = csv(v.mailboxes).map((e) => e.toLowerCase());
      const boxes = await findMailboxesByEmail(knex, wanted);
      const missing = wanted.filter((e) => !boxes.some((b) => b.email === e));
      if (missing.length)
        throw new ValidationFailed({
          mailboxes: [`Not registered: ${missing.join(', ')}. Add them with mail:mailbox:add first.`],
        });
      const domainName = str(v.domain) ?? boxes[0]?.domain;
      const domain = domainName ? await getDomainByName(knex, domainName) : null;
      if (!domain)
        throw new ValidationFailed({
          domain: [`The domain ${domainName ?? ''} is not registered.`.replace('  ', ' ')],
        });
      const foreign = boxes.filter((b) => b.domain_id !== domain.id).map((b) => b.email);
      if (foreign.length)
        throw new ValidationFailed({
          mailboxes: [`Every mailbox must belong to ${domain.name}: ${foreign.join(', ')}.`],
        });
      const scopes =
        v.permission !== undefined ? PERMISSION_SETS[v.permission as keyof typeof PERMISSION_SETS] : csv(v.scopes);
      try {
        const { data, key } = await createApiKey(knex, {
          name: String(v.name),
          domainId: domain.id,
          mailboxIds: boxes.map((b) => b.id),
          scopes,
        });
        return { key, data, notice: 'The key is shown only this once; only its hash is stored.' };
      } catch (e) {
        if (e instanceof KeyInputError) throw new ValidationFailed({ [e.field]: [e.message] });
        throw e;
      }
    },
  },
  'mail:key:list': {
    summary: 'List Mailbox API keys (prefix, scopes, domain, mailboxes, last use; never the key)',
    options: {},
    run: async (knex) => ({ data: await listApiKeys(knex) }),
  },
  'mail:key:revoke': {
    summary: 'Revoke a Mailbox API key (clients using it get 401 unauthorized)',
    options: { id: { type: 'string', required: true, help: 'key id (the number in mbxk_<id>_...)' } },
    check: (v) => (/^[1-9][0-9]{0,15}$/.test(String(v.id)) ? null : 'Option --id must be a positive integer.'),
    run: async (knex, v) => {
      const id = Number(v.id);
      const [before] = await listApiKeys(knex, { id });
      if (!before) throw new NotFound('API key');
      const revoked = await revokeApiKey(knex, id);
      const [data] = await listApiKeys(knex, { id });
      return { revoked, already_revoked: !revoked, data };
    },
  },
};
