/**
 * The job side of route calculation: claim a registered process, solve its
 * plan with progress (alone, split across consumers, or merging the parts),
 * and hand the plan to the write. Shared by the synchronous path and the
 * routing queue consumer.
 */
import type { Db } from "../../context";
import booleanPointInPolygon from "@turf/boolean-point-in-polygon";
import { and, eq } from "drizzle-orm";
import { type Solution, type SolveOptions, mergeParts, solve, toursOf } from "../../../solver";
import { addresses, deliveries, processes, routes, tourAreas } from "../../db/schema";
import { type PlannedDelivery, type RoutingParams, buildProblem, planRoutes, planningOrigin } from "../../domain/routing-plan";
import type { Env } from "../../env";
import { log } from "../../lib/log";
import { roadEngine, withRoadMatrices } from "../road-engine";
import { companyStub, publishAll } from "../live";
import { expectedWait, routingDeadline } from "./budget";
import { FIRST_SHARE, collectedParts, fansOut, finalPassMs, startFanOut, stopUnlessWanted } from "./fan-out";
import { inList } from "../../db/sql";
import { type PlannedRun, type RoutingOutcome, failRun, resultLink } from "./outcome";
import { writeRuns } from "./write";
import { REPLAN_ROUNDS, replanAgain } from "./replan";
import { loadCompany } from "../company-lookup";
import { updateEtas } from "../route-lifecycle";
import { RouteStatus } from "../../../shared/contract/states";

/** Delivery rows with their locations and tour areas, as the plan needs them. */
export async function loadPlannedDeliveries(db: Db, companyId: number, params: RoutingParams): Promise<PlannedDelivery[]> {
  const rows = await db
    .select({
      id: deliveries.id,
      lng: addresses.lng,
      lat: addresses.lat,
      pdt_from: deliveries.pdt_from,
      pdt_to: deliveries.pdt_to,
      time_windows: deliveries.time_windows,
      els: deliveries.els,
      load: deliveries.load,
      load_2: deliveries.load_2,
      load_3: deliveries.load_3,
      required_skills: deliveries.required_skills,
      deliverytype_id: deliveries.deliverytype_id,
      deliverprio: deliveries.deliverprio,
      pickup_ref_id: deliveries.pickup_ref_id,
      supplierlocation_id: deliveries.supplierlocation_id,
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
    const areas = await companyTourAreas(db, companyId);
    for (const d of planned as PlannedDelivery[]) d.areaId = tourAreaAt(areas, d)?.id ?? null;
  }
  return planned;
}

/** The company's tour areas with their bound drivers and shapes. */
export const companyTourAreas = (db: Db, companyId: number) =>
  db.select({ id: tourAreas.id, areaname: tourAreas.areaname, driver_id: tourAreas.driver_id, geom: tourAreas.geom }).from(tourAreas).where(eq(tourAreas.company_id, companyId));

/** The tour area a point lies in (the first of them), or undefined. */
export function tourAreaAt<A extends { geom: { type: "MultiPolygon"; coordinates: number[][][][] } | null }>(areas: A[], point: { lng: number; lat: number }): A | undefined {
  return areas.find((a) => a.geom && booleanPointInPolygon([point.lng, point.lat], a.geom));
}

/** The solver's problem of a routing request: its deliveries as stored now, on the clock from `origin`, with the road engine's matrices when one is configured. */
export async function plannedProblem(env: Env, db: Db, companyId: number, params: RoutingParams) {
  const planned = await loadPlannedDeliveries(db, companyId, params);
  const origin = planningOrigin(params, planned);
  const engine = roadEngine(env);
  const problem = await withRoadMatrices(engine, buildProblem(params, planned, origin));
  return { planned, origin, engine, problem };
}

/**
 * How a call of `runRouting` treats the plan: `single` solves it in this
 * call; `fan-out` (the queue consumer of a routing job) may split a big plan
 * across consumers (fan-out.ts); `merge` puts the parts of a split
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
  for (let round = 1; ; round++) {
    const planned = await planRun(env, db, companyId, processId, attempt, apiBase, mode);
    if (!planned || !("plan" in planned)) return planned;
    if (planned.params.replaces?.move) {
      // A half of a move run alone (the watchdog re-queued it after its request died) would move nothing or lose the delivery.
      const error = "The move's request ended before it was written; nothing was moved";
      await failRun(env, companyId, processId, attempt, error);
      return { ok: false, error };
    }
    // A re-plan whose routes changed while it planned (a driver's report) reads them again and plans again.
    const replan = planned.params.replan;
    const lastRound = !replan || round >= REPLAN_ROUNDS;
    const outcome = await writeRuns(env, db, companyId, [planned], { failStale: lastRound });
    if (replan && outcome?.ok) await refreshEtas(env, db, companyId, outcome.routeIds);
    if (lastRound || !outcome || outcome.ok || !outcome.conflict) return outcome;
    if (!(await replanAgain(env, db, await loadCompany(db, companyId), processId, planned.params))) {
      const error = "A route of the re-plan finished or was cancelled while it planned; nothing was written";
      await failRun(env, companyId, processId, attempt, error);
      return { ok: false, error, conflict: true };
    }
  }
}

/** Fresh ETAs of the routes a re-plan wrote that are on the way (from their drivers, now); customers hear only of a window that moved beyond the company's `eta_update_minutes`. */
async function refreshEtas(env: Env, db: Db, companyId: number, routeIds: number[]) {
  const onTheWay = await db.select({ id: routes.id }).from(routes).where(and(eq(routes.company_id, companyId), inList(routes.id, routeIds), eq(routes.status, RouteStatus.ontheway)));
  for (const { id } of onTheWay) {
    const { events } = await updateEtas(env, db, companyId, id);
    await publishAll(env, companyId, events);
  }
}

/**
 * The solving half of `runRouting`: claims the process and solves its plan.
 * Answers the plan to write, or the outcome when there is nothing to write
 * (null as for `runRouting`).
 */
export async function planRun(
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
    const { planned, origin, engine, problem } = await plannedProblem(env, db, companyId, params);
    if (!planned.length) {
      await fail("None of the deliveries exists any more");
      return { ok: false, error: "None of the deliveries exists any more" };
    }
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
        ...(params.objective ? { objective: params.objective } : {}),
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
    } else if (mode === "fan-out" && !params.fixOrder && !params.replan && params.objective !== "cost" && fansOut(env, planned.length)) {
      // (The parts search the default objective; a plan for the cheapest cost stays on one consumer.)
      const firstMs = Math.round(params.timeBudgetMs * FIRST_SHARE);
      const first = await search({ timeLimitMs: firstMs }, 0, FIRST_SHARE);
      await Promise.allSettled(reports);
      if (stop.signal.aborted) return null;
      // A plan that leaves deliveries out or widens windows is not split: it is searched on here.
      if (!first.unassigned.length && !first.relaxed.length && (await startFanOut(env, { companyId, processId, attempt, apiBase }, params.timeBudgetMs, problem, first))) return null;
      solution = await search({ timeLimitMs: params.timeBudgetMs - firstMs, initial: toursOf(first) }, FIRST_SHARE);
    } else {
      // A re-plan starts from the tours the drivers have (never worse than them); a handed-over route's stops are placed into them.
      const present = new Set(problem.jobs.map((j) => j.id));
      const initial = params.replan?.routes.map((r) => ({ vehicleId: r.vehicle, jobIds: r.onRoute.map(String).filter((id) => present.has(id)) })).filter((t) => t.jobIds.length);
      solution = await search({ timeLimitMs: params.timeBudgetMs, ...(initial?.length ? { initial } : {}) });
    }
    await Promise.allSettled(reports);
    if (stop.signal.aborted) return null;

    // A re-plan writes what it could place: the rest goes back among the open deliveries, each with its reason.
    if (solution.unassigned.length && !params.replan) {
      const unassigned = solution.unassigned.map((u) => ({ delivery_id: Number(u.jobId), reason: u.reason, remedy: u.remedy }));
      const error = `${unassigned.length} deliveries cannot be routed with at most ${params.numVehicles} tours under the given windows and capacities; no route was computed`;
      await fail(error, { unassigned });
      return { ok: false, error, unassigned };
    }

    const plan = planRoutes(params, planned, solution, origin);
    // With a road engine, the line strings follow the roads instead of joining the stops.
    if (engine) for (const r of plan) r.routestring.coordinates = (await engine.geometry(r.routestring.coordinates)) ?? r.routestring.coordinates;
    const unassigned = solution.unassigned.map((u) => ({ delivery_id: Number(u.jobId), reason: u.reason, remedy: u.remedy }));
    return { processId, attempt, params, plan, relaxed: solution.relaxed, link, ...(unassigned.length ? { unassigned } : {}) };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log("error", "routing failed", { process_id: processId, error: err });
    await fail(`Routing failed: ${message}`);
    return { ok: false, error: message };
  }
}
