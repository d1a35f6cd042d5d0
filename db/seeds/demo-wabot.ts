import type { Knex } from 'knex';
import { TenantScope } from '../tenant-scope.js';
import { saveWabotConfig } from '../../api/wabot/service.js';

/**
 * The demo chat bot (issue 10 item 6): demo-isp sends through the fake wablas gateway of `npm start`
 * (bin/dev-wabot.ts) with two accounts, "Fake A" (weight 2, 6 a minute, 5 s apart) and "Fake B"
 * (weight 1, 3 a minute, 10 s apart), the bot enabled with auto-replies on (issue 11). Written
 * through the configuration service (validation, sealed tokens, audit), so it needs APP_KEY; run
 * by bin/dev.ts on every start and a no-op once the tenant has a chat-bot configuration (except
 * that the two fake accounts follow a changed WABOT_DEMO_PORT), so an existing `.data` gets it too.
 * Issue 11 item 4: the chat group "NOC Demo" (network operations, through Fake A) ticks
 * `ticket_incident_created`; it is added whenever the tenant has no chat group at all.
 */

/** Device tokens of the demo accounts and the labels the fake gateway shows for them (not secrets: fake devices). */
export const DEMO_WABOT_DEVICES: Readonly<Record<string, string>> = Object.freeze({
  'demo-fake-a-device-token': 'Fake A',
  'demo-fake-b-device-token': 'Fake B',
});

/** Ids of the demo accounts. */
const DEMO_ACCOUNT_IDS = ['fake-a', 'fake-b'];

/** The default test recipient of the demo (a made-up Indonesian mobile number). */
export const DEMO_WABOT_TEST_NUMBER = '0812 0000 0001';

/** The demo's chat group (issue 11 item 4): a made-up WhatsApp group id of the fake gateway. */
export const DEMO_WABOT_GROUP = Object.freeze({
  name: 'NOC Demo',
  kind: 'network_operations',
  account_id: 'fake-a',
  group_id: '120363000000000001@g.us',
  events: ['ticket_incident_created'],
});

/** Adds the "NOC Demo" group when the tenant has no chat group (idempotent). */
async function seedDemoGroup(scope: TenantScope, log?: (line: string) => void): Promise<void> {
  if (await scope.table('wabot_groups').first('id')) return;
  await scope.table('wabot_groups').insert({
    tenant_id: scope.tenantId,
    ...DEMO_WABOT_GROUP,
    events: JSON.stringify(DEMO_WABOT_GROUP.events),
    enabled: true,
  });
  log?.(`demo chat bot: group "${DEMO_WABOT_GROUP.name}" receives ticket_incident_created notices`);
}

/** What seedDemoWabot did. */
export type DemoWabotResult = 'seeded' | 'exists' | 'no_tenant';

/**
 * Configures demo-isp's chat bot on the fake gateway unless it has a configuration already.
 * @param appKey APP_KEY (seals the device tokens and the webhook secret)
 * @param opts.gatewayUrl the fake gateway's base URL (`http://127.0.0.1:3002`)
 * @param opts.tenantSlug the tenant (default demo-isp)
 * @returns seeded, exists (left untouched) or no_tenant
 */
export async function seedDemoWabot(
  knex: Knex,
  appKey: Buffer,
  opts: { gatewayUrl: string; tenantSlug?: string; log?: (line: string) => void },
): Promise<DemoWabotResult> {
  const slug = opts.tenantSlug ?? 'demo-isp';
  const tenant = await knex('tenants').where({ slug }).first('id');
  if (!tenant) return 'no_tenant';
  const scope = new TenantScope(knex, tenant.id);
  if (await scope.table('wabot_settings').first('id')) {
    // the demo's own accounts follow the gateway when WABOT_DEMO_PORT changed; nothing else is touched
    const moved = await scope
      .table('wabot_accounts')
      .whereIn('account_id', DEMO_ACCOUNT_IDS)
      .where('base_url', 'like', 'http://127.0.0.1:%')
      .whereNot('base_url', opts.gatewayUrl)
      .update({ base_url: opts.gatewayUrl, updated_at: new Date() });
    if (moved) opts.log?.(`demo chat bot: ${moved} fake account(s) of ${slug} now point at ${opts.gatewayUrl}`);
    if (await scope.table('wabot_accounts').where({ account_id: DEMO_WABOT_GROUP.account_id }).first('id'))
      await seedDemoGroup(scope, opts.log);
    return 'exists';
  }
  const [a, b] = Object.keys(DEMO_WABOT_DEVICES);
  const account = (id: string, label: string, token: string, weight: number, perMinute: number, delay: number) => ({
    id,
    provider: 'wablas' as const,
    label,
    token,
    base_url: opts.gatewayUrl,
    enabled: true,
    weight,
    max_messages_per_minute: perMinute,
    message_delay_seconds: delay,
  });
  await saveWabotConfig(
    scope,
    appKey,
    { userId: null },
    { publicBaseUrl: '', tenantSlug: slug },
    {
      provider: 'wablas',
      wa_number: DEMO_WABOT_TEST_NUMBER,
      settings: {
        enabled: true,
        auto_reply: true, // issue 11 item 2: the demo answers its customers' tagihan/status/tiket
        base_url: opts.gatewayUrl,
        accounts: [
          account(DEMO_ACCOUNT_IDS[0], 'Fake A', a, 2, 6, 5),
          account(DEMO_ACCOUNT_IDS[1], 'Fake B', b, 1, 3, 10),
        ],
      },
    },
  );
  await seedDemoGroup(scope, opts.log);
  opts.log?.(`demo chat bot: ${slug} sends through the fake wablas gateway at ${opts.gatewayUrl} (Fake A, Fake B)`);
  return 'seeded';
}
