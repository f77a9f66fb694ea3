/** Changes of routes already planned: an update of one route, and a delivery moved between two routes in one write. */
import type { Company, Db } from "../../context";
import { and, eq } from "drizzle-orm";
import type { RouteReplacement } from "../../domain/routing-plan";
import { addresses, deliveries, routes } from "../../db/schema";
import { UNFINISHED_ROUTE_STATUSES } from "../../domain/states";
import type { Env } from "../../env";
import { ApiError, type ErrorStatus, conflict, notFound, unprocessable } from "../../errors";
import { companyStub } from "../live";
import { inList } from "../../db/sql";
import type { PlannedRun } from "./outcome";
import { type RoutingRequest, startRouting } from "./request";
import { plannedOptions, routeAsRead } from "./route-state";
import { planRun, runRouting } from "./run";
import { writeRuns } from "./write";

/**
 * PATCH /calcroute/update/timewindow: recomputes a route from its unfinished
 * deliveries plus `add` minus `del`. The new route replaces the old one
 * (status `route_replaced`, `replaced_by`), continuing its status, driver and
 * start; delivered and cancelled deliveries stay as they are. The write is a
 * compare-and-set on the route as read (`replacedAsRead`): 409 when it changed.
 * `order`: the deliveries in this order, only timed (see `startUpdate`).
 */
export async function updateRoute(env: Env, db: Db, company: Company, userId: number, routeIdToUpdate: number, add: number[], del: number[], apiBase: string, order?: number[]) {
  const processId = await startUpdate(env, db, company, userId, routeIdToUpdate, add, del, apiBase, undefined, order);
  const outcome = await runRouting(env, db, company.id, processId, `update:${processId}`, apiBase);
  return { processId, outcome };
}

/**
 * Checks an update of a route and registers its process (not run yet).
 * `move`: the update is one half of a move (`moveDelivery`); `takenFrom`: the
 * route the added deliveries leave in the same batch. `order`: the route's
 * deliveries in this order, times only (an insertion chose it).
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
  order?: number[],
) {
  const { body, options, replacement } = await updateRequest(db, company, routeIdToUpdate, add, del, move, order);
  const { processId } = await startRouting(env, db, company, userId, body, options, "sync", apiBase, replacement);
  return processId;
}

/**
 * An update of a route as a routing request: the route's unfinished deliveries plus `add` minus `del` (in `order`
 * when given: it must hold exactly those), its depot, vehicle and run options, and from where its driver is. Reads
 * and checks only; registers nothing (an insertion prices the update of every running tour with it).
 */
export async function updateRequest(db: Db, company: Company, routeIdToUpdate: number, add: number[], del: number[], move?: { takenFrom?: number }, order?: number[]) {
  const [route] = await db.select().from(routes).where(and(eq(routes.company_id, company.id), eq(routes.id, routeIdToUpdate)));
  if (!route) throw notFound("Route");
  if (!UNFINISHED_ROUTE_STATUSES.includes(route.status)) throw conflict(`Route ${route.id} has status ${route.status} and cannot be updated`, "route_id");
  const read = await routeAsRead(db, company.id, route);
  const current = new Set(read.onRoute);
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
  // The order an insertion chose was for the route as it read it: a stop reported since then makes it stale.
  if (order && (order.length !== deliveryids.length || !deliveryids.every((id) => order.includes(id)))) {
    throw conflict(`Route ${route.id} changed while the insertion was computed; ask again`, "route_id");
  }

  const replacement: RouteReplacement = { ...read, ...(move ? { move } : {}) };
  const body: RoutingRequest = { deliveryids: order ?? deliveryids, startaddress_id: route.routebase_address_id, ...(order ? { fix_order: true } : {}) };
  return { route, body, options: { ...plannedOptions(route), num_vehicles: 1, nameprefix: route.custom_id ?? undefined }, replacement };
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
