/**
 * The rest of the day re-planned across running routes (POST /calcroute/replan): every chosen route's unfinished
 * stops, plus open deliveries, planned again in one solve, each route's vehicle leaving from where its driver is
 * (on the way) or from its depot; each route is replaced by its new tour (lineage as an update's), a route
 * left without stops is cancelled. A breakdown (`handoverRouteId`) is the re-plan without that route's vehicle: its
 * stops go to the others and it is cancelled. The write is guarded by every route's compare-and-set; a route that
 * changed meanwhile (a driver's report) makes the run read them all again and plan again (`replanAgain`).
 */
import type { Company, Db } from "../../context";
import type { FleetReplan, ReplanRequest, RoutingParams, VehicleSpec } from "../../domain/routing-plan";
import { and, eq } from "drizzle-orm";
import { processes, vehicles } from "../../db/schema";
import type { Env } from "../../env";
import { conflict, unprocessable } from "../../errors";
import { inList } from "../../db/sql";
import { parseDateTime } from "../../lib/time";
import { givenRoutes, plannedOptions, routeAsRead, runningRoutesOfDay } from "./route-state";
import { RUNNING_ROUTE_STATUSES } from "../../../shared/contract/states";
import { prepareRouting, registerRouting } from "./request";

/** How often a re-plan plans again when its write finds a route changed, before it gives up (the process fails). */
export const REPLAN_ROUNDS = 3;

/** The vehicle of a re-planned route in the problem: named after the route, so two routes' vehicles never share a name. */
const vehicleFor = (routeId: number) => `route-${routeId}`;

/** Checks a re-plan and registers its process (not run yet). */
export async function startReplan(env: Env, db: Db, company: Company, userId: number, asked: Partial<ReplanRequest>, mode: "async" | "sync", apiBase: string) {
  const request = await resolveRequest(db, company, asked);
  const params = await replanParams(env, db, company, request, mode);
  return registerRouting(env, db, company.id, userId, params, false, apiBase);
}

/** The routes a re-plan covers: those given, else every running route of today (of the handed-over route's day); the handed-over one apart. */
async function resolveRequest(db: Db, company: Company, asked: Partial<ReplanRequest>): Promise<ReplanRequest> {
  const handover = asked.handoverRouteId ?? null;
  const [handed] = handover !== null ? await givenRoutes(db, company, [handover]) : [];
  // By default the running routes of the day: today's, or for a hand-over that route's day.
  const day = (handed?.tst_from ? parseDateTime(handed.tst_from) : null) ?? Date.now();
  const chosen = asked.routeIds?.length ? await givenRoutes(db, company, asked.routeIds) : await runningRoutesOfDay(db, company, day);
  const routeIds = chosen.map((r) => r.id).filter((id) => id !== handover);
  if (!routeIds.length) {
    throw unprocessable(handover !== null ? "No other running route to hand its stops to: plan a new tour for them" : "No assigned, accepted or on-the-way route to re-plan today", "route_ids");
  }
  return { routeIds, deliveryIds: [...new Set(asked.deliveryIds ?? [])], handoverRouteId: handover, ...(asked.timeBudgetSeconds ? { timeBudgetSeconds: asked.timeBudgetSeconds } : {}) };
}

/**
 * The routing parameters of a re-plan, read now: the routes as they are (refused unless running), one vehicle per
 * route (its stored vehicle, else one like it), every unfinished stop and the open deliveries asked for.
 */
async function replanParams(env: Env, db: Db, company: Company, request: ReplanRequest, mode: "async" | "sync"): Promise<RoutingParams> {
  const ids = [...request.routeIds, ...(request.handoverRouteId !== null ? [request.handoverRouteId] : [])];
  const rows = await givenRoutes(db, company, ids);
  const idle = rows.filter((r) => !RUNNING_ROUTE_STATUSES.includes(r.status));
  if (idle.length) throw conflict(`Routes not assigned, accepted or on the way: ${idle.map((r) => `${r.id} (status ${r.status})`).join(", ")}`, "route_ids");
  const read = new Map(await Promise.all(rows.map(async (r) => [r.id, await routeAsRead(db, company.id, r)] as const)));
  const kept = request.routeIds.map((id) => rows.find((r) => r.id === id)!);
  const stored = kept.flatMap((r) => (r.vehicle_id !== null ? [r.vehicle_id] : []));
  const own = stored.length ? await db.select().from(vehicles).where(and(eq(vehicles.company_id, company.id), inList(vehicles.id, stored))) : [];
  const fleet: VehicleSpec[] = kept.map((r) => {
    const vehicle = own.find((v) => v.id === r.vehicle_id);
    // Each tour ends where its route is based.
    return { ...(vehicle ?? {}), name: vehicleFor(r.id), depot_location_id: r.routebase_address_id };
  });
  const deliveryids = [...new Set([...ids.flatMap((id) => read.get(id)!.onRoute), ...request.deliveryIds])];
  if (!deliveryids.length) throw unprocessable("The routes have no unfinished stops and no open delivery was given: nothing to re-plan", "route_ids");
  const [first] = kept;
  const { params } = await prepareRouting(
    env,
    db,
    company,
    { deliveryids, startaddress_id: first.routebase_address_id ?? undefined },
    // The drivers are at work: the cheapest plan with every route, not the fewest tours.
    { ...plannedOptions(first), num_vehicles: kept.length, objective: "cost", ...(request.timeBudgetSeconds ? { time_budget_seconds: request.timeBudgetSeconds } : {}) },
    mode,
    undefined,
    { fleet, routeIds: ids },
  );
  const handover = request.handoverRouteId === null ? null : read.get(request.handoverRouteId)!;
  const replan: FleetReplan = {
    routes: kept.map((r) => ({
      ...read.get(r.id)!,
      vehicle: vehicleFor(r.id),
      vehicleName: r.vehicle,
      customId: r.custom_id,
    })),
    handover: handover && { routeId: handover.routeId, status: handover.status, driverId: handover.driverId, onRoute: handover.onRoute },
    request,
  };
  return { ...params, replan };
}

/**
 * A re-plan's write found a route changed (a report came in while it planned): its parameters are read again from
 * the routes as they are now and stored with the process, for the next round of the same run. Null when the routes
 * can no longer be re-planned (one finished or was cancelled meanwhile).
 */
export async function replanAgain(env: Env, db: Db, company: Company, processId: string, params: RoutingParams): Promise<RoutingParams | null> {
  try {
    const fresh = await replanParams(env, db, company, params.replan!.request, "async");
    const next = { ...fresh, timeBudgetMs: Math.min(fresh.timeBudgetMs, params.timeBudgetMs) };
    await db.update(processes).set({ params: next }).where(and(eq(processes.company_id, company.id), eq(processes.id, processId)));
    return next;
  } catch {
    return null;
  }
}

