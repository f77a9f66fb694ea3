import {
  DenseMatrix,
  DepotMatrix,
  embeddedMatrix,
  type Matrix,
  problemPoints,
  secondsPerMetre,
  slowestSpeedFactor,
  type TrafficModel,
  trafficModel,
} from "./matrix";
import { type BreakRules, breakReserve, breakRulesOf, RULES } from "./breaks";
import * as segment from "./segment";
import type { Job, Problem, TimeWindow, TravelMatrix, Vehicle, VehicleClassId } from "./types";

// Local bindings (see route.ts): a namespace's exports may be getters once transpiled.
const { EPS, merge } = segment;

/** Stand-in for "no limit" that keeps segment arithmetic free of Infinity - Infinity. */
export const UNBOUNDED = 1e15;

/** Distinct skills the jobs of one problem may require: one bit each of a 32-bit mask. */
export const MAX_SKILLS = 31;

/**
 * The window a job with several windows is served in when the vehicle
 * arrives at `arrival` (seconds): the first whose end is not before the
 * arrival (the earliest service start, best for everything after it), else
 * the last one (the search then sees time warp). Its index in `winStart` /
 * `winEnd`; only for nodes with `winFrom[node + 1] - winFrom[node] > 1`.
 */
export function windowAt(inst: Instance, node: number, arrival: number): number {
  const winEnd = inst.winEnd;
  const last = inst.winFrom[node + 1] - 1;
  let k = inst.winFrom[node];
  while (k < last && winEnd[k] + EPS < arrival) k++;
  return k;
}

/**
 * Segment (d, w, e, l) + travel + `node` into `segment.seg`; a job with
 * several windows in the one `windowAt` picks for the segment's earliest
 * arrival, as the tour's own pass (route.ts) does.
 */
export function mergeJob(inst: Instance, d: number, w: number, e: number, l: number, travel: number, node: number): void {
  if (inst.multiWindow && inst.winFrom[node + 1] > inst.winFrom[node]) {
    const k = windowAt(inst, node, e + d - w + travel);
    merge(d, w, e, l, travel, inst.service[node], 0, inst.winStart[k], inst.winEnd[k]);
  } else merge(d, w, e, l, travel, inst.service[node], 0, inst.ready[node], inst.due[node]);
}

/**
 * A job's windows as the model uses them: `timeWindows` cut to the outer
 * `timeWindow`, or the single `timeWindow`, or none ([]); null when the
 * windows leave no time at all. Throws on unsorted or overlapping windows.
 */
export function windowsOf(job: Job): readonly TimeWindow[] | null {
  const outer = job.timeWindow;
  if (outer && !(outer.start <= outer.end)) throw new Error(`job ${job.id}: timeWindow starts after it ends`);
  const list = job.timeWindows;
  if (list === undefined || list.length === 0) return outer ? [outer] : [];
  list.forEach((w, i) => {
    if (!(w.start <= w.end)) throw new Error(`job ${job.id}: time window ${i + 1} starts after it ends`);
    if (i > 0 && w.start < list[i - 1].end) {
      throw new Error(`job ${job.id}: timeWindows must be sorted by start and must not overlap (window ${i + 1} starts at ${w.start}, before window ${i} ends at ${list[i - 1].end})`);
    }
  });
  const cut = outer
    ? list.filter((w) => w.end >= outer.start && w.start <= outer.end).map((w) => ({ start: Math.max(w.start, outer.start), end: Math.min(w.end, outer.end) }))
    : list.slice();
  return cut.length > 0 ? cut : null;
}

/** Whether vehicle `v` has every skill that `node` needs. */
export const serves = (inst: Instance, v: VehicleModel, node: number): boolean => (inst.requires[node] & ~v.skills) === 0;

/** A vehicle compiled for the search. Node 0 is the depot, node i is job i - 1. */
export interface VehicleModel {
  index: number;
  id: string;
  /** Its depot's id (`Problem.depots`), undefined for the problem's depot. */
  depot: string | undefined;
  /** Where its tour starts instead of its depot (`Vehicle.startAt`), or undefined. */
  startAt: string | undefined;
  /** Vehicles with equal `typeKey` are interchangeable. */
  typeKey: string;
  distances: Matrix;
  /**
   * Free-flow durations, before `timeScale`. Node 0 is the vehicle's own
   * depot: for a vehicle at a further depot (or starting elsewhere) both
   * matrices are `DepotMatrix` views that read node 0 as that point.
   */
  durations: Matrix;
  /**
   * Multiplies `durations` for planning: travel-time factor and, with
   * traffic, the slowest speed factor (so planned arrivals are never earlier
   * than real ones and every planned tour stays feasible in traffic).
   */
  timeScale: number;
  /** Multiplies `durations` for the free-flow timetable (traffic applied on top). */
  freeFlowScale: number;
  traffic: TrafficModel | undefined;
  open: boolean;
  earliestStart: number;
  latestStart: number;
  latestEnd: number;
  maxDuration: number;
  /**
   * Breaks and working-time rules, or null. With them, `latestEnd` and
   * `maxDuration` are what the search plans with: the given ones less the
   * time kept for breaks (breaks.ts, `breakReserve`); the timetable holds
   * the given ones.
   */
  breakRules: BreakRules | null;
  givenLatestEnd: number;
  givenMaxDuration: number;
  /** Per load dimension; UNBOUNDED when not limited. */
  capacity: Float64Array;
  /** The skills it has, as bits of `Instance.skillNames` (only skills some job needs count). */
  skills: number;
  /** Stops its tour may have; UNBOUNDED when not limited. */
  maxStops: number;
  fixedCost: number;
  costPerMetre: number;
  costPerWaitSecond: number;
  costPerDurationSecond: number;
}

export interface Instance {
  problem: Problem;
  /** Number of nodes: depot + jobs. */
  size: number;
  dims: number;
  /** Instance-level distances (for neighbourhoods). */
  distances: Matrix;
  service: Float64Array;
  /**
   * Window start and end per node; for a job with several windows the outer
   * bounds (first start, last end), which only bound where it can go: its
   * evaluation picks one of its own windows (`windowAt`).
   */
  ready: Float64Array;
  due: Float64Array;
  /** Whether some job has several windows (else `winStart`, `winEnd` are empty and nothing below is used). */
  multiWindow: boolean;
  /** The windows of jobs with several: node n's are winStart/winEnd[winFrom[n] .. winFrom[n + 1] - 1] (none for other nodes). */
  winFrom: Int32Array;
  winStart: Float64Array;
  winEnd: Float64Array;
  /** Every node's windows as the model uses them (cut to the outer window, before relaxation); [] = none. */
  windows: (readonly TimeWindow[])[];
  /** Load delivered from the depot, per node x dimension. */
  plain: Float64Array;
  /** Change of load on board at the node, per node x dimension. */
  delta: Float64Array;
  /** Skills each node needs, as bits of `skillNames` (0: none). */
  requires: Int32Array;
  /** The distinct skills jobs need, bit i = skillNames[i]. */
  skillNames: string[];
  /** Pickup <-> delivery partner node, or -1. */
  partner: Int32Array;
  /** 1 = pickup of a pair, 2 = delivery of a pair, 0 = plain job. */
  pairRole: Uint8Array;
  priority: Float64Array;
  /** Jobs that must move together (pair and/or group); every job is in one unit. */
  units: number[][];
  unitOf: Int32Array;
  /** Jobs that can never be served because the input is inconsistent. */
  invalid: Map<number, string>;
  vehicles: VehicleModel[];
  maxTours: number;
  /** K nearest other jobs of every node (row-major, stride `neighbourCount`). */
  neighbours: Int32Array;
  neighbourCount: number;
  hasPairs: boolean;
  /** Whether some vehicle starts at a further depot (`Problem.depots`). */
  multiDepot: boolean;
  /** With `multiDepot`: per node the round trip to the nearest vehicle's depot (construction's "farthest job"); else null. */
  depotTrip: Float64Array | null;
  /** The objective ranks the tour count above cost (`SolveOptions.objective` "fleet", the default); `solve` sets it. */
  fleetFirst: boolean;
}

function matrixFor(problem: Problem, cls: VehicleClassId, fallback: () => TravelMatrix): TravelMatrix {
  const m = problem.matrices?.[cls] ?? problem.matrices?.default;
  if (!m) return fallback();
  const n = problem.jobs.length + 1 + (problem.depots?.length ?? 0);
  if (m.size !== n || m.distances.length !== n * n || m.durations.length !== n * n) {
    throw new Error(`matrix for ${cls} must be ${n} x ${n} (depot + jobs${problem.depots?.length ? " + depots" : ""})`);
  }
  return m;
}

/** The problem's vehicles: `vehicles`, else `numVehicles` identical cars "vehicle-1" ... (default one per job). */
export function fleetOf(problem: Problem): Vehicle[] {
  return (
    problem.vehicles ??
    Array.from({ length: problem.numVehicles ?? Math.max(1, problem.jobs.length) }, (_, i) => ({
      id: `vehicle-${i + 1}`,
      capacity: problem.vehicleCapacity,
    }))
  );
}

/** Compiles the public problem into flat arrays for the search. */
export function compile(problem: Problem): Instance {
  const jobs = problem.jobs;
  const size = jobs.length + 1;
  const dims = Math.max(
    1,
    ...jobs.map((j) => j.load?.length ?? 0),
    ...(problem.vehicles ?? []).map((v) => v.capacity?.length ?? 0),
    problem.vehicleCapacity?.length ?? 0,
  );
  if (dims > 3) throw new Error("at most three load dimensions are supported");

  // Further depots: matrix points after the jobs.
  const depotNode = new Map<string, number>();
  (problem.depots ?? []).forEach((d, k) => {
    if (depotNode.has(d.id)) throw new Error(`duplicate depot id ${d.id}`);
    depotNode.set(d.id, size + k);
  });
  const knownDepot = (id: string, who: string) => {
    if (!depotNode.has(id)) throw new Error(`${who} names depot "${id}", which is not one of the problem's depots`);
  };
  for (const v of fleetOf(problem)) for (const id of [v.depot, v.startAt]) if (id !== undefined) knownDepot(id, `vehicle ${v.id}`);
  for (const j of jobs) if (j.depot !== undefined) knownDepot(j.depot, `job ${j.id}`);

  // Skills as bits: only those some job needs matter (a vehicle's others change nothing).
  // A job's depot restriction is one more such bit, which the vehicles of that depot have.
  const skillNames = [...new Set(jobs.flatMap((j) => j.skills ?? []))].sort();
  const userSkills = skillNames.length;
  const restrictedTo = [...new Set(jobs.flatMap((j) => (j.depot === undefined ? [] : [j.depot])))].sort();
  skillNames.push(...restrictedTo.map((id) => `depot ${id}`));
  if (skillNames.length > MAX_SKILLS) throw new Error(`at most ${MAX_SKILLS} distinct skills (each depot that jobs are restricted to counting as one) may be required by the jobs of one problem (got ${skillNames.length})`);
  const skillBit = new Map(skillNames.slice(0, userSkills).map((s, i) => [s, 1 << i]));
  const depotBit = new Map(restrictedTo.map((id, i) => [id, 1 << (userSkills + i)]));
  const maskOf = (skills: readonly string[] | undefined, depot?: string) =>
    (skills ?? []).reduce((m, s) => m | (skillBit.get(s) ?? 0), depot === undefined ? 0 : (depotBit.get(depot) ?? 0));

  // The embedded distances are shared by all classes; build them once, lazily.
  let embedded: Matrix | undefined;
  const embeddedDistances = () => (embedded ??= embeddedMatrix(problemPoints(problem)));
  const traffic = trafficModel(problem.traffic);

  const vehicles: VehicleModel[] = fleetOf(problem).map((v, index) => {
    const cls = v.vehicleClass ?? "car";
    let distances: Matrix;
    let durations: Matrix;
    let scale = v.travelTimeFactor ?? 1;
    const m = problem.matrices?.[cls] ?? problem.matrices?.default;
    if (m) {
      matrixFor(problem, cls, () => m);
      distances = new DenseMatrix(m.distances, m.size);
      durations = m.distances === m.durations ? distances : new DenseMatrix(m.durations, m.size);
    } else {
      // Durations are proportional to the embedded distances: no second matrix.
      distances = embeddedDistances();
      durations = distances;
      scale *= secondsPerMetre(cls);
    }
    if (v.depot !== undefined || v.startAt !== undefined) {
      const end = v.depot === undefined ? 0 : depotNode.get(v.depot)!;
      const start = v.startAt === undefined ? end : depotNode.get(v.startAt)!;
      const viewed = new DepotMatrix(distances, start, end);
      durations = durations === distances ? viewed : new DepotMatrix(durations, start, end);
      distances = viewed;
    }
    const vehTraffic = cls === "bicycle" ? undefined : traffic;
    const capacity = new Float64Array(dims).fill(UNBOUNDED);
    v.capacity?.forEach((c, d) => (capacity[d] = c));
    const costs = v.costs;
    const shift = v.shift;
    const breakRules = breakRulesOf(v);
    const earliestStart = shift?.earliestStart ?? 0;
    const givenLatestEnd = shift?.latestEnd ?? UNBOUNDED;
    const givenMaxDuration = v.maxTourDuration ?? UNBOUNDED;
    let latestEnd = givenLatestEnd;
    let maxDuration = givenMaxDuration;
    if (breakRules) {
      const reserve = breakReserve(breakRules, Math.min(givenLatestEnd - earliestStart, givenMaxDuration), earliestStart, givenLatestEnd);
      if (latestEnd < UNBOUNDED) latestEnd -= reserve;
      if (maxDuration < UNBOUNDED) maxDuration -= reserve;
      if (breakRules.arbzg) maxDuration = Math.min(maxDuration, RULES["de-arbzg"].maxWork);
    }
    const model: VehicleModel = {
      index,
      id: v.id,
      depot: v.depot,
      startAt: v.startAt,
      typeKey: "",
      distances,
      durations,
      timeScale: vehTraffic ? scale / slowestSpeedFactor(vehTraffic) : scale,
      freeFlowScale: scale,
      traffic: vehTraffic,
      open: v.roundtrip === false,
      earliestStart,
      latestStart: shift?.latestStart ?? UNBOUNDED,
      latestEnd,
      maxDuration,
      breakRules,
      givenLatestEnd,
      givenMaxDuration,
      capacity,
      skills: maskOf(v.skills, v.depot),
      maxStops: v.maxStops ?? UNBOUNDED,
      fixedCost: costs?.fixed ?? 0,
      costPerMetre: (costs?.perKm ?? 1) / 1000,
      costPerWaitSecond: (costs?.perWaitingHour ?? 0) / 3600,
      costPerDurationSecond: (costs?.perTourHour ?? 0) / 3600,
    };
    model.typeKey = JSON.stringify([
      ...(v.depot === undefined ? [] : [v.depot]),
      ...(v.startAt === undefined ? [] : [`from ${v.startAt}`]),
      cls,
      m ? 1 : 0,
      model.timeScale,
      model.open,
      model.earliestStart,
      model.latestStart,
      model.latestEnd,
      model.maxDuration,
      [...capacity],
      model.skills,
      model.maxStops,
      model.fixedCost,
      model.costPerMetre,
      model.costPerWaitSecond,
      model.costPerDurationSecond,
      ...(breakRules ? [breakRules] : []),
    ]);
    return model;
  });

  const service = new Float64Array(size);
  const ready = new Float64Array(size);
  const due = new Float64Array(size);
  const plain = new Float64Array(size * dims);
  const delta = new Float64Array(size * dims);
  const partner = new Int32Array(size).fill(-1);
  const pairRole = new Uint8Array(size);
  const priority = new Float64Array(size);
  const requires = new Int32Array(size);
  const invalid = new Map<number, string>();
  const indexOf = new Map<string, number>();
  jobs.forEach((j, i) => {
    if (indexOf.has(j.id)) throw new Error(`duplicate job id ${j.id}`);
    indexOf.set(j.id, i + 1);
  });
  ready[0] = -UNBOUNDED;
  due[0] = UNBOUNDED;
  const windows: (readonly TimeWindow[])[] = [[]];
  const winFrom = new Int32Array(size + 1);
  const winStarts: number[] = [];
  const winEnds: number[] = [];
  jobs.forEach((j, i) => {
    const node = i + 1;
    service[node] = j.service ?? 0;
    const own = windowsOf(j);
    windows.push(own ?? []);
    if (own === null) invalid.set(node, "none of its timeWindows lies inside its outer timeWindow; fix the windows");
    winFrom[node] = winStarts.length;
    if (own && own.length > 1) for (const w of own) (winStarts.push(w.start), winEnds.push(w.end));
    ready[node] = own && own.length > 0 ? own[0].start : -UNBOUNDED;
    due[node] = own && own.length > 0 ? own[own.length - 1].end : UNBOUNDED;
    priority[node] = j.priority ?? 0;
    requires[node] = maskOf(j.skills, j.depot);
    if (j.pickup !== undefined) {
      const p = indexOf.get(j.pickup);
      if (p === undefined || p === node || partner[p] !== -1 || jobs[p - 1].pickup !== undefined) {
        invalid.set(node, `pickup "${j.pickup}" is unknown or already paired; fix the pickup id`);
      } else {
        partner[p] = node;
        partner[node] = p;
        pairRole[p] = 1;
        pairRole[node] = 2;
      }
    }
  });
  winFrom[size] = winStarts.length;
  jobs.forEach((j, i) => {
    const node = i + 1;
    for (let d = 0; d < dims; d++) {
      const q = j.load?.[d] ?? 0;
      if (pairRole[node] === 1) delta[node * dims + d] = q;
      else if (pairRole[node] === 2) delta[node * dims + d] = -(jobs[partner[node] - 1].load?.[d] ?? 0);
      else {
        plain[node * dims + d] = q;
        delta[node * dims + d] = -q;
      }
    }
  });
  // A pickup whose delivery is invalid is invalid too (it would never be unloaded).
  for (const node of invalid.keys()) if (partner[node] >= 0) invalid.set(partner[node], invalid.get(node)!);

  // Units: connected components of "same pair" and "same group".
  const parent = Int32Array.from({ length: size }, (_, i) => i);
  const find = (x: number): number => (parent[x] === x ? x : (parent[x] = find(parent[x])));
  const groupHead = new Map<string, number>();
  jobs.forEach((j, i) => {
    const node = i + 1;
    if (partner[node] > 0) parent[find(node)] = find(partner[node]);
    if (j.group !== undefined) {
      const head = groupHead.get(j.group);
      if (head === undefined) groupHead.set(j.group, node);
      else parent[find(node)] = find(head);
    }
  });
  const unitByRoot = new Map<number, number[]>();
  for (let node = 1; node < size; node++) {
    const r = find(node);
    let u = unitByRoot.get(r);
    if (!u) unitByRoot.set(r, (u = []));
    u.push(node);
  }
  const units = [...unitByRoot.values()];
  const unitOf = new Int32Array(size).fill(-1);
  units.forEach((u, i) => {
    for (const node of u) unitOf[node] = i;
    // A unit with an invalid member cannot be served as a whole.
    const bad = u.find((node) => invalid.has(node));
    if (bad !== undefined) for (const node of u) if (!invalid.has(node)) invalid.set(node, `unit member ${jobs[bad - 1].id} is invalid`);
  });

  const distances = vehicles[0]?.distances ?? embeddedDistances();
  const multiDepot = vehicles.some((v) => v.depot !== undefined || v.startAt !== undefined);
  let depotTrip: Float64Array | null = null;
  if (multiDepot) {
    depotTrip = new Float64Array(size).fill(Infinity);
    const seen = new Set<string>();
    for (const v of vehicles) {
      if (seen.has(v.typeKey)) continue;
      seen.add(v.typeKey);
      for (let node = 1; node < size; node++) depotTrip[node] = Math.min(depotTrip[node], v.distances.at(0, node) + v.distances.at(node, 0));
    }
  }
  const neighbourCount = Math.max(0, Math.min(size - 2, 80));
  const neighbours = new Int32Array(size * neighbourCount);
  // K nearest by a bounded insertion sort: O(size x K) instead of full sorts.
  const nearest = new Float64Array(neighbourCount);
  for (let i = 1; i < size && neighbourCount > 0; i++) {
    const row = i * neighbourCount;
    let filled = 0;
    for (let j = 1; j < size; j++) {
      if (j === i) continue;
      const d = distances.at(i, j) + distances.at(j, i);
      if (filled === neighbourCount && d >= nearest[filled - 1]) continue;
      let k = filled < neighbourCount ? filled++ : filled - 1;
      while (k > 0 && nearest[k - 1] > d) {
        nearest[k] = nearest[k - 1];
        neighbours[row + k] = neighbours[row + k - 1];
        k--;
      }
      nearest[k] = d;
      neighbours[row + k] = j;
    }
  }

  return {
    problem,
    size,
    dims,
    distances,
    service,
    ready,
    due,
    multiWindow: winStarts.length > 0,
    winFrom,
    winStart: Float64Array.from(winStarts),
    winEnd: Float64Array.from(winEnds),
    windows,
    plain,
    delta,
    requires,
    skillNames,
    partner,
    pairRole,
    priority,
    units,
    unitOf,
    invalid,
    vehicles,
    maxTours: Math.min(problem.numVehicles ?? vehicles.length, vehicles.length),
    neighbours,
    neighbourCount,
    hasPairs: pairRole.some((r) => r !== 0),
    multiDepot,
    depotTrip,
    fleetFirst: true,
  };
}
