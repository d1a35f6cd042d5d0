import type { Knex } from 'knex';

/**
 * Domain events through a transactional outbox (DESIGN.md §10 "events", document 2 "## Events").
 *
 * - publishEvent() writes one event_outbox row in the caller's transaction: the event exists
 *   exactly when the change that caused it commits, and a rolled-back change publishes nothing.
 * - Subscribers are code, registered at import time with registerSubscriber() in the worker
 *   process; the `event-dispatch` job (jobs/event-dispatch.ts) runs each subscriber once per event
 *   and records an event_deliveries row in the same transaction as the subscriber's database effect.
 *
 * This module opens no connection and imports nothing of api/http, api/middleware or api/errors,
 * so jobs may import it (DESIGN.md §3). Arguments are checked and programming errors thrown as
 * TypeError / RangeError; it never produces an HTTP error itself. docs/events.md has the guide.
 */

/** The events of document 2 "## Events" (one union, so a typo in a name does not compile). */
export const EVENT_NAMES = ['ticket_incident_created', 'inbound_chat_message'] as const;
/** One of EVENT_NAMES. */
export type EventName = (typeof EVENT_NAMES)[number];

/**
 * Payload of each event. The spec shows no payload shapes, so they carry ids (DESIGN.md §3: state
 * lives in PostgreSQL); a subscriber re-reads the record through the tenant scope. Never put a
 * password, token or API key in a payload.
 */
export interface EventPayloads {
  /**
   * "Incident Massal": a mass incident was created with notify_whatsapp_groups on (issue 11 item 4,
   * decision): the incident's id and ticket number and the fields its group notice shows, so the
   * notice reads what was true when it was published. `ticket_id` is the earlier placeholder's field
   * (issue 6), still accepted. Times ISO 8601.
   */
  ticket_incident_created: {
    incident_id?: number;
    ticket_id?: number;
    ticket_number?: string | null;
    description?: string | null;
    severity?: string | null;
    olt?: string | null;
    home_base?: string | null;
    impact_area?: string | null;
    estimated_recovery_at?: string | null;
    group_message?: string | null;
  };
  /**
   * A chat provider called POST /api/wabot/inbound/{tenant_slug} and a new inbound message was
   * stored (issue 11 item 1): communication_messages.id of that row, published in the same
   * transaction as the row.
   */
  inbound_chat_message: { communication_id: number };
}

/** Largest payload publishEvent accepts, in bytes of its JSON text (64 KiB). */
export const MAX_PAYLOAD_BYTES = 64 * 1024;

/** An event as subscribers receive it (one row of event_outbox). */
export type OutboxEvent<N extends EventName = EventName> = {
  [K in N]: {
    /** event_outbox.id */
    id: number;
    tenant_id: number;
    name: K;
    payload: EventPayloads[K];
    /** When it was published (ISO 8601). */
    created_at: string;
    /** Failed dispatch attempts before this one (0 on the first). */
    attempts: number;
  };
}[N];

/** True when `name` is one of EVENT_NAMES. */
export function isEventName(name: unknown): name is EventName {
  return typeof name === 'string' && (EVENT_NAMES as readonly string[]).includes(name);
}

/**
 * Publishes an event: inserts one event_outbox row in the caller's transaction (DESIGN.md §10).
 * Nothing is enqueued here (a job cannot see an uncommitted row); the `event-dispatch` scheduler
 * picks the row up within seconds of the commit, and a caller wanting it sooner may nudge the
 * dispatcher after its commit (jobs/event-dispatch.ts nudge()).
 * @param trx the caller's open transaction (the row commits or rolls back with it)
 * @param tenantId tenants.id the event belongs to (positive integer)
 * @param name one of EVENT_NAMES
 * @param payload a JSON object, at most MAX_PAYLOAD_BYTES (64 KiB) as JSON text; ids, never secrets
 * @returns `{ id }`: event_outbox.id of the new row
 * @throws TypeError for an unknown name, a bad tenant id or a payload that is not a JSON object;
 *   RangeError when the payload is too large; the database error when the insert fails (e.g. an
 *   unknown tenant, foreign key 23503)
 */
export async function publishEvent<N extends EventName>(
  trx: Knex.Transaction,
  tenantId: number,
  name: N,
  payload: EventPayloads[N],
): Promise<{ id: number }> {
  if (!isEventName(name)) throw new TypeError(`Unknown event name "${String(name)}"; known: ${EVENT_NAMES.join(', ')}`);
  if (!Number.isSafeInteger(tenantId) || tenantId <= 0) throw new TypeError(`Invalid tenant id ${String(tenantId)}`);
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) {
    throw new TypeError(`The payload of event ${name} must be a JSON object`);
  }
  const json = JSON.stringify(payload);
  if (Buffer.byteLength(json) > MAX_PAYLOAD_BYTES) {
    throw new RangeError(`The payload of event ${name} exceeds ${MAX_PAYLOAD_BYTES} bytes`);
  }
  const [row] = await trx('event_outbox').insert({ tenant_id: tenantId, name, payload: json }).returning('id');
  return { id: Number(row.id) };
}

/** What a subscriber's handle() receives besides the event. */
export interface SubscriberContext {
  /**
   * A savepoint of the dispatcher's transaction. The delivery row is inserted in it right after
   * handle() returns, so database effects written through `trx` happen exactly once per
   * (event, subscriber); a throw rolls them back with the savepoint.
   */
  trx: Knex.Transaction;
  /**
   * `${event.id}:${subscriber id}`: pass it to external systems (Idempotency-Key header, message
   * reference). A worker can die after an external call and before the commit; the retry then
   * repeats the call with the same key, and the external system must drop the repeat.
   */
  idempotencyKey: string;
  /** Fires when the worker shuts down or the subscriber's timeout passes: stop and throw. */
  signal: AbortSignal;
  /** Appends a line to the dispatch job's log (bull-board). Never log a secret. */
  log(line: string): Promise<unknown>;
}

/** Default bound of one handle() call, in ms (DESIGN.md §3: faults are answered, not waited out). */
export const DEFAULT_SUBSCRIBER_TIMEOUT_MS = 30_000;
/** Largest timeoutMs a subscriber may ask for, in ms (the dispatcher's transaction must outlive it). */
export const MAX_SUBSCRIBER_TIMEOUT_MS = 120_000;

/** How a subscriber is registered (see registerSubscriber). */
export interface SubscriberDef<N extends EventName = EventName> {
  /** The events it receives, or '*' for every event. */
  events: readonly N[] | '*';
  /**
   * Handles one event. Resolve when done; throw to have it retried later (with backoff). Must be
   * idempotent towards external systems by ctx.idempotencyKey (at-least-once runs).
   */
  handle(event: OutboxEvent<N>, ctx: SubscriberContext): Promise<void>;
  /** Bound of one handle() call in ms, 1..MAX_SUBSCRIBER_TIMEOUT_MS (default 30 s); then it counts as failed. */
  timeoutMs?: number;
}

/** A registered subscriber (what the dispatcher iterates over). */
export interface Subscriber extends SubscriberDef {
  /** Unique id, stored in event_deliveries.subscriber and part of the idempotency key. */
  readonly id: string;
}

/** Subscriber ids: lowercase words with '.', '_' or '-', 1-100 characters (no ':', used in the key). */
export const SUBSCRIBER_ID_PATTERN = /^[a-z][a-z0-9._-]{0,99}$/;

const subscribers = new Map<string, Subscriber>();

/**
 * Registers a subscriber in this process (call it when the subscribing module is imported by the
 * worker). The id is the subscriber's identity in event_deliveries: never rename it while events
 * are in flight, or the renamed subscriber receives them again.
 * @param id unique subscriber id matching SUBSCRIBER_ID_PATTERN, e.g. "wabot.incident-groups"
 * @param def events (names or '*'), handle(event, ctx), optional timeoutMs
 * @returns a function that unregisters it (tests, hot reload)
 * @throws TypeError for a malformed id, an unknown event name, a missing handle() or a bad timeoutMs;
 *   Error when the id is already registered
 */
export function registerSubscriber<N extends EventName>(id: string, def: SubscriberDef<N>): () => void {
  if (!SUBSCRIBER_ID_PATTERN.test(id)) throw new TypeError(`Invalid subscriber id "${id}" (${SUBSCRIBER_ID_PATTERN})`);
  if (def.events !== '*') {
    const unknown = def.events.filter((n) => !isEventName(n));
    if (unknown.length || !def.events.length) {
      throw new TypeError(`Subscriber ${id}: bad events [${def.events.join(', ')}]`);
    }
  }
  if (typeof def.handle !== 'function') throw new TypeError(`Subscriber ${id} has no handle()`);
  const t = def.timeoutMs;
  if (t !== undefined && !(Number.isInteger(t) && t > 0 && t <= MAX_SUBSCRIBER_TIMEOUT_MS)) {
    throw new TypeError(`Subscriber ${id}: timeoutMs must be an integer in 1..${MAX_SUBSCRIBER_TIMEOUT_MS}`);
  }
  if (subscribers.has(id)) throw new Error(`Subscriber ${id} is already registered`);
  // Subscriber.handle() takes any event, def.handle() only events named N: safe because subscribersFor() hands
  // a subscriber only the events named in def.events (or every event for '*', where N is every name).
  const sub = Object.freeze({ ...def, id }) as unknown as Subscriber;
  subscribers.set(id, sub);
  return () => {
    if (subscribers.get(id) === sub) subscribers.delete(id);
  };
}

/**
 * The registered subscribers of an event name, in registration order.
 * @param name an event name (an unknown name has none)
 */
export function subscribersFor(name: string): Subscriber[] {
  return [...subscribers.values()].filter((s) => s.events === '*' || (s.events as readonly string[]).includes(name));
}

/** The idempotency key of (event, subscriber): `${eventId}:${subscriberId}`. */
export function idempotencyKey(eventId: number, subscriberId: string): string {
  return `${eventId}:${subscriberId}`;
}
