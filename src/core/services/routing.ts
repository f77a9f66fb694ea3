/**
 * Route calculation: the request side (validate, import, snapshot the
 * parameters, register the process) and the job side (solve, write routes),
 * shared by the synchronous path and the routing queue consumer.
 */
import type { RoutingJob } from "../queues";
import type { Company, Db } from "../context";
import { DeliveryStatus, RouteStatus } from "../../shared/contract/states";
import booleanPointInPolygon from "@turf/boolean-point-in-polygon";
import { type SQL, and, asc, eq, gt, inArray, lte, or, sql } from "drizzle-orm";
import { type Solution, type SolveOptions, type VehicleClassId, mergeParts, solve, toursOf } from "../../solver";
import { type ProcessState, processRecord } from "../coordinator/processes";
import { addresses, deliveries, driverAvailabilities, processes, routes, tourAreas, users, vehicles } from "../db/schema";
import { OPEN_DELIVERY_STATUSES, UNFINISHED_ROUTE_STATUSES } from "../domain/states";
import { type PlannedDelivery, type PlannedRoute, type RouteReplacement, type RoutingParams, type VehicleSpec, buildProblem, planRoutes, planningOrigin } from "../domain/routing-plan";
import type { Env } from "../env";
import { ApiError, type ErrorStatus, conflict, notFound, unprocessable } from "../errors";
import { formatDateTime, nowIso } from "../lib/time";
import { log } from "../lib/log";
import { dayAround } from "../../shared/wall-clock";
import { type AddressInputType, resolveAddressInput } from "./address-input";
import { type DeliveryDataItem, importDeliveries } from "./delivery-import";
import { roadEngine, withRoadMatrices } from "./road-engine";
import { type EventAnswer, type PendingEvent, eventInsert, eventInsertAnswer, loggedEvents } from "./events";
import { companyStub, publishAll } from "./live";
import { cancelStatements } from "./route-lifecycle";
import { expectedWait, routingDeadline, timeBudgetMs } from "./routing-budget";
import { FIRST_SHARE, collectedParts, fansOut, finalPassMs, startFanOut, stopUnlessWanted } from "./routing-fanout";
import { prepareVehicle } from "./vehicle-records";
import { d1Statement, inList } from "../db/sql";

export interface RoutingRequest {
  deliveryids?: number[];
  deliverydata?: DeliveryDataItem[];
  vehicles?: Parameters<typeof prepareVehicle>[2][];
  startaddress_id?: number;
  startaddress?: AddressInputType;
  start_time?: string;
  end_time?: string;
  vehcapacities?: number[];
  fix_order?: boolean;
}

export interface RoutingOptions {
  truck: boolean;
  /** Keep deliveries with the same `custom_tour` together (uploads' tour column). */
  preclustered?: boolean;
  roundtrip: boolean;
  traffic: boolean;
  cancelroutes: boolean;
  vehicle?: VehicleClassId;
  num_vehicles?: number;
  assign_drivers: boolean;
  usearea: boolean;
  relax_minutes?: number;
  relax_after_time?: string;
  nameprefix?: string;
  tour_duration_rate?: number;
  /** Search time chosen by the request; default from the plan's size (routing-budget.ts). */
  time_budget_seconds?: number;
}

/** A routing record that waits, with the expected wait of its plan. */
export const waitingRouting = (params: RoutingParams) => processRecord("waiting", { meta: JSON.stringify({ progress: 0, ...expectedWait(params.timeBudgetMs) }) });

const initialProcess = (imported: boolean, params: RoutingParams): ProcessState => ({
  import_deliveries: processRecord(imported ? "finished" : "skipped"),
  cluster_deliveries: processRecord("skipped"),
  routing: waitingRouting(params),
  final: processRecord("waiting"),
});

/** The link of a routing process's result: its routes. */
const resultLink = (apiBase: string, processId: string) => `${apiBase}/process/status/${processId}/final?response_data=base`;

/**
 * Cancels every unfinished route of the company; their unfinished deliveries
 * return to the pool (status none). Each route is cancelled as it was read,
 * with its event, in one batch (`cancelStatements`); a route changed in the
 * meantime is left as it is.
 */
export async function cancelAllRoutes(env: Env, db: Db, companyId: number) {
  const unfinished = await db.select().from(routes).where(and(eq(routes.company_id, companyId), inArray(routes.status, [...UNFINISHED_ROUTE_STATUSES])));
  const cancels = unfinished.map((route) => cancelStatements(db, route));
  const [first, ...rest] = [...cancels.map((c) => c.event), ...cancels.flatMap((c) => c.writes)];
  if (!first) return;
  const answers = await db.batch([first, ...rest]);
  await publishAll(env, companyId, loggedEvents(answers.slice(0, cancels.length) as EventAnswer[]));
}

/**
 * Validates a routing request against the company's data and registers the
 * process under the company's watchdog: answers its id, the parameters the
 * job will run with, and the queue job that runs it (`apiBase`: the absolute
 * base of the company's API, for the result link).
 */
export async function startRouting(
  env: Env,
  db: Db,
  company: Company,
  userId: number,
  body: RoutingRequest,
  options: RoutingOptions,
  mode: "async" | "sync",
  apiBase: string,
  replaces?: RouteReplacement,
) {
  const { params, imported } = await prepareRouting(env, db, company, body, options, mode, replaces);
  const processId = crypto.randomUUID();
  const job: RoutingJob = { processId, companyId: company.id, apiBase };
  await db.insert(processes).values({ id: processId, company_id: company.id, kind: "routing", params, created_by: userId });
  await companyStub(env, company.id).createProcess(processId, initialProcess(imported, params), { job, deadline: routingDeadline(env, params, params.timeBudgetMs) });
  return { processId, params, job };
}

/**
 * The parameters of a routing request, checked against the company's data:
 * start, deliveries (imported from `deliverydata` when given), fleet, drivers.
 */
export async function prepareRouting(
  env: Env,
  db: Db,
  company: Company,
  body: RoutingRequest,
  options: RoutingOptions,
  mode: "async" | "sync",
  replaces?: RouteReplacement,
): Promise<{ params: RoutingParams; imported: boolean }> {
  if (!body.deliveryids?.length && !body.deliverydata?.length) throw unprocessable("Give deliveryids or deliverydata", "deliveryids,deliverydata");

  // Start of all tours.
  let depot: { addressId: number; lng: number; lat: number };
  if (body.startaddress) {
    const resolved = await resolveAddressInput(env, company.id, body.startaddress, "startaddress.");
    const [row] = await db.insert(addresses).values({ ...resolved, company_id: company.id, addresstype: "depot" }).returning();
    depot = { addressId: row.id, lng: row.lng!, lat: row.lat! };
  } else {
    const id = body.startaddress_id ?? company.location_id;
    if (id === null || id === undefined) throw unprocessable("No start: give startaddress or startaddress_id (the company has no depot)", "startaddress_id");
    const [row] = await db.select().from(addresses).where(and(eq(addresses.company_id, company.id), eq(addresses.id, id)));
    if (!row || row.lng === null || row.lat === null) throw unprocessable(`Address ${id} does not exist or has no location`, "startaddress_id");
    depot = { addressId: row.id, lng: row.lng, lat: row.lat };
  }

  if (options.cancelroutes) await cancelAllRoutes(env, db, company.id);

  // Deliveries: existing ones win over deliverydata.
  let deliveryIds: number[];
  const imported = !body.deliveryids?.length;
  if (body.deliveryids?.length) {
    deliveryIds = [...new Set(body.deliveryids)];
    const rows = await db
      .select({ id: deliveries.id, status: deliveries.status, route_id: deliveries.route_id, routeStatus: routes.status, location: addresses.id, lng: addresses.lng })
      .from(deliveries)
      .leftJoin(routes, eq(routes.id, deliveries.route_id))
      .leftJoin(addresses, eq(addresses.id, deliveries.deliverylocation_id))
      .where(and(eq(deliveries.company_id, company.id), inList(deliveries.id, deliveryIds)));
    const found = new Map(rows.map((r) => [r.id, r]));
    const missing = deliveryIds.filter((id) => !found.has(id));
    if (missing.length) throw unprocessable(`Unknown deliveries: ${missing.join(", ")}`, "deliveryids");
    // A move takes the delivery off its route in the same batch (`moveDelivery`).
    const onReplacedRoute = (r: (typeof rows)[number]) =>
      replaces !== undefined && (r.route_id === replaces.routeId || r.route_id === replaces.move?.takenFrom) && r.status === DeliveryStatus.routed;
    const busy = rows.filter(
      // Undelivered deliveries are open even while their old route is still on the way.
      (r) =>
        !onReplacedRoute(r) &&
        (!OPEN_DELIVERY_STATUSES.includes(r.status) || (r.status === DeliveryStatus.none && r.routeStatus !== null && UNFINISHED_ROUTE_STATUSES.includes(r.routeStatus))),
    );
    if (busy.length) throw conflict(`Deliveries not open for routing: ${busy.map((r) => r.id).join(", ")}`, "deliveryids");
    const unplaced = rows.filter((r) => r.location === null || r.lng === null);
    if (unplaced.length) throw unprocessable(`Deliveries without a located address: ${unplaced.map((r) => r.id).join(", ")}`, "deliveryids");
  } else {
    deliveryIds = (await importDeliveries(env, company, depot.addressId, body.deliverydata!, "fail")).ids;
  }

  // Fleet: inline vehicles, else the company's active vehicles, else identical ones.
  let fleet: VehicleSpec[] | null = null;
  if (body.vehicles?.length) {
    fleet = [];
    for (const [i, v] of body.vehicles.entries()) {
      const values = await prepareVehicle(db, company.id, { ...v, name: v.name ?? `Vehicle ${i + 1}` }).catch((e: unknown) => {
        if (e instanceof ApiError) throw unprocessable(e.message, e.fields.split(",").map((f) => `vehicles.${i}.${f}`));
        throw e;
      });
      fleet.push({ ...(values as VehicleSpec), name: values.name ?? `Vehicle ${i + 1}` });
    }
  } else {
    const stored = await db.select().from(vehicles).where(and(eq(vehicles.company_id, company.id), eq(vehicles.active, true))).orderBy(asc(vehicles.id));
    if (stored.length) fleet = stored;
  }

  const now = nowIso();
  const [activeDrivers, availableNow] = await db.batch([
    db
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.company_id, company.id), eq(users.usertype, "driver"), eq(users.active, true)))
      .orderBy(asc(users.id)),
    db
      .select({ driver_id: driverAvailabilities.driver_id })
      .from(driverAvailabilities)
      .where(and(eq(driverAvailabilities.company_id, company.id), lte(driverAvailabilities.fromtime, now), gt(driverAvailabilities.totime, now))),
  ]);
  const available = new Set(availableNow.map((a) => a.driver_id));
  const numVehicles = options.num_vehicles ?? (activeDrivers.length || 5);

  let areaDrivers: Record<string, number | null> | undefined;
  if (options.usearea) {
    const areas = await db.select({ id: tourAreas.id, driver_id: tourAreas.driver_id }).from(tourAreas).where(eq(tourAreas.company_id, company.id));
    areaDrivers = Object.fromEntries(areas.map((a) => [String(a.id), a.driver_id]));
  }

  const params: RoutingParams = {
    deliveryIds,
    depot,
    vehicles: fleet,
    numVehicles,
    vehcapacities: body.vehcapacities,
    startTime: body.start_time,
    endTime: body.end_time,
    fixOrder: body.fix_order ?? false,
    vehicleClass: options.vehicle ?? (options.truck ? "truck" : "car"),
    roundtrip: options.roundtrip,
    traffic: options.traffic,
    assignDrivers: options.assign_drivers,
    useArea: options.usearea,
    preclustered: options.preclustered ?? false,
    relax: options.relax_minutes ? { minutes: options.relax_minutes, afterTime: options.relax_after_time } : undefined,
    nameprefix: options.nameprefix,
    tourDurationRate: options.tour_duration_rate,
    driverIds: activeDrivers.filter((d) => available.has(d.id)).map((d) => d.id),
    areaDrivers,
    timeBudgetMs: timeBudgetMs(env, deliveryIds.length, mode, options.time_budget_seconds),
    timeZone: company.timezone,
    requestedAt: Date.now(),
    replaces,
  };
  return { params, imported };
}

/** Delivery rows with their locations and tour areas, as the plan needs them. */
async function loadPlannedDeliveries(db: Db, companyId: number, params: RoutingParams): Promise<PlannedDelivery[]> {
  const rows = await db
    .select({
      id: deliveries.id,
      lng: addresses.lng,
      lat: addresses.lat,
      pdt_from: deliveries.pdt_from,
      pdt_to: deliveries.pdt_to,
      els: deliveries.els,
      load: deliveries.load,
      deliverprio: deliveries.deliverprio,
      pickup_ref_id: deliveries.pickup_ref_id,
      postalcode: addresses.postalcode,
      city: addresses.city,
      custom_tour: deliveries.custom_tour,
    })
    .from(deliveries)
    .innerJoin(addresses, eq(addresses.id, deliveries.deliverylocation_id))
    .where(and(eq(deliveries.company_id, companyId), inList(deliveries.id, params.deliveryIds)));
  const byId = new Map(rows.map((r) => [r.id, r]));
  // Keep the request's order (fix_order relies on it); skip deliveries deleted meanwhile.
  const planned = params.deliveryIds.flatMap((id) => {
    const r = byId.get(id);
    return r && r.lng !== null && r.lat !== null ? [{ ...r, lng: r.lng, lat: r.lat }] : [];
  });
  if (params.useArea) {
    const areas = await db.select({ id: tourAreas.id, geom: tourAreas.geom }).from(tourAreas).where(eq(tourAreas.company_id, companyId));
    for (const d of planned as PlannedDelivery[]) {
      const area = areas.find((a) => a.geom && booleanPointInPolygon([d.lng, d.lat], a.geom));
      d.areaId = area?.id ?? null;
    }
  }
  return planned;
}

export type RoutingOutcome =
  | { ok: true; routeIds: number[] }
  /** `conflict`: a route the plan replaces changed between reading and writing; nothing was written. */
  | { ok: false; error: string; unassigned?: { delivery_id: number; reason: string; remedy: string }[]; conflict?: true };

/** A run's plan, solved and ready to write (`planRun`, then `writeRuns`). */
interface PlannedRun {
  processId: string;
  attempt: string;
  params: RoutingParams;
  plan: PlannedRoute[];
  relaxed: Solution["relaxed"];
  link: string;
}

/** Marks a process failed with the reason, unless its run `attempt` lost the claim. */
async function failRun(env: Env, companyId: number, processId: string, attempt: string, error: string, extra: Record<string, unknown> = {}) {
  const coordinator = companyStub(env, companyId);
  if (!(await coordinator.holdsClaim(processId, attempt))) return;
  await coordinator.updateProcess(processId, "routing", { status: "failed", meta: { error, ...extra } });
  await coordinator.updateProcess(processId, "final", { status: "failed", meta: { progress: 1, error } });
}

/**
 * How a call of `runRouting` treats the plan: `single` solves it in this
 * call; `fan-out` (the queue consumer of a routing job) may split a big plan
 * across consumers (routing-fanout.ts); `merge` puts the parts of a split
 * plan together under the claim `attempt` of the run that split it.
 */
export type RoutingMode = "single" | "fan-out" | "merge";

/**
 * Runs a registered routing process: solve and write the routes. Idempotent
 * per process (queues deliver at least once): a second run finds the claim
 * or the written routes and does nothing; a run whose claim the watchdog
 * handed to a re-run writes nothing. Null: nothing to report from this call
 * (another run holds the process, or the plan went to consumers in parts and
 * the merge job will finish it).
 */
export async function runRouting(
  env: Env,
  db: Db,
  companyId: number,
  processId: string,
  attempt: string,
  apiBase: string,
  mode: RoutingMode = "single",
): Promise<RoutingOutcome | null> {
  const planned = await planRun(env, db, companyId, processId, attempt, apiBase, mode);
  if (!planned || !("plan" in planned)) return planned;
  if (planned.params.replaces?.move) {
    // A half of a move run alone (the watchdog re-queued it after its request died) would move nothing or lose the delivery.
    const error = "The move's request ended before it was written; nothing was moved";
    await failRun(env, companyId, processId, attempt, error);
    return { ok: false, error };
  }
  return writeRuns(env, db, companyId, [planned]);
}

/**
 * The solving half of `runRouting`: claims the process and solves its plan.
 * Answers the plan to write, or the outcome when there is nothing to write
 * (null as for `runRouting`).
 */
async function planRun(
  env: Env,
  db: Db,
  companyId: number,
  processId: string,
  attempt: string,
  apiBase: string,
  mode: RoutingMode,
): Promise<PlannedRun | RoutingOutcome | null> {
  const coordinator = companyStub(env, companyId);
  const [process] = await db.select().from(processes).where(and(eq(processes.company_id, companyId), eq(processes.id, processId)));
  if (!process) return null;
  const params = process.params as RoutingParams;
  const started = Date.now();
  const searchMs = mode === "merge" ? finalPassMs(params.timeBudgetMs) : params.timeBudgetMs;
  if (!(await coordinator.claimRouting(processId, attempt, routingDeadline(env, params, searchMs, started)))) return null;
  const link = resultLink(apiBase, processId);

  const existing = await db.select({ id: routes.id }).from(routes).where(and(eq(routes.company_id, companyId), eq(routes.process_id, processId)));
  if (existing.length) {
    await coordinator.updateProcess(processId, "final", { status: "finished", link, meta: { progress: 1 } });
    return { ok: true, routeIds: existing.map((r) => r.id) };
  }

  const fail = (error: string, extra: Record<string, unknown> = {}) => failRun(env, companyId, processId, attempt, error, extra);

  try {
    if (mode !== "merge") await coordinator.updateProcess(processId, "routing", { status: "running", meta: { progress: 0, ...expectedWait(params.timeBudgetMs, started) } });
    const planned = await loadPlannedDeliveries(db, companyId, params);
    if (!planned.length) {
      await fail("None of the deliveries exists any more");
      return { ok: false, error: "None of the deliveries exists any more" };
    }
    const origin = planningOrigin(params, planned);
    const engine = roadEngine(env);
    const problem = await withRoadMatrices(engine, buildProblem(params, planned, origin));
    let lastReported = 0;
    // The first plan that serves every delivery is reported at once (then every tenth of the search), so the status shows when there is one.
    let servedAll = false;
    const reports: Promise<unknown>[] = [];
    // A cancelled process (or a run that lost its claim) stops searching at the next check and writes nothing.
    const stop = stopUnlessWanted(() => coordinator.holdsClaim(processId, attempt));
    /** A search reported as the span `from` .. `to` of the process's progress. */
    const search = (options: SolveOptions, from = 0, to = 1) => {
      lastReported = 0;
      return solve(problem, {
        seed: 1,
        ...options,
        signal: stop.signal,
        onProgress: (p) => {
          stop.check();
          const first = !servedAll && p.unassigned === 0;
          if (first) servedAll = true;
          if (p.fraction - lastReported < 0.1 && !first) return;
          lastReported = p.fraction;
          const progress = Math.round((from + p.fraction * (to - from)) * 100) / 100;
          reports.push(coordinator.updateProcess(processId, "routing", { meta: { progress, tours: p.tours, unassigned: p.unassigned } }));
        },
      });
    };

    let solution: Solution;
    if (mode === "merge") {
      const collected = await collectedParts(env, { companyId, processId, attempt }, problem);
      if (!collected) return null;
      solution = await mergeParts(problem, collected.parts, collected.results, { timeLimitMs: searchMs, seed: 1, signal: stop.signal, onProgress: stop.check });
    } else if (mode === "fan-out" && !params.fixOrder && fansOut(env, planned.length)) {
      const firstMs = Math.round(params.timeBudgetMs * FIRST_SHARE);
      const first = await search({ timeLimitMs: firstMs }, 0, FIRST_SHARE);
      await Promise.allSettled(reports);
      if (stop.signal.aborted) return null;
      // A plan that leaves deliveries out or widens windows is not split: it is searched on here.
      if (!first.unassigned.length && !first.relaxed.length && (await startFanOut(env, { companyId, processId, attempt, apiBase }, params.timeBudgetMs, problem, first))) return null;
      solution = await search({ timeLimitMs: params.timeBudgetMs - firstMs, initial: toursOf(first) }, FIRST_SHARE);
    } else {
      solution = await search({ timeLimitMs: params.timeBudgetMs });
    }
    await Promise.allSettled(reports);
    if (stop.signal.aborted) return null;

    if (solution.unassigned.length) {
      const unassigned = solution.unassigned.map((u) => ({ delivery_id: Number(u.jobId), reason: u.reason, remedy: u.remedy }));
      const error = `${unassigned.length} deliveries cannot be routed with at most ${params.numVehicles} tours under the given windows and capacities; no route was computed`;
      await fail(error, { unassigned });
      return { ok: false, error, unassigned };
    }

    const plan = planRoutes(params, planned, solution, origin);
    // With a road engine, the line strings follow the roads instead of joining the stops.
    if (engine) for (const r of plan) r.routestring.coordinates = (await engine.geometry(r.routestring.coordinates)) ?? r.routestring.coordinates;
    return { processId, attempt, params, plan, relaxed: solution.relaxed, link };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log("error", "routing failed", { process_id: processId, error: err });
    await fail(`Routing failed: ${message}`);
    return { ok: false, error: message };
  }
}

/**
 * The writes of a planned run, for one D1 batch: its routes and their
 * deliveries, and (for an update) the replaced route retired and the
 * deliveries it releases back in the pool; the routes' events, to stand after
 * every write of the batch. An update first guards its compare-and-set
 * (`replacedAsRead`).
 */
function runStatements(db: Db, companyId: number, { processId, params, plan }: PlannedRun) {
  // The run's routes are inserted in plan order: the i-th of the process is tour i.
  const routeId = (i: number) => sql`(select ${routes.id} from ${routes} where ${routes.company_id} = ${companyId} and ${routes.process_id} = ${processId} order by ${routes.id} limit 1 offset ${i})`;
  const replaced = params.replaces;
  // Deliveries may be taken from the pool, or (on update) from the route being replaced.
  const takeable = replaced
    ? or(inArray(deliveries.status, [...OPEN_DELIVERY_STATUSES]), and(eq(deliveries.status, DeliveryStatus.routed), eq(deliveries.route_id, replaced.routeId)))
    : inArray(deliveries.status, [...OPEN_DELIVERY_STATUSES]);
  const statements = plan.flatMap((r, i) => [
    db.insert(routes).values({
      company_id: companyId,
      process_id: processId,
      custom_id: "given" in r.name ? r.name.given : nextTourName(companyId, r.name.prefix, dayAround(Date.parse(r.tst_from), params.timeZone ?? "UTC")),
      driver_id: r.driver_id,
      status: r.status,
      ...(replaced
        ? {
            status: replaced.status,
            driver_id: replaced.driverId,
            ast: replaced.ast,
            htmlcolor: replaced.htmlcolor ?? r.htmlcolor,
            replaces: replaced.routeId,
            previous_deliveries: [...replaced.previousDeliveries, ...replaced.released],
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
      routebase_address_id: params.depot.addressId,
    }),
    // One statement per tour: the stops' schedule travels as one JSON parameter.
    sql`
      update ${deliveries} set
        route_id = ${routeId(i)}, status = ${DeliveryStatus.routed},
        orderindex = s.orderindex, tdt_from = s.tdt_from, tdt_to = s.tdt_to, eta_from = s.eta_from, eta_to = s.eta_to,
        tfp = s.tfp, waiting_time = s.waiting_time
      from (
        select json_extract(value, '$.delivery_id') as delivery_id, json_extract(value, '$.orderindex') as orderindex,
          json_extract(value, '$.tdt_from') as tdt_from, json_extract(value, '$.tdt_to') as tdt_to,
          json_extract(value, '$.eta_from') as eta_from, json_extract(value, '$.eta_to') as eta_to,
          json_extract(value, '$.tfp') as tfp, json_extract(value, '$.waiting_time') as waiting_time
        from json_each(${JSON.stringify(r.stops)})
      ) as s
      where ${deliveries.id} = s.delivery_id and ${deliveries.company_id} = ${companyId} and ${takeable}`,
    ...(replaced
      ? [
          db
            .update(deliveries)
            .set({ status: DeliveryStatus.none, route_id: null, orderindex: null, tdt_from: null, tdt_to: null, eta_from: null, eta_to: null })
            .where(and(eq(deliveries.company_id, companyId), eq(deliveries.route_id, replaced.routeId), eq(deliveries.status, DeliveryStatus.routed))),
          db
            .update(routes)
            .set({ status: RouteStatus.route_replaced, replaced_by: routeId(i) })
            .where(and(eq(routes.company_id, companyId), eq(routes.id, replaced.routeId))),
        ]
      : []),
  ]);
  // The routes' events go in the same batch, after the writes: a new route's id (0 here) is read by a subquery (`fill`).
  const routeEvents: PendingEvent[] = [
    ...plan.map((r, i) => {
      const driverId = replaced ? replaced.driverId : r.driver_id;
      return { event: { type: "route", id: 0, status: replaced ? replaced.status : r.status, driver_id: driverId } as const, driverId, fill: { id: routeId(i) } };
    }),
    ...(replaced ? [{ event: { type: "route", id: replaced.routeId, status: RouteStatus.route_replaced, driver_id: replaced.driverId } as const, driverId: replaced.driverId }] : []),
  ];
  const guard = replaced ? [replacedAsRead(companyId, replaced, plan.flatMap((r) => r.stops.map((s) => s.delivery_id)), takeable!)] : [];
  return { statements: [...guard, ...statements], routeEvents };
}

/**
 * Fails the batch (NOT NULL violation, see `isStaleReplacement`) unless the
 * replaced route is still as the update read it (status, driver, the same
 * unfinished deliveries) and every delivery of the plan can still be taken:
 * a change in between makes the update write nothing.
 */
function replacedAsRead(companyId: number, replaced: RouteReplacement, planned: number[], takeable: SQL) {
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
 */
async function writeRuns(env: Env, db: Db, companyId: number, runs: PlannedRun[]): Promise<RoutingOutcome | null> {
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
      await failAll(error);
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
      await coordinator.updateProcess(run.processId, "routing", { status: "finished", meta: { progress: 1, tours: written.length, relaxed: run.relaxed } });
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

/**
 * PATCH /calcroute/update/timewindow: recomputes a route from its unfinished
 * deliveries plus `add` minus `del`. The new route replaces the old one
 * (status `route_replaced`, `replaced_by`), continuing its status, driver and
 * start; delivered and cancelled deliveries stay as they are. The write is a
 * compare-and-set on the route as read (`replacedAsRead`): 409 when it changed.
 */
export async function updateRoute(env: Env, db: Db, company: Company, userId: number, routeIdToUpdate: number, add: number[], del: number[], apiBase: string) {
  const processId = await startUpdate(env, db, company, userId, routeIdToUpdate, add, del, apiBase);
  const outcome = await runRouting(env, db, company.id, processId, `update:${processId}`, apiBase);
  return { processId, outcome };
}

/**
 * Checks an update of a route and registers its process (not run yet).
 * `move`: the update is one half of a move (`moveDelivery`); `takenFrom`: the
 * route the added deliveries leave in the same batch.
 */
async function startUpdate(
  env: Env,
  db: Db,
  company: Company,
  userId: number,
  routeIdToUpdate: number,
  add: number[],
  del: number[],
  apiBase: string,
  move?: { takenFrom?: number },
) {
  const [route] = await db.select().from(routes).where(and(eq(routes.company_id, company.id), eq(routes.id, routeIdToUpdate)));
  if (!route) throw notFound("Route");
  if (!UNFINISHED_ROUTE_STATUSES.includes(route.status)) throw conflict(`Route ${route.id} has status ${route.status} and cannot be updated`, "route_id");
  const onRoute = await db
    .select({ id: deliveries.id })
    .from(deliveries)
    .where(and(eq(deliveries.company_id, company.id), eq(deliveries.route_id, route.id), eq(deliveries.status, DeliveryStatus.routed)))
    .orderBy(asc(deliveries.orderindex));
  const current = new Set(onRoute.map((d) => d.id));
  const notOnRoute = del.filter((id) => !current.has(id));
  if (notOnRoute.length) throw unprocessable(`Not unfinished deliveries of route ${route.id}: ${notOnRoute.join(", ")}`, "del_deliveryids");

  if (add.length) {
    // New deliveries must start from the route's depot.
    const [base] = route.routebase_address_id
      ? await db.select().from(addresses).where(and(eq(addresses.company_id, company.id), eq(addresses.id, route.routebase_address_id)))
      : [];
    const added = await db
      .select({ id: deliveries.id, lng: addresses.lng, lat: addresses.lat, supplier: deliveries.supplierlocation_id })
      .from(deliveries)
      .leftJoin(addresses, eq(addresses.id, deliveries.supplierlocation_id))
      .where(and(eq(deliveries.company_id, company.id), inList(deliveries.id, add)));
    const sameDepot = (d: (typeof added)[number]) =>
      d.supplier === route.routebase_address_id || (base && d.lng !== null && d.lat !== null && Math.abs(d.lng - base.lng!) < 1e-5 && Math.abs(d.lat - base.lat!) < 1e-5);
    const elsewhere = added.filter((d) => !sameDepot(d));
    if (elsewhere.length) throw unprocessable(`Deliveries starting from another depot: ${elsewhere.map((d) => d.id).join(", ")}`, "add_deliveryids");
  }

  const removed = new Set(del);
  const deliveryids = [...[...current].filter((id) => !removed.has(id)), ...add.filter((id) => !current.has(id))];
  if (!deliveryids.length) throw unprocessable("The updated route would have no deliveries; cancel it instead", "del_deliveryids");
  if (route.routebase_address_id === null) throw unprocessable(`Route ${route.id} has no start address`, "route_id");

  const { processId } = await startRouting(
    env,
    db,
    company,
    userId,
    { deliveryids, startaddress_id: route.routebase_address_id },
    { truck: false, roundtrip: true, traffic: false, cancelroutes: false, num_vehicles: 1, assign_drivers: false, usearea: false, nameprefix: route.custom_id ?? undefined },
    "sync",
    apiBase,
    {
      routeId: route.id,
      status: route.status,
      driverId: route.driver_id,
      ast: route.ast,
      htmlcolor: route.htmlcolor,
      released: del,
      onRoute: [...current],
      previousDeliveries: route.previous_deliveries,
      ...(move ? { move } : {}),
    },
  );
  return processId;
}

/** A refusal of one half of a move, naming the move's fields instead of the update's. */
const inMoveFields =
  (routeField: "from_route_id" | "to_route_id") =>
  (err: unknown): never => {
    if (!(err instanceof ApiError) || !err.fields) throw err;
    const named = err.fields.split(",").map((f) => (f === "route_id" ? routeField : /deliveryids$/.test(f) ? "delivery_id" : f));
    throw new ApiError(err.status as ErrorStatus, err.message, [...new Set(named)]);
  };

/**
 * POST /calcroute/move (beyond the interface): a delivery off route `from`
 * onto route `to`, or back to the pool (`open`). Each route is re-planned as
 * PATCH /calcroute/update/timewindow does, and both are written in ONE D1
 * batch, each guarded by its compare-and-set: both routes replaced, or
 * nothing changed. Answers the new routes' ids (source first).
 */
export async function moveDelivery(env: Env, db: Db, company: Company, userId: number, deliveryId: number, from: number, to: number | "open", apiBase: string) {
  if (to === from) throw unprocessable(`Delivery ${deliveryId} is on route ${from} already`, "to_route_id");
  const coordinator = companyStub(env, company.id);
  const source = await startUpdate(env, db, company, userId, from, [], [deliveryId], apiBase, {}).catch(inMoveFields("from_route_id"));
  const processIds = [source];
  try {
    if (to !== "open") processIds.push(await startUpdate(env, db, company, userId, to, [deliveryId], [], apiBase, { takenFrom: from }).catch(inMoveFields("to_route_id")));
  } catch (err) {
    await coordinator.failProcess(source, "The move was refused; nothing was moved");
    throw err;
  }
  const planned: PlannedRun[] = [];
  for (const pid of processIds) {
    const run = await planRun(env, db, company.id, pid, `move:${pid}`, apiBase, "single");
    if (run && "plan" in run) {
      planned.push(run);
      continue;
    }
    // One half cannot be planned: the other is not written either.
    for (const other of processIds) if (other !== pid) await coordinator.failProcess(other, "The other route of the move refused; nothing was moved");
    return { processIds, outcome: run };
  }
  return { processIds, outcome: await writeRuns(env, db, company.id, planned) };
}

/** One plan of POST /routingvariants, as answered. */
export interface RoutingVariant {
  name: "fewest_tours" | "shorter_days" | "one_more_tour";
  description: string;
  tours: number;
  /** Metres. */
  distance: number;
  /** Seconds, all tours together. */
  duration: number;
  /** Seconds. */
  longest_tour: number;
  /** Seconds. */
  waiting: number;
  unassigned: number[];
  /** Delivery ids per tour in driving order. */
  sequences: number[][];
}

/**
 * POST /routingvariants: alternatives for the same deliveries, computed
 * without writing anything: the fewest tours (main variant), the same with
 * working days capped at 80 % of the main variant's longest tour, and one
 * more tour than the main variant with days balanced across all tours.
 */
export async function routingVariants(env: Env, db: Db, company: Company, deliveryids: number[]) {
  const defaults: RoutingOptions = { truck: false, roundtrip: true, traffic: false, cancelroutes: false, assign_drivers: false, usearea: false };
  const { params } = await prepareRouting(env, db, company, { deliveryids }, defaults, "sync");
  const planned = await loadPlannedDeliveries(db, company.id, params);
  const origin = planningOrigin(params, planned);
  const budget = Math.max(200, Math.floor(params.timeBudgetMs / 3));

  const run = async (name: RoutingVariant["name"], description: string, maxTourDuration?: number, numVehicles = params.numVehicles): Promise<RoutingVariant> => {
    const problem = buildProblem({ ...params, numVehicles }, planned, origin);
    if (maxTourDuration) for (const v of problem.vehicles ?? []) v.maxTourDuration = Math.min(v.maxTourDuration ?? Infinity, maxTourDuration);
    const solution = await solve(problem, { timeLimitMs: budget, seed: 1 });
    const tours = solution.tours.filter((t) => t.stops.length);
    return {
      name,
      description,
      tours: tours.length,
      distance: Math.round(solution.summary.distance),
      duration: Math.round(solution.summary.duration),
      longest_tour: Math.round(Math.max(0, ...tours.map((t) => t.duration))),
      waiting: Math.round(solution.summary.waiting),
      unassigned: solution.unassigned.map((u) => Number(u.jobId)),
      sequences: tours.map((t) => t.stops.map((s) => Number(s.jobId))),
    };
  };

  const main = await run("fewest_tours", "Fewest tours, then least cost (the plan routing would compute)");
  const variants: RoutingVariant[] = [];
  if (main.tours > 0) {
    variants.push(await run("shorter_days", "Working days capped at 80 % of the main variant's longest tour", Math.round(main.longest_tour * 0.8)));
    const balanced = Math.round((main.duration / (main.tours + 1)) * 1.15);
    variants.push(await run("one_more_tour", "One more tour than the main variant, days balanced across all tours", Math.max(balanced, 1), main.tours + 1));
  }
  return { mainvariant: [main], variants };
}
