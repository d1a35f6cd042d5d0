import type { Knex } from 'knex';
import { Tenant } from '../../db/models/index.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { isValidTimeZone } from '../../lib/clock.js';
import { recordAudit } from '../audit-logs/service.js';
import { Forbidden, NotFound, ValidationFailed, type FieldErrors } from '../errors.js';
import { SUPER_ADMIN, type AccessActor } from '../roles/grants.js';
import { DEFAULT_TIMEZONE, MODULES, isModule, type ModuleName } from '../tenants/catalog.js';
import { slaFor, type Priority, type SlaTargets } from '../tickets/sla.js';

/**
 * Tenant settings (issue 8 item 1): the time zone (tenants.timezone) and, in tenants.settings, the
 * currency, invoice and isolation days, the customer reopen switch and the ticket SLA targets
 * (the `sla` key api/tickets/sla.ts reads). Plus the per-tenant module switches (tenants.modules).
 * Writes lock the tenant row and are audited in their transaction.
 */

/** The tenant's settings with defaults filled in (GET /api/settings). */
export interface TenantSettings {
  /** IANA zone (DESIGN.md §10 "time zone"). */
  timezone: string;
  /** ISO 4217 (DESIGN.md §10 "money": default IDR). */
  currency: string;
  /** Days to the due date of a new invoice (issue 8 item 4). */
  invoice_due_days: number;
  /** Days past due before isolation; null: off (issue 8 item 4). */
  isolation_grace_days: number | null;
  /** Customers may reopen resolved tickets (document 2 portal reopen). */
  ticket_reopen_enabled: boolean;
  /** Targets per priority, minutes (api/tickets/sla.ts). */
  sla: Record<Priority, SlaTargets>;
}

/** Body of PUT /api/settings after schema validation. */
export type SettingsInput = Partial<Omit<TenantSettings, 'sla'>> & {
  sla?: Partial<Record<Priority, Partial<SlaTargets>>>;
};

/** Defaults of the keys kept in tenants.settings. */
export const SETTINGS_DEFAULTS = {
  currency: 'IDR',
  invoice_due_days: 7,
  isolation_grace_days: null,
  ticket_reopen_enabled: true,
} as const;

const PRIORITIES: readonly Priority[] = ['high', 'medium', 'low'];

/**
 * The effective settings of a tenant row (stored values, else the defaults). Other modules read
 * invoice_due_days, isolation_grace_days and the rest through this.
 * @param tenant `timezone` and `settings` of a tenants row (ctx.state.tenant will do)
 */
export function settingsOf(tenant: {
  timezone?: string | null;
  settings?: Record<string, unknown> | null;
}): TenantSettings {
  const s = tenant.settings ?? {};
  const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);
  return {
    timezone: tenant.timezone ?? DEFAULT_TIMEZONE,
    currency: typeof s.currency === 'string' ? s.currency : SETTINGS_DEFAULTS.currency,
    invoice_due_days: int(s.invoice_due_days) ?? SETTINGS_DEFAULTS.invoice_due_days,
    isolation_grace_days:
      s.isolation_grace_days === null ? null : (int(s.isolation_grace_days) ?? SETTINGS_DEFAULTS.isolation_grace_days),
    ticket_reopen_enabled:
      typeof s.ticket_reopen_enabled === 'boolean' ? s.ticket_reopen_enabled : SETTINGS_DEFAULTS.ticket_reopen_enabled,
    sla: Object.fromEntries(PRIORITIES.map((p) => [p, slaFor(s, p)])) as Record<Priority, SlaTargets>,
  };
}

/** The tenant row, locked FOR NO KEY UPDATE (inserts referencing the tenant are not blocked). */
async function lockedTenant(scope: TenantScope, trx: Knex.Transaction): Promise<Tenant> {
  const t = await Tenant.query(trx).findById(scope.tenantId).forNoKeyUpdate();
  if (!t) throw new NotFound('Tenant');
  return t;
}

/** GET /api/settings: the tenant's settings with defaults. */
export async function getSettings(scope: TenantScope): Promise<TenantSettings> {
  const t = await Tenant.query(scope.knex as Knex).findById(scope.tenantId);
  if (!t) throw new NotFound('Tenant');
  return settingsOf(t);
}

/** Field errors of a settings body beyond its schema (zone, currency, SLA order). */
async function settingsErrors(trx: Knex.Transaction, input: SettingsInput, next: TenantSettings) {
  const errors: FieldErrors = {};
  if (input.timezone !== undefined) {
    // Intl (lib/clock.ts) computes the tenant's days, the database check guards the column: both must know it
    const known =
      isValidTimeZone(input.timezone) &&
      (await trx.raw('SELECT is_iana_time_zone(?) AS ok', [input.timezone])).rows[0].ok === true;
    if (!known) errors.timezone = ['The timezone must be an IANA time zone, e.g. Asia/Jakarta.'];
  }
  if (input.currency !== undefined && !Intl.supportedValuesOf('currency').includes(input.currency)) {
    errors.currency = ['The currency must be an ISO 4217 code, e.g. IDR.'];
  }
  for (const p of PRIORITIES) {
    if (next.sla[p].response_minutes > next.sla[p].resolution_minutes) {
      errors[`sla.${p}.response_minutes`] = ['The response target must not be later than the resolution target.'];
    }
  }
  return errors;
}

/** The keys whose values differ between two objects, with their values on each side. */
function changed(before: Record<string, unknown>, after: Record<string, unknown>) {
  const keys = Object.keys(after).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
  return {
    before: Object.fromEntries(keys.map((k) => [k, before[k]])),
    after: Object.fromEntries(keys.map((k) => [k, after[k]])),
  };
}

/**
 * PUT /api/settings: changes the fields given (SLA targets per priority and field), audited
 * (`settings.updated`, the changed keys before and after).
 * @returns the settings after the change
 * @throws ValidationFailed (422) for an unknown time zone or currency, or an SLA response target
 *   later than its resolution target
 */
export async function updateSettings(scope: TenantScope, actor: AccessActor, input: SettingsInput) {
  return scope.knex.transaction(async (trx) => {
    const t = await lockedTenant(scope, trx);
    const before = settingsOf(t);
    const sla = Object.fromEntries(PRIORITIES.map((p) => [p, { ...before.sla[p], ...input.sla?.[p] }]));
    const next: TenantSettings = { ...before, ...input, sla: sla as TenantSettings['sla'] };
    const errors = await settingsErrors(trx, input, next);
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    const { timezone, ...stored } = next;
    await Tenant.query(trx)
      .findById(scope.tenantId)
      .patch({ timezone, settings: { ...t.settings, ...stored }, updated_at: new Date() });
    const diff = changed({ ...before }, { ...next });
    if (Object.keys(diff.after).length) {
      await recordAudit(scope.withTransaction(trx), {
        userId: actor.userId,
        action: 'settings.updated',
        subject: { type: 'tenants', id: scope.tenantId },
        ...diff,
        ip: actor.ip ?? null,
      });
    }
    return next;
  });
}

/** `{<module>: on}` for every module of the catalogue. */
function switchesOf(modules: readonly string[]): Record<ModuleName, boolean> {
  return Object.fromEntries(MODULES.map((m) => [m, modules.includes(m)])) as Record<ModuleName, boolean>;
}

/** GET /api/settings/modules: `{<module>: true|false}` for every module (DESIGN.md §10 "tenant modules"). */
export async function getModules(scope: TenantScope): Promise<Record<ModuleName, boolean>> {
  const t = await Tenant.query(scope.knex as Knex).findById(scope.tenantId);
  if (!t) throw new NotFound('Tenant');
  return switchesOf(t.modules ?? []);
}

/**
 * PUT /api/settings/modules: switches the modules named in the body on (true) or off (false); the
 * others keep their state. A switched-off module's routes answer 403 module_disabled from the next
 * request on. Audited (`settings.modules_updated`, the changed switches before and after).
 * @returns every module's switch after the change
 * @throws Forbidden (403) unless the actor holds the Super Admin role; ValidationFailed (422) for an
 *   unknown module name (field = the name) or an empty body
 */
export async function updateModules(scope: TenantScope, actor: AccessActor, input: Record<string, boolean>) {
  if (!actor.roles.includes(SUPER_ADMIN)) throw new Forbidden('Only a Super Admin can switch tenant modules.');
  const errors: FieldErrors = {};
  for (const name of Object.keys(input)) {
    if (!isModule(name)) errors[name] = [`Unknown module. Modules: ${MODULES.join(', ')}.`];
  }
  if (!Object.keys(input).length) errors.body = ['Name at least one module to switch.'];
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return scope.knex.transaction(async (trx) => {
    const t = await lockedTenant(scope, trx);
    const before = switchesOf(t.modules ?? []);
    const after = { ...before, ...input };
    const modules = MODULES.filter((m) => after[m]);
    await Tenant.query(trx).findById(scope.tenantId).patch({ modules, updated_at: new Date() });
    const diff = changed(before, after);
    if (Object.keys(diff.after).length) {
      await recordAudit(scope.withTransaction(trx), {
        userId: actor.userId,
        action: 'settings.modules_updated',
        subject: { type: 'tenants', id: scope.tenantId },
        ...diff,
        ip: actor.ip ?? null,
      });
    }
    return after;
  });
}
