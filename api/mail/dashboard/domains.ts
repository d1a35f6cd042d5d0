import type Router from '@koa/router';
import type Koa from 'koa';
import { ValidationFailed, type FieldErrors } from '../../errors.js';
import {
  addDomain,
  getDomain,
  listDomains,
  updateDomain,
  PANEL_TYPES,
  SECURITY,
  type DomainInput,
  type DomainView,
} from '../domains/service.js';
import { addMailbox, listMailboxes } from '../domains/mailboxes.js';
import { html, notice, csrfField, fieldErrors, when, type SafeHtml } from './html.js';
import { NOTICES, pathId, text, type AuthedRequest, type Kit } from './kit.js';

/**
 * Dashboard pages for domains and their mailboxes (issue 3 §5): list, add, edit (the panel
 * password is never shown back, only "set" / "not set"), and per domain the registered mailboxes
 * with a form to add one.
 */
export function registerDomainRoutes(router: Router, kit: Kit): void {
  const { knex, config } = kit.deps;

  router.get(
    '/dashboard/domains',
    kit.page({ auth: true }, async (ctx, req) => {
      const domains = await listDomains(knex);
      kit.render(
        ctx,
        200,
        'Domains',
        html`<h1>Domains</h1>
          ${notice('ok', noticeOf(ctx))}
          <p><a class="btn" href="/dashboard/domains/new">Add a domain</a></p>
          ${
            domains.length
              ? html`<table>
                  <thead>
                    <tr>
                      <th>Domain</th>
                      <th>IMAP</th>
                      <th>SMTP</th>
                      <th>Panel</th>
                      <th>Mailboxes</th>
                      <th></th>
                    </tr>
                  </thead>
                  <tbody>
                    ${domains.map(
                      (d) =>
                        html`<tr>
                          <td><b>${d.name}</b></td>
                          <td class="mono">${d.imap_host}:${d.imap_port} (${d.imap_security})</td>
                          <td class="mono">${d.smtp_host}:${d.smtp_port} (${d.smtp_security})</td>
                          <td>
                            ${d.panel ? html`${d.panel.type} · <span class="mono">${d.panel.user}@${d.panel.host}:${d.panel.port}</span><br /><span class="muted">password ${d.panel.password}</span>` : html`<span class="muted">none</span>`}
                          </td>
                          <td>
                            <a href="/dashboard/domains/${d.id}/mailboxes"
                              >${d.mailbox_count} mailbox${d.mailbox_count === 1 ? '' : 'es'}</a
                            >
                          </td>
                          <td><a class="btn small secondary" href="/dashboard/domains/${d.id}/edit">Edit</a></td>
                        </tr>`,
                    )}
                  </tbody>
                </table>`
              : html`<p class="muted">No domains yet.</p>`
          }`,
        req,
      );
    }),
  );

  router.get(
    '/dashboard/domains/new',
    kit.page({ auth: true }, async (ctx, req) => {
      domainForm(kit, ctx, req, 200, null, {}, {});
    }),
  );

  router.post(
    '/dashboard/domains',
    kit.page({ auth: true }, async (ctx, req) => {
      const input = domainInput(req.body);
      try {
        const d = await addDomain(knex, config.appKey, input);
        kit.deps.logger.info({ operator_id: req.session.operator.id, domain_id: d.id }, 'mail domain added');
        kit.redirect(ctx, `/dashboard/domains/${d.id}/mailboxes?notice=domain-created`);
      } catch (e) {
        if (!(e instanceof ValidationFailed)) throw e;
        domainForm(kit, ctx, req, 422, null, input, e.errors ?? {});
      }
    }),
  );

  router.get(
    '/dashboard/domains/:id/edit',
    kit.page({ auth: true }, async (ctx, req) => {
      const d = await getDomain(knex, pathId(ctx.params.id) ?? 0);
      if (!d) return notFound(kit, ctx, req);
      domainForm(kit, ctx, req, 200, d, fromView(d), {});
    }),
  );

  router.post(
    '/dashboard/domains/:id',
    kit.page({ auth: true }, async (ctx, req) => {
      const d = await getDomain(knex, pathId(ctx.params.id) ?? 0);
      if (!d) return notFound(kit, ctx, req);
      const input = { ...domainInput(req.body), clear_panel_password: text(req.body.clear_panel_password) === '1' };
      try {
        await updateDomain(knex, config.appKey, d.id, input);
        kit.deps.logger.info({ operator_id: req.session.operator.id, domain_id: d.id }, 'mail domain updated');
        kit.redirect(ctx, '/dashboard/domains?notice=domain-updated');
      } catch (e) {
        if (!(e instanceof ValidationFailed)) throw e;
        domainForm(kit, ctx, req, 422, d, input, e.errors ?? {});
      }
    }),
  );

  router.get(
    '/dashboard/domains/:id/mailboxes',
    kit.page({ auth: true }, async (ctx, req) => {
      const d = await getDomain(knex, pathId(ctx.params.id) ?? 0);
      if (!d) return notFound(kit, ctx, req);
      await mailboxesPage(kit, ctx, req, 200, d, {}, {});
    }),
  );

  router.post(
    '/dashboard/domains/:id/mailboxes',
    kit.page({ auth: true }, async (ctx, req) => {
      const d = await getDomain(knex, pathId(ctx.params.id) ?? 0);
      if (!d) return notFound(kit, ctx, req);
      const values = { local_part: text(req.body.local_part), display_name: text(req.body.display_name) };
      try {
        await addMailbox(knex, { domainId: d.id, ...values });
        kit.redirect(ctx, `/dashboard/domains/${d.id}/mailboxes?notice=mailbox-added`);
      } catch (e) {
        if (!(e instanceof ValidationFailed)) throw e;
        await mailboxesPage(kit, ctx, req, 422, d, values, e.errors ?? {});
      }
    }),
  );
}

/** The fixed notice named by `?notice=` (unknown codes show nothing). */
export function noticeOf(ctx: Koa.Context): string | undefined {
  return typeof ctx.query.notice === 'string' ? NOTICES[ctx.query.notice] : undefined;
}

/** A 404 page. */
export function notFound(kit: Kit, ctx: Koa.Context, req: AuthedRequest): void {
  kit.render(
    ctx,
    404,
    'Not found',
    html`<h1>Not found</h1>
      <p>That record does not exist. <a href="/dashboard">Back to the overview</a></p>`,
    req,
  );
}

function domainInput(b: Record<string, unknown>): DomainInput {
  const t = (k: string) => text(b[k]);
  return {
    name: t('name'),
    imap_host: t('imap_host'),
    imap_port: t('imap_port'),
    imap_security: t('imap_security'),
    smtp_host: t('smtp_host'),
    smtp_port: t('smtp_port'),
    smtp_security: t('smtp_security'),
    panel_type: t('panel_type') || null,
    panel_host: t('panel_host'),
    panel_port: t('panel_port'),
    panel_user: t('panel_user'),
    panel_password: typeof b.panel_password === 'string' ? b.panel_password : '',
    panel_ssh_key_path: t('panel_ssh_key_path'),
    panel_ssl: t('panel_ssl') === '1',
  };
}

function fromView(d: DomainView): DomainInput {
  return {
    name: d.name,
    imap_host: d.imap_host,
    imap_port: d.imap_port,
    imap_security: d.imap_security,
    smtp_host: d.smtp_host,
    smtp_port: d.smtp_port,
    smtp_security: d.smtp_security,
    panel_type: d.panel?.type ?? null,
    panel_host: d.panel?.host ?? '',
    panel_port: d.panel?.port ?? '',
    panel_user: d.panel?.user ?? '',
    panel_ssh_key_path: d.panel?.ssh_key_path ?? '',
    panel_ssl: d.panel?.ssl ?? true,
  };
}

function input(
  name: string,
  label: string,
  value: unknown,
  errors: FieldErrors,
  o: { type?: string; hint?: string; required?: boolean; readonly?: boolean } = {},
): SafeHtml {
  return html`<label for="${name}">${label}${o.hint ? html` <span class="hint">${o.hint}</span>` : ''}</label>
    <input
      type="${o.type ?? 'text'}"
      id="${name}"
      name="${name}"
      value="${value ?? ''}"
      ${o.required ? html` required` : ''}${o.readonly ? html` readonly` : ''}
    />${fieldErrors(errors, name)}`;
}

function select(
  name: string,
  label: string,
  value: unknown,
  options: readonly string[],
  errors: FieldErrors,
  empty?: string,
): SafeHtml {
  return html`<label for="${name}">${label}</label
    ><select id="${name}" name="${name}">
      ${empty !== undefined ? html`<option value="">${empty}</option>` : ''}${options.map((o) => html`<option value="${o}" ${o === value ? html` selected` : ''}>${o}</option>`)}</select
    >${fieldErrors(errors, name)}`;
}

function domainForm(
  kit: Kit,
  ctx: Koa.Context,
  req: AuthedRequest,
  status: number,
  d: DomainView | null,
  v: DomainInput,
  errors: FieldErrors,
): void {
  const title = d ? `Edit ${d.name}` : 'Add a domain';
  const pwHint = d
    ? `currently ${d.panel?.password ?? 'not set'}; leave empty to keep it`
    : 'stored encrypted, never shown again';
  kit.render(
    ctx,
    status,
    title,
    html`<h1>${title}</h1>
      ${Object.keys(errors).length ? notice('err', 'Please correct the fields marked below.') : ''}
      <form method="post" action="${d ? `/dashboard/domains/${d.id}` : '/dashboard/domains'}" class="card">
        ${csrfField(req.csrf)}
        ${input('name', 'Domain name', v.name, errors, { required: !d, readonly: !!d, hint: d ? 'cannot change' : 'e.g. example.com' })}
        <fieldset>
          <legend>IMAP</legend>
          ${input('imap_host', 'Host', v.imap_host, errors, { required: true })}
          ${input('imap_port', 'Port', v.imap_port ?? 993, errors, { type: 'number', required: true })}${select('imap_security', 'Security', v.imap_security ?? 'ssl', SECURITY, errors)}
        </fieldset>
        <fieldset>
          <legend>SMTP</legend>
          ${input('smtp_host', 'Host', v.smtp_host, errors, { required: true })}
          ${input('smtp_port', 'Port', v.smtp_port ?? 465, errors, { type: 'number', required: true })}${select('smtp_security', 'Security', v.smtp_security ?? 'ssl', SECURITY, errors)}
        </fieldset>
        <fieldset>
          <legend>Control panel <span class="hint">(creates mailboxes through the API; optional)</span></legend>
          ${select('panel_type', 'Panel type', v.panel_type ?? '', PANEL_TYPES, errors, 'none')}
          ${input('panel_host', 'Host', v.panel_host, errors)}${input('panel_port', 'Port', v.panel_port, errors, { type: 'number', hint: 'default: cPanel 2083, DirectAdmin 2222, HestiaCP (SSH) 22' })}
          ${input('panel_user', 'User', v.panel_user, errors)}
          ${input('panel_password', 'Password', '', errors, { type: 'password', hint: pwHint })}
          ${d?.panel?.password === 'set' ? html`<label class="check"><input type="checkbox" name="clear_panel_password" value="1" /> Remove the stored panel password</label>` : ''}
          ${input('panel_ssh_key_path', 'SSH key path', v.panel_ssh_key_path, errors, { hint: 'HestiaCP over SSH: absolute path of the private key file on this server' })}
          <label class="check"
            ><input type="checkbox" name="panel_ssl" value="1" ${v.panel_ssl === false ? '' : html` checked`} /> Use TLS
            (https) for the panel's HTTP API</label
          >
        </fieldset>
        <button class="btn" type="submit">${d ? 'Save' : 'Add domain'}</button>
        <a class="btn secondary" href="/dashboard/domains">Cancel</a>
      </form>`,
    req,
  );
}

async function mailboxesPage(
  kit: Kit,
  ctx: Koa.Context,
  req: AuthedRequest,
  status: number,
  d: DomainView,
  v: { local_part?: string; display_name?: string },
  errors: FieldErrors,
): Promise<void> {
  const boxes = await listMailboxes(kit.deps.knex, d.id);
  kit.render(
    ctx,
    status,
    `Mailboxes of ${d.name}`,
    html`<h1>Mailboxes of ${d.name}</h1>
      ${notice('ok', noticeOf(ctx))}
      ${
        boxes.length
          ? html`<table>
              <thead>
                <tr>
                  <th>Address</th>
                  <th>Name</th>
                  <th>Registered</th>
                </tr>
              </thead>
              <tbody>
                ${boxes.map(
                  (m) =>
                    html`<tr>
                      <td class="mono">${m.email}</td>
                      <td>${m.display_name ?? ''}</td>
                      <td>${when(m.created_at)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
          : html`<p class="muted">No mailboxes registered for this domain yet.</p>`
      }
      <h2>Register a mailbox</h2>
      <form method="post" action="/dashboard/domains/${d.id}/mailboxes" class="card">
        ${csrfField(req.csrf)}
        <p class="muted">
          Registers an existing mailbox of ${d.name} so API keys can be limited to it. Its password is never asked for
          or stored.
        </p>
        ${input('local_part', `Local part (before @${d.name})`, v.local_part, errors, { required: true })}
        ${input('display_name', 'Display name', v.display_name, errors, { hint: 'optional' })}
        <button class="btn" type="submit">Register mailbox</button>
      </form>
      <p>
        <a href="/dashboard/keys/new?domain_id=${d.id}">Create an API key for ${d.name}</a> ·
        <a href="/dashboard/domains">All domains</a>
      </p>`,
    req,
  );
}
