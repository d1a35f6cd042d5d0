import { MailApiError } from './errors.js';
import { createMailboxBody, createResult, domainParams, pendingResult, requestParams } from './schemas.js';
import {
  DEFAULT_CREATE_WAIT_MS,
  answerOutcome,
  checkPayload,
  requestOutcome,
  startMailboxCreate,
  waitForOutcome,
  type CreateMailboxPayload,
} from './mailboxes/create.js';
import { requestIdOf } from '../../jobs/mailbox-create.js';
import type { Input } from '../http/route.js';
import { mailRoute, type AnyMailRoute } from './routes.js';

/**
 * Create mailbox (document 3) and its poll (docs/mailbox-api.md). The panel call runs as the
 * `mailbox-create` job; the request waits for it up to createWaitMs (default 30 s).
 */

const failures = {
  404: { description: 'domain_not_found: the domain is not registered in the service.' },
  409: {
    description:
      'mailbox_exists: the mailbox is registered already, a request for it is pending (`job_id` names it), or the panel reports it exists; panel_not_configured: the domain has no mail panel.',
  },
  502: {
    description:
      "mail_server_error: the mail panel refused the request or could not be reached (after the job's retries).",
  },
};

/** Route table entries of create mailbox and its poll, mounted by api/mail/routes.ts. */
export const createRoutes: AnyMailRoute[] = [
  mailRoute<Input, Input, CreateMailboxPayload>({
    method: 'post',
    path: '/api/v1/domains/:domain/mailboxes',
    tag: 'mailboxes',
    scope: 'mailboxes:create',
    resolve: 'domain',
    summary: "Create a mailbox in the domain's mail panel",
    description:
      'Creates `local_part@domain` in the control panel of the domain (cPanel, DirectAdmin or HestiaCP) as a background job. The request waits up to 30 s: 201 with the new mailbox when the panel answered in time, else 202 with a `job_id` to poll at GET /api/v1/domains/{domain}/mailboxes/requests/{job_id}. The mailbox is registered in the service (usable by API keys an operator creates). The password is handed to the job sealed and never stored.',
    params: domainParams,
    body: createMailboxBody,
    responses: {
      201: { description: 'Created.', schema: createResult },
      202: {
        description: 'The panel is slower than the wait: still running; poll with the job_id.',
        schema: pendingResult,
      },
      ...failures,
      503: {
        description:
          'queue_unavailable: the job queue (Redis) is down; nothing was created. ' +
          'service_unavailable: the database is down. Both with Retry-After.',
      },
    },
    async handler(ctx) {
      const body = ctx.state.body;
      ctx.state.secrets.push(body.password);
      checkPayload(ctx.state.domain!.name, body);
      const { requestId, job } = await startMailboxCreate(ctx.deps, ctx.state.domain!, ctx.state.key!.id, body);
      const outcome = await waitForOutcome(ctx, job, requestId, ctx.deps.config.createWaitMs ?? DEFAULT_CREATE_WAIT_MS);
      answerOutcome(ctx, outcome, 201);
    },
  }),
  mailRoute<{ job_id: string }>({
    method: 'get',
    path: '/api/v1/domains/:domain/mailboxes/requests/:job_id',
    tag: 'mailboxes',
    scope: 'mailboxes:create',
    resolve: 'domain',
    summary: 'Poll a mailbox creation that answered 202',
    description:
      'Answers 200 with the mailbox once created, 202 while pending, or the error the create would have answered.',
    params: requestParams,
    responses: {
      200: { description: 'Created.', schema: createResult },
      202: { description: 'Still running.', schema: pendingResult },
      404: {
        description:
          'domain_not_found: the domain is not registered; request_not_found: no request with this job id in the domain.',
      },
      409: failures[409],
      502: failures[502],
    },
    async handler(ctx) {
      const id = requestIdOf(ctx.state.params.job_id);
      const outcome = id === null ? null : await requestOutcome(ctx.deps, id, ctx.state.domain!.id);
      if (!outcome) throw new MailApiError('request_not_found');
      answerOutcome(ctx, outcome, 200);
    },
  }),
];
