import type { Budget } from "./budget";
import { UNBOUNDED } from "./model";
import { randomMoves } from "./moves";
import type { Random } from "./random";
import type { Route } from "./route";
import { EPS, merge, seg } from "./segment";
import type { SolutionState } from "./state";

/**
 * Route minimisation by ejection-pool search (Nagata & Bräysy 2009):
 * remove a tour and put its jobs into the ejection pool (EP); take jobs
 * from the pool and insert them feasibly; when a job fits nowhere, insert it
 * anyway and eject up to `K_MAX` other jobs, choosing the ejection with the
 * least sum of penalty counters p[] (jobs that were hard to insert before
 * get high counters, so the search learns not to eject them), then perturb
 * the solution with random feasible moves. The tour is gone once the pool
 * is empty.
 */
const K_MAX = 5;
const PERTURB_MOVES = 100;
/** Cap on ejection-search nodes per job, so long tours cannot stall the search. */
const SEARCH_NODES = 400_000;

interface Ejection {
  route: Route | null;
  position: number;
  ejected: number[];
  penalty: number;
  ties: number;
}

/** Lower bound on tours: total load over the largest capacity, per dimension. */
function tourLowerBound(state: SolutionState): number {
  const inst = state.inst;
  let bound = 1;
  for (let d = 0; d < inst.dims; d++) {
    let total = 0;
    for (let n = 1; n < inst.size; n++) total += inst.plain[n * inst.dims + d];
    let cap = 0;
    for (const v of inst.vehicles) cap = Math.max(cap, v.capacity[d]);
    if (cap < UNBOUNDED && cap > 0) bound = Math.max(bound, Math.ceil(total / cap - 1e-9));
  }
  return bound;
}

export function* minimiseRoutes(
  start: SolutionState,
  rng: Random,
  budget: Budget,
  until: number,
  onImproved: (s: SolutionState) => void,
): Generator<void, SolutionState> {
  let state = start;
  if (state.unassigned.length > 0) return state;
  const inst = state.inst;
  const bound = tourLowerBound(state);
  const penalty = new Int32Array(inst.size);
  const active = () => !budget.exhausted() && budget.fraction() < until;
  while (state.routes.length > bound && active()) {
    const backup = state.clone();
    // Shorter tours are easier to dissolve; pick one of the two shortest at random.
    const sorted = state.routes.slice().sort((a, b) => a.nodes.length - b.nodes.length);
    const victim = sorted[Math.min(sorted.length - 1, rng.int(2))];
    const pool = state.removeTour(victim);
    rng.shuffle(pool);
    penalty.fill(1);
    while (pool.length > 0 && active()) {
      budget.tick();
      if ((budget.iterations & 15) === 0) yield;
      const unit = pool.pop()!;
      const placement = state.bestPlacement(unit, rng, 0.1, false);
      if (placement) {
        state.apply(unit, placement);
        continue;
      }
      const members = inst.units[unit];
      if (members.length > 1) {
        // Pairs and groups are not ejection candidates; retry them later.
        pool.unshift(unit);
        randomMoves(state, rng, PERTURB_MOVES, false);
        continue;
      }
      const node = members[0];
      penalty[node]++;
      const ej = findEjection(state, node, penalty, rng);
      if (!ej || !ej.route) {
        pool.unshift(unit);
        randomMoves(state, rng, PERTURB_MOVES, false);
        continue;
      }
      const route = ej.route;
      const seq = route.nodes.slice();
      seq.splice(ej.position, 0, node);
      route.nodes = seq.filter((n) => !ej.ejected.includes(n));
      for (const e of ej.ejected) {
        state.routeOf[e] = null;
        state.position[e] = -1;
        const u = inst.unitOf[e];
        state.unassigned.push(u);
        pool.push(u);
      }
      const i = state.unassigned.indexOf(unit);
      if (i >= 0) state.unassigned.splice(i, 1);
      state.afterChange(route);
      randomMoves(state, rng, PERTURB_MOVES, false);
    }
    if (pool.length > 0) {
      state = backup;
      break;
    }
    onImproved(state);
  }
  return state;
}

/**
 * Finds the insertion of `node` with ejections of at most K_MAX jobs from the
 * same tour minimising the sum of penalty counters. Depth-first over the
 * tour in order, keeping a duration segment of the kept prefix; a branch is
 * closed as soon as the kept prefix joined with the untouched suffix is
 * feasible (more ejections would only cost more).
 */
function findEjection(state: SolutionState, node: number, penalty: Int32Array, rng: Random): Ejection | null {
  const inst = state.inst;
  const dims = inst.dims;
  const best: Ejection = { route: null, position: -1, ejected: [], penalty: Infinity, ties: 0 };
  const ejected: number[] = [];
  let nodesLeft = SEARCH_NODES;
  const routes = rng.shuffle(state.routes.slice());
  for (const route of routes) {
    const nodes = route.nodes;
    const len = nodes.length;
    const v = route.vehicle;
    const service = inst.service;
    const ready = inst.ready;
    const due = inst.due;
    // Load after the insertion, for tours without pairs (checked exactly otherwise).
    const load = new Float64Array(dims);
    for (let d = 0; d < dims; d++) load[d] = route.fPlain[len * dims + d] + inst.plain[node * dims + d];
    const loadFits = () => {
      for (let d = 0; d < dims; d++) {
        let l = load[d];
        for (const e of ejected) l -= inst.plain[e * dims + d];
        if (l > v.capacity[d] + EPS) return false;
      }
      return true;
    };
    for (let p = 0; p <= len; p++) {
      // Element j of the virtual tour with `node` inserted before position p.
      const at = (j: number) => (j < p ? nodes[j] : j === p ? node : nodes[j - 1]);
      const dfs = (j: number, dur: number, warp: number, early: number, late: number, last: number, pen: number): void => {
        if (--nodesLeft < 0) return;
        if (j > p) {
          // Close the branch: kept prefix + untouched original suffix from j - 1.
          const o = j - 1;
          const first = o < len ? nodes[o] : -1;
          merge(dur, warp, early, late, route.time(last, first), route.bDur[o], route.bWarp[o], route.bEarly[o], route.bLate[o]);
          if (seg.timeWarp <= EPS && seg.duration <= v.maxDuration + EPS && loadFits()) {
            if (route.hasPairs && !pairLoadFits(route, nodes, p, node, ejected)) {
              // fall through to deeper ejections
            } else {
              if (pen <= best.penalty) {
                if (pen < best.penalty) {
                  best.penalty = pen;
                  best.ties = 0;
                }
                // Reservoir sampling among equally penalised ejections.
                if (rng.int(++best.ties) === 0) {
                  best.route = route;
                  best.position = p;
                  best.ejected = ejected.slice();
                }
              }
              return;
            }
          }
          if (j > len) return;
        }
        const n = at(j);
        const t = route.time(last, n);
        merge(dur, warp, early, late, t, service[n], 0, ready[n], due[n]);
        if (seg.timeWarp <= EPS) {
          const d2 = seg.duration;
          const w2 = seg.timeWarp;
          const e2 = seg.earliest;
          const l2 = seg.latest;
          dfs(j + 1, d2, w2, e2, l2, n, pen);
        }
        if (
          n !== node &&
          ejected.length < K_MAX &&
          pen + penalty[n] < best.penalty &&
          inst.pairRole[n] === 0 &&
          inst.units[inst.unitOf[n]].length === 1
        ) {
          ejected.push(n);
          dfs(j + 1, dur, warp, early, late, last, pen + penalty[n]);
          ejected.pop();
        }
      };
      dfs(0, 0, 0, v.earliestStart, v.latestStart, 0, 0);
      if (nodesLeft < 0) break;
    }
    if (nodesLeft < 0) break;
  }
  return best.route ? best : null;
}

/** Exact load check for tours with pickup-and-delivery pairs. */
function pairLoadFits(route: Route, nodes: number[], p: number, node: number, ejected: number[]): boolean {
  const inst = route.inst;
  const seq = nodes.slice();
  seq.splice(p, 0, node);
  const kept = seq.filter((n) => !ejected.includes(n));
  for (let d = 0; d < inst.dims; d++) {
    let load = 0;
    for (const n of kept) load += inst.plain[n * inst.dims + d];
    let peak = load;
    for (const n of kept) {
      load += inst.delta[n * inst.dims + d];
      peak = Math.max(peak, load);
    }
    if (peak > route.vehicle.capacity[d] + EPS) return false;
  }
  return true;
}
