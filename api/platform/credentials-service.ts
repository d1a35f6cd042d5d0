import type { Knex } from 'knex';
import { isDeepStrictEqual } from 'node:util';
import { validatePanelConfig, type MailPanelConfig } from '../../jobs/adapters/mail-panel/index.js';
import {
  openSectionSecret,
  PROVISIONING_SECTIONS,
  readProvisioningRows,
  sealSectionSecret,
  SECRET_FIELDS,
  type ProvisioningSection,
  type SectionRow,
} from '../../jobs/provisioning/credentials.js';
import { ValidationFailed, type FieldErrors } from '../errors.js';
import { iso } from '../shared/schemas.js';
import { recordPlatformAudit } from './audit.js';
import type { PlatformActor } from './tenants-service.js';

/**
 * PUT/GET /api/platform/provisioning/credentials (issue 13 item 3): sections optional, secrets
 * write-only (sealed per section, kept when omitted), answers masked with `last_test` per section;
 * a change of a section resets its `last_test` (so saving never unlocks, item 4).
 */

/** Body of the PUT after schema validation. */
export type CredentialsInput = {
  enabled?: boolean;
  backup_ready?: boolean;
} & Partial<Record<ProvisioningSection, Record<string, unknown> | null>>;

type Rows = Awaited<ReturnType<typeof readProvisioningRows>>;

const maskKey = (k: unknown) => (typeof k === 'string' ? `${k.slice(0, 4)}***` : null);

/** The masked view of one section row: settings without secrets, `<secret>_set`, fake, changed_at, last_test. */
function maskedSection(section: ProvisioningSection, r: SectionRow | undefined) {
  if (!r) return null;
  const settings = { ...r.settings };
  delete settings.base_url;
  if (section === 'storage') settings.access_key = maskKey(settings.access_key);
  return {
    ...settings,
    [`${SECRET_FIELDS[section]}_set`]: r.secret_enc !== null,
    fake: r.fake,
    changed_at: iso(r.changed_at),
    last_test: r.last_test ?? null,
  };
}

/** The masked credentials (GET and the PUT's answer); never a secret. */
export function maskedCredentials(rows: Rows) {
  const out: Record<string, unknown> = {
    enabled: rows.settings.enabled,
    backup_ready: rows.settings.backup_ready,
    backup: { last_test: rows.settings.backup_last_test ?? null },
  };
  for (const s of PROVISIONING_SECTIONS) out[s] = maskedSection(s, rows.sections.get(s));
  return out;
}

/**
 * GET /api/platform/provisioning/credentials.
 * @returns the masked credentials
 */
export async function getCredentials(knex: Knex) {
  return maskedCredentials(await readProvisioningRows(knex));
}

/** A section's secret is needed: on first save for every section but a Hestia panel with a key. */
function secretRequired(section: ProvisioningSection, settings: Record<string, unknown>): boolean {
  return !(section === 'mail_panel' && settings.type === 'hestia' && settings.ssh_key_path);
}

/** What a section of the body becomes: its settings and secret, or field errors. */
function planSection(
  appKey: Buffer,
  section: ProvisioningSection,
  input: Record<string, unknown>,
  stored: SectionRow | undefined,
  errors: FieldErrors,
): { settings: Record<string, unknown>; secret: string | null; changed: boolean } {
  const field = SECRET_FIELDS[section];
  const settings = Object.fromEntries(
    Object.entries(input).filter(([k, v]) => k !== field && v !== null && v !== undefined),
  );
  const oldSecret = stored?.secret_enc ? openSectionSecret(appKey, section, stored.secret_enc) : null;
  const given = typeof input[field] === 'string' ? (input[field] as string) : null;
  const secret = given ?? oldSecret;
  if (!secret && secretRequired(section, settings))
    (errors[`${section}.${field}`] ??= []).push(`The ${field} is required when it was never saved.`);
  if (section === 'mail_panel') {
    // the schema checked the types; validatePanelConfig checks every field again and only reads them
    const bad = validatePanelConfig({ ...(settings as unknown as MailPanelConfig), password: secret });
    for (const [k, reasons] of Object.entries(bad)) {
      if (k === 'password' && !secret && !secretRequired(section, settings)) continue;
      (errors[`mail_panel.${k}`] ??= []).push(...reasons);
    }
  }
  const storedSettings = stored ? { ...stored.settings } : null;
  const changed = !stored || !isDeepStrictEqual(storedSettings, settings) || secret !== oldSecret;
  return { settings, secret, changed };
}

/**
 * PUT /api/platform/provisioning/credentials: saves the given sections (a section given replaces
 * that section's settings; its secret is kept when omitted; `null` removes the section) and the
 * switches, in one transaction, audited as `platform.provisioning_credentials_update`.
 * A changed section gets `last_test` null and `fake` false; a change of `backup_ready` or of the
 * storage section resets the backup check.
 * @param appKey the 32-byte APP_KEY sealing the secrets
 * @param now the clock's now (changed_at)
 * @returns the masked credentials after the save
 * @throws ValidationFailed (422) with `<section>.<field>` errors (a secret missing on first save,
 *   an unusable mail panel configuration); nothing is saved then
 */
export async function saveCredentials(
  knex: Knex,
  appKey: Buffer,
  actor: PlatformActor,
  input: CredentialsInput,
  now: Date,
) {
  return knex.transaction(async (trx) => {
    await trx('provisioning_settings').insert({ id: 1 }).onConflict('id').ignore();
    await trx('provisioning_settings').where({ id: 1 }).forUpdate().first();
    await trx('provisioning_credentials').forUpdate().select('section');
    const before = await readProvisioningRows(trx);
    const errors: FieldErrors = {};
    const plans = new Map<ProvisioningSection, ReturnType<typeof planSection> | null>();
    for (const s of PROVISIONING_SECTIONS) {
      if (!(s in input)) continue;
      const v = input[s];
      plans.set(
        s,
        v === null ? null : planSection(appKey, s, v as Record<string, unknown>, before.sections.get(s), errors),
      );
    }
    if (Object.keys(errors).length) throw new ValidationFailed(errors);

    const changed: string[] = [];
    for (const [s, plan] of plans) {
      if (plan === null) {
        if ((await trx('provisioning_credentials').where({ section: s }).del()) > 0) changed.push(s);
        continue;
      }
      if (!plan.changed) continue;
      changed.push(s);
      const row = {
        section: s,
        settings: JSON.stringify(plan.settings),
        secret_enc: plan.secret ? sealSectionSecret(appKey, s, plan.secret) : null,
        fake: false,
        changed_at: now,
        last_test: null,
      };
      await trx('provisioning_credentials').insert(row).onConflict('section').merge();
    }
    const patch: Record<string, unknown> = {};
    if (input.enabled !== undefined && input.enabled !== before.settings.enabled) patch.enabled = input.enabled;
    if (input.backup_ready !== undefined && input.backup_ready !== before.settings.backup_ready)
      patch.backup_ready = input.backup_ready;
    if ('backup_ready' in patch || changed.includes('storage')) patch.backup_last_test = null;
    if (Object.keys(patch).length) {
      await trx('provisioning_settings')
        .where({ id: 1 })
        .update({ ...patch, updated_at: now });
    }
    const after = await readProvisioningRows(trx);
    if (changed.length || Object.keys(patch).length) {
      await recordPlatformAudit(trx, {
        userId: actor.userId,
        action: 'platform.provisioning_credentials_update',
        subject: { type: 'provisioning_credentials', id: null },
        before: { changed, ...auditSummary(before) },
        after: auditSummary(after),
        ip: actor.ip ?? null,
      });
    }
    return maskedCredentials(after);
  });
}

/** The audit summary: switches and which sections are saved with a secret; no values. */
function auditSummary(rows: Rows) {
  const sections: Record<string, { secret_set: boolean } | null> = {};
  for (const s of PROVISIONING_SECTIONS) {
    const r = rows.sections.get(s);
    sections[s] = r ? { secret_set: r.secret_enc !== null } : null;
  }
  return { enabled: rows.settings.enabled, backup_ready: rows.settings.backup_ready, sections };
}
