/**
 * A running route as a re-planning reads it (an update, an insertion's pricing, a re-plan of several): its unfinished
 * stops in driving order, where its driver is now, the options its run was planned with; and which routes run.
 */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { VehicleClassId, WorkedSoFar } from "../../../solver";
import type { RouteBreak } from "../../../shared/contract/breaks";
import type { Company, Db } from "../../context";
import { deliveries, routes } from "../../db/schema";
import { inList } from "../../db/sql";
import type { RouteReplacement, StartFrom } from "../../domain/routing-plan";
import { DeliveryStatus, RUNNING_ROUTE_STATUSES, RouteStatus } from "../../../shared/contract/states";
import { dayAt } from "../../../shared/wall-clock";
import { notFound } from "../../errors";
import { parseDateTime } from "../../lib/time";
import { lastReportedStop, replacedChain } from "../route-records";
import { latestPositions } from "../tracking-positions";
import type { RoutingOptions } from "./request";

/** The options a route's run was planned with, again (routes planned before they were kept: today's defaults, a round trip by car). */
export function plannedOptions(route: typeof routes.$inferSelect): RoutingOptions {
  const planned = route.plan_options ?? { vehicle_class: "car", roundtrip: true, traffic: false };
  return {
    truck: planned.vehicle_class === "truck",
    vehicle: planned.vehicle_class as VehicleClassId,
    roundtrip: planned.roundtrip,
    traffic: planned.traffic,
    cancelroutes: false,
    assign_drivers: false,
    usearea: false,
  };
}

/**
 * A route as a replanning reads it: its unfinished deliveries in driving order (the write's compare-and-set is on
 * them), status, driver, vehicle and, on the way, where its driver is now.
 */
export async function routeAsRead(db: Db, companyId: number, route: typeof routes.$inferSelect): Promise<RouteReplacement> {
  const onRoute = await db
    .select({ id: deliveries.id })
    .from(deliveries)
    .where(and(eq(deliveries.company_id, companyId), eq(deliveries.route_id, route.id), eq(deliveries.status, DeliveryStatus.routed)))
    .orderBy(asc(deliveries.orderindex));
  const onTheWay = route.status === RouteStatus.ontheway;
  const startFrom = onTheWay ? await whereTheDriverIs(db, companyId, route) : undefined;
  const worked = onTheWay ? await workedSoFar(db, companyId, route, Date.now()) : undefined;
  return {
    routeId: route.id,
    status: route.status,
    driverId: route.driver_id,
    ast: route.ast,
    htmlcolor: route.htmlcolor,
    onRoute: onRoute.map((d) => d.id),
    previousDeliveries: route.previous_deliveries,
    vehicleId: route.vehicle_id,
    ...(startFrom ? { startFrom } : {}),
    ...(worked ? { workedSoFar: worked } : {}),
  };
}

/** Breaks shorter than this do not count for the rules (de-arbzg §4; eu-561's split starts at 15 min as well). */
const COUNTED_BREAK_MINUTES = 15;

/**
 * The working day so far of a route on the way, as the working-time rules count it: from when it went on the way
 * (`ast`) until `now`, its planned breaks taken as planned up to now (the driver app does not report breaks), on this
 * route and on the routes it replaced (each up to when it was replaced). The service does not know which part of
 * the work was driving: driving is taken as the whole work, the safe side.
 */
export async function workedSoFar(db: Db, companyId: number, route: typeof routes.$inferSelect, now: number): Promise<WorkedSoFar | undefined> {
  const started = route.ast ? parseDateTime(route.ast) : null;
  if (started === null || started >= now) return undefined;
  const chain = await db.all<{ creationtime: string; breaks: string }>(sql`
    ${replacedChain(companyId, route.id)}
    select r.creationtime as creationtime, r.breaks as breaks from chain join ${routes} r on r.id = chain.id order by chain.depth`);
  // Each route's breaks count up to when the route after it replaced it (the newest: up to now).
  const taken = chain.flatMap((r, k) => {
    const until = Math.min(now, k === 0 ? now : (parseDateTime(chain[k - 1].creationtime) ?? now));
    return (JSON.parse(r.breaks) as RouteBreak[])
      .filter((b) => b.minutes >= COUNTED_BREAK_MINUTES)
      .map((b) => ({ start: Math.max(started, parseDateTime(b.start) ?? now), end: Math.min(until, parseDateTime(b.end) ?? now) }))
      .filter((b) => b.end > b.start);
  });
  const breaks = taken.reduce((sum, b) => sum + (b.end - b.start), 0) / 1000;
  const work = Math.max(0, (now - started) / 1000 - breaks);
  const sinceBreak = Math.max(0, (now - Math.max(started, ...taken.map((b) => b.end))) / 1000);
  return { work, sinceBreak, breaks, driving: work, drivingSinceBreak: sinceBreak };
}

/** How old a driver's last position may be to start the rest of a tour from it (docs/features/live-replanning.md). */
export const START_POSITION_MAX_AGE_MINUTES = 10;

/**
 * Where the driver of a route on the way is now, for the rest of its tour: the last position if it is fresh
 * (`START_POSITION_MAX_AGE_MINUTES`), else the address of the last stop the driver reported on this route or the
 * routes it replaced; undefined (the depot) when there is neither.
 */
async function whereTheDriverIs(db: Db, companyId: number, route: typeof routes.$inferSelect): Promise<StartFrom | undefined> {
  if (route.driver_id !== null) {
    const [last] = await latestPositions(db, companyId, [route.driver_id]);
    const age = last ? Date.now() - (parseDateTime(last.timestamp) ?? 0) : Infinity;
    if (last && age <= START_POSITION_MAX_AGE_MINUTES * 60_000) return { lng: last.lng, lat: last.lat, source: "position" };
  }
  const stop = await lastReportedStop(db, companyId, route.id);
  return stop ? { lng: stop.lng, lat: stop.lat, source: "last-stop" } : undefined;
}

/** The company's routes with these ids, or 404 naming the unknown ones. */
export async function givenRoutes(db: Db, company: Company, routeIds: number[]) {
  const given = await db.select().from(routes).where(and(eq(routes.company_id, company.id), inList(routes.id, routeIds)));
  const unknown = routeIds.filter((id) => !given.some((r) => r.id === id));
  if (unknown.length) throw notFound(`Route ${unknown.join(", ")}`);
  return given;
}

/** The assigned, accepted and on-the-way routes whose planned start lies on the day of `dayMs` on the company's wall clock. */
export async function runningRoutesOfDay(db: Db, company: Company, dayMs: number) {
  const day = (ms: number) => dayAt(ms, company.timezone);
  const running = await db.select().from(routes).where(and(eq(routes.company_id, company.id), inArray(routes.status, [...RUNNING_ROUTE_STATUSES])));
  return running.filter((r) => day((r.tst_from ? parseDateTime(r.tst_from) : null) ?? Date.now()) === day(dayMs));
}
