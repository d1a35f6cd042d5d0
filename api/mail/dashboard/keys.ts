import { randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import type Koa from 'koa';
import type { FieldErrors } from '../../errors.js';
import {
  createApiKey,
  listApiKeys,
  revokeApiKey,
  KeyInputError,
  PERMISSION_SETS,
  type ApiKeyListItem,
} from '../keys/service.js';
import { getDomain, listDomains, type DomainView } from '../domains/service.js';
import { listMailboxes } from '../domains/mailboxes.js';
import { html, notice, csrfField, fieldErrors, when } from './html.js';
import { list, pathId, text, type AuthedRequest, type Kit } from './kit.js';
import { noticeOf, notFound } from './domains.js';

/**
 * Dashboard pages for API keys (issue 3 §5; document 3 "Authentication" 4: a key is limited to
 * chosen mailboxes and scopes, shown only once, stored only as a hash).
 * - list: name, prefix `mbxk_<id>_`, scopes, domain, mailboxes, last use, created, revoked;
 * - create in two steps that work without scripts: choose the domain (GET), then the mailboxes
 *   offered for it, a permission set and a name (POST); the answer shows the plain key once, with
 *   Cache-Control: no-store; each rendered form carries a one-time id so a reload cannot mint a
 *   second key;
 * - revoke: a confirmation page, then POST.
 */

/** Permission sets as the form offers them (PERMISSION_SETS of the key service). */
const SET_LABELS: Record<keyof typeof PERMISSION_SETS, string> = {
  read: 'Read only',
  reply: 'Read plus reply',
  full: 'Full access',
};
const FORM_ONCE_TTL_S = 24 * 3600;

/** Registers the key pages (list, two-step create, revoke) on the dashboard router. */
export function registerKeyRoutes(router: Router, kit: Kit): void {
  const { knex, redis, logger } = kit.deps;

  router.get(
    '/dashboard/keys',
    kit.page({ auth: true }, async (ctx, req) => {
      const keys = await listApiKeys(knex);
      kit.render(
        ctx,
        200,
        'API keys',
        html`<h1>API keys</h1>
          ${notice('ok', noticeOf(ctx))}
          <p><a class="btn" href="/dashboard/keys/new">Create an API key</a></p>
          ${
            keys.length
              ? html`<table>
                  <thead>
                    <tr>
                      <th>Name</th>
                      <th>Prefix</th>
                      <th>Scopes</th>
                      <th>Domain</th>
                      <th>Mailboxes</th>
                      <th>Last use</th>
                      <th>Created</th>
                      <th>Status</th>
                      <th></th>
                    </tr>
                  </thead>
                  <tbody>
                    ${keys.map(
                      (k) =>
                        html`<tr data-key-id="${k.id}">
                          <td>${k.name}</td>
                          <td class="mono nowrap">${k.prefix}…</td>
                          <td>${k.scopes.map((s) => html`<span class="tag">${s}</span>`)}</td>
                          <td>${k.domain}</td>
                          <td class="mono">${k.mailboxes.map((m) => html`${m}<br />`)}</td>
                          <td class="nowrap">${when(k.last_used_at)}</td>
                          <td>
                            <span class="nowrap">${when(k.created_at)}</span
                            >${k.created_by ? html`<br /><span class="muted">by ${k.created_by}</span>` : ''}
                          </td>
                          <td>
                            ${k.revoked_at ? html`<span class="revoked">revoked ${when(k.revoked_at)}</span>` : html`<span class="active">active</span>`}
                          </td>
                          <td>
                            ${k.revoked_at ? '' : html`<a class="btn small danger" href="/dashboard/keys/${k.id}/revoke">Revoke</a>`}
                          </td>
                        </tr>`,
                    )}
                  </tbody>
                </table>`
              : html`<p class="muted">No API keys yet.</p>`
          }`,
        req,
      );
    }),
  );

  router.get(
    '/dashboard/keys/new',
    kit.page({ auth: true }, async (ctx, req) => {
      const domainId = typeof ctx.query.domain_id === 'string' ? pathId(ctx.query.domain_id) : null;
      const domain = domainId ? await getDomain(knex, domainId) : null;
      if (!domain)
        return chooseDomain(
          kit,
          ctx,
          req,
          ctx.query.domain_id !== undefined ? 'Choose a domain from the list.' : undefined,
        );
      await keyForm(kit, ctx, req, 200, domain, { permission: 'read', mailboxIds: [] }, {});
    }),
  );

  router.post(
    '/dashboard/keys',
    kit.page({ auth: true }, async (ctx, req) => {
      const domain = await getDomain(knex, pathId(text(req.body.domain_id)) ?? 0);
      if (!domain) return chooseDomain(kit, ctx, req, 'Choose a domain from the list.');
      const values = {
        name: text(req.body.name),
        permission: text(req.body.permission),
        mailboxIds: list(req.body.mailbox_ids).map(Number).filter(Number.isSafeInteger),
      };
      const errors: FieldErrors = {};
      if (!values.name) errors.name = ['The name field is required.'];
      else if (values.name.length > 190) errors.name = ['The name field must not be greater than 190 characters.'];
      if (!Object.hasOwn(PERMISSION_SETS, values.permission)) errors.permission = ['Choose a permission set.'];
      if (!values.mailboxIds.length) errors.mailbox_ids = ['Choose at least one mailbox.'];
      if (Object.keys(errors).length) return keyForm(kit, ctx, req, 422, domain, values, errors);
      const formId = text(req.body.form_id);
      if (!(await claimForm(kit, formId))) return kit.redirect(ctx, '/dashboard/keys?notice=already-submitted');
      try {
        const { data, key } = await createApiKey(knex, {
          name: values.name,
          domainId: domain.id,
          mailboxIds: values.mailboxIds,
          scopes: PERMISSION_SETS[values.permission as keyof typeof PERMISSION_SETS],
          operatorId: req.session.operator.id,
        });
        logger.info({ operator_id: req.session.operator.id, key_id: data.id }, 'mail api key created');
        keyCreated(kit, ctx, req, data, key);
      } catch (e) {
        if (!(e instanceof KeyInputError)) throw e;
        await redis.del(`mail-dash:form:${formId}`).catch(() => 0);
        const field = e.field === 'mailboxes' ? 'mailbox_ids' : e.field;
        await keyForm(kit, ctx, req, 422, domain, values, { [field]: [e.message] });
      }
    }),
  );

  router.get(
    '/dashboard/keys/:id/revoke',
    kit.page({ auth: true }, async (ctx, req) => {
      const [k] = await listApiKeys(knex, { id: pathId(ctx.params.id) ?? -1 });
      if (!k) return notFound(kit, ctx, req);
      if (k.revoked_at) return kit.redirect(ctx, '/dashboard/keys');
      kit.render(
        ctx,
        200,
        'Revoke key',
        html`<h1>Revoke API key “${k.name}”?</h1>
          <div class="card">
            <p>Prefix <code>${k.prefix}…</code> · domain ${k.domain} · scopes ${k.scopes.join(', ')}</p>
            <p>Mailboxes: ${k.mailboxes.join(', ')}</p>
            <div class="alert warn">
              Clients using this key get 401 unauthorized from the next request on. This cannot be undone.
            </div>
            <form method="post" action="/dashboard/keys/${k.id}/revoke">
              ${csrfField(req.csrf)}
              <label class="check"
                ><input type="checkbox" name="confirm" value="revoke" required /> I understand: revoke this key
                now</label
              >
              <button class="btn danger" type="submit">Revoke key</button>
              <a class="btn secondary" href="/dashboard/keys">Cancel</a>
            </form>
          </div>`,
        req,
      );
    }),
  );

  router.post(
    '/dashboard/keys/:id/revoke',
    kit.page({ auth: true }, async (ctx, req) => {
      const id = pathId(ctx.params.id);
      const [k] = await listApiKeys(knex, { id: id ?? -1 });
      if (!k) return notFound(kit, ctx, req);
      if (text(req.body.confirm) !== 'revoke') return kit.redirect(ctx, `/dashboard/keys/${k.id}/revoke`);
      if (await revokeApiKey(knex, k.id))
        logger.info({ operator_id: req.session.operator.id, key_id: k.id }, 'mail api key revoked');
      kit.redirect(ctx, '/dashboard/keys?notice=key-revoked');
    }),
  );
}

/** Marks a rendered key form as used (Redis SET NX); false when it was used before or the id is malformed. */
async function claimForm(kit: Kit, formId: string): Promise<boolean> {
  if (!/^[0-9a-f]{32}$/.test(formId)) return false;
  try {
    return (await kit.deps.redis.set(`mail-dash:form:${formId}`, '1', 'EX', FORM_ONCE_TTL_S, 'NX')) === 'OK';
  } catch (e) {
    kit.deps.logger.warn({ err: e }, 'dashboard form-once check unavailable');
    return true;
  }
}

async function chooseDomain(kit: Kit, ctx: Koa.Context, req: AuthedRequest, error?: string): Promise<void> {
  const domains = await listDomains(kit.deps.knex);
  kit.render(
    ctx,
    error ? 422 : 200,
    'Create an API key',
    html`<h1>Create an API key</h1>
      ${notice('err', error)}
      <p class="muted">Step 1 of 2: choose the domain whose mailboxes the key may use.</p>
      ${
        domains.length
          ? html`<form method="get" action="/dashboard/keys/new" class="card">
              <label for="domain_id">Domain</label
              ><select id="domain_id" name="domain_id">
                ${domains.map((d) => html`<option value="${d.id}">${d.name} (${d.mailbox_count} mailbox${d.mailbox_count === 1 ? '' : 'es'})</option>`)}
              </select>
              <button class="btn" type="submit">Next</button>
            </form>`
          : html`<p>No domains yet. <a href="/dashboard/domains/new">Add a domain</a> first.</p>`
      }`,
    req,
  );
}

async function keyForm(
  kit: Kit,
  ctx: Koa.Context,
  req: AuthedRequest,
  status: number,
  domain: DomainView,
  v: { name?: string; permission: string; mailboxIds: number[] },
  errors: FieldErrors,
): Promise<void> {
  const boxes = await listMailboxes(kit.deps.knex, domain.id);
  const formId = randomBytes(16).toString('hex');
  kit.render(
    ctx,
    status,
    'Create an API key',
    html`<h1>Create an API key for ${domain.name}</h1>
      ${Object.keys(errors).length ? notice('err', 'Please correct the fields marked below.') : ''}
      <p class="muted">
        Step 2 of 2: choose the mailboxes and what the key may do.
        <a href="/dashboard/keys/new">Choose another domain</a>
      </p>
      ${
        boxes.length
          ? html`<form method="post" action="/dashboard/keys" class="card">
              ${csrfField(req.csrf)} <input type="hidden" name="domain_id" value="${domain.id}" /><input
                type="hidden"
                name="form_id"
                value="${formId}"
              />
              <label for="name">Key name <span class="hint">e.g. the CMS that will use it</span></label
              ><input
                type="text"
                id="name"
                name="name"
                value="${v.name ?? ''}"
                maxlength="190"
                required
              />${fieldErrors(errors, 'name')}
              <fieldset>
                <legend>Mailboxes of ${domain.name}</legend>
                ${boxes.map((m) => html`<label class="check"><input type="checkbox" name="mailbox_ids" value="${m.id}" ${v.mailboxIds.includes(m.id) ? html` checked` : ''} /> <span class="mono">${m.email}</span>${m.display_name ? html` <span class="muted">${m.display_name}</span>` : ''}</label>`)}
                ${fieldErrors(errors, 'mailbox_ids')}
              </fieldset>
              <fieldset>
                <legend>Permission set</legend>
                ${(Object.keys(PERMISSION_SETS) as (keyof typeof PERMISSION_SETS)[]).map(
                  (p) =>
                    html`<label class="check"
                      ><input type="radio" name="permission" value="${p}" ${v.permission === p ? html` checked` : ''} />
                      <span
                        ><b>${SET_LABELS[p]}</b><br /><span class="muted">${PERMISSION_SETS[p].join(', ')}</span></span
                      ></label
                    >`,
                )}
                ${fieldErrors(errors, 'permission')}${fieldErrors(errors, 'scopes')}
              </fieldset>
              <button class="btn" type="submit">Create key</button>
              <a class="btn secondary" href="/dashboard/keys">Cancel</a>
            </form>`
          : html`<p>
              ${domain.name} has no registered mailboxes yet.
              <a href="/dashboard/domains/${domain.id}/mailboxes">Register one</a> first.
            </p>`
      }`,
    req,
  );
}

/** The one page that ever shows the plain key (no-store is set for every dashboard page). */
function keyCreated(kit: Kit, ctx: Koa.Context, req: AuthedRequest, k: ApiKeyListItem, key: string): void {
  ctx.set('Cache-Control', 'no-store');
  const base = kit.deps.config.mailBaseUrl;
  kit.render(
    ctx,
    201,
    'API key created',
    html`<h1>API key “${k.name}” created</h1>
      <div class="alert warn">
        <b>Copy it now, it will not be shown again.</b> Only a hash is stored; if the key is lost, revoke it and create
        a new one.
      </div>
      <div class="card">
        <label for="api-key">API key</label><code class="key" id="api-key">${key}</code>
        <p>Domain <b>${k.domain}</b> · scopes ${k.scopes.map((s) => html`<span class="tag">${s}</span>`)}</p>
        <p>Mailboxes: <span class="mono">${k.mailboxes.join(', ')}</span></p>
        <p class="muted">
          Use it as <code>Authorization: Bearer &lt;key&gt;</code> against <code>${base}/api/v1</code>; mailbox content
          also needs the mailbox password in <code>X-Mailbox-Password</code>.
        </p>
      </div>
      <p><a class="btn" href="/dashboard/keys">Done: back to the keys</a></p>`,
    req,
  );
}
