/**
 * Maps a routing request onto the solver's model and the solver's tours back
 * onto route and delivery records. Pure (no I/O), so the mapping is tested
 * on its own; the routing service does the loading and writing around it.
 *
 * Time: the solver works in seconds from `origin`, midnight of the planning
 * day on the company's wall clock (epoch seconds; the day is 23 or 25 hours
 * long on daylight-saving changeovers). Vehicle times of day and
 * `relax_after_time` are read on the planning day's date: with their offset,
 * or without one on the company's wall clock.
 */
import { DEFAULT_SPEED_FACTORS, type Job, type PlannedBreak, type Problem, type Solution, type Tour, type Vehicle, type VehicleClassId, type WorkedSoFar } from "../../solver";
import type { BreakSpec, RouteBreak, WorkingTimeRuleId } from "../../shared/contract/breaks";
import { addDays, dayAt, instantOf, wallClockAt } from "../../shared/wall-clock";
import { formatDateTime, parseDateTime, timeOfDayOn } from "../lib/time";
import { etaSpread } from "./eta";
import { missingSkills, skillSet } from "./skills";

/** What a routing process needs, stored with the process so a queue consumer can run it later. */
export interface RoutingParams {
  deliveryIds: number[];
  depot: { addressId: number; lng: number; lat: number };
  /** The vehicles' own depots (`depot_location_id`) other than `depot`: a run with several hubs. */
  depots?: { addressId: number; lng: number; lat: number }[];
  /** "fleet" (default): fewest tours first, then cost; "cost": the cheapest plan within the fleet given. */
  objective?: "fleet" | "cost";
  /** Explicit fleet (inline or the company's active vehicles); null = identical vehicles. */
  vehicles: VehicleSpec[] | null;
  numVehicles: number;
  vehcapacities?: number[];
  startTime?: string;
  endTime?: string;
  fixOrder: boolean;
  vehicleClass: VehicleClassId;
  roundtrip: boolean;
  traffic: boolean;
  assignDrivers: boolean;
  useArea: boolean;
  /** Deliveries with the same `custom_tour` (the upload's tour column) stay on one tour. */
  preclustered?: boolean;
  relax?: { minutes: number; afterTime?: string };
  nameprefix?: string;
  tourDurationRate?: number;
  /** Drivers to assign, in order of preference (resolved at request time). */
  driverIds: number[];
  /** Tour area id -> the driver bound to it (usearea). */
  areaDrivers?: Record<string, number | null>;
  /** Driver id -> its skills, for the drivers that have any (read at request time). */
  driverSkills?: Record<string, string[]>;
  /** Driver id -> its own working-time rules and fixed breaks, for the drivers that have either (null: the vehicle's). */
  driverBreaks?: Record<string, { working_time_rules: WorkingTimeRuleId[] | null; breaks: BreakSpec[] | null }>;
  /** The company's working-time rules, for vehicles that name none (absent in plans stored before breaks: none). */
  workingTimeRules?: WorkingTimeRuleId[];
  /** Service minutes of a delivery without `els`, by `deliverytype_id` (the company's setting at request time). */
  serviceMinutesByType?: Partial<Record<string, number>>;
  timeBudgetMs: number;
  /** The company's time zone: the traffic profile follows its wall clock (absent in plans stored before it was kept: UTC). */
  timeZone?: string;
  /** Unix ms of the request: vehicles cannot leave before it. */
  requestedAt: number;
  /** Set when the plan updates an existing route, which the new route replaces. */
  replaces?: RouteReplacement;
  /** Set when the plan re-plans several routes at once (POST /calcroute/replan): `vehicles` holds one per route. */
  replan?: FleetReplan;
}

/**
 * A re-plan of the rest of the day across routes: each route's tour is planned for the vehicle named `vehicle` in
 * `RoutingParams.vehicles` and replaces it; `handover`: a route whose driver drops out (a breakdown), its stops
 * handed to the others and the route cancelled.
 */
export interface FleetReplan {
  routes: (RouteReplacement & { vehicle: string; vehicleName: string | null; customId: string | null })[];
  handover: Pick<RouteReplacement, "routeId" | "status" | "driverId" | "onRoute"> | null;
  /** What was asked, with the routes resolved: a re-plan whose write found a route changed reads them again from it. */
  request: ReplanRequest;
}

export interface ReplanRequest {
  routeIds: number[];
  /** Open deliveries to place besides the routes' stops. */
  deliveryIds: number[];
  handoverRouteId: number | null;
  timeBudgetSeconds?: number;
}

/** A point a tour leaves from instead of its depot, and what told the service the driver is there. */
export interface StartFrom {
  lng: number;
  lat: number;
  source: "position" | "last-stop";
}

/** The route an update replaces: the new one continues its status, driver and start. */
export interface RouteReplacement {
  routeId: number;
  status: number;
  driverId: number | null;
  ast: string | null;
  htmlcolor: string | null;
  /** The route's unfinished deliveries as the update read them: the write is a compare-and-set on them. */
  onRoute: number[];
  previousDeliveries: number[];
  /** The vehicle the route was planned for, when stored: the update plans for it again. */
  vehicleId?: number | null;
  /**
   * Where the new tour leaves from when not its depot: for a route on the way, where its driver is now
   * (`position`: the driver's fresh position, `last-stop`: the last stop the driver reported). It still ends at
   * the depot on a round trip.
   */
  startFrom?: StartFrom;
  /** For a route on the way: its working day so far, which the working-time rules go on from. */
  workedSoFar?: WorkedSoFar;
  /** The update is one half of a move, written only together with the other (`takenFrom`: the route the added delivery leaves). */
  move?: { takenFrom?: number };
}

export interface VehicleSpec {
  /** Set for the company's stored vehicles. */
  id?: number;
  name: string;
  vehicle_class?: string | null;
  capacity_1?: number | null;
  capacity_2?: number | null;
  capacity_3?: number | null;
  daily_rate?: number | null;
  km_rate?: number | null;
  waiting_hour_rate?: number | null;
  traveltime_factor?: number | null;
  /** Stored time-of-day form `hh:mm:ss+hh:mm`. */
  departure_time_from?: string | null;
  departure_time_to?: string | null;
  return_time_to?: string | null;
  /** Minutes. */
  max_tour_duration?: number | null;
  max_stops?: number | null;
  skills?: string[];
  /** Null or absent: the company's rules. */
  working_time_rules?: WorkingTimeRuleId[] | null;
  breaks?: BreakSpec[];
  /** Where its tour starts (and ends): one of `RoutingParams.depots`, else the run's start. */
  depot_location_id?: number | null;
  driver_id?: number | null;
}

export interface PlannedDelivery {
  id: number;
  lng: number;
  lat: number;
  pdt_from: string | null;
  pdt_to: string | null;
  /** Several windows inside pdt_from..pdt_to ([]: that one window). */
  time_windows?: { from: string; to: string }[];
  /** Minutes. */
  els: number | null;
  load: number | null;
  load_2?: number | null;
  load_3?: number | null;
  required_skills?: string[];
  deliverytype_id?: number | null;
  deliverprio: number | null;
  pickup_ref_id: number | null;
  /** Where it is loaded: when that is one of the run's further depots, only that depot's vehicles take it. */
  supplierlocation_id?: number | null;
  postalcode: string | null;
  city: string | null;
  custom_tour?: string | null;
  /** Tour area the delivery lies in (usearea), with that area's driver. */
  areaId?: number | null;
}

const DAY = 86_400;

/** Midnight on the company's wall clock (epoch seconds) of the day the plan is for: the day of its earliest time. */
export function planningOrigin(params: RoutingParams, deliveries: PlannedDelivery[]): number {
  const candidates = [params.startTime ? parseDateTime(params.startTime) : null, ...deliveries.map((d) => (d.pdt_from ? parseDateTime(d.pdt_from) : null))].filter(
    (ms): ms is number => ms !== null,
  );
  const first = candidates.length ? Math.min(...candidates) : params.requestedAt;
  return instantOf(dayAt(first, zoneOf(params)), "00:00", zoneOf(params)) / 1000;
}

const zoneOf = (params: RoutingParams) => params.timeZone ?? "UTC";

/** A stored time of day on the planning day (`days` later), in seconds from the origin. */
const onPlanningDay = (stored: string, origin: number, params: RoutingParams, days = 0) =>
  timeOfDayOn(addDays(dayAt(origin * 1000, zoneOf(params)), days), stored, zoneOf(params)) - origin;

const toSeconds = (iso: string, origin: number) => (parseDateTime(iso) ?? 0) / 1000 - origin;

/**
 * The fleet of a run: the given vehicles, else identical ones; with
 * `assign_drivers`, identical vehicle i is the i-th available driver's (so
 * that driver's skills count for it and its tour goes to that driver).
 */
export function fleetOf(params: RoutingParams): VehicleSpec[] {
  return (
    params.vehicles ??
    Array.from({ length: params.numVehicles }, (_, i) => ({
      name: `Vehicle ${i + 1}`,
      capacity_1: params.vehcapacities?.length ? params.vehcapacities[Math.min(i, params.vehcapacities.length - 1)] : null,
      ...(params.assignDrivers && i < params.driverIds.length ? { driver_id: params.driverIds[i] } : {}),
    }))
  );
}

/** What a vehicle's tour can serve: its own skills and, with `assign_drivers`, those of the available driver bound to it. */
export function fleetSkills(spec: VehicleSpec, params: RoutingParams): string[] {
  const driver = boundDriver(spec, params);
  const driverSkills = driver !== null ? (params.driverSkills?.[String(driver)] ?? []) : [];
  return skillSet([...(spec.skills ?? []), ...driverSkills]);
}

/**
 * The driver bound to a vehicle whose own records count for its tour, or null: a replaced route's driver (an update,
 * an insertion, a re-plan: that driver drives it), else with `assign_drivers` an available driver.
 */
const boundDriver = (spec: VehicleSpec, params: RoutingParams) => {
  const replaced = params.replan?.routes.find((r) => r.vehicle === spec.name) ?? params.replaces;
  if (replaced) return replaced.driverId;
  const driver = spec.driver_id ?? null;
  return params.assignDrivers && driver !== null && params.driverIds.includes(driver) ? driver : null;
};

/**
 * The working-time rules and fixed breaks of a vehicle's tour: the bound driver's own where the driver has them,
 * else the vehicle's; rules absent on both: the company's.
 */
export function fleetBreaks(spec: VehicleSpec, params: RoutingParams): { rules: WorkingTimeRuleId[]; breaks: BreakSpec[] } {
  const driver = boundDriver(spec, params);
  const own = driver === null ? undefined : params.driverBreaks?.[String(driver)];
  return {
    rules: own?.working_time_rules ?? spec.working_time_rules ?? params.workingTimeRules ?? [],
    breaks: own?.breaks ?? spec.breaks ?? [],
  };
}

/** Service seconds of a delivery: its own `els`, else its type's default, else none. */
const serviceSeconds = (d: PlannedDelivery, params: RoutingParams) =>
  (d.els ?? (d.deliverytype_id !== null && d.deliverytype_id !== undefined ? params.serviceMinutesByType?.[String(d.deliverytype_id)] : undefined) ?? 0) * 60;

/** The three loads of a delivery, without trailing zeros (a plan without second and third loads stays one-dimensional). */
function loadsOf(d: PlannedDelivery): number[] {
  const load = [d.load ?? 0, d.load_2 ?? 0, d.load_3 ?? 0];
  while (load.length && load[load.length - 1] === 0) load.pop();
  return load;
}

function vehicleOf(spec: VehicleSpec, params: RoutingParams, earliest: number, origin: number): Vehicle {
  const capacity = [spec.capacity_1, spec.capacity_2, spec.capacity_3].map((c) => c ?? Infinity);
  while (capacity.length && capacity[capacity.length - 1] === Infinity) capacity.pop();
  const time = (t: string | null | undefined) => (t ? onPlanningDay(t, origin, params) : undefined);
  const from = time(spec.departure_time_from);
  const to = time(spec.departure_time_to);
  const back = time(spec.return_time_to);
  const { rules, breaks } = fleetBreaks(spec, params);
  return {
    id: spec.name,
    vehicleClass: (spec.vehicle_class as VehicleClassId | null) ?? params.vehicleClass,
    roundtrip: params.roundtrip,
    shift: {
      earliestStart: Math.max(earliest, from ?? -Infinity),
      ...(to !== undefined ? { latestStart: Math.max(to, earliest) } : {}),
      // A return before the departure is the next morning.
      ...(back !== undefined ? { latestEnd: back < (from ?? 0) ? onPlanningDay(spec.return_time_to!, origin, params, 1) : back } : {}),
    },
    ...(spec.max_tour_duration ? { maxTourDuration: spec.max_tour_duration * 60 } : {}),
    ...(spec.max_stops ? { maxStops: spec.max_stops } : {}),
    ...(capacity.length ? { capacity } : {}),
    skills: fleetSkills(spec, params),
    ...(rules.length ? { workingTimeRules: rules } : {}),
    ...(breaks.length ? { breaks: breaks.map((b, k) => fixedBreak(b, k, origin, params)) } : {}),
    costs: {
      fixed: spec.daily_rate ?? 0,
      perKm: spec.km_rate ?? 1,
      perWaitingHour: spec.waiting_hour_rate ?? 0,
      perTourHour: params.tourDurationRate ?? 0,
    },
    ...(spec.traveltime_factor ? { travelTimeFactor: spec.traveltime_factor } : {}),
    ...(depotOf(params, spec.depot_location_id) ? { depot: String(spec.depot_location_id) } : {}),
  };
}

/** Ids of the vehicles' fixed breaks in the solver's model; the working-time rules' breaks carry the rule's name. */
const FIXED_BREAK = "fixed-";

/** A vehicle's or driver's break of a given time of day on the planning day (a window ending before it opens ends the next morning, like a return time). */
function fixedBreak(b: BreakSpec, k: number, origin: number, params: RoutingParams) {
  const start = onPlanningDay(b.from, origin, params);
  const end = onPlanningDay(b.to, origin, params);
  return { id: `${FIXED_BREAK}${k + 1}`, window: { start, end: end < start ? onPlanningDay(b.to, origin, params, 1) : end }, duration: b.minutes * 60 };
}

/** The breaks of a planned tour as the route record keeps them. */
const routeBreaks = (breaks: readonly PlannedBreak[] | undefined, iso: (t: number) => string): RouteBreak[] =>
  (breaks ?? []).map((b) => ({
    start: iso(b.start),
    end: iso(b.end),
    minutes: Math.round((b.end - b.start) / 60),
    after_orderindex: b.afterStops,
    where: b.where,
    reason: b.id.startsWith(FIXED_BREAK) ? "fixed" : (b.id as WorkingTimeRuleId),
  }));

/** One of the run's further depots (not its start) by address id, or undefined. */
const depotOf = (params: RoutingParams, addressId: number | null | undefined) =>
  addressId === null || addressId === undefined ? undefined : params.depots?.find((d) => d.addressId === addressId);

/** The solver's id of the point an update's tour leaves from (`RouteReplacement.startFrom`): one more of `Problem.depots`. */
const START_FROM = "start-from";

/** The point a re-planned route's tour leaves from (its driver), one more of `Problem.depots`. */
const startOf = (routeId: number) => `${START_FROM}-${routeId}`;

/** The route a tour replaces: the update's, or in a re-plan the one whose vehicle it is on. */
const replacedBy = (params: RoutingParams, vehicleId: string): RouteReplacement | undefined =>
  params.replaces ?? params.replan?.routes.find((r) => r.vehicle === vehicleId);

/** The solver problem for a routing request. */
export function buildProblem(params: RoutingParams, deliveries: PlannedDelivery[], origin: number): Problem {
  // Vehicles cannot leave before the request, nor before the frame's start.
  const earliest = Math.max(params.requestedAt / 1000 - origin, params.startTime ? toSeconds(params.startTime, origin) : -Infinity, 0);
  const inSet = new Set(deliveries.map((d) => d.id));
  const jobs: Job[] = deliveries.map((d) => {
    const from = d.pdt_from ?? params.startTime;
    const to = d.pdt_to ?? params.endTime;
    return {
      id: String(d.id),
      location: { lat: d.lat, lon: d.lng },
      service: serviceSeconds(d, params),
      ...(from || to ? { timeWindow: { start: from ? toSeconds(from, origin) : 0, end: to ? toSeconds(to, origin) : 10 * DAY } } : {}),
      ...(d.time_windows?.length ? { timeWindows: d.time_windows.map((w) => ({ start: toSeconds(w.from, origin), end: toSeconds(w.to, origin) })) } : {}),
      ...(loadsOf(d).length ? { load: loadsOf(d) } : {}),
      ...(d.required_skills?.length ? { skills: d.required_skills } : {}),
      ...(d.deliverprio ? { priority: d.deliverprio } : {}),
      ...(d.pickup_ref_id && inSet.has(d.pickup_ref_id) ? { pickup: String(d.pickup_ref_id) } : {}),
      ...(params.preclustered && d.custom_tour ? { group: `tour:${d.custom_tour}` } : params.useArea && d.areaId ? { group: `area:${d.areaId}` } : {}),
      ...(depotOf(params, d.supplierlocation_id) ? { depot: String(d.supplierlocation_id) } : {}),
    };
  });
  const startFrom = params.replaces?.startFrom;
  const depots = [
    ...(params.depots ?? []).map((d) => ({ id: String(d.addressId), location: { lat: d.lat, lon: d.lng } })),
    ...(startFrom ? [{ id: START_FROM, location: { lat: startFrom.lat, lon: startFrom.lng } }] : []),
    ...(params.replan?.routes ?? []).flatMap((r) => (r.startFrom ? [{ id: startOf(r.routeId), location: { lat: r.startFrom.lat, lon: r.startFrom.lng } }] : [])),
  ];
  return {
    depot: { lat: params.depot.lat, lon: params.depot.lng },
    ...(depots.length ? { depots } : {}),
    jobs,
    vehicles: fleetOf(params).map((s) => {
      // A re-planned route on the way leaves from where its driver is.
      const replanned = params.replan?.routes.find((r) => r.vehicle === s.name);
      const startAt = replanned ? (replanned.startFrom ? startOf(replanned.routeId) : undefined) : startFrom ? START_FROM : undefined;
      const worked = (replanned ?? params.replaces)?.workedSoFar;
      return { ...vehicleOf(s, params, earliest, origin), ...(startAt ? { startAt } : {}), ...(worked ? { workedSoFar: worked } : {}) };
    }),
    numVehicles: params.numVehicles,
    fixOrder: params.fixOrder,
    ...(params.relax && params.relax.minutes > 0
      ? { relax: { maxMinutes: params.relax.minutes, ...(params.relax.afterTime ? { afterTime: onPlanningDay(params.relax.afterTime, origin, params) } : {}) } }
      : {}),
    ...(params.traffic ? { traffic: localTrafficProfile(origin, zoneOf(params)) } : {}),
  };
}

/**
 * The traffic profile on the solver's clock (seconds from the planning day's
 * midnight, a week ahead): the built-in profile describes local hours (rush
 * hour is 7-9 on the wall clock), so each hour of the solver's week takes
 * the factor of the wall-clock hour it falls in, read at its middle (zones
 * with half-hour offsets round to the hour, the profile's resolution; hours
 * past a daylight-saving change take the new offset).
 */
export function localTrafficProfile(origin: number, timeZone: string): { weekday: number; speedFactors: number[][] } {
  const speedFactors = [0, 1, 2, 3, 4, 5, 6].map((day) =>
    Array.from({ length: 24 }, (_, hour) => {
      const wall = wallClockAt((origin + (day * 24 + hour) * 3600 + 1800) * 1000, timeZone);
      return DEFAULT_SPEED_FACTORS[wall.weekday][wall.hour];
    }),
  );
  return { weekday: 0, speedFactors };
}

const PALETTE = ["e6194b", "3cb44b", "4363d8", "f58231", "911eb4", "42d4f4", "f032e6", "9a6324", "800000", "469990", "000075", "808000"];

export interface PlannedRoute {
  /**
   * The tour's name (`custom_id`): given as it is, or a prefix the writer
   * extends by the next number of the company's day ("Tour 3", "North-4").
   */
  name: { given: string } | { prefix: string };
  /** The vehicle's name, and its id when stored. */
  vehicle: string;
  /** The route this tour replaces (an update's, or one of a re-plan's). */
  replaces?: RouteReplacement;
  /** Where the tour starts: the run's start or the vehicle's own depot. */
  routebase_address_id: number;
  vehicle_id: number | null;
  /** The breaks the plan placed, in time order (their minutes count in the gross duration, not the net). */
  breaks: RouteBreak[];
  driver_id: number | null;
  status: 0 | 1;
  distance: number;
  /** Seconds. */
  gross_duration: number;
  net_duration: number;
  tst_from: string;
  tst_to: string;
  htmlcolor: string;
  areatext: string;
  routestring: { type: "LineString"; coordinates: number[][] };
  stops: {
    delivery_id: number;
    orderindex: number;
    tdt_from: string;
    tdt_to: string;
    eta_from: string;
    eta_to: string;
    tfp: number;
    waiting_time: number;
    /** The window of the delivery's `time_windows` the plan serves it in (null: it has none). */
    window_from: string | null;
    window_to: string | null;
  }[];
}

/** The window of a delivery's several the solver served it in, as the delivery record keeps it. */
function chosenWindow(d: PlannedDelivery, window: { start: number; end: number } | undefined, iso: (t: number) => string) {
  return d.time_windows?.length && window ? { window_from: iso(window.start), window_to: iso(window.end) } : { window_from: null, window_to: null };
}

/** A generated summary of the region a tour covers: places with their postal codes. */
export function areaText(deliveries: PlannedDelivery[]): string {
  const byPlace = new Map<string, Set<string>>();
  for (const d of deliveries) {
    const place = d.city ?? "";
    if (!byPlace.has(place)) byPlace.set(place, new Set());
    if (d.postalcode) byPlace.get(place)!.add(d.postalcode);
  }
  return [...byPlace.entries()]
    .sort((a, b) => b[1].size - a[1].size || a[0].localeCompare(b[0]))
    .map(([place, codes]) => [place, [...codes].sort().join(", ")].filter(Boolean).join(": "))
    .join("; ");
}

/** Route and delivery records for the solver's tours. */
export function planRoutes(params: RoutingParams, deliveries: PlannedDelivery[], solution: Solution, origin: number): PlannedRoute[] {
  const byId = new Map(deliveries.map((d) => [String(d.id), d]));
  const iso = (t: number) => formatDateTime((origin + t) * 1000);
  const freeDrivers = [...params.driverIds];
  const claimed = new Set<number>();
  const tours = solution.tours.filter((t) => t.stops.length > 0);
  const fleet = new Map(fleetOf(params).map((v) => [v.name, v]));

  // Tours of a tour area go to that area's driver first, then to the vehicle's driver; others take the remaining
  // available drivers. A driver takes a tour only with every skill it needs that its vehicle lacks.
  const driverFor = (tour: Tour, areaDriver: number | null, stops: PlannedDelivery[]) => {
    if (!params.assignDrivers) return null;
    const vehicle = fleet.get(tour.vehicleId);
    const needed = missingSkills(skillSet(stops.flatMap((d) => d.required_skills ?? [])), vehicle?.skills ?? []);
    const able = (driver: number) => missingSkills(needed, params.driverSkills?.[String(driver)] ?? []).length === 0;
    for (const candidate of [areaDriver, vehicle?.driver_id ?? null]) {
      if (candidate !== null && !claimed.has(candidate) && params.driverIds.includes(candidate) && able(candidate)) return candidate;
    }
    const next = freeDrivers.findIndex((d) => !claimed.has(d) && able(d));
    return next < 0 ? null : freeDrivers.splice(next, 1)[0];
  };

  return tours.map((tour, i) => {
    const stopsOf = tour.stops.map((s) => byId.get(s.jobId)!);
    const area = stopsOf.find((d) => d.areaId)?.areaId;
    const areaDriver = params.useArea && area ? (params.areaDrivers?.[String(area)] ?? null) : null;
    const driver = driverFor(tour, areaDriver, stopsOf);
    if (driver !== null) claimed.add(driver);
    const service = tour.stops.reduce((sum, s) => sum + (s.departure - s.serviceStart), 0);
    const pauses = tour.breaks ?? [];
    const paused = pauses.reduce((sum, b) => sum + (b.end - b.start), 0);
    // Break seconds before a stop's arrival: the ETA window widens with the time under way, not resting.
    const pausedBefore = (stop: number) =>
      pauses.reduce((sum, b) => sum + (b.afterStops < stop || (b.afterStops === stop && b.where !== "before-service") ? b.end - b.start : 0), 0);
    // The latest start keeping every window (the one chosen where a delivery has several): the smallest slack
    // between service start and window end.
    const slack = Math.max(
      0,
      Math.min(
        ...tour.stops.map((s) => {
          const d = byId.get(s.jobId)!;
          if (d.time_windows?.length && s.window) return s.window.end - s.serviceStart;
          const end = d.pdt_to ?? params.endTime;
          return end ? toSeconds(end, origin) - s.serviceStart : Infinity;
        }),
        Infinity,
      ),
    );
    const latestStartSlack = Number.isFinite(slack) ? slack : 0;
    const base = (tour.depot !== undefined ? params.depots?.find((d) => String(d.addressId) === tour.depot) : undefined) ?? params.depot;
    const replaced = replacedBy(params, tour.vehicleId);
    const replanned = params.replan?.routes.find((r) => r.vehicle === tour.vehicleId);
    const from = replaced?.startFrom ?? base;
    const coordinates = [[from.lng, from.lat], ...stopsOf.map((d) => [d.lng, d.lat]), ...(params.roundtrip ? [[base.lng, base.lat]] : [])];
    // One tour takes a given prefix as it is; otherwise the writer numbers on through the company's day.
    const name = replanned?.customId
      ? { given: replanned.customId }
      : params.nameprefix && tours.length === 1
        ? { given: params.nameprefix }
        : { prefix: params.nameprefix ?? "Tour " };
    let previousDeparture = tour.start;
    // The plan's ETA window follows the rule of the live ETAs (domain/eta.ts): from service start, widened by the time under way (not waiting).
    let waited = 0;
    return {
      name,
      // A re-planned route's vehicle is named after its route in the problem: the record keeps the vehicle's own name.
      vehicle: replanned ? (replanned.vehicleName ?? tour.vehicleId) : tour.vehicleId,
      ...(replaced ? { replaces: replaced } : {}),
      routebase_address_id: base.addressId,
      vehicle_id: fleet.get(tour.vehicleId)?.id ?? null,
      breaks: routeBreaks(tour.breaks, iso),
      driver_id: driver,
      status: driver !== null ? 1 : 0,
      distance: Math.round(tour.distance),
      gross_duration: Math.round(tour.duration),
      net_duration: Math.round(tour.duration - tour.waiting - service - paused),
      tst_from: iso(tour.start),
      tst_to: iso(tour.start + latestStartSlack),
      htmlcolor: PALETTE[i % PALETTE.length],
      areatext: areaText(stopsOf),
      routestring: { type: "LineString", coordinates },
      stops: tour.stops.map((s, k) => {
        const tfp = Math.round(s.arrival - previousDeparture);
        previousDeparture = s.departure;
        const underWay = s.arrival - tour.start - waited - pausedBefore(k);
        waited += s.waiting;
        return {
          delivery_id: Number(s.jobId),
          orderindex: k + 1,
          tdt_from: iso(s.serviceStart),
          tdt_to: iso(s.departure),
          eta_from: iso(s.serviceStart),
          eta_to: iso(s.serviceStart + etaSpread(underWay)),
          tfp,
          waiting_time: Math.round(s.waiting),
          ...chosenWindow(byId.get(s.jobId)!, s.window, iso),
        };
      }),
    } satisfies PlannedRoute;
  });
}
