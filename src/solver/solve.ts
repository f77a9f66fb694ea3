import { Budget } from "./budget";
import { GRANULAR_CONSTRUCTION_FROM, granularInsertion, regretInsertion } from "./construction";
import { diagnose } from "./diagnose";
import { hgsApplies, hybridGeneticSearch } from "./hgs";
import { LocalSearch } from "./local-search";
import { decomposedSearch, SUBPROBLEM_JOBS, subproblemCount } from "./decomposition";
import { compile, type Instance } from "./model";
import { Random } from "./random";
import { relaxedJobs, relaxWindows } from "./relax";
import type { Route } from "./route";
import { minimiseRoutes, tourLowerBound } from "./route-minimisation";
import { illegality, timetable } from "./schedule";
import { EPS } from "./segment";
import { type Polish, ruinAndRecreate } from "./sisr";
import { type Objective, SolutionState } from "./state";
import type { Problem, Solution, SolveOptions, UnassignedJob } from "./types";
import { warmStart } from "./warm-start";
import { inSpatialOrder } from "./locality";

/**
 * Shares of the budget: cost warm-up, then route minimisation; the rest
 * minimises cost. When construction is within one tour of the capacity
 * bound, a longer warm-up usually empties that tour itself, with a far
 * better structure than ejections leave in such packed tours.
 */
const WARM_UP_SHARE = 0.1;
const LONG_WARM_UP_SHARE = 0.3;
const ROUTE_MINIMISATION_SHARE = 0.5;
/**
 * Annealing temperatures relative to the average cost per job: hot enough at
 * the start to restructure packed tours (Solomon C2 needed it), cold at the end.
 */
const INITIAL_TEMPERATURE = 10;
const FINAL_PHASE_TEMPERATURE = 3;
const FINAL_TEMPERATURE = 0.01;
/**
 * The final phase on the whole plan ends warmer: ending at 0.01 it froze
 * early (docs/experiments/2026-11-27-bounded-recreate-and-a-warmer-end.md).
 */
const FINAL_PHASE_END_TEMPERATURE = 0.1;
/** From this many jobs on, cost minimisation works on subproblems (see decomposition.ts). */
const DECOMPOSE_FROM = 2 * SUBPROBLEM_JOBS;
/**
 * The final cost phase works on subproblems only when the tours make at
 * least this many: long tours make few subproblems, where an iteration is
 * hardly cheaper than on the whole plan and the whole plan's search ended
 * shorter (docs/experiments/2026-11-27-long-tours-final-phase-on-the-whole-plan.md).
 */
const FINAL_SUBPROBLEMS_FROM = 5;

/**
 * Solves a problem. Asynchronous only to let cancellation signals through:
 * the search yields to the event loop about every 50 ms.
 */
export async function solve(problem: Problem, options: SolveOptions = {}): Promise<Solution> {
  const search = run(problem, options);
  let last = Date.now();
  let steps = 0;
  for (;;) {
    const step = search.next();
    if (step.done) return step.value;
    // Workers advance the clock only across I/O: yield every few hundred steps too, so time budgets hold there.
    if (++steps % 256 === 0 || Date.now() - last >= 50) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      last = Date.now();
    }
  }
}

/** Same as `solve`, without yielding (cancellation only via `shouldStop` or an already-aborted signal). */
export function solveSync(problem: Problem, options: SolveOptions = {}): Solution {
  const search = run(problem, options);
  for (;;) {
    const step = search.next();
    if (step.done) return step.value;
  }
}

function* run(problem: Problem, options: SolveOptions): Generator<void, Solution> {
  const budget = new Budget(options);
  const seed = options.seed ?? 1;
  const rng = new Random(seed);
  const inst = compile(inSpatialOrder(problem));
  if (options.objective !== undefined && options.objective !== "fleet" && options.objective !== "cost") {
    throw new Error(`unknown objective "${String(options.objective)}": expected "fleet" or "cost"`);
  }
  inst.fleetFirst = options.objective !== "cost";
  const originalDue = inst.due.slice();
  let bestObjective: Objective | null = null;
  let bestTours = 0;
  budget.watch(() => ({
    tours: bestTours,
    unassigned: bestObjective?.unassigned ?? inst.size - 1,
    cost: bestObjective?.cost ?? 0,
  }));
  const improved = (s: SolutionState) => {
    bestObjective = s.objective();
    bestTours = s.routes.length;
    budget.progress();
  };

  let best: SolutionState;
  // Without jobs, or with a fixed order, there is nothing to search.
  let searched = false;
  if (inst.size === 1) {
    best = SolutionState.empty(inst);
  } else if (problem.fixOrder) {
    best = fixedOrder(inst);
  } else {
    searched = true;
    if (options.initial) best = warmStart(inst, options.initial);
    else best = inst.size - 1 >= GRANULAR_CONSTRUCTION_FROM ? granularInsertion(inst) : regretInsertion(inst);
    improved(best);
    yield;
    // Local search after construction, after route minimisation and on every new best of the ruin and recreate.
    const ls = new LocalSearch(inst);
    const shouldStop = () => budget.exhausted();
    ls.run(best, rng, { shouldStop });
    const polish: Polish = (s, start) => ls.run(s, rng, { start, mask: s.scope?.mask ?? null, shouldStop });
    improved(best);
    // Cost minimisation first gives tours a sound structure (packed Solomon C2
    // tours left by route minimisation alone can trap the annealing); then
    // fewer tours; then cost again.
    const annealing = (initial: number, final: number) => {
      // Positive even when every job sits at the depot (zero cost).
      const perJob = Math.max(1e-9, best.cost() / Math.max(1, inst.size - 1 - best.unassigned.length));
      return { initial: initial * perJob, final: final * perJob };
    };
    const costSearch = (from: number, until: number, initial: number, decompose: boolean, end = FINAL_TEMPERATURE) => {
      if (!decompose) return ruinAndRecreate(best, rng, budget, from, until, annealing(initial, end), improved, polish);
      // Later rounds over the subproblems start cooler.
      const { initial: hot, final } = annealing(initial, end);
      return decomposedSearch(best, rng, budget, from, until, (p) => ({ initial: hot * Math.pow(final / hot, p), final }), improved, polish);
    };
    const warmUp = best.routes.length - tourLowerBound(best) <= 1 ? LONG_WARM_UP_SHARE : WARM_UP_SHARE;
    const large = inst.size - 1 >= DECOMPOSE_FROM;
    best = yield* costSearch(0, warmUp, INITIAL_TEMPERATURE, large);
    // Under the "cost" objective no effort goes into emptying tours: the cost search gets route minimisation's share.
    if (inst.fleetFirst) {
      best = yield* minimiseRoutes(best, rng, budget, warmUp + ROUTE_MINIMISATION_SHARE, improved, polish);
      // Ejections and perturbations leave detours behind.
      ls.run(best, rng, { shouldStop });
    }
    if (!large && options.search === "hgs" && hgsApplies(best)) best = yield* hybridGeneticSearch(best, rng, budget, 1, improved);
    else {
      const decompose = large && subproblemCount(best) >= FINAL_SUBPROBLEMS_FROM;
      // The subproblem rounds keep the cold end: a warmer one measured no better there (docs/experiments/2026-11-27-bounded-recreate-and-a-warmer-end.md).
      best = yield* costSearch(budget.fraction(), 1, FINAL_PHASE_TEMPERATURE, decompose, decompose ? FINAL_TEMPERATURE : FINAL_PHASE_END_TEMPERATURE);
    }
  }
  const relaxed = new Map<number, number>();
  const legalise = inst.multiWindow || inst.vehicles.some((v) => v.breakRules);
  const forBreaks = legalise ? repairTours(inst, best, relaxed) : new Set<number>();
  for (const [node, minutes] of relaxWindows(inst, best)) relaxed.set(node, minutes);
  // Jobs placed by relaxation must leave their tours legal too.
  if (legalise && relaxed.size > 0) for (const u of repairTours(inst, best, relaxed)) forBreaks.add(u);
  const stoppedBy = budget.cancelled ? "cancelled" : searched ? "budget" : "complete";
  const solution = output(inst, best, relaxed, originalDue, budget, seed, stoppedBy, forBreaks);
  // Unassigned jobs in the caller's order, whatever order the search used.
  const callerIndex = new Map(problem.jobs.map((j, i) => [j.id, i]));
  solution.unassigned.sort((a, b) => (callerIndex.get(a.jobId) ?? 0) - (callerIndex.get(b.jobId) ?? 0));
  return solution;
}

/**
 * The last word on tours. With jobs of several windows: the search's O(1)
 * evaluations hold every window and shift end exactly or on the safe side,
 * but with a maximum tour duration a move that lets a job fall back to an
 * earlier window can leave a tour too long where neither of the tour's two
 * choices of windows (Route.settleWindows) makes it short enough again
 * (seen once in 300 random problems with tight durations). With breaks or
 * working-time rules: the search planned those tours shorter by a reserve
 * (breaks.ts), and where the breaks placed in the timetable still make a
 * tour late or too long, or a limit of the rules is passed, it is not legal.
 * Such a tour loses the unit whose removal helps most until it holds; the
 * units go back by the cheapest insertion that keeps its tour legal, or stay
 * unassigned. Returns the units dropped for breaks that stayed unassigned.
 */
function repairTours(inst: Instance, state: SolutionState, relaxed: Map<number, number>): Set<number> {
  const fault = (r: Route) => illegality(inst, r);
  const dropped: number[] = [];
  const forBreaks = new Set<number>();
  for (const route of state.routes.slice()) {
    while (route.nodes.length > 0 && fault(route) > EPS) {
      if (route.vehicle.breakRules && route.feasible) forBreaks.add(dropped.length);
      let bestUnit = -1;
      let bestFault = Infinity;
      for (const u of new Set(route.nodes.map((n) => inst.unitOf[n]))) {
        const probe = route.clone();
        probe.nodes = route.nodes.filter((n) => inst.unitOf[n] !== u);
        probe.update();
        const f = probe.nodes.length === 0 ? 0 : fault(probe);
        if (f < bestFault) (bestFault = f), (bestUnit = u);
      }
      state.removeNodes(inst.units[bestUnit]);
      dropped.push(bestUnit);
    }
  }
  const unplaced = new Set<number>();
  dropped.forEach((u, i) => {
    const candidates = state.routes.map((r) => state.bestPlacement(u, null, 0, false, [r])).filter((p) => p !== null);
    candidates.sort((a, b) => a.cost - b.cost);
    // A new tour last where the objective ranks tours above cost (as bestPlacement does).
    const fresh = state.bestPlacement(u, null, 0, true, []);
    if (fresh) {
      const at = inst.fleetFirst ? -1 : candidates.findIndex((c) => c.cost > fresh.cost);
      candidates.splice(at < 0 ? candidates.length : at, 0, fresh);
    }
    for (const placement of candidates) {
      state.apply(u, placement);
      const route = state.routeOf[inst.units[u][0]]!;
      if (fault(route) <= EPS) return;
      state.removeNodes(inst.units[u]);
    }
    if (!state.unassigned.includes(u)) state.unassigned.push(u);
    for (const n of inst.units[u]) relaxed.delete(n);
    if (forBreaks.has(i)) unplaced.add(u);
  });
  return unplaced;
}

/** A tour of a given plan: a vehicle and the ids of its jobs in order. */
export interface PlannedTour {
  vehicleId: string;
  jobIds: string[];
}

/**
 * Improves a given plan with the local search alone (local-search.ts; no
 * ruin-and-recreate, no change of the fleet except tours that empty): for
 * plans made by hand or elsewhere. Jobs missing from the plan stay
 * unassigned; a tour that already breaks a constraint is left as it is.
 */
export function improvePlan(problem: Problem, plan: PlannedTour[], options: Pick<SolveOptions, "seed"> = {}): Solution {
  const seed = options.seed ?? 1;
  const budget = new Budget({});
  const inst = compile(problem);
  const state = SolutionState.empty(inst);
  const nodeOf = new Map(problem.jobs.map((j, i) => [j.id, i + 1]));
  const vehicleOf = new Map(inst.vehicles.map((v) => [v.id, v]));
  for (const t of plan) {
    const vehicle = vehicleOf.get(t.vehicleId);
    if (!vehicle) throw new Error(`unknown vehicle ${t.vehicleId}`);
    const route = state.openTour(vehicle);
    route.nodes = t.jobIds.map((id) => {
      const node = nodeOf.get(id);
      if (node === undefined) throw new Error(`unknown job ${id}`);
      return node;
    });
    state.afterChange(route);
  }
  state.unassigned = state.unassigned.filter((u) => inst.units[u].some((n) => !state.routeOf[n]));
  new LocalSearch(inst).run(state, new Random(seed));
  return output(inst, state, new Map(), inst.due.slice(), budget, seed, "complete");
}

/**
 * `fixOrder`: jobs are laid out on tours in the given order; a new tour
 * starts when the next job does not fit at the end of the current one.
 * Pairs and groups split across tours are left unassigned.
 */
function fixedOrder(inst: Instance): SolutionState {
  const state = SolutionState.empty(inst);
  let current: Route | null = null;
  let nextVehicle = 0;
  for (let node = 1; node < inst.size; node++) {
    if (inst.invalid.has(node)) continue;
    if (current && current.insertionCost(node, current.nodes.length) < Infinity) {
      current.nodes.push(node);
      current.update();
      state.index(current);
      continue;
    }
    while (nextVehicle < inst.vehicles.length && state.canOpenTour()) {
      const tour = state.openTour(inst.vehicles[nextVehicle++]);
      if (tour.insertionCost(node, 0) < Infinity) {
        tour.nodes.push(node);
        tour.update();
        state.index(tour);
        current = tour;
        break;
      }
      state.afterChange(tour);
    }
  }
  // Units must be complete and on one tour; otherwise leave them out.
  const broken: number[] = [];
  inst.units.forEach((members, u) => {
    const tours = new Set(members.map((n) => state.routeOf[n]));
    const ordered = members.every((n) => inst.pairRole[n] !== 2 || state.position[inst.partner[n]] < state.position[n]);
    if (tours.size > 1 || tours.has(null) || !ordered) broken.push(u);
  });
  for (const u of broken) state.removeNodes(inst.units[u].filter((n) => state.routeOf[n] !== null));
  state.unassigned = broken.filter((u) => !inst.invalid.has(inst.units[u][0]));
  return state;
}

function leftForBreaks(inst: Instance, unit: number): UnassignedJob[] {
  const remedy =
    "the breaks that the vehicles' working-time rules or fixed breaks require leave no tour the time to serve it in its window: widen the window, extend a shift or add a vehicle";
  return inst.units[unit].map((n) => ({ jobId: inst.problem.jobs[n - 1].id, reason: "BREAKS" as const, remedy }));
}

function output(
  inst: Instance,
  state: SolutionState,
  relaxed: Map<number, number>,
  originalDue: Float64Array,
  budget: Budget,
  seed: number,
  stoppedBy: Solution["stats"]["stoppedBy"],
  forBreaks: ReadonlySet<number> = new Set(),
): Solution {
  const tours = state.routes.map((r) => timetable(inst, r));
  const serviceStart = new Map<string, number>();
  for (const t of tours) for (const s of t.stops) serviceStart.set(s.jobId, s.serviceStart);
  const unassigned: UnassignedJob[] = [];
  const seen = new Set<number>();
  for (const u of state.unassigned) if (!seen.has(u)) (seen.add(u), unassigned.push(...(forBreaks.has(u) ? leftForBreaks(inst, u) : diagnose(inst, state, u))));
  inst.units.forEach((members, u) => {
    if (!seen.has(u) && inst.invalid.has(members[0])) unassigned.push(...diagnose(inst, state, u));
  });
  const sum = (f: (t: (typeof tours)[number]) => number) => tours.reduce((a, t) => a + f(t), 0);
  return {
    tours,
    unassigned,
    relaxed: relaxedJobs(inst, relaxed, serviceStart, (n) => originalDue[n]),
    summary: {
      tours: tours.length,
      unassigned: unassigned.length,
      distance: sum((t) => t.distance),
      duration: sum((t) => t.duration),
      waiting: sum((t) => t.waiting),
      cost: sum((t) => t.cost),
    },
    stats: {
      iterations: budget.iterations,
      elapsedMs: budget.elapsedMs(),
      stoppedBy,
      seed,
    },
  };
}
