/**
 * The event log: live events numbered in order, the source of webhook
 * deliveries and of the websocket's `resume`. Pure helpers plus the two
 * D1 statements that write and read it.
 */
import { and, asc, eq, gt } from "drizzle-orm";
import type { LiveEvent } from "../../durable/company";
import { events } from "../db/schema";
import type { Db } from "../env";

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

export const wants = (patterns: readonly string[], type: string) =>
  patterns.some((p) => p === "*" || p === type || (p.endsWith(".*") && type.startsWith(p.slice(0, -1))));

/** Appends an event; answers its id. */
export async function logEvent(db: Db, companyId: number, event: LiveEvent, driverId: number | null): Promise<number> {
  const [row] = await db
    .insert(events)
    .values({ company_id: companyId, type: eventTypeOf(event), driver_id: driverId, payload: event as unknown as Record<string, unknown> })
    .returning({ id: events.id });
  return row.id;
}

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
