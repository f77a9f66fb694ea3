import type { Budget } from "./budget";
import { mergeJob, UNBOUNDED, serves } from "./model";
import { applyTwoOptStar, movable, randomMoves, tailJoinPenalty } from "./moves";
import type { Random } from "./random";
import { pairPlace, Route } from "./route";
import { granularNeighbours } from "./neighbours";
import { EPS, merge, seg } from "./segment";
import type { Polish } from "./sisr";
import { isPair, type SolutionState } from "./state";

/**
 * Route minimisation by ejection-pool search (Nagata & Bräysy 2009):
 * remove a tour and put its jobs into the ejection pool (EP); take jobs
 * from the pool and insert them feasibly; when a job fits nowhere, try to
 * squeeze it in (insert with the least penalty, then repair); failing that,
 * insert it anyway and eject up to `K_MAX` other jobs, choosing the ejection with the
 * least sum of penalty counters p[] (jobs that were hard to insert before
 * get high counters, so the search learns not to eject them), then perturb
 * the solution with random feasible moves. The tour is gone once the pool
 * is empty.
 *
 * Both repairs cost distance that the cost search later has to win back, so
 * among ejections of equal penalty the one that lengthens the tour least
 * wins, and the local search (`polish`) tidies the tours after every
 * ejection and successful squeeze
 * (docs/experiments/2026-11-27-route-minimisation-keeps-tours-short.md).
 */
const K_MAX = 5;
/** Pairs: candidates (a tour and the one or two units ejected from it) evaluated per insertion. */
const PAIR_EJECTION_CANDIDATES = 2_000;
const PERTURB_MOVES = 100;
/**
 * How much one perturbation move may add, in average costs per job: a tenth
 * where tours are long (at least LONG_TOURS_FROM jobs on average) and the plan
 * is below BOUNDED_EJECTION_FROM, since there the plan route minimisation ends
 * with decides the final gap (docs/experiments/2026-11-29-gentler-perturbation-for-long-tours.md);
 * short tours and larger plans keep 0.3 (docs/experiments/2026-11-29-gentler-perturbation-at-every-size.md).
 */
const PERTURB_SLACK = 0.3;
const LONG_TOUR_PERTURB_SLACK = 0.1;
const LONG_TOURS_FROM = 20;
/** Cap on ejection-search nodes per job, so long tours cannot stall the search. */
const SEARCH_NODES = 400_000;
/**
 * From this many jobs on the ejection search stays near the job: only the
 * tours of its EJECTION_NEIGHBOURS most correlated jobs (the local search's
 * time-window-aware granular neighbours, neighbours.ts), so its cost no
 * longer grows with the number of tours (docs/experiments/2026-11-25-granular-route-minimisation.md).
 */
export const BOUNDED_EJECTION_FROM = 300;
const EJECTION_NEIGHBOURS = 30;
/**
 * At every size, ejections only within this many positions of the
 * insertion: the node cap is shared by all positions and tours of one search,
 * and searched from the tour's start it was spent far before the insertion on
 * long tours (docs/experiments/2026-11-27-ejections-near-the-insertion.md).
 */
const EJECTION_WINDOW = 10;
/**
 * Large plans: an attempt to dissolve a tour that has not brought the pool
 * to a new minimum for this many steps per job (at least STALL_MIN) is
 * given up (see RETRY_SHARE). The pool does a random walk, so the attempts
 * that dissolve a tour at the smallest fleets run long
 * (docs/experiments/2026-11-26-route-minimisation-longer-attempts.md).
 */
const STALL_PER_JOB = 8;
const STALL_MIN = 1_000;
/**
 * A stalled attempt restores the plan from before it and tries another tour
 * (the next shortest not tried since the last tour was dissolved), since the
 * first tour tried is often not one that can go. Failed attempts together may
 * use at most this share of the budget, so where no tour can go the cost
 * search keeps most of its time; a running attempt ends when it would exceed
 * the share left (docs/experiments/2026-11-26-route-minimisation-retries.md,
 * docs/experiments/2026-11-26-route-minimisation-longer-attempts.md).
 */
export const RETRY_SHARE = 0.2;
/**
 * ... or this share once any attempt's pool got down to CLOSE_POOL of its
 * tour's jobs, for the rest of route minimisation: such plans are near a
 * smaller fleet, the first objective, while attempts that never get close keep
 * the cost search's time (docs/experiments/2026-11-27-more-time-for-attempts-near-a-smaller-fleet.md;
 * per attempt instead: docs/experiments/2026-11-27-ejections-near-the-insertion.md).
 */
export const CLOSE_RETRY_SHARE = 0.3;
const CLOSE_POOL = 1 / 3;
/**
 * ... unless the failed attempt hardly placed a job of its tour: a pool that
 * never got below this share of the tour's jobs means every tour is packed,
 * so no other tour will go (docs/experiments/2026-11-26-route-minimisation-retries.md).
 */
const HOPELESS_POOL = 0.9;

interface Ejection {
  route: Route | null;
  position: number;
  ejected: number[];
  penalty: number;
  /** Change of the tour's distance. */
  distance: number;
  ties: number;
}

/** Lower bound on tours: total load over the largest capacity, per dimension. */
export function tourLowerBound(state: SolutionState): number {
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
  polish: Polish | null = null,
): Generator<void, SolutionState> {
  let state = start;
  if (state.unassigned.length > 0) return state;
  const inst = state.inst;
  const bound = tourLowerBound(state);
  const penalty = new Int32Array(inst.size);
  const near = inst.size - 1 >= BOUNDED_EJECTION_FROM ? granularNeighbours(inst, EJECTION_NEIGHBOURS).list : null;
  // Perturbation may worsen the cost by up to a share of the average cost per job per move; less on long tours of plans below the bounded search.
  const gentle = near === null && inst.size - 1 >= LONG_TOURS_FROM * state.routes.length;
  const perturbLimit = ((gentle ? LONG_TOUR_PERTURB_SLACK : PERTURB_SLACK) * state.cost()) / Math.max(1, inst.size - 1);
  const active = () => !budget.exhausted() && budget.fraction() < until;
  /** Tours (by their first job) whose dissolution failed since the plan last lost a tour. */
  const tried = new Set<number>();
  let failedShare = 0;
  let retryShare = RETRY_SHARE;
  while (state.routes.length > bound && active()) {
    const backup = state.clone();
    // Shorter tours are easier to dissolve; pick one of the two shortest not yet tried at random.
    const sorted = state.routes.filter((r) => !tried.has(r.nodes[0])).sort((a, b) => a.nodes.length - b.nodes.length);
    if (sorted.length === 0) break;
    const victim = sorted[Math.min(sorted.length - 1, rng.int(2))];
    const key = victim.nodes[0];
    const startedAt = budget.fraction();
    const pool = state.removeTour(victim);
    const jobs = pool.length;
    rng.shuffle(pool);
    penalty.fill(1);
    let steps = 0;
    let fewest = pool.length;
    let fewestAt = 0;
    const stall = near ? Math.max(STALL_MIN, STALL_PER_JOB * (inst.size - 1)) : Infinity;
    // An attempt never outlasts the retry share left: were it to fail, it would count against it.
    const outlasts = () => near !== null && budget.fraction() >= startedAt + retryShare - failedShare;
    while (pool.length > 0 && active() && steps - fewestAt < stall && !outlasts()) {
      budget.tick();
      if ((budget.iterations & 15) === 0) yield;
      const unit = pool.pop()!;
      if (pool.length < fewest) {
        fewest = pool.length;
        fewestAt = steps;
        if (fewest <= CLOSE_POOL * jobs) retryShare = CLOSE_RETRY_SHARE;
      }
      steps++;
      const placement = state.bestPlacement(unit, rng, 0.1, false);
      if (placement) {
        state.apply(unit, placement);
        continue;
      }
      const members = inst.units[unit];
      if (members.length > 1) {
        const ej = isPair(inst, unit) ? findPairEjection(state, unit, penalty, rng, near) : null;
        if (!ej) {
          // Groups are not ejected; they, and pairs that fit nowhere even so, are retried later.
          pool.unshift(unit);
          randomMoves(state, rng, PERTURB_MOVES, perturbLimit);
          continue;
        }
        const route = ej.route;
        for (const u of ej.ejected) {
          for (const n of inst.units[u]) {
            state.routeOf[n] = null;
            state.position[n] = -1;
          }
          state.unassigned.push(u);
          pool.push(u);
        }
        route.nodes = ej.sequence;
        const i = state.unassigned.indexOf(unit);
        if (i >= 0) state.unassigned.splice(i, 1);
        state.afterChange(route);
        polish?.(state, route.nodes.slice());
        randomMoves(state, rng, PERTURB_MOVES, perturbLimit);
        continue;
      }
      const node = members[0];
      if (squeeze(state, unit, rng, near, polish)) {
        continue;
      }
      penalty[node]++;
      const ej = findEjection(state, node, penalty, rng, near);
      if (!ej || !ej.route) {
        pool.unshift(unit);
        randomMoves(state, rng, PERTURB_MOVES, perturbLimit);
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
      polish?.(state, route.nodes.slice());
      randomMoves(state, rng, PERTURB_MOVES, perturbLimit);
    }
    if (pool.length > 0) {
      // Stalled (or out of time): back to the plan before, and another tour while the retry share lasts.
      state = backup;
      tried.add(key);
      failedShare += budget.fraction() - startedAt;
      if (!near || failedShare >= retryShare || fewest > HOPELESS_POOL * jobs) break;
      continue;
    }
    tried.clear();
    onImproved(state);
  }
  return state;
}

/** The tours holding one of `node`'s correlated neighbours. */
function nearTours(state: SolutionState, node: number, near: Int32Array): Route[] {
  const count = near.length / state.inst.size;
  const tours = new Set<Route>();
  for (let n = 0; n < count; n++) {
    const r = state.routeOf[near[node * count + n]];
    if (r) tours.add(r);
  }
  return [...tours];
}

/**
 * Finds the insertion of `node` with ejections of at most K_MAX jobs from the
 * same tour minimising the sum of penalty counters, then the tour's
 * distance (the rest of the ties at random). Depth-first over the
 * tour in order from EJECTION_WINDOW positions before the insertion,
 * keeping a duration segment of the kept prefix; a branch is closed as soon
 * as the kept prefix joined with the untouched suffix is feasible (more
 * ejections would only cost more). With `near` (large plans), only the
 * tours of the job's correlated neighbours are searched.
 */
function findEjection(state: SolutionState, node: number, penalty: Int32Array, rng: Random, near: Int32Array | null): Ejection | null {
  const inst = state.inst;
  const best: Ejection = { route: null, position: -1, ejected: [], penalty: Infinity, distance: Infinity, ties: 0 };
  const search: EjectionSearch = {
    state,
    route: state.routes[0],
    node,
    position: 0,
    penalty,
    rng,
    best,
    ejected: [],
    load: new Float64Array(inst.dims),
    nodesLeft: SEARCH_NODES,
  };
  for (const route of rng.shuffle(near ? nearTours(state, node, near) : state.routes.slice())) {
    if (!serves(inst, route.vehicle, node)) continue;
    search.route = route;
    const len = route.nodes.length;
    // Load after the insertion, for tours without pairs (checked exactly otherwise).
    for (let d = 0; d < inst.dims; d++) search.load[d] = route.fPlain[len * inst.dims + d] + inst.plain[node * inst.dims + d];
    for (let p = 0; p <= len && search.nodesLeft > 0; p++) {
      search.position = p;
      // The kept prefix before the window is the tour's own (feasible) prefix.
      const from = Math.max(0, p - EJECTION_WINDOW);
      const last = from > 0 ? route.nodes[from - 1] : 0;
      ejectionStep(search, from, route.fDur[from], route.fWarp[from], route.fEarly[from], route.fLate[from], last, 0, route.fDist[from]);
    }
    if (search.nodesLeft <= 0) break;
  }
  return best.route ? best : null;
}

/** A pair's insertion into `route` after ejecting the `ejected` units from it: the tour's new sequence. */
interface PairEjection {
  route: Route;
  ejected: number[];
  sequence: number[];
}

/**
 * The pickup-and-delivery pair's cheapest insertion into some tour after
 * ejecting one or two of its units (pairs or single jobs), the
 * ejections chosen, as for single jobs, by the least sum of penalty counters
 * (a unit's counter is its first member's, raised each time the pair failed
 * to go in), then by the least added cost, the rest of the ties at random
 * (after Nagata & Kobayashi 2010, who eject pairs in the PDPTW's route
 * minimisation). A pair cannot be squeezed through a penalised repair
 * (the repair moves single jobs only), so the penalty decides at once. Each
 * candidate is the tour without the ejected units, summarised anew, and the
 * pair's exact cheapest insertion there; at most PAIR_EJECTION_CANDIDATES
 * per call, single ejections before double ones.
 */
function findPairEjection(state: SolutionState, unit: number, penalty: Int32Array, rng: Random, near: Int32Array | null): PairEjection | null {
  const inst = state.inst;
  const members = inst.units[unit];
  const [pickup, delivery] = inst.pairRole[members[0]] === 1 ? members : [members[1], members[0]];
  penalty[members[0]]++;
  const tours = near ? [...new Set([...nearTours(state, pickup, near), ...nearTours(state, delivery, near)])] : state.routes.slice();
  let best: PairEjection | null = null;
  let bestPenalty = Infinity;
  let bestCost = Infinity;
  let ties = 0;
  let left = PAIR_EJECTION_CANDIDATES;
  const candidates: { route: Route; units: number[]; scratch: Route }[] = [];
  for (const route of rng.shuffle(tours)) {
    if (!serves(inst, route.vehicle, pickup) || !serves(inst, route.vehicle, delivery)) continue;
    const units = [...new Set(route.nodes.map((n) => inst.unitOf[n]))].filter((u) => inst.units[u].length <= 2);
    candidates.push({ route, units, scratch: new Route(inst, route.vehicle, true) });
  }
  const consider = (route: Route, scratch: Route, ejected: number[], pen: number) => {
    left--;
    scratch.nodes = route.nodes.filter((n) => !ejected.includes(inst.unitOf[n]));
    scratch.update();
    const insertion = scratch.pairInsertionCost(pickup, delivery);
    if (insertion === Infinity) return;
    const cost = scratch.cost + insertion - route.cost;
    if (pen === bestPenalty && cost > bestCost + EPS) return;
    if (pen < bestPenalty || cost < bestCost - EPS) {
      bestPenalty = pen;
      bestCost = cost;
      ties = 0;
    }
    if (rng.int(++ties) === 0) best = { route, ejected: ejected.slice(), sequence: scratch.withPair(pickup, pairPlace.pickup, delivery, pairPlace.delivery) };
  };
  const unitPenalty = (u: number) => penalty[inst.units[u][0]];
  for (const { route, units, scratch } of candidates) {
    for (const a of units) {
      if (left <= 0) return best;
      if (unitPenalty(a) <= bestPenalty) consider(route, scratch, [a], unitPenalty(a));
    }
  }
  for (const { route, units, scratch } of candidates) {
    for (let x = 0; x < units.length; x++) {
      for (let y = x + 1; y < units.length; y++) {
        if (left <= 0) return best;
        const pen = unitPenalty(units[x]) + unitPenalty(units[y]);
        if (pen <= bestPenalty) consider(route, scratch, [units[x], units[y]], pen);
      }
    }
  }
  return best;
}

/** State of one ejection search (kept out of closures: this is the hot loop). */
interface EjectionSearch {
  state: SolutionState;
  route: Route;
  node: number;
  /** `node` is inserted before this position of the route. */
  position: number;
  penalty: Int32Array;
  rng: Random;
  best: Ejection;
  ejected: number[];
  load: Float64Array;
  nodesLeft: number;
}

/** Decides keep/eject for element j of the tour with the job inserted; `dist`: distance of the kept prefix. */
function ejectionStep(s: EjectionSearch, j: number, dur: number, warp: number, early: number, late: number, last: number, pen: number, dist: number): void {
  if (--s.nodesLeft < 0) return;
  const { route, node, position: p, best } = s;
  const inst = s.state.inst;
  const nodes = route.nodes;
  const len = nodes.length;
  const v = route.vehicle;
  if (j > p) {
    // Close the branch: kept prefix + untouched original suffix from j - 1.
    const o = j - 1;
    const first = o < len ? nodes[o] : -1;
    merge(dur, warp, early, late, route.time(last, first), route.bDur[o], route.bWarp[o], route.bEarly[o], route.bLate[o]);
    const stopsFit = len + 1 - s.ejected.length <= v.maxStops;
    if (stopsFit && seg.timeWarp <= EPS && seg.duration <= v.maxDuration + EPS && ejectedLoadFits(s) && (!route.hasPairs || pairLoadFits(route, nodes, p, node, s.ejected))) {
      if (pen > best.penalty) return;
      const distance = dist + route.dist(last, first) + route.bDist[o] - route.distance;
      if (pen < best.penalty || distance < best.distance - EPS) {
        best.penalty = pen;
        best.distance = distance;
        best.ties = 0;
      } else if (distance > best.distance + EPS) return;
      // Reservoir sampling among ejections of equal penalty and distance.
      if (s.rng.int(++best.ties) === 0) {
        best.route = route;
        best.position = p;
        best.ejected = s.ejected.slice();
      }
      return;
    }
    if (j > len) return;
  }
  const n = j < p ? nodes[j] : j === p ? node : nodes[j - 1];
  if (inst.multiWindow) mergeJob(inst, dur, warp, early, late, route.time(last, n), n);
  else merge(dur, warp, early, late, route.time(last, n), inst.service[n], 0, inst.ready[n], inst.due[n]);
  if (seg.timeWarp <= EPS) ejectionStep(s, j + 1, seg.duration, seg.timeWarp, seg.earliest, seg.latest, n, pen, dist + route.dist(last, n));
  if (
    n !== node &&
    j <= p + EJECTION_WINDOW &&
    s.ejected.length < K_MAX &&
    // Equal penalties too: one of them may lengthen the tour less.
    pen + s.penalty[n] <= best.penalty &&
    inst.pairRole[n] === 0 &&
    inst.units[inst.unitOf[n]].length === 1
  ) {
    s.ejected.push(n);
    ejectionStep(s, j + 1, dur, warp, early, late, last, pen + s.penalty[n], dist);
    s.ejected.pop();
  }
}

function ejectedLoadFits(s: EjectionSearch): boolean {
  const inst = s.state.inst;
  const cap = s.route.vehicle.capacity;
  for (let d = 0; d < inst.dims; d++) {
    let l = s.load[d];
    for (const e of s.ejected) l -= inst.plain[e * inst.dims + d];
    if (l > cap[d] + EPS) return false;
  }
  return true;
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

const SQUEEZE_STEPS = 100;

/**
 * Squeeze (Nagata & Bräysy): insert the job where the penalty (time warp +
 * excess load/duration) grows least, then repair with penalty-decreasing
 * relocate, swap and 2-opt* moves around infeasible tours. Returns whether
 * the repair succeeded; if not, the state's journal (`begin`/`rollback`)
 * restores the tours it changed: cloning the whole plan per call cost more
 * than the repair at 1,000 jobs, and nine squeezes in ten fail there.
 */
function squeeze(state: SolutionState, unit: number, rng: Random, near: Int32Array | null, polish: Polish | null): boolean {
  const inst = state.inst;
  const node = inst.units[unit][0];
  let target: Route | null = null;
  let position = -1;
  let least = Infinity;
  for (const r of near ? nearTours(state, node, near) : state.routes) {
    for (let p = 0; p <= r.nodes.length; p++) {
      const pen = r.joinPenalty(p, p, node);
      if (pen < least) {
        least = pen;
        target = r;
        position = p;
      }
    }
  }
  if (!target) return false;
  state.begin();
  state.apply(unit, { route: target, vehicle: target.vehicle, cost: 0, position });
  if (repair(state, rng)) {
    const changed = polish ? state.changedJobs() : [];
    state.commit();
    polish?.(state, changed);
    return true;
  }
  state.rollback();
  return false;

  /** Penalty-decreasing moves around infeasible tours until none is left (true) or no move helps (false). */
  function repair(work: SolutionState, rng: Random): boolean {
    const useNear = near !== null;
    const k = useNear ? near.length / inst.size : inst.neighbourCount;
    const list = useNear ? near : inst.neighbours;
    const limit = useNear ? k : Math.min(k, 20);
    for (let step = 0; step < SQUEEZE_STEPS; step++) {
      const infeasible = work.routes.filter((r) => r.penalty > EPS);
      if (infeasible.length === 0) return true;
      const r = infeasible[rng.int(infeasible.length)];
      let bestDelta = -EPS;
      let move: (() => void) | null = null;
      for (let i = 0; i < r.nodes.length; i++) {
        const u = r.nodes[i];
        const out = movable(work, u) ? r.joinPenalty(i, i + 1, -1) : Infinity;
        for (let n = 0; n < limit; n++) {
          const w = list[u * k + n];
          const b = work.routeOf[w];
          if (!b || b === r) continue;
          const j = work.position[w];
          const before = r.penalty + b.penalty;
          for (let pos = j; pos <= j + 1 && out < Infinity; pos++) {
            const delta = out + b.joinPenalty(pos, pos, u) - before;
            if (delta < bestDelta) {
              bestDelta = delta;
              move = () => {
                work.touch(r);
                work.touch(b);
                r.nodes.splice(i, 1);
                b.nodes.splice(pos, 0, u);
                work.routeOf[u] = b;
                work.afterChange(r);
                work.afterChange(b);
              };
            }
          }
          if (out < Infinity && movable(work, w)) {
            const delta = r.joinPenalty(i, i + 1, w) + b.joinPenalty(j, j + 1, u) - before;
            if (delta < bestDelta) {
              bestDelta = delta;
              move = () => {
                work.touch(r);
                work.touch(b);
                r.nodes[i] = w;
                b.nodes[j] = u;
                work.afterChange(r);
                work.afterChange(b);
              };
            }
          }
          if (r.vehicle.typeKey === b.vehicle.typeKey && !r.hasUnits && !b.hasUnits) {
            // Tails exchanged so that u is followed by w (t = 0), or w by u (t = 1).
            for (let t = 0; t < 2; t++) {
              const ri = i + 1 - t;
              const bj = j + t;
              const delta = tailJoinPenalty(r, ri, b, bj) + tailJoinPenalty(b, bj, r, ri) - before;
              if (delta < bestDelta) {
                bestDelta = delta;
                move = () => {
                  work.touch(r);
                  work.touch(b);
                  applyTwoOptStar(work, r, ri, b, bj);
                };
              }
            }
          }
        }
      }
      if (!move) return false;
      move();
    }
    return false;
  }
}
