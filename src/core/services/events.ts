/**
 * The event log: live events numbered in order, the source of webhook
 * deliveries and of the websocket's `resume`. An event caused by a D1 change
 * is inserted in the same `db.batch` as that change (`eventInsert`), so the
 * change and its event are committed together or not at all; the ids the
 * batch answers travel with the live message (`event_id`).
 */
import { type SQL, and, asc, eq, gt, sql } from "drizzle-orm";
import type { LiveEntry, PublishedEvent } from "../coordinator/live";
import type { LiveEvent } from "../../shared/contract/live";
import { events, now, webhooks } from "../db/schema";
import type { Db } from "../context";

export const EVENT_TYPES = ["route.updated", "delivery.updated", "process.updated", "driver.position", "eta.updated"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const TYPE_OF: Record<LiveEvent["type"], EventType> = {
  route: "route.updated",
  delivery: "delivery.updated",
  process: "process.updated",
  driverposition: "driver.position",
  eta: "eta.updated",
};

export const eventTypeOf = (event: LiveEvent): EventType => TYPE_OF[event.type];

/** Subscription patterns: an exact type, `group.*`, or `*`. */
export const EVENT_PATTERN = /^(\*|(route|delivery|process|driver|eta)\.\*|route\.updated|delivery\.updated|process\.updated|driver\.position|eta\.updated)$/;

/** The patterns that subscribe to `type`. */
const patternsFor = (type: string) => ["*", type, `${type.split(".")[0]}.*`];

export const wants = (patterns: readonly string[], type: string) => patterns.some((p) => patternsFor(type).includes(p));

/** An event to log in the batch of the change that causes it. */
export interface PendingEvent extends LiveEntry {
  /**
   * Logged only when this holds, evaluated where the insert stands in the
   * batch. Placed right before a conditional write and given that write's own
   * WHERE (as an EXISTS), the event is logged exactly when the write applies:
   * the batch is one transaction, nothing comes between the two statements.
   */
  when?: SQL;
  /** A payload field only the batch knows, e.g. the id of a route inserted before it (a scalar subquery). */
  fill?: { id: SQL };
}

/**
 * The insert of one event for a `db.batch` (or, through `d1Statement`, a raw
 * D1 batch): answers the logged event as `[{eventId, driverId, event}]`, or
 * nothing when `when` did not hold. The one place that writes the log.
 */
export function eventInsert(db: Db, companyId: number, pending: PendingEvent) {
  const json = JSON.stringify(pending.event);
  const payload = pending.fill ? sql`json_set(${json}, '$.id', ${pending.fill.id})` : sql`${json}`;
  return db
    .insert(events)
    .select(sql`select null, ${companyId}, ${eventTypeOf(pending.event)}, ${pending.driverId}, ${payload}, ${now}, null where ${pending.when ?? sql`1`}`)
    .returning({ eventId: events.id, driverId: events.driver_id, event: events.payload });
}

/** What an `eventInsert` statement answers in a batch: the logged row, or none. */
export type EventAnswer = { eventId: number; driverId: number | null; event: unknown }[];

/** The events logged by `eventInsert` statements of a batch (their answers), in log order. */
export const loggedEvents = (answers: EventAnswer[]): (PublishedEvent & { eventId: number })[] =>
  answers
    .flat()
    .map((a) => ({ eventId: a.eventId, driverId: a.driverId, event: a.event as LiveEvent }))
    .sort((a, b) => a.eventId - b.eventId);

/** The answer of an `eventInsert` run in a raw D1 batch (columns by their names, the payload as JSON text). */
export const eventInsertAnswer = (result: D1Result): EventAnswer =>
  (result.results as { id: number; driver_id: number | null; payload: string }[]).map((r) => ({ eventId: r.id, driverId: r.driver_id, event: JSON.parse(r.payload) }));

/**
 * Logs an event that has no D1 change to go with (a process status: process
 * state lives in the company's Durable Object storage, whose outbox calls
 * this); idempotent by `sourceId`, the outbox entry's id: logging it again
 * answers the id it got the first time.
 */
export async function logEventOnce(db: Db, companyId: number, event: LiveEvent, driverId: number | null, sourceId: string): Promise<number> {
  const [logged] = await db
    .insert(events)
    .values({ company_id: companyId, type: eventTypeOf(event), driver_id: driverId, payload: event, source_id: sourceId })
    .onConflictDoNothing({ target: events.source_id })
    .returning({ eventId: events.id });
  if (logged) return logged.eventId;
  const [earlier] = await db.select({ eventId: events.id }).from(events).where(eq(events.source_id, sourceId));
  return earlier.eventId;
}

/**
 * Whether an enabled webhook of the company subscribes to `type`, as SQL: the
 * condition of logging an event that is otherwise live only (driver positions).
 */
export const webhookWants = (companyId: number, type: EventType) =>
  sql`exists (select 1 from ${webhooks}, json_each(${webhooks.event_types}) as pattern
    where ${webhooks.company_id} = ${companyId} and ${webhooks.enabled} = 1 and pattern.value in (select value from json_each(${JSON.stringify(patternsFor(type))})))`;

/** Events after `after`, oldest first; for a driver only the ones that concern them. */
export function eventsAfter(db: Db, companyId: number, after: number, opts: { driverId?: number; limit: number }) {
  const scope = opts.driverId === undefined ? undefined : eq(events.driver_id, opts.driverId);
  return db
    .select()
    .from(events)
    .where(and(eq(events.company_id, companyId), gt(events.id, after), scope))
    .orderBy(asc(events.id))
    .limit(opts.limit);
}
