/**
 * The day report (GET /report/day): planned against actual per route, per
 * driver and in total, over one day or a range of the company's local days.
 *
 * Each finished route's figures are computed once and stored (`route_reports`):
 * by the company's Durable Object right after the report that finished the
 * route (`storeRouteReports`), and, for a finished route that has no row yet
 * (finished before this feature, or the object failed between the finish and
 * the computation), by the first read of its day (`fillMissing`, at most
 * MISSING_PER_READ per request; the answer says `incomplete` while some are
 * left). Reads only sum stored rows (domain/day-report.ts).
 *
 * Actual kilometres come from the driver's tracked positions, from D1 and the
 * position archive in R2 alike (`positionsOfDay`), so a route computed after
 * its positions were archived gets the same figures.
 */
import { and, asc, eq, gte, inArray, isNull, lt, or, sql } from "drizzle-orm";
import type { Company, Db } from "../context";
import { addDays, dayAt, dayBounds } from "../../shared/wall-clock";
import { deliveries, events, routeReports, routes, users, vehicles } from "../db/schema";
import type { DayReport, DriverLine, RouteLine } from "../../shared/contract/day-report";
import { type RouteFigures, EMISSION_FACTORS, type StopInput, latenessHistogram, routeFigures, sumFigures } from "../domain/day-report";
import { DeliveryStatus, RouteStatus } from "../../shared/contract/states";
import type { Env } from "../env";
import { log } from "../lib/log";
import { formatDateTime } from "../lib/time";
import { positionsOfDay } from "./position-archive";

/** Version of the arithmetic the stored rows were computed with. */
export const DAY_REPORT_VERSION = 1;
/** Finished routes without a stored row computed by one read at most (each reads positions from D1 and R2). */
export const MISSING_PER_READ = 25;
/** Longest range of one request, days. */
export const MAX_RANGE_DAYS = 31;

type RouteRow = typeof routes.$inferSelect;

/** The instant a route counts from: its start, else its planned start. */
const routeInstant = (r: Pick<RouteRow, "ast" | "tst_from" | "creationtime">) => r.ast ?? r.tst_from ?? r.creationtime;

/**
 * Deliveries the driver reported `undelivered` on this route that have moved
 * to another route since (undelivered deliveries are open for routing at
 * once): found in the event log (kept EVENT_REPLAY_DAYS), with the time of that report.
 */
async function movedUndelivered(db: Db, route: RouteRow): Promise<Map<number, string>> {
  const rows = await db
    .select({ id: sql<number>`json_extract(${events.payload}, '$.id')`, at: events.created_at })
    .from(events)
    .where(
      and(
        eq(events.company_id, route.company_id),
        eq(events.type, "delivery.updated"),
        gte(events.created_at, route.ast ?? route.creationtime),
        sql`json_extract(${events.payload}, '$.route_id') = ${route.id}`,
        sql`json_extract(${events.payload}, '$.status') = ${DeliveryStatus.undelivered}`,
      ),
    )
    .orderBy(asc(events.id));
  return new Map(rows.map((r) => [Number(r.id), r.at]));
}

/** Computes one finished route's figures from its records and stores them unless stored already; answers the stored row's figures. */
export async function computeRouteReport(env: Env, db: Db, companyId: number, timeZone: string, routeId: number): Promise<RouteFigures | null> {
  const [route] = await db.select().from(routes).where(and(eq(routes.company_id, companyId), eq(routes.id, routeId)));
  if (!route || route.status !== RouteStatus.finished) return null;
  const moved = await movedUndelivered(db, route);
  const stopColumns = {
    id: deliveries.id,
    route_id: deliveries.route_id,
    status: deliveries.status,
    ata: deliveries.ata,
    atd: deliveries.atd,
    pdt_from: deliveries.pdt_from,
    pdt_to: deliveries.pdt_to,
    window_from: deliveries.window_from,
    window_to: deliveries.window_to,
    waiting_time: deliveries.waiting_time,
    code: deliveries.code,
    drivernotes: deliveries.drivernotes,
  };
  const rows = await db
    .select(stopColumns)
    .from(deliveries)
    .where(and(eq(deliveries.company_id, companyId), or(eq(deliveries.route_id, route.id), moved.size ? inArray(deliveries.id, [...moved.keys()]) : sql`0`)))
    .orderBy(asc(deliveries.orderindex), asc(deliveries.id));
  const stops: StopInput[] = rows.map(({ route_id, ...s }) => {
    const reportedAt = moved.get(s.id);
    if (route_id === route.id || reportedAt === undefined) return s;
    // On another route now: here it was not delivered, at the time of that report.
    return { ...s, status: DeliveryStatus.undelivered, ata: s.ata !== null && s.ata <= reportedAt ? s.ata : reportedAt, atd: reportedAt };
  });

  const [vehicle] =
    route.driver_id === null
      ? []
      : await db
          .select({ vehicle_class: vehicles.vehicle_class, co2e: vehicles.co2e_g_per_km })
          .from(vehicles)
          .where(and(eq(vehicles.company_id, companyId), eq(vehicles.driver_id, route.driver_id)))
          .orderBy(sql`${vehicles.active} desc`, asc(vehicles.id))
          .limit(1);

  const start = route.ast;
  const lastReport = stops.map((s) => s.atd ?? s.ata).filter((t): t is string => t !== null).sort().pop();
  const positions = [];
  if (route.driver_id !== null && start) {
    const end = lastReport ?? start;
    // Each local day the route spans (a route past midnight reads two).
    for (let day = dayAt(Date.parse(start), timeZone), last = dayAt(Date.parse(end), timeZone); day <= last; day = addDays(day, 1)) {
      positions.push(...(await positionsOfDay(env, db, companyId, route.driver_id, day, timeZone)));
    }
  }
  const figures = routeFigures({
    route_id: route.id,
    driver_id: route.driver_id,
    ast: route.ast,
    tst_from: route.tst_from,
    planned_distance_m: route.distance,
    planned_duration_s: route.gross_duration,
    planned_breaks: route.breaks,
    stops,
    positions,
    vehicle_class: vehicle?.vehicle_class ?? "car",
    co2e_factor: vehicle?.co2e ?? null,
  });
  const day = dayAt(Date.parse(routeInstant(route)), timeZone);
  // Computed once: a second computation (the object and a read at once) keeps the first row.
  const [stored] = await db
    .insert(routeReports)
    .values({ route_id: route.id, company_id: companyId, day, driver_id: route.driver_id, figures, version: DAY_REPORT_VERSION })
    .onConflictDoNothing({ target: routeReports.route_id })
    .returning({ figures: routeReports.figures });
  if (stored) return stored.figures;
  const [earlier] = await db.select({ figures: routeReports.figures }).from(routeReports).where(and(eq(routeReports.company_id, companyId), eq(routeReports.route_id, route.id)));
  return earlier?.figures ?? figures;
}

/**
 * The company's Durable Object, after a change: stores the report of each route it finished.
 * A failure is logged, not thrown: the first read of that day computes what is missing.
 */
export async function storeRouteReports(env: Env, db: Db, company: Pick<Company, "id" | "timezone">, routeIds: number[]) {
  for (const routeId of routeIds) {
    try {
      await computeRouteReport(env, db, company.id, company.timezone, routeId);
    } catch (error) {
      log("error", "day report of a finished route failed", { company_id: company.id, route_id: routeId, error });
    }
  }
}

/** Finished routes of [from, to] (local days) without a stored row, oldest first: computed now, MISSING_PER_READ at most; answers how many are left. */
async function fillMissing(env: Env, db: Db, company: Pick<Company, "id" | "timezone">, from: string, to: string): Promise<number> {
  const start = formatDateTime(dayBounds(from, company.timezone).start);
  const end = formatDateTime(dayBounds(to, company.timezone).end);
  const instant = sql`coalesce(${routes.ast}, ${routes.tst_from}, ${routes.creationtime})`;
  const missing = await db
    .select({ id: routes.id })
    .from(routes)
    .leftJoin(routeReports, eq(routeReports.route_id, routes.id))
    .where(and(eq(routes.company_id, company.id), eq(routes.status, RouteStatus.finished), isNull(routeReports.route_id), sql`${instant} >= ${start}`, sql`${instant} < ${end}`))
    .orderBy(asc(routes.id))
    .limit(MISSING_PER_READ + 1);
  for (const { id } of missing.slice(0, MISSING_PER_READ)) await computeRouteReport(env, db, company.id, company.timezone, id);
  return Math.max(0, missing.length - MISSING_PER_READ);
}

const driverName = (u: { firstname: string | null; lastname: string | null; email: string } | undefined) =>
  u ? [u.firstname, u.lastname].filter(Boolean).join(" ") || u.email : null;

/** The report over the company's local days [from, to] (`YYYY-MM-DD`, to ≥ from, at most MAX_RANGE_DAYS). */
export async function dayReport(env: Env, db: Db, company: Pick<Company, "id" | "timezone">, from: string, to: string): Promise<DayReport> {
  const left = await fillMissing(env, db, company, from, to);
  const rows = await db
    .select({ day: routeReports.day, driver_id: routeReports.driver_id, figures: routeReports.figures, name: routes.custom_id })
    .from(routeReports)
    .leftJoin(routes, eq(routes.id, routeReports.route_id))
    .where(and(eq(routeReports.company_id, company.id), gte(routeReports.day, from), lt(routeReports.day, addDays(to, 1))))
    .orderBy(asc(routeReports.day), asc(routeReports.route_id));
  const driverIds = [...new Set(rows.flatMap((r) => (r.driver_id === null ? [] : [r.driver_id])))];
  const people = driverIds.length
    ? await db.select({ id: users.id, firstname: users.firstname, lastname: users.lastname, email: users.email }).from(users).where(and(eq(users.company_id, company.id), inArray(users.id, driverIds)))
    : [];
  const byId = new Map(people.map((p) => [p.id, p]));
  const routeLines: RouteLine[] = rows.map((r) => ({
    route_id: r.figures.route_id,
    name: r.name,
    day: r.day,
    driver_id: r.driver_id,
    driver_name: driverName(byId.get(r.driver_id ?? -1)),
    started_at: r.figures.started_at,
    finished_at: r.figures.finished_at,
    vehicle_class: r.figures.vehicle_class,
    co2e_factor: r.figures.co2e_factor,
    co2e_basis: r.figures.co2e_basis,
    ...sumFigures([r.figures]),
    stop_details: r.figures.stop_figures,
  }));
  const perDriver = new Map<number | null, RouteFigures[]>();
  for (const r of rows) perDriver.set(r.driver_id, [...(perDriver.get(r.driver_id) ?? []), r.figures]);
  const drivers: DriverLine[] = [...perDriver].map(([id, figures]) => ({ driver_id: id, driver_name: driverName(byId.get(id ?? -1)), ...sumFigures(figures) }));
  drivers.sort((a, b) => (a.driver_name ?? "~").localeCompare(b.driver_name ?? "~"));
  const all = rows.map((r) => r.figures);
  return {
    from,
    to,
    timezone: company.timezone,
    incomplete: left > 0,
    routes: routeLines,
    drivers,
    totals: sumFigures(all),
    lateness_histogram: latenessHistogram(all),
    emission_factors: Object.entries(EMISSION_FACTORS).map(([vehicle_class, f]) => ({ vehicle_class, ...f })),
  };
}
