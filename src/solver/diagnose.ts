import type { Instance, VehicleModel } from "./model";
import { UNBOUNDED, serves, windowAt } from "./model";
import { EPS } from "./segment";
import type { SolutionState } from "./state";
import type { UnassignedJob } from "./types";

const minutes = (s: number) => Math.max(1, Math.round(s / 60));

/**
 * Why a job is unassigned, with a remedy a dispatcher can act on. The job
 * (its whole unit) is tried alone on an empty tour of every vehicle type;
 * if that works, the fleet is the bottleneck.
 */
export function diagnose(inst: Instance, state: SolutionState, unit: number): UnassignedJob[] {
  const members = inst.units[unit];
  const jobs = inst.problem.jobs;
  const result = (reason: UnassignedJob["reason"], remedy: string) =>
    members.map((n) => ({ jobId: jobs[n - 1].id, reason, remedy }));
  const invalid = members.find((n) => inst.invalid.has(n));
  if (invalid !== undefined) return result("INVALID", inst.invalid.get(invalid)!);

  if (inst.maxTours === 0) return result("FLEET", "no vehicle is available: add a vehicle or allow at least one tour");
  const probe = state.clone();
  for (const r of probe.routes.slice()) probe.removeTour(r);
  const fitsAlone = probe.bestPlacement(unit, null, 0, true) !== null;
  if (fitsAlone) {
    const takers = state.routes.filter((r) => members.every((n) => serves(inst, r.vehicle, n)));
    if (takers.length > 0 && state.routes.length >= inst.maxTours && takers.every((r) => r.nodes.length + members.length > r.vehicle.maxStops)) {
      return result("MAX_STOPS", `every tour that may take it has its stops used up (at most ${Math.max(...takers.map((r) => r.vehicle.maxStops))}); raise the vehicles' stop limit or add a vehicle`);
    }
    return result(
      "FLEET",
      `feasible on its own, but no tour can take it: allow more tours than ${inst.maxTours}, add a vehicle, or widen its time window`,
    );
  }
  // Explain with the first member that cannot be served alone.
  for (const node of members) {
    const why = explainSingle(inst, node);
    if (why) return result(why[0], why[1]);
  }
  if (members.length === 1) {
    return result("TIME_WINDOW", "no vehicle meets its window, shift and tour-duration limits together; widen the window or extend a shift");
  }
  if (members.some((n) => inst.pairRole[n] !== 0)) {
    return result("PICKUP_DELIVERY", "the pickup and its delivery cannot be served in order on one tour; widen their windows");
  }
  return result("GROUP", `the ${members.length} jobs of the group do not fit on one tour; split the group or add capacity`);
}

function explainSingle(inst: Instance, node: number): [UnassignedJob["reason"], string] | null {
  const dims = inst.dims;
  const able = inst.vehicles.filter((v) => serves(inst, v, node));
  if (able.length === 0) {
    const depot = inst.problem.jobs[node - 1].depot;
    if (depot !== undefined && !inst.vehicles.some((v) => v.depot === depot)) {
      return ["SKILLS", `may only be served from depot ${depot}, where no vehicle starts; give that depot a vehicle or lift the job's depot restriction`];
    }
    const needs = inst.skillNames.filter((_, i) => inst.requires[node] & (1 << i));
    return ["SKILLS", `needs ${needs.join(", ")}, which no vehicle has all of; give a vehicle (or its driver) these skills, or drop the requirement`];
  }
  let capacityShort = Infinity;
  let capacityDim = 0;
  for (let d = 0; d < dims; d++) {
    const q = Math.max(inst.plain[node * dims + d], Math.abs(inst.delta[node * dims + d]));
    const cap = Math.max(...able.map((v) => v.capacity[d]));
    if (q > cap + EPS && q - cap < capacityShort) {
      capacityShort = q - cap;
      capacityDim = d;
    }
  }
  if (capacityShort < Infinity) {
    return ["CAPACITY", `load exceeds the largest capacity by ${round(capacityShort)} on dimension ${capacityDim + 1}; split the job or use a bigger vehicle`];
  }
  // Smallest violation over vehicles of each kind of time limit.
  let late = Infinity;
  let overShift = Infinity;
  let overDuration = Infinity;
  for (const v of able) {
    const out = travel(v, 0, node);
    const back = v.open ? 0 : travel(v, node, 0);
    const arrival = v.earliestStart + out;
    // Several windows: the first still open at the arrival (inst.due is the last one's end).
    const k = inst.winFrom[node + 1] > inst.winFrom[node] ? windowAt(inst, node, arrival) : -1;
    const open = k >= 0 ? inst.winStart[k] : inst.ready[node];
    const start = Math.max(arrival, open);
    if (arrival > inst.due[node] + EPS) {
      late = Math.min(late, arrival - inst.due[node]);
      continue;
    }
    const end = start + inst.service[node] + back;
    if (end > v.latestEnd + EPS) {
      overShift = Math.min(overShift, end - v.latestEnd);
      continue;
    }
    // Departing as late as possible minimises the duration.
    const depart = Math.min(v.latestStart, Math.max(v.earliestStart, open - out));
    const duration = Math.max(depart + out, open) + inst.service[node] + back - depart;
    if (duration > v.maxDuration + EPS) overDuration = Math.min(overDuration, duration - v.maxDuration);
  }
  if (late < Infinity && inst.due[node] < UNBOUNDED) {
    const windows = inst.windows[node];
    if (windows.length > 1) {
      const list = windows.map((w) => `${clock(w.start)}-${clock(w.end)}`).join(", ");
      return ["TIME_WINDOW", `every window (${list}) closes before earliest arrival, the last ${minutes(late)} min before it; open the last one later or start a shift earlier`];
    }
    return ["TIME_WINDOW", `window closes ${minutes(late)} min before earliest arrival; open it later or start a shift earlier`];
  }
  if (overShift < Infinity) {
    return ["SHIFT_END", `serving it ends ${minutes(overShift)} min after the latest shift end; extend a shift or move the window earlier`];
  }
  if (overDuration < Infinity) {
    return ["MAX_DURATION", `a tour serving it lasts ${minutes(overDuration)} min longer than the maximum tour duration; raise the limit`];
  }
  return null;
}

function travel(v: VehicleModel, from: number, to: number): number {
  return v.durations.at(from, to) * v.timeScale;
}

/** Seconds from the plan's origin as hh:mm (hours past 24 run on: 26:00). */
function clock(seconds: number): string {
  const m = Math.round(seconds / 60);
  const sign = m < 0 ? "-" : "";
  const a = Math.abs(m);
  return `${sign}${String(Math.floor(a / 60)).padStart(2, "0")}:${String(a % 60).padStart(2, "0")}`;
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
