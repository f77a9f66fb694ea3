/**
 * The request side of route calculation: validate a routing request against
 * the company's data, import its deliveries, snapshot the parameters the job
 * runs with, and register the process under the company's watchdog.
 */
import type { RoutingJob } from "../../queues";
import type { Company, Db } from "../../context";
import { DeliveryStatus } from "../../../shared/contract/states";
import { and, asc, eq, gt, inArray, lte, sql } from "drizzle-orm";
import type { VehicleClassId } from "../../../solver";
import { type ProcessState, processRecord } from "../../coordinator/processes";
import { addresses, companies, deliveries, driverAvailabilities, processes, routes, tourAreas, users, vehicles } from "../../db/schema";
import { MAX_SKILLS_PER_PLAN, skillSet } from "../../domain/skills";
import { OPEN_DELIVERY_STATUSES, UNFINISHED_ROUTE_STATUSES } from "../../domain/states";
import type { RouteReplacement, RoutingParams, VehicleSpec } from "../../domain/routing-plan";
import type { Env } from "../../env";
import { ApiError, conflict, unprocessable } from "../../errors";
import { nowIso } from "../../lib/time";
import { type AddressInputType, resolveAddressInput } from "../address-input";
import { type DeliveryDataItem, importDeliveries } from "../delivery-import";
import { type EventAnswer, loggedEvents } from "../events";
import { companyStub, publishAll } from "../live";
import { cancelStatements } from "../route-lifecycle";
import { expectedWait, routingDeadline, timeBudgetMs } from "./budget";
import { prepareVehicle } from "../vehicle-records";
import { inList } from "../../db/sql";

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
  /** Search time chosen by the request; default from the plan's size (budget.ts). */
  time_budget_seconds?: number;
  /** "fleet" (default): fewest tours, then cost; "cost": the cheapest plan within the fleet given. */
  objective?: "fleet" | "cost";
}

/** A routing record that waits, with the expected wait of its plan. */
export const waitingRouting = (params: RoutingParams) => processRecord("waiting", { meta: JSON.stringify({ progress: 0, ...expectedWait(params.timeBudgetMs) }) });

const initialProcess = (imported: boolean, params: RoutingParams): ProcessState => ({
  import_deliveries: processRecord(imported ? "finished" : "skipped"),
  cluster_deliveries: processRecord("skipped"),
  routing: waitingRouting(params),
  final: processRecord("waiting"),
});


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

/** The solver tracks at most MAX_SKILLS_PER_PLAN distinct skills in one plan. */
function assertSkillCount(distinct: number, field: string) {
  if (distinct > MAX_SKILLS_PER_PLAN) throw unprocessable(`The deliveries of one run may require at most ${MAX_SKILLS_PER_PLAN} distinct skills (these require more); route them in several runs`, field);
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
  return registerRouting(env, db, company.id, userId, params, imported, apiBase);
}

/** Registers a routing process with its parameters under the company's watchdog (not run yet). */
export async function registerRouting(env: Env, db: Db, companyId: number, userId: number, params: RoutingParams, imported: boolean, apiBase: string) {
  const processId = crypto.randomUUID();
  const job: RoutingJob = { processId, companyId, apiBase };
  await db.insert(processes).values({ id: processId, company_id: companyId, kind: "routing", params, created_by: userId });
  await companyStub(env, companyId).createProcess(processId, initialProcess(imported, params), { job, deadline: routingDeadline(env, params, params.timeBudgetMs) });
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
  replan?: { fleet: VehicleSpec[]; routeIds: number[] },
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
      r.status === DeliveryStatus.routed &&
      ((replaces !== undefined && (r.route_id === replaces.routeId || r.route_id === replaces.move?.takenFrom)) || (r.route_id !== null && replan?.routeIds.includes(r.route_id) === true));
    const busy = rows.filter(
      // Undelivered deliveries are open even while their old route is still on the way.
      (r) =>
        !onReplacedRoute(r) &&
        (!OPEN_DELIVERY_STATUSES.includes(r.status) || (r.status === DeliveryStatus.none && r.routeStatus !== null && UNFINISHED_ROUTE_STATUSES.includes(r.routeStatus))),
    );
    if (busy.length) throw conflict(`Deliveries not open for routing: ${busy.map((r) => r.id).join(", ")}`, "deliveryids");
    const unplaced = rows.filter((r) => r.location === null || r.lng === null);
    if (unplaced.length) throw unprocessable(`Deliveries without a located address: ${unplaced.map((r) => r.id).join(", ")}`, "deliveryids");
    const required = await db
      .selectDistinct({ skill: sql<string>`skill.value` })
      .from(sql`${deliveries}, json_each(${deliveries.required_skills}) as skill`)
      .where(and(eq(deliveries.company_id, company.id), inList(deliveries.id, deliveryIds)))
      .limit(MAX_SKILLS_PER_PLAN + 1);
    assertSkillCount(required.length, "deliveryids");
  } else {
    assertSkillCount(skillSet(body.deliverydata!.flatMap((d) => d.required_skills ?? [])).length, "deliverydata");
    deliveryIds = (await importDeliveries(env, company, depot.addressId, body.deliverydata!, "fail")).ids;
  }

  // Fleet: inline vehicles, else the company's active vehicles, else identical ones.
  let fleet: VehicleSpec[] | null = null;
  if (replan) {
    fleet = replan.fleet;
  } else if (body.vehicles?.length) {
    fleet = [];
    for (const [i, v] of body.vehicles.entries()) {
      const values = await prepareVehicle(db, company.id, { ...v, name: v.name ?? `Vehicle ${i + 1}` }).catch((e: unknown) => {
        if (e instanceof ApiError) throw unprocessable(e.message, e.fields.split(",").map((f) => `vehicles.${i}.${f}`));
        throw e;
      });
      fleet.push({ ...(values as VehicleSpec), name: values.name ?? `Vehicle ${i + 1}` });
    }
  } else {
    // An update plans for the route's own vehicle again (deactivated since or not); else the active fleet.
    const own = replaces?.vehicleId ? await db.select().from(vehicles).where(and(eq(vehicles.company_id, company.id), eq(vehicles.id, replaces.vehicleId))) : [];
    const stored = own.length ? own : await db.select().from(vehicles).where(and(eq(vehicles.company_id, company.id), eq(vehicles.active, true))).orderBy(asc(vehicles.id));
    if (stored.length) fleet = stored;
  }

  // Vehicles at other hubs than the run's start: each tour starts from its vehicle's depot.
  const depotIds = [...new Set((fleet ?? []).map((v) => v.depot_location_id).filter((id): id is number => id !== null && id !== undefined && id !== depot.addressId))];
  const depotRows = depotIds.length ? await db.select().from(addresses).where(and(eq(addresses.company_id, company.id), inList(addresses.id, depotIds))) : [];
  const unplacedDepots = depotIds.filter((id) => !depotRows.some((a) => a.id === id && a.lng !== null && a.lat !== null));
  if (unplacedDepots.length) throw unprocessable(`Vehicle depots without a located address: ${unplacedDepots.join(", ")}`, "depot_location_id");
  const depots = depotRows.map((a) => ({ addressId: a.id, lng: a.lng!, lat: a.lat! }));

  const now = nowIso();
  const [activeDrivers, availableNow, [settings]] = await db.batch([
    db
      .select({ id: users.id, skills: users.skills, working_time_rules: users.working_time_rules, breaks: users.breaks })
      .from(users)
      .where(and(eq(users.company_id, company.id), eq(users.usertype, "driver"), eq(users.active, true)))
      .orderBy(asc(users.id)),
    db
      .select({ driver_id: driverAvailabilities.driver_id })
      .from(driverAvailabilities)
      .where(and(eq(driverAvailabilities.company_id, company.id), lte(driverAvailabilities.fromtime, now), gt(driverAvailabilities.totime, now))),
    db.select({ serviceMinutesByType: companies.service_minutes_by_type, workingTimeRules: companies.working_time_rules }).from(companies).where(eq(companies.id, company.id)),
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
    ...(depots.length ? { depots } : {}),
    ...(options.objective ? { objective: options.objective } : {}),
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
    driverSkills: Object.fromEntries(activeDrivers.filter((d) => d.skills.length).map((d) => [String(d.id), d.skills])),
    driverBreaks: Object.fromEntries(
      activeDrivers.filter((d) => d.working_time_rules !== null || d.breaks !== null).map((d) => [String(d.id), { working_time_rules: d.working_time_rules, breaks: d.breaks }]),
    ),
    workingTimeRules: settings?.workingTimeRules ?? [],
    serviceMinutesByType: settings?.serviceMinutesByType ?? {},
    timeBudgetMs: timeBudgetMs(env, deliveryIds.length, mode, options.time_budget_seconds),
    timeZone: company.timezone,
    requestedAt: Date.now(),
    replaces,
  };
  return { params, imported };
}
