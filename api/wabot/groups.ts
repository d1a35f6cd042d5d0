import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import type { TenantScope } from '../../db/tenant-scope.js';
import { WabotAccount, WabotGroup, WabotSetting } from '../../db/models/index.js';
import type { Queues } from '../../jobs/queues.js';
import { enqueueChatMessage } from '../../jobs/wabot/enqueue.js';
import { loadChatSendConfig } from '../../jobs/wabot/load-config.js';
import { sampleNoticeText } from '../../jobs/wabot/group-notice-texts.js';
import { DEFAULT_TIME_ZONE } from '../../lib/clock.js';
import { recordAudit } from '../audit-logs/service.js';
import { NotFound, ValidationFailed } from '../errors.js';
import { iso } from '../shared/schemas.js';
import { MAX_GROUPS } from './group-schemas.js';
import type { Actor } from './service.js';

/**
 * The chat groups that receive event notices (issue 11 item 4; document 2 "Events"): CRUD over
 * `wabot_groups` (audited `wabot.group_*`) and the sample notice of the group test. The notices
 * themselves are written by the event subscriber jobs/wabot/group-notices.ts.
 */

/** A validated group body. */
export interface GroupInput {
  name: string;
  kind: string;
  account_id: string;
  group_id: string;
  events: string[];
  enabled: boolean;
}

function shape(g: WabotGroup) {
  return {
    id: g.id,
    name: g.name,
    kind: g.kind,
    account_id: g.account_id,
    group_id: g.group_id,
    events: g.events,
    enabled: g.enabled,
    created_at: iso(g.created_at)!,
    updated_at: iso(g.updated_at)!,
  };
}

/**
 * The account must be one of the configuration's accounts (or `default` without accounts) and able
 * to reach a group (not messenger).
 * @throws ValidationFailed (422 `account_id`)
 */
async function checkAccount(scope: TenantScope, accountId: string): Promise<void> {
  const s = await scope.query(WabotSetting).select('provider').first();
  const accounts = s ? await scope.query(WabotAccount).select('account_id', 'provider') : [];
  const provider = accounts.length
    ? accounts.find((a) => a.account_id === accountId)?.provider
    : s && accountId === 'default'
      ? s.provider
      : undefined;
  if (!provider)
    throw new ValidationFailed({ account_id: ['The account_id is not an account of the chat-bot configuration.'] });
  if (provider === 'messenger')
    throw new ValidationFailed({ account_id: ['A messenger account cannot send to a group.'] });
}

async function find(scope: TenantScope, id: number): Promise<WabotGroup> {
  const g = await scope.query(WabotGroup).findById(id);
  if (!g) throw new NotFound('Group');
  return g;
}

/** GET /api/wabot/groups: every group of the tenant, oldest first. */
export async function listGroups(scope: TenantScope) {
  const rows = await scope.query(WabotGroup).orderBy('id');
  return rows.map(shape);
}

/**
 * POST /api/wabot/groups.
 * @throws ValidationFailed (422) for an unknown or messenger account, or beyond MAX_GROUPS groups
 */
export async function createGroup(scope: TenantScope, actor: Actor, input: GroupInput) {
  await checkAccount(scope, input.account_id);
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const [{ n }] = await s.table('wabot_groups').count<{ n: string }[]>({ n: '*' });
    if (Number(n) >= MAX_GROUPS) throw new ValidationFailed({ name: [`At most ${MAX_GROUPS} groups per tenant.`] });
    const g = await s.create(WabotGroup, { ...input });
    const row = await s.query(WabotGroup).findById(g.id);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'wabot.group_created',
      subject: { type: 'wabot_groups', id: g.id },
      after: shape(row!),
      ip: actor.ip ?? null,
    });
    return shape(row!);
  });
}

/**
 * PUT /api/wabot/groups/{id}: replaces the group.
 * @throws NotFound (404) for a foreign or unknown id; ValidationFailed (422) for the account
 */
export async function updateGroup(scope: TenantScope, actor: Actor, id: number, input: GroupInput) {
  const before = await find(scope, id);
  await checkAccount(scope, input.account_id);
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    await s
      .query(WabotGroup)
      .findById(id)
      .patch({ ...input, updated_at: new Date() });
    const after = (await s.query(WabotGroup).findById(id))!;
    await recordAudit(s, {
      userId: actor.userId,
      action: 'wabot.group_updated',
      subject: { type: 'wabot_groups', id },
      before: shape(before),
      after: shape(after),
      ip: actor.ip ?? null,
    });
    return shape(after);
  });
}

/**
 * DELETE /api/wabot/groups/{id}.
 * @throws NotFound (404) for a foreign or unknown id
 */
export async function deleteGroup(scope: TenantScope, actor: Actor, id: number): Promise<void> {
  const before = await find(scope, id);
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    await s.query(WabotGroup).findById(id).delete();
    await recordAudit(s, {
      userId: actor.userId,
      action: 'wabot.group_deleted',
      subject: { type: 'wabot_groups', id },
      before: shape(before),
      ip: actor.ip ?? null,
    });
  });
}

/** What the group test needs from the app. */
export interface GroupTestDeps {
  knex: Knex;
  redis: Redis;
  queues: Queues;
  appKey: Buffer | undefined;
  timeZone: string | null | undefined;
}

/** How long the group test waits for the send, in ms (as issue 10's Test). */
export const GROUP_TEST_WAIT_MS = 15_000;

/**
 * POST /api/wabot/groups/{id}/test: a sample "[TES] Incident Massal" notice to the group through
 * its account (a person's explicit send: settings.enabled does not stop it), waited for at most
 * `waitMs`.
 * @returns ok (sent or pending at the provider) with the row's id, status, message id and error
 * @throws NotFound (404); QueueUnavailableError (503) when Redis cannot route or take the job
 */
export async function testGroup(
  scope: TenantScope,
  actor: Actor,
  id: number,
  deps: GroupTestDeps,
  waitMs = GROUP_TEST_WAIT_MS,
) {
  const g = await find(scope, id);
  const text = sampleNoticeText(g.name, deps.timeZone ?? DEFAULT_TIME_ZONE, new Date());
  // the scope's (gated) knex: the tenant's database after its cutover (issue 15 item 4)
  const row = await scope.knex.transaction((trx) =>
    enqueueChatMessage(
      trx,
      {
        tenantId: scope.tenantId,
        to: g.group_id,
        kind: 'group',
        text,
        source: 'test',
        accountId: g.account_id,
        userId: actor.userId,
        manual: true,
      },
      { redis: deps.redis, queues: deps.queues, config: (t) => loadChatSendConfig(deps.knex, deps.appKey, t, scope) },
    ),
  );
  await row.job;
  const until = Date.now() + waitMs;
  let cur = await scope
    .table('communication_messages')
    .where({ id: row.id })
    .first('status', 'message_id', 'error_code', 'error_message');
  while (cur?.status === 'queued' && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 150));
    cur = await scope
      .table('communication_messages')
      .where({ id: row.id })
      .first('status', 'message_id', 'error_code', 'error_message');
  }
  const status = String(cur?.status ?? row.status);
  return {
    ok: ['pending', 'sent', 'delivered', 'read'].includes(status),
    data: {
      communication_id: row.id,
      status,
      message_id: cur?.message_id ?? null,
      error: cur?.error_code ? { code: String(cur.error_code), message: cur.error_message ?? null } : null,
    },
  };
}
