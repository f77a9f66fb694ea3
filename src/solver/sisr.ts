import type { Budget } from "./budget";
import type { Random } from "./random";
import type { Route } from "./route";
import { better, type Placement, type SolutionState } from "./state";

/**
 * Slack Induction by String Removals (Christiaens & Vanden Berghe 2020):
 * ruin a few tours around a random job by removing strings (or split
 * strings) of consecutive jobs, recreate by greedy cheapest insertion in a
 * random-ish order with blinks, and accept by simulated annealing on cost.
 * The hierarchical objective is respected: a candidate with more unassigned
 * jobs or more tours is never accepted, one with fewer always is.
 */
const AVG_REMOVED = 10; // c-bar
const MAX_STRING = 10; // L-max
const SPLIT_RATE = 0.5;
const SPLIT_DEPTH = 0.01; // beta
const BLINK_RATE = 0.01;
/**
 * The load-penalised recreate (`LoadPrice`): the first price of a unit of
 * excess load, in units of the plan's cost per unit of demand; the share of
 * iterations the current plan may spend overloaded before the price rises
 * (10 %: docs/experiments/2026-11-28-a-price-on-excess-load.md,
 * docs/experiments/2026-11-29-long-tours-overloaded-longer.md); how often
 * (iterations) and by how much it adapts.
 */
const LOAD_PRICE_START = 1;
const OVERLOADED_SHARE = 0.1;
const LOAD_PRICE_PERIOD = 100;
const LOAD_PRICE_UP = 1.2;
const LOAD_PRICE_DOWN = 0.9;

export interface Annealing {
  /** Start and final temperature in cost units. */
  initial: number;
  final: number;
}

/** Improves a solution in place, starting from the given jobs (local-search.ts): SISR's new bests, route minimisation's repairs. */
export type Polish = (s: SolutionState, start: number[]) => void;

export function* ruinAndRecreate(
  start: SolutionState,
  rng: Random,
  budget: Budget,
  from: number,
  until: number,
  annealing: Annealing,
  onImproved: (s: SolutionState) => void,
  polish: Polish | null = null,
): Generator<void, SolutionState> {
  const current = start.clone();
  let best = start;
  let bestObj = best.objective();
  const price = new LoadPrice(start, bestObj.cost);
  // The current plan's cost includes its load excess at the price of the moment; the best is always within capacity.
  let currentObj = bestObj;
  let currentOverload = 0;
  while (!budget.exhausted() && budget.fraction() < until) {
    budget.tick();
    if ((budget.iterations & 31) === 0) yield;
    if (price.adapt(currentOverload > 0)) currentObj = { ...currentObj, cost: current.cost() + price.value * currentOverload };
    const progress = Math.min(1, Math.max(0, (budget.fraction() - from) / Math.max(1e-9, until - from)));
    const temperature = annealing.initial * Math.pow(annealing.final / annealing.initial, progress);
    // The acceptance threshold, drawn before the candidate is built so that the recreate can stop once it is out of reach.
    const threshold = currentObj.cost - temperature * Math.log(rng.next());
    current.begin();
    const removed = ruin(current, rng);
    // A complete plan stays complete on the same fleet or loses whatever follows: a job that fits nowhere ends the candidate there.
    const complete = currentObj.unassigned === 0;
    // On the same fleet only the cost decides, so a candidate already above the threshold is stopped too (a ruin that emptied a tour is always accepted).
    // Under the "cost" objective (tours not counted, fleetFirst false) any tour of the fleet may open, and only the cost decides.
    const fleetFirst = current.inst.fleetFirst;
    const limit = complete && (!fleetFirst || current.routes.length === currentObj.tours) ? threshold : Infinity;
    if (!recreate(current, removed, rng, complete ? (fleetFirst ? currentObj.tours : current.inst.maxTours) : Infinity, limit, complete ? price.value : 0)) {
      current.rollback();
      continue;
    }
    const obj = current.objective();
    const overload = price.value > 0 ? current.overload() : 0;
    obj.cost += price.value * overload;
    let accept: boolean;
    if (obj.unassigned !== currentObj.unassigned || obj.unassignedPriority !== currentObj.unassignedPriority || obj.tours !== currentObj.tours) {
      // Fewer tours or jobs left out count only within capacity: the next candidates could not open a tour to relieve an overload.
      accept = overload === 0 && better(obj, currentObj);
    } else {
      accept = obj.cost < threshold;
    }
    if (accept) {
      const newBest = overload === 0 && better(obj, bestObj);
      const changed = newBest && polish ? current.changedJobs() : [];
      current.commit();
      currentObj = obj;
      currentOverload = overload;
      if (newBest) {
        if (polish) {
          polish(current, changed);
          currentObj = current.objective();
        }
        best = current.clone();
        bestObj = currentObj;
        onImproved(best);
      }
    } else current.rollback();
  }
  return best;
}

/**
 * The price of a unit of excess load in the recreate (0: off). Where the
 * fleet is at the capacity bound, a fifth of the candidates stopped at a job
 * that every tour could take but for its load
 * (docs/experiments/2026-11-28-a-price-on-excess-load.md). Priced instead, such a job goes where windows allow and distance plus
 * the price of the excess is least, overloaded tours keep taking jobs at
 * that price, and later candidates move load back (the penalised capacity
 * of Vidal et al. 2013 and PyVRP, applied to the ruin and recreate).
 * Starts at LOAD_PRICE_START x the cost per unit of demand and adapts so
 * that the current plan is overloaded in about OVERLOADED_SHARE of the
 * iterations (more: dearer, fewer: cheaper). Only for plans of single jobs
 * with a load.
 */
class LoadPrice {
  value = 0;
  private iterations = 0;
  private overloaded = 0;

  constructor(state: SolutionState, cost: number) {
    const inst = state.inst;
    if (!inst.units.every((u) => u.length === 1)) return;
    let demand = 0;
    for (let i = inst.dims; i < inst.plain.length; i++) demand += inst.plain[i];
    if (demand > 0) this.value = (LOAD_PRICE_START * cost) / demand;
  }

  /** Counts one iteration; true when the price changed. */
  adapt(overloaded: boolean): boolean {
    if (this.value === 0) return false;
    if (overloaded) this.overloaded++;
    if (++this.iterations < LOAD_PRICE_PERIOD) return false;
    this.value *= this.overloaded > OVERLOADED_SHARE * this.iterations ? LOAD_PRICE_UP : LOAD_PRICE_DOWN;
    this.iterations = this.overloaded = 0;
    return true;
  }
}

/** Adjacent string removal; returns the removed units (now unassigned). */
export function ruin(state: SolutionState, rng: Random): number[] {
  const inst = state.inst;
  if (state.routes.length === 0) return [];
  let assigned = 0;
  for (const r of state.routes) assigned += r.nodes.length;
  const avgTour = assigned / state.routes.length;
  const maxString = Math.min(MAX_STRING, avgTour);
  const maxStrings = (4 * AVG_REMOVED) / (1 + maxString) - 1;
  const strings = Math.floor(rng.next() * maxStrings) + 1;
  // Seed: a random assigned job (of the scope, if any).
  const scope = state.scope;
  let seed = -1;
  for (let tries = 0; tries < 100 && seed < 0; tries++) {
    const n = scope ? scope.nodes[rng.int(scope.nodes.length)] : 1 + rng.int(inst.size - 1);
    if (state.routeOf[n]) seed = n;
  }
  if (seed < 0) return [];
  const ruined = new Set<Route>();
  const toRemove = new Set<number>();
  const k = inst.neighbourCount;
  for (let i = -1; i < k && ruined.size < strings; i++) {
    const c = i < 0 ? seed : inst.neighbours[seed * k + i];
    const route = state.routeOf[c];
    if (!route || ruined.has(route) || toRemove.has(c) || (scope && !scope.mask[c])) continue;
    ruined.add(route);
    const len = route.nodes.length;
    const maxLen = Math.min(len, maxString);
    const l = Math.floor(rng.next() * maxLen) + 1;
    const pos = state.position[c];
    if (l === len || rng.next() < SPLIT_RATE || l < 2) {
      // String of l jobs containing c.
      const lo = Math.max(0, Math.min(pos - rng.int(l), len - l));
      for (let j = lo; j < lo + l; j++) toRemove.add(route.nodes[j]);
    } else {
      // Split string: a string of l + m jobs, of which m consecutive stay.
      let m = 1;
      while (l + m < len && rng.next() > SPLIT_DEPTH) m++;
      const total = l + m;
      const lo = Math.max(0, Math.min(pos - rng.int(total), len - total));
      const keepAt = lo + rng.int(l + 1);
      for (let j = lo; j < lo + total; j++) if (j < keepAt || j >= keepAt + m) toRemove.add(route.nodes[j]);
    }
  }
  // Whole units leave together (pairs, groups).
  const units = new Set<number>();
  for (const n of toRemove) units.add(inst.unitOf[n]);
  const nodes: number[] = [];
  for (const u of units) for (const n of inst.units[u]) nodes.push(n);
  state.removeNodes(nodes);
  const list = [...units];
  state.unassigned.push(...list);
  return list;
}

/**
 * Greedy insertion with blinks, in one of SISR's orders. With a finite
 * `maxTours`, no new tour beyond that many, and it gives up (false) at the
 * first unit that fits nowhere: the caller rejects such a candidate anyway.
 * With a finite `maxCost` it also gives up at the first unit that cannot go
 * in without the plan's cost reaching it (after Pajerský, Sobotka & Rudová
 * 2026, "Open-source implementation of slack induction by string removals":
 * insertions never lower the cost where travel obeys the triangle
 * inequality, so such a candidate would be rejected at the end anyway).
 * With a `loadPrice` (a complete plan of single jobs under `LoadPrice`),
 * overloaded tours take jobs at their travel plus the priced excess, and a
 * job that fits nowhere goes where windows allow and that sum is least,
 * within `maxCost` (the candidate's cost includes its excess at the price).
 */
export function recreate(state: SolutionState, units: number[], rng: Random, maxTours = Infinity, maxCost = Infinity, loadPrice = 0): boolean {
  const inst = state.inst;
  const order = units.slice();
  const r = rng.int(11);
  const key = (u: number) => inst.units[u][0];
  if (r < 4) rng.shuffle(order);
  else if (r < 8) {
    const demand = (u: number) => {
      let q = 0;
      for (const n of inst.units[u]) for (let d = 0; d < inst.dims; d++) q += inst.plain[n * inst.dims + d];
      return q;
    };
    order.sort((a, b) => demand(b) - demand(a));
  } else if (r < 10) order.sort((a, b) => inst.distances.at(0, key(b)) - inst.distances.at(0, key(a)));
  else order.sort((a, b) => inst.distances.at(0, key(a)) - inst.distances.at(0, key(b)));
  // Also retry jobs that were already unassigned before this ruin.
  for (const u of state.unassigned) if (!units.includes(u)) order.push(u);
  // The subproblem's tours, listed once rather than filtered out of the whole plan for every job (in the same order).
  const scope = state.scope;
  const tours = scope ? state.routes.filter((r) => scope.mask[r.nodes[0]]) : state.routes;
  let slack = maxCost - state.cost() - loadPrice * state.overload();
  // Insertions only add load, so a tour joins this list when it first overflows and never leaves it.
  const overloaded = loadPrice > 0 ? tours.filter((r) => r.overload > 0) : [];
  const noteOverload = (route: Route) => {
    if (route.overload > 0 && !overloaded.includes(route)) overloaded.push(route);
  };
  for (const u of order) {
    let placement = state.bestPlacement(u, rng, BLINK_RATE, state.routes.length < maxTours, tours, slack);
    // Overloaded tours refuse every plain insertion; under a price they still compete (travel plus the priced excess).
    if (overloaded.length > 0) placement = overloadingPlacement(overloaded, inst.units[u][0], loadPrice, placement ? placement.cost : slack) ?? placement;
    if (placement) {
      slack -= placement.cost;
      state.apply(u, placement);
      if (placement.route) noteOverload(placement.route);
      else if (scope) tours.push(state.routes[state.routes.length - 1]);
    } else if (maxTours !== Infinity) {
      const overloading = loadPrice > 0 ? overloadingPlacement(tours, inst.units[u][0], loadPrice, slack) : null;
      if (!overloading) return false;
      slack -= overloading.cost;
      state.apply(u, overloading);
      noteOverload(overloading.route!);
    }
  }
  return true;
}

/** A job's cheapest position among `tours` that keeps every window but may overload its tour, at `price` per unit of excess load, if below `bound`. */
function overloadingPlacement(tours: Route[], node: number, price: number, bound: number): Placement | null {
  let best: Placement | null = null;
  let cost = bound;
  for (const route of tours) {
    for (let p = route.firstPosition(node), last = route.lastPosition(node); p <= last; p++) {
      const travel = route.insertionCost(node, p, cost, false);
      if (travel >= cost) continue;
      const total = travel + price * route.overloadIncrease(node, p);
      if (total < cost) {
        cost = total;
        best = { route, vehicle: route.vehicle, cost: total, position: p };
      }
    }
  }
  return best;
}
