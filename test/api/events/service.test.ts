import { expect } from 'chai';
import { env } from '../../helpers/env.js';
import { bareTenant } from '../../helpers/events.js';
import {
  EVENT_NAMES,
  MAX_PAYLOAD_BYTES,
  idempotencyKey,
  isEventName,
  publishEvent,
  registerSubscriber,
  subscribersFor,
  type EventName,
} from '../../../api/events/service.js';

class Rollback extends Error {}

describe('api/events/service.ts publishEvent (transactional outbox)', () => {
  let tenantId: number;
  before(async () => {
    tenantId = await bareTenant();
  });

  it('knows the events of document 2 "## Events"', () => {
    expect(EVENT_NAMES).to.deep.equal(['ticket_incident_created', 'inbound_chat_message']);
    expect(isEventName('ticket_incident_created')).to.equal(true);
    expect(isEventName('ticket_incident_create')).to.equal(false);
  });

  it("writes nothing when the caller's transaction rolls back", async () => {
    let id = 0;
    try {
      await env.knex.transaction(async (trx) => {
        id = (await publishEvent(trx, tenantId, 'ticket_incident_created', { ticket_id: 41 })).id;
        const seen = await trx('event_outbox').where({ id }).first('name');
        expect(seen).to.deep.equal({ name: 'ticket_incident_created' });
        throw new Rollback('undo the business change');
      });
    } catch (e) {
      if (!(e instanceof Rollback)) throw e;
    }
    expect(id).to.be.greaterThan(0);
    expect(await env.knex('event_outbox').where({ id }).first()).to.equal(undefined);
    expect(await env.knex('event_outbox').where({ tenant_id: tenantId }).count({ n: '*' })).to.deep.equal([{ n: 0 }]);
  });

  it('writes exactly one undispatched row when the transaction commits', async () => {
    const before = Date.now();
    const { id } = await env.knex.transaction((trx) =>
      publishEvent(trx, tenantId, 'inbound_chat_message', { communication_id: 7 }),
    );
    const rows = await env.knex('event_outbox').where({ tenant_id: tenantId });
    expect(rows).to.have.length(1);
    const [row] = rows;
    expect(row.id).to.equal(id);
    expect(row.name).to.equal('inbound_chat_message');
    expect(row.payload).to.deep.equal({ communication_id: 7 });
    expect(row.dispatched_at).to.equal(null);
    expect(row.attempts).to.equal(0);
    expect(row.last_error).to.equal(null);
    expect(new Date(row.created_at).getTime()).to.be.within(before - 60_000, Date.now() + 60_000);
  });

  it('refuses unknown names, bad tenants and payloads that are not a small JSON object', async () => {
    const attempt = async (fn: (trx: Parameters<typeof publishEvent>[0]) => Promise<unknown>) => {
      try {
        await env.knex.transaction(async (trx) => {
          await fn(trx);
        });
      } catch (e) {
        return e as Error;
      }
      return null;
    };
    const misspelt = 'ticket_incident_create' as EventName;
    // `as never`: the payload type of a misspelt name is unknown to TypeScript; the runtime check is under test
    const typo = await attempt((trx) => publishEvent(trx, tenantId, misspelt, { ticket_id: 1 } as never));
    expect(typo).to.be.instanceOf(TypeError);
    expect(typo!.message).to.include('ticket_incident_create');
    const noTenant = await attempt((trx) => publishEvent(trx, 0, 'ticket_incident_created', { ticket_id: 1 }));
    expect(noTenant).to.be.instanceOf(TypeError);
    // `as never`: an array payload that TypeScript would refuse, to test the runtime refusal of a JavaScript caller
    const arr = await attempt((trx) => publishEvent(trx, tenantId, 'ticket_incident_created', [1] as never));
    expect(arr).to.be.instanceOf(TypeError);
    const big = { ticket_id: 1, note: 'x'.repeat(MAX_PAYLOAD_BYTES) };
    const tooBig = await attempt((trx) => publishEvent(trx, tenantId, 'ticket_incident_created', big));
    expect(tooBig).to.be.instanceOf(RangeError);
    const fk = await attempt((trx) => publishEvent(trx, 2_000_000_000, 'ticket_incident_created', { ticket_id: 1 }));
    expect((fk as Error & { code?: string }).code).to.equal('23503');
    const written = await env
      .knex('event_outbox')
      .where({ tenant_id: tenantId, name: 'ticket_incident_created' })
      .count({ n: '*' });
    expect(written).to.deep.equal([{ n: 0 }]);
  });

  it('does not compile a misspelt event name or a payload of another event', async () => {
    const compileOnly = async (trx: Parameters<typeof publishEvent>[0]) => {
      // @ts-expect-error "ticket_incident_create" is not an EventName
      await publishEvent(trx, tenantId, 'ticket_incident_create', { ticket_id: 1 });
      // @ts-expect-error the payload of ticket_incident_created has ticket_id, not message_id
      await publishEvent(trx, tenantId, 'ticket_incident_created', { message_id: 1 });
    };
    expect(compileOnly).to.be.a('function');
  });
});

describe('api/events/service.ts subscriber registry', () => {
  const unregister: (() => void)[] = [];
  afterEach(() => {
    while (unregister.length) unregister.pop()!();
  });

  it('lists the subscribers of a name in registration order, "*" receiving every event', () => {
    const handle = async () => {};
    unregister.push(registerSubscriber('test.reg-incidents', { events: ['ticket_incident_created'], handle }));
    unregister.push(registerSubscriber('test.reg-all', { events: '*', handle }));
    const ids = (name: string) => subscribersFor(name).map((s) => s.id);
    expect(ids('ticket_incident_created')).to.include.ordered.members(['test.reg-incidents', 'test.reg-all']);
    expect(ids('inbound_chat_message')).to.include('test.reg-all').and.not.include('test.reg-incidents');
    unregister.pop()!();
    expect(ids('inbound_chat_message')).to.not.include('test.reg-all');
  });

  it('refuses a duplicate id, a malformed id, unknown event names and a bad timeout', () => {
    const handle = async () => {};
    unregister.push(registerSubscriber('test.reg-dup', { events: '*', handle }));
    expect(() => registerSubscriber('test.reg-dup', { events: '*', handle })).to.throw(Error, 'already registered');
    expect(() => registerSubscriber('Bad:Id', { events: '*', handle })).to.throw(TypeError, 'Invalid subscriber id');
    expect(() => registerSubscriber('test.reg-x', { events: ['nope' as EventName], handle })).to.throw(
      TypeError,
      'nope',
    );
    expect(() => registerSubscriber('test.reg-y', { events: [], handle })).to.throw(TypeError);
    expect(() => registerSubscriber('test.reg-z', { events: '*', handle, timeoutMs: 10 * 60_000 })).to.throw(
      TypeError,
      'timeoutMs',
    );
    expect(
      subscribersFor('ticket_incident_created')
        .map((s) => s.id)
        .filter((id) => id.startsWith('test.reg-')),
    ).to.deep.equal(['test.reg-dup']);
  });

  it('builds the idempotency key from the event id and the subscriber id', () => {
    expect(idempotencyKey(42, 'wabot.incident-groups')).to.equal('42:wabot.incident-groups');
  });
});
