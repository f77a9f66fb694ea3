/** The write of planned runs: routes, their deliveries and events in one D1 batch, replacements guarded by a compare-and-set. */
import type { Db } from "../../context";
import { DeliveryStatus, RouteStatus } from "../../../shared/contract/states";
import { type SQL, and, asc, eq, inArray, or, sql } from "drizzle-orm";
import { deliveries, routes } from "../../db/schema";
import type { RouteReplacement } from "../../domain/routing-plan";
import type { Env } from "../../env";
import { OPEN_DELIVERY_STATUSES } from "../../domain/states";
import { formatDateTime } from "../../lib/time";
import { log } from "../../lib/log";
import { dayAround } from "../../../shared/wall-clock";
import { type PendingEvent, eventInsert, eventInsertAnswer, loggedEvents } from "../events";
import { companyStub, publishAll } from "../live";
import { d1Statement, inList } from "../../db/sql";
import { type PlannedRun, type RoutingOutcome, failRun } from "./outcome";

/**
 * The writes of a planned run, for one D1 batch: its routes and their
 * deliveries, and for an update or a re-plan the replaced routes retired
 * (`route_replaced` with `replaced_by`, or cancelled when a re-plan left them
 * no tour, as the handed-over route of a breakdown) and the deliveries they
 * still hold back in the pool; the routes' events, to stand after every
 * write of the batch. Every replaced route's compare-and-set guard
 * (`replacedAsRead`) comes first.
 */
function runStatements(db: Db, companyId: number, { processId, params, plan }: PlannedRun) {
  // The run's routes are inserted in plan order: the i-th of the process is tour i.
  const routeId = (i: number) => sql`(select ${routes.id} from ${routes} where ${routes.company_id} = ${companyId} and ${routes.process_id} = ${processId} order by ${routes.id} limit 1 offset ${i})`;
  const replan = params.replan;
  const retired: ReplacedRoute[] = params.replaces ? [params.replaces] : replan ? [...replan.routes, ...(replan.handover ? [replan.handover] : [])] : [];
  // Deliveries may be taken from the pool, or from the routes being replaced.
  const open = inArray(deliveries.status, [...OPEN_DELIVERY_STATUSES]);
  const takeable = retired.length ? or(open, and(eq(deliveries.status, DeliveryStatus.routed), inList(deliveries.route_id, retired.map((r) => r.routeId)))) : open;
  const successor = (routeIdRetired: number) => plan.findIndex((r) => r.replaces?.routeId === routeIdRetired);
  const writes = plan.flatMap((r, i) => {
    const replaced = r.replaces;
    const onTour = new Set(r.stops.map((s) => s.delivery_id));
    return [
      db.insert(routes).values({
        company_id: companyId,
        process_id: processId,
        custom_id: "given" in r.name ? r.name.given : nextTourName(companyId, r.name.prefix, dayAround(Date.parse(r.tst_from), params.timeZone ?? "UTC")),
        driver_id: r.driver_id,
        status: r.status,
        vehicle: r.vehicle,
        vehicle_id: r.vehicle_id,
        breaks: r.breaks,
        plan_options: { vehicle_class: params.vehicleClass, roundtrip: params.roundtrip, traffic: params.traffic },
        ...(replaced
          ? {
              status: replaced.status,
              driver_id: replaced.driverId,
              ast: replaced.ast,
              htmlcolor: replaced.htmlcolor ?? r.htmlcolor,
              replaces: replaced.routeId,
              // What left the route: taken off by the update, or given to another tour by a re-plan.
              previous_deliveries: [...replaced.previousDeliveries, ...replaced.onRoute.filter((id) => !onTour.has(id))],
            }
          : {}),
        distance: r.distance,
        gross_duration: r.gross_duration,
        net_duration: r.net_duration,
        tst_from: r.tst_from,
        tst_to: r.tst_to,
        htmlcolor: replaced?.htmlcolor ?? r.htmlcolor,
        areatext: r.areatext,
        routestring: r.routestring,
        routebase_address_id: r.routebase_address_id,
      }),
      // One statement per tour: the stops' schedule travels as one JSON parameter.
      sql`
        update ${deliveries} set
          route_id = ${routeId(i)}, status = ${DeliveryStatus.routed},
          orderindex = s.orderindex, tdt_from = s.tdt_from, tdt_to = s.tdt_to, eta_from = s.eta_from, eta_to = s.eta_to,
          tfp = s.tfp, waiting_time = s.waiting_time, window_from = s.window_from, window_to = s.window_to
        from (
          select json_extract(value, '$.delivery_id') as delivery_id, json_extract(value, '$.orderindex') as orderindex,
            json_extract(value, '$.tdt_from') as tdt_from, json_extract(value, '$.tdt_to') as tdt_to,
            json_extract(value, '$.eta_from') as eta_from, json_extract(value, '$.eta_to') as eta_to,
            json_extract(value, '$.tfp') as tfp, json_extract(value, '$.waiting_time') as waiting_time,
            json_extract(value, '$.window_from') as window_from, json_extract(value, '$.window_to') as window_to
          from json_each(${JSON.stringify(r.stops)})
        ) as s
        where ${deliveries.id} = s.delivery_id and ${deliveries.company_id} = ${companyId} and ${takeable}`,
    ];
  });
  // After every tour took its stops: what the retired routes still hold goes back to the pool, and they retire.
  const retirements = retired.flatMap((old) => {
    const next = successor(old.routeId);
    return [
      db
        .update(deliveries)
        .set({ status: DeliveryStatus.none, route_id: null, orderindex: null, tdt_from: null, tdt_to: null, eta_from: null, eta_to: null, window_from: null, window_to: null })
        .where(and(eq(deliveries.company_id, companyId), eq(deliveries.route_id, old.routeId), eq(deliveries.status, DeliveryStatus.routed))),
      db
        .update(routes)
        .set(next >= 0 ? { status: RouteStatus.route_replaced, replaced_by: routeId(next) } : { status: RouteStatus.cancelled })
        .where(and(eq(routes.company_id, companyId), eq(routes.id, old.routeId))),
    ];
  });
  // The routes' events go in the same batch, after the writes: a new route's id (0 here) is read by a subquery (`fill`).
  const routeEvents: PendingEvent[] = [
    ...plan.map((r, i) => {
      const driverId = r.replaces ? r.replaces.driverId : r.driver_id;
      return { event: { type: "route", id: 0, status: r.replaces ? r.replaces.status : r.status, driver_id: driverId } as const, driverId, fill: { id: routeId(i) } };
    }),
    ...retired.map((old) => {
      const status = successor(old.routeId) >= 0 ? RouteStatus.route_replaced : RouteStatus.cancelled;
      return { event: { type: "route", id: old.routeId, status, driver_id: old.driverId } as const, driverId: old.driverId };
    }),
  ];
  const planned = plan.flatMap((r) => r.stops.map((s) => s.delivery_id));
  const guards = retired.map((old) => replacedAsRead(companyId, old, planned, takeable!));
  return { statements: [...guards, ...writes, ...retirements], routeEvents };
}

/** What the write checks and retires of a route an update or a re-plan replaces. */
type ReplacedRoute = Pick<RouteReplacement, "routeId" | "status" | "driverId" | "onRoute">;

/**
 * Fails the batch (NOT NULL violation, see `isStaleReplacement`) unless the
 * replaced route is still as the update read it (status, driver, the same
 * unfinished deliveries) and every delivery of the plan can still be taken:
 * a change in between makes the update write nothing.
 */
function replacedAsRead(companyId: number, replaced: ReplacedRoute, planned: number[], takeable: SQL) {
  const routed = and(eq(deliveries.company_id, companyId), eq(deliveries.route_id, replaced.routeId), eq(deliveries.status, DeliveryStatus.routed));
  return sql`insert into ${routes} (company_id) select null where not (
    exists (select 1 from ${routes} where ${routes.company_id} = ${companyId} and ${routes.id} = ${replaced.routeId}
      and ${routes.status} = ${replaced.status} and ${routes.driver_id} is ${replaced.driverId})
    and (select count(*) from ${deliveries} where ${routed}) = ${replaced.onRoute.length}
    and not exists (select 1 from ${deliveries} where ${routed} and not ${inList(deliveries.id, replaced.onRoute)})
    and (select count(*) from ${deliveries} where ${deliveries.company_id} = ${companyId} and ${inList(deliveries.id, planned)} and ${takeable}) = ${planned.length})`;
}

const isStaleReplacement = (err: unknown) => {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (/NOT NULL constraint failed: routes\.company_id/.test(e.message)) return true;
  return false;
};

/**
 * The writing half of `runRouting`: writes planned runs in ONE D1 batch (all
 * or nothing; a move writes its two routes' updates so) and finishes their
 * processes. Null when one of them lost its claim or was cancelled first.
 * `failStale` false: a route that changed meanwhile answers the conflict and
 * leaves the processes running (a re-plan plans again).
 */
export async function writeRuns(env: Env, db: Db, companyId: number, runs: PlannedRun[], { failStale = true } = {}): Promise<RoutingOutcome | null> {
  const coordinator = companyStub(env, companyId);
  const failAll = (error: string) => Promise.all(runs.map((r) => failRun(env, companyId, r.processId, r.attempt, error)));
  try {
    const writes = runs.map((run) => runStatements(db, companyId, run));
    // From here the processes can no longer be cancelled: the routes are written.
    const began = await Promise.all(runs.map((r) => coordinator.beginWrite(r.processId, r.attempt)));
    if (began.some((b) => !b)) {
      if (runs.length > 1) await failAll("Another part of the change was cancelled; nothing was written");
      return null;
    }
    const statements = writes.flatMap((w) => w.statements);
    const events = writes.flatMap((w) => w.routeEvents);
    let answers: D1Result[];
    try {
      answers = await env.DB.batch([...statements, ...events.map((e) => eventInsert(db, companyId, e))].map((q) => d1Statement(env.DB, q)));
    } catch (err) {
      if (!isStaleReplacement(err)) throw err;
      const error = "The route changed meanwhile (another change of it or of its deliveries came first); nothing was written, read it again";
      if (failStale) await failAll(error);
      return { ok: false, error, conflict: true };
    }
    await publishAll(env, companyId, loggedEvents(answers.slice(statements.length).map(eventInsertAnswer)));
    const routeIds: number[] = [];
    for (const run of runs) {
      const written = await db
        .select({ id: routes.id })
        .from(routes)
        .where(and(eq(routes.company_id, companyId), eq(routes.process_id, run.processId)))
        .orderBy(asc(routes.id));
      const left = run.unassigned ? { unassigned_deliveries: run.unassigned } : {};
      await coordinator.updateProcess(run.processId, "routing", { status: "finished", meta: { progress: 1, tours: written.length, relaxed: run.relaxed, ...left } });
      await coordinator.updateProcess(run.processId, "final", { status: "finished", link: run.link, meta: { progress: 1 } });
      routeIds.push(...written.map((r) => r.id));
    }
    return { ok: true, routeIds };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log("error", "routing failed", { process_ids: runs.map((r) => r.processId), error: err });
    await failAll(`Routing failed: ${message}`);
    return { ok: false, error: message };
  }
}

/**
 * `prefix` and the next number after the highest one following `prefix` among
 * the company's routes starting in the local day `from`..`to` (any status, so
 * a name is never used twice in a day). Evaluated in the write's D1 batch, one
 * transaction: tours of the same run count on, and runs writing at once
 * cannot take the same number.
 */
function nextTourName(companyId: number, prefix: string, day: { start: number; end: number }) {
  const suffix = sql`substr(${routes.custom_id}, length(${prefix}) + 1)`;
  return sql`(select ${prefix} || (coalesce(max(cast(${suffix} as integer)), 0) + 1) from ${routes}
    where ${routes.company_id} = ${companyId} and ${routes.tst_from} >= ${formatDateTime(day.start)} and ${routes.tst_from} < ${formatDateTime(day.end)}
      and substr(${routes.custom_id}, 1, length(${prefix})) = ${prefix} and ${suffix} glob '[0-9]*' and ${suffix} not glob '*[^0-9]*')`;
}
