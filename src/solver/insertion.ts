/**
 * A new order into a tour already under way: the cheapest feasible places
 * for some jobs in one given tour whose order is otherwise kept (the drivers
 * have it). The routing service asks it of every running tour and takes the
 * cheapest answer.
 */
import { diagnose } from "./diagnose";
import { compile, type Instance } from "./model";
import type { Route } from "./route";
import { illegality, timetable } from "./schedule";
import { EPS } from "./segment";
import { SolutionState, insertUnitGreedily } from "./state";
import type { PlannedTour } from "./solve";
import type { Problem, Tour, UnassignedJob } from "./types";

export interface Insertion {
  /** The tour's job ids in their new order. */
  jobIds: string[];
  /** What the jobs add to the tour: its cost (as the objective counts it) and metres. */
  addedCost: number;
  addedDistance: number;
  /** The new tour, timed. */
  tour: Tour;
}

export type InsertionResult =
  | { ok: true; insertion: Insertion }
  /**
   * `tourLegal` false: the tour as given already breaks a constraint (e.g. its driver runs so late that a window
   * can no longer be kept), so nothing is inserted; else `unassigned` says why a job does not fit (with the remedy).
   */
  | { ok: false; tourLegal: boolean; unassigned: UnassignedJob[] };

/**
 * Inserts `jobIds` (jobs of `problem` that `tour` does not hold) into `tour`, unit by unit (a pickup with its
 * delivery, a group) at the cheapest position that keeps the tour legal: windows, capacity, shift, duration, skills,
 * stops, and the breaks its rules require. The tour's own jobs keep their order.
 */
export function cheapestInsertion(problem: Problem, tour: PlannedTour, jobIds: string[]): InsertionResult {
  const inst = compile(problem);
  const nodeOf = new Map(problem.jobs.map((j, i) => [j.id, i + 1]));
  const node = (id: string) => {
    const n = nodeOf.get(id);
    if (n === undefined) throw new Error(`unknown job ${id}`);
    return n;
  };
  const vehicle = inst.vehicles.find((v) => v.id === tour.vehicleId);
  if (!vehicle) throw new Error(`unknown vehicle ${tour.vehicleId}`);
  const state = SolutionState.empty(inst);
  const route = state.openTour(vehicle);
  route.nodes = tour.jobIds.map(node);
  route.update();
  const held = new Set(route.nodes);
  const added = jobIds.map(node);
  const twice = added.find((n) => held.has(n));
  if (twice !== undefined) throw new Error(`job ${problem.jobs[twice - 1].id} is on the tour already`);
  if (illegality(inst, route) > EPS) return { ok: false, tourLegal: false, unassigned: [] };

  const before = timetable(inst, route);
  let current = route;
  for (const unit of new Set(added.map((n) => inst.unitOf[n]))) {
    const next = legalPlacement(inst, current, inst.units[unit]);
    // Why, as for a job a plan leaves out: alone on the vehicle (from where its tour is now) or not at all.
    if (!next) return { ok: false, tourLegal: true, unassigned: diagnose(inst, state, unit) };
    current = next;
  }
  const after = timetable(inst, current);
  return {
    ok: true,
    insertion: {
      jobIds: current.nodes.map((n) => problem.jobs[n - 1].id),
      addedCost: after.cost - before.cost,
      addedDistance: after.distance - before.distance,
      tour: after,
    },
  };
}

/**
 * The route with the unit inserted at its cheapest legal place, or null. A single job tries every position from
 * the cheapest on, since the breaks' timetable (not the O(1) evaluation) may refuse the cheapest; a pair or group is
 * placed member by member as the search's recreate does.
 */
function legalPlacement(inst: Instance, route: Route, members: number[]): Route | null {
  if (members.length > 1) {
    const sequence = insertUnitGreedily(route, members);
    if (!sequence) return null;
    const probe = route.clone();
    probe.nodes = sequence;
    probe.update();
    return illegality(inst, probe) > EPS ? null : probe;
  }
  const [job] = members;
  const positions: { p: number; cost: number }[] = [];
  for (let p = 0; p <= route.nodes.length; p++) {
    const cost = route.insertionCost(job, p);
    if (cost < Infinity) positions.push({ p, cost });
  }
  positions.sort((a, b) => a.cost - b.cost);
  for (const { p } of positions) {
    const probe = route.clone();
    probe.insert(job, p);
    if (illegality(inst, probe) <= EPS) return probe;
  }
  return null;
}
