import { isIP } from 'node:net';
import type { Knex } from 'knex';
import { seal, open } from '../../../lib/crypto.js';
import { ValidationFailed, NotFound, type FieldErrors } from '../../errors.js';
import { queryAjv, coerceQuery, compile, toFieldErrors, type Schema } from '../../http/validation.js';

/**
 * Domains and registered mailboxes of the Mailbox API (issue 3 §1 and §5, document 3): a domain
 * carries its IMAP/SMTP endpoints and, optionally, the mail-hosting control panel that creates its
 * mailboxes ({type, host, port, user, password, ssh_key_path, ssl}). The panel password is sealed
 * with AES-256-GCM under APP_KEY (lib/crypto.ts, aad 'mail_domains.panel_password') and is never
 * shown back: views say "set" or "not set".
 */

/** Associated data of the sealed panel password (binds the ciphertext to its column). */
export const PANEL_PASSWORD_AAD = 'mail_domains.panel_password';
export const SECURITY = ['ssl', 'starttls', 'none'] as const;
export type Security = (typeof SECURITY)[number];
export const PANEL_TYPES = ['cpanel', 'directadmin', 'hestia'] as const;
export type PanelType = (typeof PANEL_TYPES)[number];
/** Default panel ports: cPanel UAPI over https, DirectAdmin, HestiaCP over SSH. */
export const PANEL_DEFAULT_PORT: Record<PanelType, number> = { cpanel: 2083, directadmin: 2222, hestia: 22 };

/**
 * Domain input, flat (the dashboard form and the CLI send these names). Ports may be numeric
 * strings. `panel_type` empty or null means "no panel" (all panel fields are then cleared).
 * On update an empty `panel_password` keeps the stored one; `clear_panel_password` removes it.
 */
export interface DomainInput {
  name?: string;
  imap_host?: string;
  imap_port?: number | string;
  imap_security?: string;
  smtp_host?: string;
  smtp_port?: number | string;
  smtp_security?: string;
  panel_type?: string | null;
  panel_host?: string | null;
  panel_port?: number | string | null;
  panel_user?: string | null;
  panel_password?: string | null;
  panel_ssh_key_path?: string | null;
  panel_ssl?: boolean | string | null;
  clear_panel_password?: boolean;
}

/** The panel as shown back: the password only as "set" / "not set". */
export interface PanelView {
  type: PanelType;
  host: string;
  port: number;
  user: string;
  ssh_key_path: string | null;
  ssl: boolean;
  password: 'set' | 'not set';
}

/** A domain as the dashboard and the CLI show it. */
export interface DomainView {
  id: number;
  name: string;
  imap_host: string;
  imap_port: number;
  imap_security: Security;
  smtp_host: string;
  smtp_port: number;
  smtp_security: Security;
  panel: PanelView | null;
  mailbox_count: number;
  created_at: string;
  updated_at: string;
}

/** Panel configuration with the opened password, as jobs/adapters/mail-panel createMailPanel() takes it. */
export interface DomainPanelConfig {
  type: PanelType;
  host: string;
  port: number;
  user: string;
  password?: string;
  ssh_key_path?: string;
  ssl: boolean;
}

const HOST_LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const DOMAIN_NAME = new RegExp(`^(?=.{1,253}$)${HOST_LABEL}(?:\\.${HOST_LABEL})+$`);
const HOSTNAME = new RegExp(`^(?=.{1,253}$)${HOST_LABEL}(?:\\.${HOST_LABEL})*$`);

const str = (max: number) => ({ type: 'string', minLength: 1, maxLength: max });
const portSchema = { type: 'integer', minimum: 1, maximum: 65535 };
const DOMAIN_SCHEMA: Schema = {
  type: 'object',
  required: ['name', 'imap_host', 'imap_port', 'imap_security', 'smtp_host', 'smtp_port', 'smtp_security'],
  properties: {
    name: str(253),
    imap_host: str(253),
    imap_port: portSchema,
    imap_security: { type: 'string', enum: [...SECURITY] },
    smtp_host: str(253),
    smtp_port: portSchema,
    smtp_security: { type: 'string', enum: [...SECURITY] },
    panel_type: { type: 'string', enum: [...PANEL_TYPES] },
    panel_host: str(253),
    panel_port: portSchema,
    panel_user: str(190),
    panel_password: { type: 'string', minLength: 1, maxLength: 1024 },
    panel_ssh_key_path: { type: 'string', minLength: 1, maxLength: 500 },
    panel_ssl: { type: 'boolean' },
  },
};

function trimmed(v: unknown): unknown {
  if (typeof v !== 'string') return v ?? undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
}

function defaultPort(kind: 'imap' | 'smtp', security: unknown): number {
  if (kind === 'imap') return security === 'ssl' ? 993 : 143;
  return security === 'ssl' ? 465 : security === 'starttls' ? 587 : 25;
}

function checkHost(errors: FieldErrors, field: string, v: unknown): void {
  if (typeof v === 'string' && !errors[field] && !HOSTNAME.test(v.toLowerCase()) && !isIP(v)) {
    errors[field] = [`The ${field.replace(/_/g, ' ')} field must be a host name or an IP address.`];
  }
}

/**
 * Normalises and validates domain input.
 * @param existing the stored row on update (its sealed password counts as "set"); name is then kept
 * @returns the column values to write (panel password still plain; sealed by the caller)
 * @throws ValidationFailed (422) with field errors
 */
function normalise(input: DomainInput, existing?: Record<string, any>): Record<string, any> {
  const v: Record<string, any> = {};
  for (const [k, raw] of Object.entries(input))
    if (k !== 'clear_panel_password')
      v[k] = k === 'panel_password' ? (raw === '' || raw == null ? undefined : raw) : trimmed(raw);
  if (existing) v.name = existing.name;
  if (typeof v.name === 'string') v.name = v.name.toLowerCase().replace(/\.$/, '');
  for (const k of ['imap_host', 'smtp_host', 'panel_host']) if (typeof v[k] === 'string') v[k] = v[k].toLowerCase();
  for (const k of ['imap_security', 'smtp_security', 'panel_type'])
    if (typeof v[k] === 'string') v[k] = v[k].toLowerCase();
  v.imap_security ??= 'ssl';
  v.smtp_security ??= 'ssl';
  v.imap_port ??= defaultPort('imap', v.imap_security);
  v.smtp_port ??= defaultPort('smtp', v.smtp_security);
  if (typeof v.panel_ssl === 'string') v.panel_ssl = !['false', '0', 'no', 'off'].includes(v.panel_ssl.toLowerCase());
  const panel = v.panel_type !== undefined && v.panel_type !== null;
  if (!panel)
    for (const k of ['panel_host', 'panel_port', 'panel_user', 'panel_password', 'panel_ssh_key_path', 'panel_ssl'])
      delete v[k];
  else {
    if (PANEL_TYPES.includes(v.panel_type)) v.panel_port ??= PANEL_DEFAULT_PORT[v.panel_type as PanelType];
    v.panel_ssl ??= true;
  }
  for (const k of Object.keys(v)) if (v[k] === undefined) delete v[k];
  const fn = compile(queryAjv, DOMAIN_SCHEMA);
  coerceQuery(DOMAIN_SCHEMA, v); // form strings: only plain digits become port numbers
  const errors: FieldErrors = fn(v) ? {} : toFieldErrors(fn.errors);
  if (typeof v.name === 'string' && !errors.name && !DOMAIN_NAME.test(v.name))
    errors.name = ['The name field must be a domain name such as example.com.'];
  for (const k of ['imap_host', 'smtp_host', 'panel_host']) checkHost(errors, k, v[k]);
  if (panel) {
    if (!v.panel_host && !errors.panel_host)
      errors.panel_host = ['The panel host field is required when a panel type is chosen.'];
    if (!v.panel_user && !errors.panel_user)
      errors.panel_user = ['The panel user field is required when a panel type is chosen.'];
    if (
      typeof v.panel_ssh_key_path === 'string' &&
      !errors.panel_ssh_key_path &&
      (!v.panel_ssh_key_path.startsWith('/') || /[\0\r\n]/.test(v.panel_ssh_key_path))
    ) {
      errors.panel_ssh_key_path = ['The panel ssh key path field must be an absolute file path.'];
    }
    const hasPassword =
      v.panel_password !== undefined || (!!existing?.panel_password_enc && !input.clear_panel_password);
    if (v.panel_type === 'hestia') {
      if (!v.panel_ssh_key_path && !hasPassword && !errors.panel_ssh_key_path)
        errors.panel_ssh_key_path = [
          'The panel ssh key path field is required for hestia unless a panel password is given.',
        ];
    } else if (PANEL_TYPES.includes(v.panel_type) && !hasPassword && !errors.panel_password) {
      errors.panel_password = [`The panel password field is required for ${v.panel_type}.`];
    }
  }
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return v;
}

function columns(
  appKey: Buffer,
  v: Record<string, any>,
  existing?: Record<string, any>,
  clearPassword = false,
): Record<string, unknown> {
  const panel = !!v.panel_type;
  let sealed: string | null = null;
  if (panel) {
    if (v.panel_password !== undefined) sealed = seal(appKey, v.panel_password, PANEL_PASSWORD_AAD);
    else if (existing && !clearPassword) sealed = existing.panel_password_enc ?? null;
  }
  return {
    name: v.name,
    imap_host: v.imap_host,
    imap_port: v.imap_port,
    imap_security: v.imap_security,
    smtp_host: v.smtp_host,
    smtp_port: v.smtp_port,
    smtp_security: v.smtp_security,
    panel_type: panel ? v.panel_type : null,
    panel_host: panel ? v.panel_host : null,
    panel_port: panel ? v.panel_port : null,
    panel_user: panel ? v.panel_user : null,
    panel_password_enc: sealed,
    panel_ssh_key_path: panel ? (v.panel_ssh_key_path ?? null) : null,
    panel_ssl: panel ? v.panel_ssl : true,
  };
}

function domainView(r: Record<string, any>): DomainView {
  return {
    id: r.id,
    name: r.name,
    imap_host: r.imap_host,
    imap_port: r.imap_port,
    imap_security: r.imap_security,
    smtp_host: r.smtp_host,
    smtp_port: r.smtp_port,
    smtp_security: r.smtp_security,
    panel: r.panel_type
      ? {
          type: r.panel_type,
          host: r.panel_host,
          port: r.panel_port,
          user: r.panel_user,
          ssh_key_path: r.panel_ssh_key_path ?? null,
          ssl: !!r.panel_ssl,
          password: r.panel_password_enc ? 'set' : 'not set',
        }
      : null,
    mailbox_count: Number(r.mailbox_count ?? 0),
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

function domainQuery(knex: Knex | Knex.Transaction) {
  return knex('mail_domains as d').select(
    'd.*',
    knex.raw('(SELECT count(*) FROM mail_mailboxes m WHERE m.domain_id = d.id)::int AS mailbox_count'),
  );
}

/**
 * Adds a domain.
 * @param appKey 32-byte APP_KEY (seals the panel password)
 * @throws ValidationFailed (422) with field errors, including a name already registered
 */
export async function addDomain(knex: Knex, appKey: Buffer, input: DomainInput): Promise<DomainView> {
  const v = normalise(input);
  if (await knex('mail_domains').where({ name: v.name }).first('id'))
    throw new ValidationFailed({ name: ['This domain is already registered.'] });
  try {
    const [row] = await knex('mail_domains').insert(columns(appKey, v)).returning('id');
    return (await getDomain(knex, row.id))!;
  } catch (e) {
    if ((e as { code?: string }).code === '23505')
      throw new ValidationFailed({ name: ['This domain is already registered.'] });
    throw e;
  }
}

/**
 * Updates a domain's endpoints and panel (the name cannot change: its mailboxes carry it).
 * An empty panel_password keeps the stored one; `clear_panel_password` removes it.
 * @throws NotFound (404) for an unknown id; ValidationFailed (422) with field errors
 */
export async function updateDomain(knex: Knex, appKey: Buffer, id: number, input: DomainInput): Promise<DomainView> {
  const existing = await knex('mail_domains').where({ id }).first();
  if (!existing) throw new NotFound('Domain');
  const v = normalise(input, existing);
  await knex('mail_domains')
    .where({ id })
    .update({ ...columns(appKey, v, existing, !!input.clear_panel_password), updated_at: knex.fn.now() });
  return (await getDomain(knex, id))!;
}

/** Lists domains by name, with their mailbox counts. */
export async function listDomains(knex: Knex): Promise<DomainView[]> {
  return (await domainQuery(knex).orderBy('d.name')).map(domainView);
}

/** One domain by id (or null). */
export async function getDomain(knex: Knex, id: number): Promise<DomainView | null> {
  if (!Number.isSafeInteger(id) || id < 1 || id > 2147483647) return null;
  const row = await domainQuery(knex).where('d.id', id).first();
  return row ? domainView(row) : null;
}

/** One domain by name, case-insensitively (or null). */
export async function getDomainByName(knex: Knex, name: string): Promise<DomainView | null> {
  const row = await domainQuery(knex).where('d.name', String(name).trim().toLowerCase()).first();
  return row ? domainView(row) : null;
}

/**
 * The panel configuration of a domain with its password opened (for the mailbox-create job).
 * @returns null when the domain has no panel
 * @throws NotFound for an unknown domain; Error when the sealed password does not open with this key
 */
export async function domainPanelConfig(
  knex: Knex,
  appKey: Buffer,
  domainId: number,
): Promise<DomainPanelConfig | null> {
  const r = await knex('mail_domains').where({ id: domainId }).first();
  if (!r) throw new NotFound('Domain');
  if (!r.panel_type) return null;
  const cfg: DomainPanelConfig = {
    type: r.panel_type,
    host: r.panel_host,
    port: r.panel_port,
    user: r.panel_user,
    ssl: !!r.panel_ssl,
  };
  if (r.panel_password_enc) cfg.password = open(appKey, r.panel_password_enc, PANEL_PASSWORD_AAD);
  if (r.panel_ssh_key_path) cfg.ssh_key_path = r.panel_ssh_key_path;
  return cfg;
}
