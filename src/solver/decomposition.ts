import type { Budget } from "./budget";
import type { Random } from "./random";
import type { Route } from "./route";
import { type Annealing, type Polish, ruinAndRecreate } from "./sisr";
import type { SolutionState } from "./state";

/**
 * Decomposition for large instances (Santini, Schneider, Vidal & Vigo 2023,
 * "Decomposition strategies for vehicle routing heuristics"): the tours are
 * ordered by the polar angle of their barycentre around the depot and cut
 * into subproblems of about SUBPROBLEM_JOBS jobs; each subproblem gets the
 * full ruin-and-recreate search with its own annealing schedule, on the
 * current solution (warm start) and keeping its best (never worse). Every
 * round starts the cut at a random tour, so borders move between rounds.
 *
 * The subproblem is a scope on the whole solution rather than a copy: the
 * search ruins only its jobs and inserts only into its tours, so the cost of
 * an iteration no longer grows with the size of the instance.
 */
export const SUBPROBLEM_JOBS = 150;
/** Tours of a subproblem at least (long tours, as in R2/C2/RC2, need company to exchange jobs with). */
const SUBPROBLEM_TOURS = 6;
/**
 * Rounds over all subproblems within the budget given (borders shift
 * between rounds): many short rounds beat few long ones
 * (docs/experiments/2026-11-27-sixteen-rounds-of-subproblems.md).
 */
const ROUNDS = 16;

/** Jobs on the plan's tours. */
function assignedJobs(state: SolutionState): number {
  let jobs = 0;
  for (const r of state.routes) jobs += r.nodes.length;
  return jobs;
}

/** Jobs per subproblem: SUBPROBLEM_JOBS, or more where SUBPROBLEM_TOURS long tours hold more. */
function subproblemJobs(jobs: number, tours: number): number {
  return Math.max(SUBPROBLEM_JOBS, (SUBPROBLEM_TOURS * jobs) / Math.max(1, tours));
}

/** About how many subproblems the plan's tours make. */
export function subproblemCount(state: SolutionState): number {
  const jobs = assignedJobs(state);
  return jobs / subproblemJobs(jobs, state.routes.length);
}

/**
 * Barycentre of a tour's jobs relative to the depot, in the problem's
 * coordinates. With several depots (`Problem.depots`) it is still
 * `Problem.depot`: the angles only group tours that lie near each other
 * into subproblems, and every tour keeps its vehicle's depot.
 */
function barycentre(state: SolutionState, route: Route): { x: number; y: number } {
  const problem = state.inst.problem;
  let x = 0;
  let y = 0;
  for (const n of route.nodes) {
    const loc = problem.jobs[n - 1].location;
    x += loc.lon - problem.depot.lon;
    y += loc.lat - problem.depot.lat;
  }
  return { x: x / route.nodes.length, y: y / route.nodes.length };
}

/** Jobs of tours grouped by the polar angle of the tours' barycentres, from a random tour on. */
export function polarGroups(state: SolutionState, rng: Random, target: number): number[][] {
  const angled = state.routes.map((r) => {
    const b = barycentre(state, r);
    return { nodes: r.nodes, angle: Math.atan2(b.y, b.x) };
  });
  angled.sort((a, b) => a.angle - b.angle);
  const offset = rng.int(Math.max(1, angled.length));
  const groups: number[][] = [];
  let current: number[] = [];
  for (let i = 0; i < angled.length; i++) {
    current.push(...angled[(offset + i) % angled.length].nodes);
    if (current.length >= target) {
      groups.push(current);
      current = [];
    }
  }
  // A small remainder joins the last group rather than being searched alone.
  if (current.length > 0) {
    if (groups.length > 0 && current.length < target / 2) groups[groups.length - 1].push(...current);
    else groups.push(current);
  }
  return groups;
}

/**
 * Ruin and recreate by subproblems between budget fractions `from` and
 * `until`. `annealing(progress)` gives each subproblem's schedule, progress
 * being the share of this phase already spent (so later rounds run cooler).
 */
export function* decomposedSearch(
  start: SolutionState,
  rng: Random,
  budget: Budget,
  from: number,
  until: number,
  annealing: (progress: number) => Annealing,
  onImproved: (s: SolutionState) => void,
  polish: Polish | null = null,
): Generator<void, SolutionState> {
  let state = start;
  const size = state.inst.size;
  const span = (until - from) / ROUNDS;
  while (!budget.exhausted() && budget.fraction() < until) {
    const jobs = assignedJobs(state);
    const groups = polarGroups(state, rng, subproblemJobs(jobs, state.routes.length));
    // No tours (nothing fits any vehicle): nothing to decompose; the plain search may still open one.
    if (groups.length === 0) return yield* ruinAndRecreate(state, rng, budget, budget.fraction(), until, annealing(0), onImproved, polish);
    for (const nodes of groups) {
      const at = budget.fraction();
      if (budget.exhausted() || at >= until) break;
      const mask = new Uint8Array(size);
      for (const n of nodes) mask[n] = 1;
      state.scope = { mask, nodes };
      const end = Math.min(until, at + (span * nodes.length) / Math.max(1, jobs));
      const result = yield* ruinAndRecreate(state, rng, budget, at, end, annealing((at - from) / (until - from)), onImproved, polish);
      state.scope = null;
      result.scope = null;
      state = result;
    }
  }
  return state;
}
