/**
 * A new order into the best running tour: every assigned, accepted and on-the-way route of the delivery's day is
 * priced from where it is now (the update of that route, `updateRequest`: its vehicle, its run's options, from its
 * driver's position), the cheapest feasible insertion is written as that route's update in the chosen order
 * (`updateRoute`: the same compare-and-set), or, in a dry run, only answered.
 */
import { and, eq } from "drizzle-orm";
import { cheapestInsertion } from "../../../solver";
import type { Company, Db } from "../../context";
import { addresses, deliveries, routes } from "../../db/schema";
import { OPEN_DELIVERY_STATUSES } from "../../domain/states";
import type { Env } from "../../env";
import { ApiError, conflict, unprocessable } from "../../errors";
import { formatDateTime, parseDateTime } from "../../lib/time";
import { inList } from "../../db/sql";
import { updateRequest, updateRoute } from "./edit";
import { prepareRouting } from "./request";
import { companyTourAreas, plannedProblem, tourAreaAt } from "./run";
import { givenRoutes, runningRoutesOfDay } from "./route-state";
import { refusal } from "./outcome";
import type { DeliveryInsertion, InsertionCandidate } from "../../../shared/contract/routing";

/** Cheapest first; routes that cannot take it last, in route order. */
const byCost = (a: InsertionCandidate, b: InsertionCandidate) =>
  Number(b.feasible) - Number(a.feasible) || (a.added_cost ?? 0) - (b.added_cost ?? 0) || (a.added_distance ?? 0) - (b.added_distance ?? 0) || a.route_id - b.route_id;

/**
 * Prices one delivery on one route: the route's update with it added, its tour kept in order. Refusals that concern
 * the route (another depot, no stop left to keep) become the candidate's reason; those of the delivery are thrown.
 */
async function priceOn(env: Env, db: Db, company: Company, route: typeof routes.$inferSelect, deliveryId: number): Promise<InsertionCandidate & { order?: number[] }> {
  const base = { route_id: route.id, custom_id: route.custom_id, status: route.status, driver_id: route.driver_id };
  const refused = (reason: string) => ({ ...base, feasible: false, added_distance: null, added_cost: null, orderindex: null, tdt: null, reason });
  try {
    const update = await updateRequest(db, company, route.id, [deliveryId], []);
    const { params } = await prepareRouting(env, db, company, update.body, update.options, "sync", update.replacement);
    const { origin, problem } = await plannedProblem(env, db, company.id, params);
    const vehicle = problem.vehicles!.find((v) => v.id === route.vehicle) ?? problem.vehicles![0];
    const onRoute = update.replacement.onRoute.map(String);
    const result = cheapestInsertion(problem, { vehicleId: vehicle.id, jobIds: onRoute }, [String(deliveryId)]);
    if (!result.ok) {
      if (!result.tourLegal) return refused(`its tour no longer keeps its windows or limits as planned (running late); update it first (PATCH /calcroute/update/timewindow/${route.id})`);
      const [why] = result.unassigned;
      return refused(why.reason === "FLEET" ? "does not fit besides its stops (windows, capacity, shift or stops): another tour, or a new one" : why.remedy);
    }
    const { insertion } = result;
    const at = insertion.tour.stops.findIndex((s) => s.jobId === String(deliveryId));
    return {
      ...base,
      feasible: true,
      added_distance: Math.round(insertion.addedDistance),
      added_cost: Math.round(insertion.addedCost * 1000) / 1000,
      orderindex: at + 1,
      tdt: formatDateTime((origin + insertion.tour.stops[at].serviceStart) * 1000),
      reason: null,
      order: insertion.jobIds.map(Number),
    };
  } catch (err) {
    if (err instanceof ApiError && !err.fields.split(",").includes("deliveryids")) return refused(err.message);
    throw err;
  }
}

/**
 * POST /calcroute/insert: each delivery in turn into the running route where it costs least (the next one sees the
 * routes the previous made). `routeIds`: only these routes (any unfinished one); default the running routes of the
 * delivery's day (its window's, else today, on the company's wall clock). A dry run prices each delivery against
 * the routes as they are and writes nothing.
 */
export async function insertDeliveries(
  env: Env,
  db: Db,
  company: Company,
  userId: number,
  deliveryIds: number[],
  options: { routeIds?: number[]; dryRun: boolean },
  apiBase: string,
): Promise<{ insertions: DeliveryInsertion[]; processIds: string[] }> {
  const rows = await db
    .select({ id: deliveries.id, status: deliveries.status, pdt_from: deliveries.pdt_from, route_id: deliveries.route_id, lng: addresses.lng, lat: addresses.lat })
    .from(deliveries)
    .leftJoin(addresses, eq(addresses.id, deliveries.deliverylocation_id))
    .where(and(eq(deliveries.company_id, company.id), inList(deliveries.id, deliveryIds)));
  const missing = deliveryIds.filter((id) => !rows.some((r) => r.id === id));
  if (missing.length) throw unprocessable(`Unknown deliveries: ${missing.join(", ")}`, "deliveryids");
  const closed = rows.filter((r) => !OPEN_DELIVERY_STATUSES.includes(r.status));
  if (closed.length) throw conflict(`Deliveries not open for routing: ${closed.map((r) => r.id).join(", ")}`, "deliveryids");

  const areas = await companyTourAreas(db, company.id);
  const insertions: DeliveryInsertion[] = [];
  const processIds: string[] = [];
  for (const deliveryId of deliveryIds) {
    const delivery = rows.find((r) => r.id === deliveryId)!;
    const candidates = await candidateRoutes(db, company, delivery.pdt_from, options.routeIds);
    const priced = (await Promise.all(candidates.map((route) => priceOn(env, db, company, route, deliveryId)))).map(inItsArea(delivery, areas));
    priced.sort(byCost);
    const best = priced[0]?.feasible ? priced[0] : undefined;
    const answer = priced.map(({ order: _, ...c }) => c);
    if (!best) {
      const why = answer.map((c) => `route ${c.route_id}: ${c.reason}`).join(" / ");
      throw unprocessable(
        `No running tour can take delivery ${deliveryId}${why ? ` (${why})` : " (no assigned, accepted or on-the-way route on its day)"}; ` +
          `open a new tour for it (POST /calcroute with deliveryids [${deliveryId}])${insertions.length ? `; deliveries ${insertions.map((i) => i.delivery_id).join(", ")} were inserted before` : ""}`,
        "deliveryids",
      );
    }
    if (options.dryRun) {
      insertions.push({ delivery_id: deliveryId, route_id: best.route_id, new_route_id: null, candidates: answer });
      continue;
    }
    const { processId, outcome } = await updateRoute(env, db, company, userId, best.route_id, [deliveryId], [], apiBase, best.order);
    if (!outcome) throw conflict("The insertion was cancelled: nothing was changed", "route_id");
    if (!outcome.ok) refusal(outcome);
    const [written] = await db.select({ id: routes.id }).from(routes).where(and(eq(routes.company_id, company.id), eq(routes.process_id, processId)));
    processIds.push(processId);
    insertions.push({ delivery_id: deliveryId, route_id: best.route_id, new_route_id: written?.id ?? null, candidates: answer });
  }
  return { insertions, processIds };
}

/**
 * A delivery in a tour area whose driver drives one of the routes priced goes to that driver's route: the others
 * are refused with the reason (as planning with `usearea` keeps an area on its driver's tour).
 */
function inItsArea(delivery: { lng: number | null; lat: number | null }, areas: Awaited<ReturnType<typeof companyTourAreas>>) {
  const area = delivery.lng !== null && delivery.lat !== null ? tourAreaAt(areas, { lng: delivery.lng, lat: delivery.lat }) : undefined;
  return (c: InsertionCandidate & { order?: number[] }, _: number, all: InsertionCandidate[]) => {
    if (!area || area.driver_id === null || !all.some((o) => o.driver_id === area.driver_id) || c.driver_id === area.driver_id || !c.feasible) return c;
    const name = area.areaname ?? `tour area ${area.id}`;
    return { ...c, feasible: false, added_distance: null, added_cost: null, orderindex: null, tdt: null, reason: `lies in ${name}, whose driver drives another of these routes` };
  };
}

/** The routes to price: the given ones, else the running routes whose day (their planned start) is the delivery's. */
async function candidateRoutes(db: Db, company: Company, deliveryFrom: string | null, routeIds?: number[]) {
  if (routeIds?.length) return givenRoutes(db, company, routeIds);
  return runningRoutesOfDay(db, company, (deliveryFrom ? parseDateTime(deliveryFrom) : null) ?? Date.now());
}

