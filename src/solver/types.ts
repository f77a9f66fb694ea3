/**
 * Public types of the route optimiser (VRPTW solver).
 *
 * Units (chosen once, used everywhere):
 * - time: seconds, as plain numbers, measured from an origin chosen by the
 *   caller (e.g. midnight of the planning day). Time windows, shifts and all
 *   times in the solution use that origin. Service times are seconds too (the
 *   HTTP API speaks minutes; convert at the boundary).
 * - distance: metres. Benchmark instances (Solomon) use their raw units.
 * - load: up to three dimensions (e.g. weight, volume, pallets). A missing
 *   dimension counts as 0 on a job and as unlimited on a vehicle.
 * - money: whatever currency the rates are given in.
 */

/** WGS84 coordinates in degrees. */
export interface Location {
  lat: number;
  lon: number;
}

/** Vehicle classes of the embedded travel model; see `VEHICLE_CLASSES`. */
export type VehicleClassId = "car" | "truck" | "bicycle";

/** One entry of the vehicle class table served by `GET /vehicletype`. */
export interface VehicleClass {
  id: VehicleClassId;
  name: string;
  /** Average travel speed in km/h used by the embedded (great-circle) model. */
  speedKmh: number;
  /** Human description of the restrictions this class is subject to. */
  restrictions: string;
}

/** Up to three load dimensions. */
export type Load = readonly number[];

/** Closed interval [start, end] in seconds; service must *start* inside it. */
export interface TimeWindow {
  start: number;
  end: number;
}

export interface Job {
  /** Unique within the problem. */
  id: string;
  location: Location;
  /** Service duration in seconds (default 0). */
  service?: number;
  /**
   * The single-window form; absent = any time within the vehicle's shift.
   * With `timeWindows` it is the outer window: the windows are cut to it.
   */
  timeWindow?: TimeWindow;
  /**
   * Several windows (e.g. opening hours 08:00-12:00 and 14:00-18:00): service
   * starts inside one of them, and the solver chooses which. They must be
   * sorted by start and must not overlap (touching is fine): `compile` throws
   * otherwise. An empty list, or windows all outside `timeWindow`, makes the
   * job unservable (unassigned `INVALID`).
   */
  timeWindows?: readonly TimeWindow[];
  /**
   * Load delivered from the depot (default all zero). For a pickup (a job
   * named by another job's `pickup`), the load is collected here and carried
   * to its delivery instead.
   */
  load?: Load;
  /**
   * Importance, default 0; higher is more important. When not every job can
   * be served, the solver leaves out the fewest jobs first, then prefers
   * leaving out low-priority ones.
   */
  priority?: number;
  /**
   * Makes this job the delivery of a pickup-and-delivery pair: the id of the
   * pickup job. The pickup is served earlier on the same tour, and its load
   * is on board between the two stops. This job's own `load` is ignored.
   */
  pickup?: string;
  /** Jobs sharing a group id are all served on one tour (or all unassigned). */
  group?: string;
  /** Skills the vehicle serving the job must have (e.g. "refrigerated", "tail-lift"), default none. */
  skills?: readonly string[];
  /**
   * Serve this job only from one depot: the id of one of `Problem.depots`
   * (e.g. the supplier location a delivery is loaded at). Only vehicles whose
   * `depot` is that id may take it. Absent: any vehicle, whichever depot.
   */
  depot?: string;
}

/** A depot besides the problem's own (`Problem.depot`): where vehicles naming its id start and, on round trips, end. */
export interface Depot {
  /** Unique among `Problem.depots`; vehicles and jobs name it. */
  id: string;
  location: Location;
}

export interface Shift {
  /** Earliest departure from the depot (default 0). */
  earliestStart?: number;
  /** Latest departure from the depot (default: no limit). */
  latestStart?: number;
  /**
   * Latest return to the depot, or latest end of the last service for an
   * open tour (default: no limit). A hard limit, like `maxTourDuration`;
   * window relaxation never extends it.
   */
  latestEnd?: number;
}

export interface VehicleCosts {
  /** Cost per used vehicle ("daily rate"), default 0. */
  fixed?: number;
  /** Cost per kilometre driven, default 1 (so default cost = total km). */
  perKm?: number;
  /** Cost per hour of waiting before a time window opens, default 0. */
  perWaitingHour?: number;
  /** Cost per hour of tour duration (departure to end), default 0. */
  perTourHour?: number;
}

export interface Vehicle {
  /** Unique within the problem. */
  id: string;
  /** Default "car". */
  vehicleClass?: VehicleClassId;
  /** false = the tour ends at its last stop (no return leg). Default true. */
  roundtrip?: boolean;
  shift?: Shift;
  /** Maximum tour duration in seconds (departure to end), default no limit. */
  maxTourDuration?: number;
  /** Capacity per load dimension; missing dimensions are unlimited. */
  capacity?: Load;
  costs?: VehicleCosts;
  /** Multiplies all travel times of this vehicle (default 1). */
  travelTimeFactor?: number;
  /** What this vehicle (with its driver) can do: it serves only jobs whose `skills` it all has. */
  skills?: readonly string[];
  /** At most this many stops on its tour (default no limit). */
  maxStops?: number;
  /**
   * Where its tour starts (and ends, on a round trip): the id of one of
   * `Problem.depots`. Absent: the problem's `depot`.
   */
  depot?: string;
  /**
   * Where its tour starts when that is not its depot: the id of one of
   * `Problem.depots`, e.g. the point where a driver on the way is now (a
   * re-plan of the rest of a tour). The tour still ends at `depot` on a
   * round trip. Absent: it starts at `depot`.
   */
  startAt?: string;
  /**
   * Breaks at given times (VROOM's): each starts inside its window and
   * lasts its duration; the plan places it at a stop, while waiting or on
   * the way. A break whose window the tour never reaches is not taken.
   */
  breaks?: readonly FixedBreak[];
  /**
   * Working-time rules the tour must keep (see `WorkingTimeRule`); the plan
   * places the breaks they require and never returns a tour that breaks one.
   */
  workingTimeRules?: readonly WorkingTimeRule[];
  /**
   * The working day before this tour starts, for a tour under way (`startAt`): the rules count it as if the
   * tour had begun earlier (a driver who worked 5 h needs the break within the next hour). Absent: none.
   */
  workedSoFar?: WorkedSoFar;
}

/** What the working-time rules count of a working day before a tour starts. Seconds, each >= 0. */
export interface WorkedSoFar {
  /** Work (driving, service, waiting) in all, and since the last break of 15 min or more. */
  work: number;
  sinceBreak: number;
  /** Minutes of breaks of 15 min or more, in all (seconds). */
  breaks: number;
  /** Driving in all, and since the last 45-min break (eu-561). */
  driving: number;
  drivingSinceBreak: number;
}

/** A break at a given time: it must start inside `window` and last `duration` seconds. */
export interface FixedBreak {
  /** Unique among the vehicle's breaks; the planned break names it. */
  id: string;
  window: TimeWindow;
  duration: number;
}

/**
 * Named working-time rules (breaks.ts holds the figures):
 * - "de-arbzg": German Arbeitszeitgesetz §3 and §4: no more than 6 hours of
 *   work without a break, breaks of at least 30 minutes in all beyond 6 hours
 *   and 45 beyond 9 hours, in blocks of at least 15 minutes; at most 10 hours
 *   of work. Work is driving, service and waiting at a stop.
 * - "eu-561": Regulation (EC) 561/2006 articles 6 and 7: after at most 4.5
 *   hours of driving a break of 45 minutes, which may be split into 15 then
 *   30; at most 9 hours of driving a day.
 */
export type WorkingTimeRule = "de-arbzg" | "eu-561";

/**
 * A break in a planned tour, between the stops `afterStops` - 1 and
 * `afterStops` (0: before the first stop; the number of stops: after the last).
 */
export interface PlannedBreak {
  /** The fixed break's id, or the rule that requires it. */
  id: string;
  start: number;
  end: number;
  /** Stops served before it. */
  afterStops: number;
  /**
   * "after-service": at the previous stop when its service ends (or at the
   * depot before the first leg); "before-service": at the next stop before
   * its service (while waiting for its window when there is waiting);
   * "on-the-way": between the two.
   */
  where: "after-service" | "before-service" | "on-the-way";
}

/**
 * A travel matrix over the problem's points: index 0 is the depot, index
 * i + 1 is `jobs[i]`, and with `Problem.depots` index jobs.length + 1 + k is
 * `depots[k]` (the extra depots after the jobs). Row-major, size x size entries. Durations in seconds
 * at free-flow speed (before `travelTimeFactor` and traffic), distances in
 * metres. Typed arrays keep 2,000-job problems within a 128 MB isolate.
 */
export interface TravelMatrix {
  size: number;
  distances: Float32Array | Float64Array;
  durations: Float32Array | Float64Array;
}

/**
 * Time-dependent traffic. Time 0 is midnight at the start of `weekday`
 * (0 = Monday ... 6 = Sunday). `speedFactors[weekday][hour]` multiplies the
 * free-flow speed (1 = free flow, 0.5 = twice as slow); a built-in urban
 * profile is used when omitted.
 */
export interface TrafficOptions {
  weekday?: number;
  speedFactors?: number[][];
}

export interface Problem {
  /** Where tours start and end, unless their vehicle names one of `depots`. */
  depot: Location;
  jobs: Job[];
  /**
   * Further depots (several hubs in one run): a vehicle naming one's id
   * starts (and ends) there, and the search decides which depot serves a job
   * unless the job names one (`Job.depot`). Matrices then hold these points
   * after the jobs: size 1 + jobs.length + depots.length.
   */
  depots?: Depot[];
  /**
   * Heterogeneous fleet. When absent, `numVehicles` identical round-trip cars
   * with ids "vehicle-1" ... "vehicle-n" and `vehicleCapacity` are used.
   */
  vehicles?: Vehicle[];
  /**
   * Maximum number of tours. With `vehicles` absent it is also the number of
   * identical vehicles (default: one per job).
   */
  numVehicles?: number;
  /** Capacity of the identical vehicles used when `vehicles` is absent. */
  vehicleCapacity?: Load;
  /**
   * Keep the jobs in the given order: they are laid out on tours in exactly
   * this order (a new tour starts when the next job no longer fits); only
   * the times are computed.
   */
  fixOrder?: boolean;
  /**
   * Window relaxation, applied only to jobs that would otherwise stay
   * unassigned: their window end is widened in 30-minute steps up to
   * `maxMinutes` (at most 300). With `afterTime`, only windows that close at
   * or after that time may be widened.
   */
  relax?: { maxMinutes: number; afterTime?: number };
  /** Time-dependent travel times (`true` = built-in profile, Monday). */
  traffic?: boolean | TrafficOptions;
  /**
   * Precomputed matrices (e.g. from OSRM `table`), per vehicle class or one
   * `default` for all classes. Absent classes use the embedded great-circle
   * model. See `prepareMatrices` for asynchronous providers.
   */
  matrices?: Partial<Record<VehicleClassId | "default", TravelMatrix>>;
}

export interface Progress {
  /** Fraction of the budget used, 0..1. */
  fraction: number;
  /** Number of tours of the best solution so far. */
  tours: number;
  /** Unassigned jobs of the best solution so far. */
  unassigned: number;
  /** Cost of the best solution so far. */
  cost: number;
}

export interface SolveOptions {
  /** Budget in ms of `clock` (default 5,000 unless `maxIterations` is set). */
  timeLimitMs?: number;
  /**
   * The clock the time limit is measured on, in ms (default: wall clock,
   * `Date.now`). Benchmarks pass the process's CPU time so figures taken on a
   * loaded machine compare with those of a free core.
   */
  clock?: () => number;
  /**
   * Budget in search iterations. Results are reproducible for a given seed
   * only when this (and not the time limit) is what stops the search.
   */
  maxIterations?: number;
  /** Seed of the pseudo-random generator (default 1). */
  seed?: number;
  /**
   * Internal (benchmarks): the search of the final cost phase. "hgs" = the
   * hybrid genetic search with a penalised infeasible space (hgs.ts), where it
   * applies; "sisr" = ruin and recreate with annealing. Default: see the
   * solver README, "Algorithm".
   */
  search?: "hgs" | "sisr";
  /** Called now and then (about every 100 ms) with the best solution's figures. */
  onProgress?: (progress: Progress) => void;
  /** Cancellation: the best solution so far is returned once aborted. */
  signal?: { readonly aborted: boolean };
  /** Cancellation by polling; return true to stop. */
  shouldStop?: () => boolean;
  /**
   * Warm start: the tours to begin from instead of building a plan (e.g. a
   * previous solution). Unknown or repeated ids throw; a tour that breaks a
   * constraint is dropped and its jobs are placed again, as are jobs no tour
   * names. The search never returns a solution worse than this start
   * (objective order: unassigned, priority, tours, cost). Ignored with
   * `fixOrder`.
   */
  initial?: readonly InitialTour[];
  /**
   * "fleet" (default): fewest unassigned jobs, least priority left out,
   * fewest tours, then least cost. "cost": the same without the tour count:
   * the cost (distance x km rate, fixed costs, time costs) is minimised with
   * at most the fleet given, and no effort goes into emptying tours (route
   * minimisation is skipped); a tour that lowers the cost may be opened.
   */
  objective?: "fleet" | "cost";
}

/** A tour given to the solver: a vehicle and its jobs in driving order. */
export interface InitialTour {
  vehicleId: string;
  jobIds: string[];
}

export interface Stop {
  jobId: string;
  /** Arrival at the job's location. */
  arrival: number;
  /** Start of service (arrival plus waiting). */
  serviceStart: number;
  /** End of service, when the vehicle leaves. */
  departure: number;
  /** Waiting time before the window opens, seconds. */
  waiting: number;
  /** Load on board when leaving the stop, per dimension. */
  load: number[];
  /**
   * The window service started in (for a job with several windows, the one
   * the solver chose; as given, before any relaxation); absent for a job
   * without a window.
   */
  window?: TimeWindow;
  /** Metres from the previous point (depot or stop). */
  distance: number;
}

export interface Tour {
  vehicleId: string;
  /** The id of the depot (`Problem.depots`) the tour starts and ends at; absent for the problem's `depot`. */
  depot?: string;
  /** Where the tour started instead, as its vehicle's `startAt`. */
  startAt?: string;
  /** Departure from the depot (or from `startAt`). */
  start: number;
  /** Return to the depot, or end of the last service for an open tour. */
  end: number;
  stops: Stop[];
  /** Metres. */
  distance: number;
  /** Seconds, end - start. */
  duration: number;
  /** Total waiting seconds. */
  waiting: number;
  /** Only for vehicles with breaks or working-time rules: the breaks, in time order (their minutes count in `duration`, not in `waiting`). */
  breaks?: PlannedBreak[];
  cost: number;
}

export type UnassignedReason =
  | "CAPACITY" // the job's load exceeds every vehicle's capacity
  | "TIME_WINDOW" // no vehicle can reach it inside its window
  | "SHIFT_END" // serving it makes every vehicle miss its latest end
  | "MAX_DURATION" // serving it alone exceeds every vehicle's max tour duration
  | "PICKUP_DELIVERY" // the pair cannot be served in order on one tour
  | "GROUP" // the group does not fit on one tour
  | "SKILLS" // no vehicle has every skill the job needs
  | "MAX_STOPS" // every vehicle that may serve it has its stops used up
  | "BREAKS" // the breaks the vehicles' rules require leave no tour time for it
  | "FLEET" // feasible alone, but no tour/vehicle left to take it
  | "INVALID"; // bad input (e.g. unknown pickup id)

export interface UnassignedJob {
  jobId: string;
  reason: UnassignedReason;
  /** Human remedy, e.g. "window closes 14 min before earliest arrival". */
  remedy: string;
}

export interface RelaxedJob {
  jobId: string;
  /** How far the window end was widened, minutes (a multiple of 30). */
  minutes: number;
  /** Actual service start after the original window end, seconds (>= 0). */
  lateness: number;
}

export interface Solution {
  tours: Tour[];
  unassigned: UnassignedJob[];
  relaxed: RelaxedJob[];
  summary: {
    tours: number;
    unassigned: number;
    distance: number;
    duration: number;
    waiting: number;
    cost: number;
  };
  stats: {
    iterations: number;
    elapsedMs: number;
    stoppedBy: "budget" | "cancelled" | "complete";
    seed: number;
  };
}

/** A constraint violation found by `check`. */
export interface Violation {
  code:
    | "UNKNOWN_JOB"
    | "DUPLICATE_JOB"
    | "MISSING_JOB"
    | "UNKNOWN_VEHICLE"
    | "VEHICLE_REUSED"
    | "TOO_MANY_TOURS"
    | "CAPACITY"
    | "TIME_WINDOW"
    | "SHIFT_START"
    | "SHIFT_END"
    | "MAX_DURATION"
    | "PICKUP_DELIVERY"
    | "GROUP"
    | "SKILLS"
    | "MAX_STOPS"
    | "DEPOT"
    | "BREAK"
    | "WORKING_TIME"
    | "FIX_ORDER"
    | "SCHEDULE"
    | "TOTALS";
  message: string;
  vehicleId?: string;
  jobId?: string;
}
