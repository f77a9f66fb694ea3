import type { Budget } from "./budget";
import { type Instance, UNBOUNDED } from "./model";
import { joinPenalised, LocalSearch, type Penalty, penalisedCost } from "./local-search";
import type { Random } from "./random";
import type { Route } from "./route";
import { ruin } from "./sisr";
import { EPS } from "./segment";
import { SolutionState } from "./state";
import { polarAngles } from "./swap-star";

/**
 * Hybrid genetic search (Vidal, Crainic, Gendreau & Prins 2013, "A hybrid
 * genetic algorithm with adaptive diversity management for a large class of
 * vehicle routing problems with time-windows"; as PyVRP does it, Wouda, Lan &
 * Kool 2024, and Kool et al. 2022, the DIMACS VRPTW winner):
 *
 * - a population of locally optimal plans in two subpopulations, feasible and
 *   infeasible, each kept between MIN_POP and MIN_POP + GENERATION plans;
 * - parents chosen by binary tournament on the biased fitness: rank by cost
 *   plus (1 - ELITE / size) x rank by diversity, the mean broken-pairs
 *   distance to the CLOSE most similar plans;
 * - offspring by selective route exchange (SREX, Nagata & Kobayashi 2010, as
 *   PyVRP's `srex`): a run of consecutive tours (by polar angle) of one parent
 *   replaces the best-overlapping run of the other's; of the two ways to
 *   resolve duplicates the cheaper is kept; jobs left out go to their
 *   cheapest position in the penalised space;
 * - the granular local search (local-search.ts) in the penalised space, with
 *   PyVRP's smaller neighbourhood (`lean`) over NEIGHBOURS neighbours per
 *   job, from the tours the crossover changed: tours may break windows (time
 *   warp), duration and capacities at prices that adapt so that about
 *   TARGET_FEASIBLE of the offspring come out feasible; an infeasible
 *   offspring is, with REPAIR_PROBABILITY while repairs pay
 *   (REPAIR_PAYS_FROM), searched again at REPAIR_BOOST times the prices;
 * - survivor selection: when a subpopulation is full, clones first, then the
 *   plans of worst biased fitness leave until MIN_POP remain.
 *
 * The fleet is the first objective: offspring never open a tour (the
 * crossover keeps the receiving parent's number of tours), so every plan
 * has at most the tours of the plan the search started from, and a
 * feasible plan with fewer tours is a new best whatever its cost.
 *
 * Supported where crossover keeps the model's rules without help: one
 * vehicle type, single jobs only (no pickup-and-delivery pairs or groups),
 * every job served; `hgsApplies` says so, other problems stay on SISR.
 */
/**
 * Granular neighbours per job in the offspring's local search (30 in the
 * rest of the solver): with PyVRP's smaller operator set (`lean`, see
 * local-search.ts) an offspring costs about half as much; that this pays in
 * plan quality is not shown (docs/experiments/2026-11-26-faster-hgs-offspring.md).
 */
const NEIGHBOURS = 20;
const MIN_POP = 25;
const GENERATION = 40;
const ELITE = 4;
const CLOSE = 5;
const TARGET_FEASIBLE = 0.43;
const REPAIR_PROBABILITY = 0.8;
const REPAIR_BOOST = 10;
/**
 * Repairs run at REPAIR_PROBABILITY while at least this share of them ends
 * feasible, proportionally less often below (never under MIN_REPAIR_SHARE
 * of it): a repair costs about what an offspring does, and at the minimum
 * fleet most fail (docs/experiments/2026-11-26-faster-hgs-offspring.md).
 */
const REPAIR_PAYS_FROM = 0.2;
const MIN_REPAIR_SHARE = 0.1;
/** Offspring between two updates of the penalty weights. */
const PENALTY_UPDATE_EVERY = 25;
/** Initial prices relative to the cost of a unit of travel time and of load (PyVRP starts VRPTW time warp at 6 per unit of distance). */
const INITIAL_PENALTY = 6;
const PENALTY_INCREASE = 1.3;
const PENALTY_DECREASE = 0.85;
/** Share of the jobs removed and reinserted to make each initial plan from the start plan. */
const INITIAL_RUIN_SHARE = 0.25;

interface Individual {
  tours: number[][];
  tourCount: number;
  cost: number;
  warp: number;
  overload: number;
  feasible: boolean;
  /** Per node: the next and previous node on its tour (0 = depot). */
  succ: Int32Array;
  pred: Int32Array;
  /** Broken-pairs distances to the other members of its subpopulation, nearest first. */
  close: { other: Individual; distance: number }[];
  fitness: number;
}

/** Whether the population search handles this problem (else SISR keeps it). */
export function hgsApplies(state: SolutionState): boolean {
  const inst = state.inst;
  if (state.types.length !== 1 || state.unassigned.length > 0 || state.scope) return false;
  for (const members of inst.units) if (members.length > 1) return false;
  // Crossovers do not count stops: tours with a stop limit stay with the ruin and recreate.
  if (inst.vehicles.some((v) => v.maxStops < UNBOUNDED)) return false;
  return state.routes.length > 0;
}

export function* hybridGeneticSearch(
  start: SolutionState,
  rng: Random,
  budget: Budget,
  until: number,
  onImproved: (s: SolutionState) => void,
): Generator<void, SolutionState> {
  const inst = start.inst;
  // Its own local search: fewer neighbours than the rest of the solver's (NEIGHBOURS).
  const offspringSearch = new LocalSearch(inst, NEIGHBOURS);
  const search = new Population(inst, rng, start);
  let best = start;
  let bestTours = start.routes.length;
  let bestCost = start.cost();
  const repairs = { tried: 0, succeeded: 0 };
  const shouldStop = () => budget.exhausted() || budget.fraction() >= until;
  const consider = (s: SolutionState): void => {
    const ind = search.add(s);
    if (!ind.feasible) return;
    if (ind.tourCount < bestTours || (ind.tourCount === bestTours && ind.cost < bestCost - 1e-9)) {
      best = s.clone();
      bestTours = ind.tourCount;
      bestCost = ind.cost;
      onImproved(best);
    }
  };
  /**
   * Local search in the penalised space; an infeasible result joins the
   * infeasible subpopulation and is (maybe) repaired with higher prices, the
   * repaired plan joining the feasible one.
   */
  const educate = (s: SolutionState, changed: Set<Route>): void => {
    const jobs = (routes: Iterable<Route>) => [...routes].flatMap((r) => r.nodes);
    offspringSearch.run(s, rng, { penalty: search.weights, start: jobs(changed), shouldStop, lean: true });
    const feasible = s.routes.every((r) => r.feasible);
    search.record(s);
    if (feasible) return consider(s);
    search.add(s);
    // Repair while it pays (REPAIR_PAYS_FROM).
    const successShare = (repairs.succeeded + 1) / (repairs.tried + 2);
    const probability = REPAIR_PROBABILITY * Math.min(1, Math.max(MIN_REPAIR_SHARE, successShare / REPAIR_PAYS_FROM));
    if (rng.next() >= probability || shouldStop()) return;
    repairs.tried++;
    const repaired = s.clone();
    const boosted = { timeWarp: search.weights.timeWarp * REPAIR_BOOST, load: search.weights.load * REPAIR_BOOST };
    offspringSearch.run(repaired, rng, { penalty: boosted, start: jobs(repaired.routes.filter((r) => !r.feasible)), shouldStop, lean: true });
    if (repaired.routes.every((r) => r.feasible)) {
      repairs.succeeded++;
      consider(repaired);
    }
  };
  search.add(start);
  // Initial population: the start plan with a quarter of its jobs reinserted, each searched.
  for (let i = 1; i < MIN_POP && !shouldStop(); i++) {
    budget.tick();
    yield;
    const s = start.clone();
    const removed: number[] = [];
    const target = Math.max(1, Math.round(INITIAL_RUIN_SHARE * (inst.size - 1)));
    for (let tries = 0; removed.length < target && tries < 1000; tries++) removed.push(...ruin(s, rng));
    const changed = new Set<Route>();
    search.insertMissing(s, rng.shuffle(removed), changed);
    educate(s, changed);
  }
  while (!shouldStop()) {
    budget.tick();
    yield;
    const a = search.tournament();
    let b = search.tournament();
    for (let tries = 0; b === a && tries < 10; tries++) b = search.tournament();
    const { child, changed } = search.srex(a, b);

    educate(child, changed);
  }
  return best;
}

class Population {
  readonly feasible: Individual[] = [];
  readonly infeasible: Individual[] = [];
  weights: Penalty;
  private readonly angles: Float64Array;
  private outcomes = 0;
  private loadFeasible = 0;
  private timeFeasible = 0;

  constructor(
    readonly inst: Instance,
    private readonly rng: Random,
    start: SolutionState,
  ) {
    this.angles = polarAngles(inst);
    // Initial prices: INITIAL_PENALTY x the cost of a unit of travel time (time warp), of a unit of load's share of the tours (excess load).
    let cost = 0;
    let time = 0;
    let load = 0;
    for (const r of start.routes) {
      cost += r.cost;
      time += r.fTravel[r.nodes.length] + r.time(r.nodes[r.nodes.length - 1], -1);
      for (let d = 0; d < inst.dims; d++) load += r.fPlain[r.nodes.length * inst.dims + d];
    }
    this.weights = {
      timeWarp: INITIAL_PENALTY * Math.max(1e-6, cost / Math.max(1e-9, time)),
      load: INITIAL_PENALTY * Math.max(1e-6, cost / Math.max(1e-9, load)),
    };
  }

  /**
   * Counts an educated offspring for the adaptation of the penalty weights:
   * each weight follows the share of offspring without that violation.
   */
  record(s: SolutionState): void {
    this.outcomes++;
    if (s.routes.every((r) => r.overload < EPS)) this.loadFeasible++;
    if (s.routes.every((r) => r.warp < EPS)) this.timeFeasible++;
    if (this.outcomes < PENALTY_UPDATE_EVERY) return;
    const adapt = (weight: number, feasible: number) => {
      const share = feasible / this.outcomes;
      const factor = share < TARGET_FEASIBLE - 0.05 ? PENALTY_INCREASE : share > TARGET_FEASIBLE + 0.05 ? PENALTY_DECREASE : 1;
      return Math.min(1e9, Math.max(1e-6, weight * factor));
    };
    this.weights = { timeWarp: adapt(this.weights.timeWarp, this.timeFeasible), load: adapt(this.weights.load, this.loadFeasible) };
    this.outcomes = this.loadFeasible = this.timeFeasible = 0;
    // The infeasible subpopulation is ranked by penalised cost: the ranks change with the prices.
    this.updateFitness(this.infeasible);
  }

  /** Adds a copy of the plan to its subpopulation (selecting survivors when full). */
  add(s: SolutionState): Individual {
    const ind = this.individual(s);
    const pop = ind.feasible ? this.feasible : this.infeasible;
    for (const other of pop) {
      const distance = brokenPairs(ind, other, this.inst.size);
      insertSorted(ind.close, other, distance);
      insertSorted(other.close, ind, distance);
    }
    pop.push(ind);
    if (pop.length > MIN_POP + GENERATION) {
      while (pop.length > MIN_POP) {
        this.updateFitness(pop);
        let worst = -1;
        for (let i = 0; i < pop.length; i++) {
          const clone = pop[i].close.length > 0 && pop[i].close[0].distance === 0;
          if (clone) {
            worst = i;
            break;
          }
          if (worst < 0 || pop[i].fitness > pop[worst].fitness) worst = i;
        }
        const gone = pop[worst];
        pop.splice(worst, 1);
        for (const other of pop) {
          const k = other.close.findIndex((c) => c.other === gone);
          if (k >= 0) other.close.splice(k, 1);
        }
      }
    }
    this.updateFitness(pop);
    return ind;
  }

  private individual(s: SolutionState): Individual {
    const n = this.inst.size;
    const succ = new Int32Array(n);
    const pred = new Int32Array(n);
    const tours: number[][] = [];
    let cost = 0;
    let warp = 0;
    let overload = 0;
    for (const r of s.routes) {
      const nodes = r.nodes;
      tours.push(nodes.slice());
      for (let i = 0; i < nodes.length; i++) {
        pred[nodes[i]] = i > 0 ? nodes[i - 1] : 0;
        succ[nodes[i]] = i + 1 < nodes.length ? nodes[i + 1] : 0;
      }
      cost += r.cost;
      warp += r.warp;
      overload += r.overload;
    }
    const feasible = s.routes.every((r) => r.feasible);
    return { tours, tourCount: tours.length, cost, warp, overload, feasible, succ, pred, close: [], fitness: 0 };
  }

  private penalised(ind: Individual): number {
    return ind.cost + this.weights.timeWarp * ind.warp + this.weights.load * ind.overload;
  }

  /** Biased fitness (Vidal et al. 2013): cost rank plus weighted diversity rank, lower is better. */
  private updateFitness(pop: Individual[]): void {
    const size = pop.length;
    if (size === 0) return;
    const byCost = pop.slice().sort((x, y) => x.tourCount - y.tourCount || this.penalised(x) - this.penalised(y));
    const diversity = new Map<Individual, number>();
    for (const ind of pop) {
      const k = Math.min(CLOSE, ind.close.length);
      let sum = 0;
      for (let i = 0; i < k; i++) sum += ind.close[i].distance;
      diversity.set(ind, k > 0 ? sum / k : 0);
    }
    const byDiversity = pop.slice().sort((x, y) => diversity.get(y)! - diversity.get(x)!);
    const divRank = new Map<Individual, number>();
    byDiversity.forEach((ind, i) => divRank.set(ind, size > 1 ? i / (size - 1) : 0));
    const weight = Math.max(0, 1 - ELITE / size);
    byCost.forEach((ind, i) => {
      ind.fitness = (size > 1 ? i / (size - 1) : 0) + weight * divRank.get(ind)!;
    });
  }

  /** Binary tournament over both subpopulations on biased fitness. */
  tournament(): Individual {
    const total = this.feasible.length + this.infeasible.length;
    const pick = () => {
      const i = this.rng.int(total);
      return i < this.feasible.length ? this.feasible[i] : this.infeasible[i - this.feasible.length];
    };
    const x = pick();
    const y = pick();
    return x.fitness <= y.fitness ? x : y;
  }

  /**
   * A plan from tours (one vehicle type: any free vehicle serves any tour);
   * jobs on no tour are unassigned. `changed` collects the tours flagged in
   * `fresh` (where the local search has to look).
   */
  private build(tours: number[][], fresh: boolean[], changed: Set<Route>): SolutionState {
    const s = SolutionState.empty(this.inst);
    const type = s.types[0];
    tours.forEach((nodes, k) => {
      if (nodes.length === 0) return;
      const r = s.openTour(s.freeVehicle(type)!);
      r.nodes = nodes;
      s.afterChange(r);
      if (fresh[k]) changed.add(r);
    });
    s.unassigned = s.unassigned.filter((u) => !s.routeOf[this.inst.units[u][0]]);
    return s;
  }

  /**
   * Inserts the given (single-job) units at their cheapest positions in the
   * penalised space, into existing tours only (a tour is opened only when
   * there is none).
   */
  insertMissing(s: SolutionState, units: number[], changed: Set<Route>): void {
    const w = this.weights;
    const one = [0];
    for (const u of units) {
      const node = this.inst.units[u][0];
      if (s.routeOf[node]) continue;
      let bestRoute: Route | null = null;
      let bestPos = -1;
      let bestDelta = Infinity;
      for (const r of s.routes) {
        const base = penalisedCost(r, w);
        one[0] = node;
        for (let p = 0; p <= r.nodes.length; p++) {
          const delta = joinPenalised(r, p, one, 0, 1, r, p, w) - base;
          if (delta < bestDelta) {
            bestDelta = delta;
            bestRoute = r;
            bestPos = p;
          }
        }
      }
      if (!bestRoute) {
        const v = s.freeVehicle(s.types[0]);
        if (!v) continue;
        bestRoute = s.openTour(v);
        bestPos = 0;
      }
      bestRoute.nodes.splice(bestPos, 0, node);
      s.afterChange(bestRoute);
      changed.add(bestRoute);
    }
    s.unassigned = s.unassigned.filter((u) => !s.routeOf[this.inst.units[u][0]]);
  }

  /** Polar angle of a tour's barycentre around the depot. */
  private angleOf(nodes: number[]): number {
    let x = 0;
    let y = 0;
    for (const n of nodes) {
      x += Math.cos(this.angles[n]);
      y += Math.sin(this.angles[n]);
    }
    return Math.atan2(y, x);
  }

  /**
   * Selective route exchange (Nagata & Kobayashi 2010; PyVRP's `srex`): a run
   * of tours of b replaces the run of as many tours of a that shares most
   * jobs with it; of the two offspring (duplicates removed from a's kept
   * tours, or from b's incoming tours) the cheaper in the penalised space is
   * kept, its missing jobs inserted.
   */
  srex(a: Individual, b: Individual): { child: SolutionState; changed: Set<Route> } {
    const rng = this.rng;
    const sortTours = (tours: number[][]) =>
      tours
        .map((t) => ({ t, angle: this.angleOf(t) }))
        .sort((x, y) => x.angle - y.angle)
        .map((x) => x.t);
    const ta = sortTours(a.tours);
    const tb = sortTours(b.tours);
    const na = ta.length;
    const nb = tb.length;
    const moved = 1 + rng.int(Math.min(na, nb));
    const startA = rng.int(na);
    const inA = new Uint8Array(this.inst.size);
    for (let k = 0; k < moved; k++) for (const n of ta[(startA + k) % na]) inA[n] = 1;
    // The run of b sharing most jobs with a's run.
    let startB = 0;
    let bestShared = -1;
    for (let s = 0; s < nb; s++) {
      let shared = 0;
      for (let k = 0; k < moved; k++) for (const n of tb[(s + k) % nb]) shared += inA[n];
      if (shared > bestShared) {
        bestShared = shared;
        startB = s;
      }
    }
    const fromB = new Uint8Array(this.inst.size);
    const incoming: number[][] = [];
    for (let k = 0; k < moved; k++) {
      const t = tb[(startB + k) % nb];
      incoming.push(t);
      for (const n of t) fromB[n] = 1;
    }
    const kept: number[][] = [];
    for (let k = moved; k < na; k++) kept.push(ta[(startA + k) % na]);
    const keptMask = new Uint8Array(this.inst.size);
    for (const t of kept) for (const n of t) keptMask[n] = 1;
    // Offspring 1: b's tours whole, duplicates leave a's kept tours.
    const keptOne = kept.map((t) => t.filter((n) => !fromB[n]));
    const changedOne = new Set<Route>();
    const one = this.build(
      [...keptOne, ...incoming.map((t) => t.slice())],
      [...keptOne.map((t, k) => t.length < kept[k].length), ...incoming.map(() => true)],
      changedOne,
    );
    // Offspring 2: a's kept tours whole, duplicates leave b's tours.
    const changedTwo = new Set<Route>();
    const two = this.build([...kept.map((t) => t.slice()), ...incoming.map((t) => t.filter((n) => !keptMask[n]))], [...kept.map(() => false), ...incoming.map(() => true)], changedTwo);
    this.insertMissing(one, rng.shuffle(one.unassigned.slice()), changedOne);
    this.insertMissing(two, rng.shuffle(two.unassigned.slice()), changedTwo);
    const cost = (s: SolutionState) => s.routes.reduce((sum, r) => sum + penalisedCost(r, this.weights), 0);
    return cost(one) <= cost(two) ? { child: one, changed: changedOne } : { child: two, changed: changedTwo };
  }
}

/** Broken-pairs distance (PyVRP): share of jobs whose neighbours on their tour differ, 0..1. */
function brokenPairs(a: Individual, b: Individual, size: number): number {
  let diff = 0;
  for (let j = 1; j < size; j++) {
    if (a.succ[j] !== b.succ[j] && a.succ[j] !== b.pred[j]) diff++;
    if (a.pred[j] === 0 && b.pred[j] !== 0 && b.succ[j] !== 0) diff++;
  }
  return diff / Math.max(1, size - 1);
}

function insertSorted(list: { other: Individual; distance: number }[], other: Individual, distance: number): void {
  let i = list.length;
  while (i > 0 && list[i - 1].distance > distance) i--;
  list.splice(i, 0, { other, distance });
}
