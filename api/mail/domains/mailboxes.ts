import type { Knex } from 'knex';
import { ValidationFailed } from '../../errors.js';
import { getDomain, getDomainByName, type DomainView } from './service.js';

/**
 * Registered mailboxes of the Mailbox API (issue 3 §5, document 3): the addresses a domain's keys
 * may open. Registration only; the panel route creates mailboxes on the mail server (jobs/mailbox-create.ts).
 */

/** A registered mailbox. */
export interface MailboxView {
  id: number;
  domain_id: number;
  domain: string;
  email: string;
  local_part: string;
  display_name: string | null;
  created_at: string;
}

/** RFC 5322 dot-atom local part, lowercase, at most 64 characters. */
const LOCAL_PART = /^(?=.{1,64}$)[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

function mailboxView(r: Record<string, any>): MailboxView {
  return {
    id: r.id,
    domain_id: r.domain_id,
    domain: r.domain,
    email: r.email,
    local_part: r.local_part,
    display_name: r.display_name ?? null,
    created_at: new Date(r.created_at).toISOString(),
  };
}

/**
 * Registers a mailbox of a domain (email = local_part@domain, lowercase, unique). Registration
 * only: the mailbox must exist on the mail server (or be created through the API's panel route).
 * @param input either `email` (its domain must be registered) or `domainId` + `local_part`
 * @throws ValidationFailed (422) with field errors (email / local_part / domain / display_name)
 */
export async function addMailbox(
  knex: Knex,
  input: { email?: unknown; domainId?: number; local_part?: unknown; display_name?: unknown },
): Promise<MailboxView> {
  let domain: DomainView | null;
  let local: string;
  const field = input.email !== undefined ? 'email' : 'local_part';
  if (input.email !== undefined) {
    const email = typeof input.email === 'string' ? input.email.trim().toLowerCase() : '';
    const at = email.lastIndexOf('@');
    if (!email) throw new ValidationFailed({ email: ['The email field is required.'] });
    if (at < 1) throw new ValidationFailed({ email: ['The email field must be a valid email address.'] });
    local = email.slice(0, at);
    domain = await getDomainByName(knex, email.slice(at + 1));
    if (!domain) throw new ValidationFailed({ email: [`The domain ${email.slice(at + 1)} is not registered.`] });
  } else {
    domain = await getDomain(knex, Number(input.domainId));
    if (!domain) throw new ValidationFailed({ domain: ['The selected domain is invalid.'] });
    local = typeof input.local_part === 'string' ? input.local_part.trim().toLowerCase() : '';
    if (!local) throw new ValidationFailed({ local_part: ['The local part field is required.'] });
  }
  if (!LOCAL_PART.test(local))
    throw new ValidationFailed({
      [field]: [
        "The local part may contain letters, digits and !#$%&'*+/=?^_`{|}~.- (at most 64, no leading, trailing or double dots).",
      ],
    });
  const display =
    typeof input.display_name === 'string' && input.display_name.trim() ? input.display_name.trim() : null;
  if (display && display.length > 190)
    throw new ValidationFailed({ display_name: ['The display name field must not be greater than 190 characters.'] });
  const email = `${local}@${domain.name}`;
  const taken = () => new ValidationFailed({ [field]: [`The mailbox ${email} is already registered.`] });
  if (await knex('mail_mailboxes').where({ email }).first('id')) throw taken();
  try {
    const [row] = await knex('mail_mailboxes')
      .insert({ domain_id: domain.id, email, local_part: local, display_name: display })
      .returning('*');
    return mailboxView({ ...row, domain: domain.name });
  } catch (e) {
    if ((e as { code?: string }).code === '23505') throw taken();
    throw e;
  }
}

/** Lists a domain's mailboxes by address. */
export async function listMailboxes(knex: Knex, domainId: number): Promise<MailboxView[]> {
  const rows = await knex('mail_mailboxes as m')
    .join('mail_domains as d', 'd.id', 'm.domain_id')
    .where('m.domain_id', domainId)
    .select('m.*', 'd.name as domain')
    .orderBy('m.email');
  return rows.map(mailboxView);
}

/** Looks up registered mailboxes by address (lowercased); unknown addresses are left out. */
export async function findMailboxesByEmail(knex: Knex, emails: string[]): Promise<MailboxView[]> {
  const list = [...new Set(emails.map((e) => e.trim().toLowerCase()).filter(Boolean))];
  if (!list.length) return [];
  const rows = await knex('mail_mailboxes as m')
    .join('mail_domains as d', 'd.id', 'm.domain_id')
    .whereIn('m.email', list)
    .select('m.*', 'd.name as domain');
  return rows.map(mailboxView);
}
