import type { Random } from "./random";
import { pairPlace, type Route } from "./route";
import { EPS, merge, seg } from "./segment";
import { isPair, type SolutionState } from "./state";

/**
 * Inter-tour moves checked in O(1) with the tours' prefix/suffix summaries:
 * relocate, swap and 2-opt* (tail exchange). Used to perturb solutions in
 * route minimisation; plain single jobs, and pickup-and-delivery pairs whole
 * (relocated to their cheapest place in the other tour).
 */

export function movable(state: SolutionState, node: number): boolean {
  const inst = state.inst;
  return inst.pairRole[node] === 0 && inst.units[inst.unitOf[node]].length === 1;
}

/** Cost change of exchanging the tails A[i..] and B[j..], or Infinity. */
export function twoOptStarCost(a: Route, i: number, b: Route, j: number): number {
  if (a.vehicle.typeKey !== b.vehicle.typeKey || a.hasUnits || b.hasUnits) return Infinity;
  const headA = tailJoin(a, i, b, j);
  if (headA === Infinity) return Infinity;
  const headB = tailJoin(b, j, a, i);
  if (headB === Infinity) return Infinity;
  return headA + headB - a.cost - b.cost;
}

/** Cost of prefix(x, i) + suffix(y, j) on x's vehicle, or Infinity. */
function tailJoin(x: Route, i: number, y: Route, j: number): number {
  const v = x.vehicle;
  if (i + y.nodes.length - j > v.maxStops) return Infinity;
  for (let d = 0; d < x.dims; d++) {
    const ki = i * x.dims + d;
    const kj = j * x.dims + d;
    const plain = x.fPlain[ki] + y.bPlain[kj];
    const peak = Math.max(x.fPeak[ki], x.fSum[ki] + y.bPeak[kj]);
    if (plain + peak > v.capacity[d] + EPS) return Infinity;
  }
  const last = i > 0 ? x.nodes[i - 1] : 0;
  const first = j < y.nodes.length ? y.nodes[j] : -1;
  if (i === 0 && first < 0) return 0;
  const t = x.time(last, first);
  merge(x.fDur[i], x.fWarp[i], x.fEarly[i], x.fLate[i], t, y.bDur[j], y.bWarp[j], y.bEarly[j], y.bLate[j]);
  if (seg.timeWarp > EPS || seg.duration > v.maxDuration + EPS) return Infinity;
  const travel = x.fTravel[i] + t + y.bTravel[j];
  const waiting = Math.max(0, seg.duration - travel - x.fService[i] - y.bService[j]);
  return x.costOf(x.fDist[i] + x.dist(last, first) + y.bDist[j], seg.duration, waiting);
}

/** Penalty of prefix(x, i) + suffix(y, j) on x's vehicle (for the squeeze). */
export function tailJoinPenalty(x: Route, i: number, y: Route, j: number): number {
  const v = x.vehicle;
  let penalty = Math.max(0, i + y.nodes.length - j - v.maxStops);
  for (let d = 0; d < x.dims; d++) {
    const ki = i * x.dims + d;
    const kj = j * x.dims + d;
    const peak = Math.max(x.fPeak[ki], x.fSum[ki] + y.bPeak[kj]);
    penalty += Math.max(0, x.fPlain[ki] + y.bPlain[kj] + peak - v.capacity[d]);
  }
  const last = i > 0 ? x.nodes[i - 1] : 0;
  const first = j < y.nodes.length ? y.nodes[j] : -1;
  merge(x.fDur[i], x.fWarp[i], x.fEarly[i], x.fLate[i], x.time(last, first), y.bDur[j], y.bWarp[j], y.bEarly[j], y.bLate[j]);
  return penalty + seg.timeWarp + Math.max(0, seg.duration - v.maxDuration);
}

export function applyTwoOptStar(state: SolutionState, a: Route, i: number, b: Route, j: number): void {
  const tailA = a.nodes.slice(i);
  const tailB = b.nodes.slice(j);
  a.nodes.length = i;
  b.nodes.length = j;
  a.nodes.push(...tailB);
  b.nodes.push(...tailA);
  state.afterChange(a);
  state.afterChange(b);
}

/**
 * Applies up to `attempts` random feasible moves between neighbouring jobs
 * (Nagata & Bräysy's perturbation) that raise the cost by less than
 * `maxIncrease`: enough freedom to reshuffle tours, without tangling them.
 */
export function randomMoves(state: SolutionState, rng: Random, attempts: number, maxIncrease: number): void {
  const inst = state.inst;
  const k = inst.neighbourCount;
  if (k === 0) return;
  const limit = Math.min(k, 20);
  for (let t = 0; t < attempts; t++) {
    if (state.routes.length < 2) return;
    const u = 1 + rng.int(inst.size - 1);
    const ra = state.routeOf[u];
    if (!ra) continue;
    const w = inst.neighbours[u * k + rng.int(limit)];
    const rb = state.routeOf[w];
    if (!rb || rb === ra) continue;
    const i = state.position[u];
    const j = state.position[w];
    const kind = rng.int(3);
    const threshold = maxIncrease;
    if (kind === 0 && movable(state, u)) {
      const out = ra.replaceCost(i, i + 1, -1);
      if (out === Infinity) continue;
      const pos = j + rng.int(2);
      const inn = rb.insertionCost(u, pos);
      if (out + inn < threshold) {
        ra.nodes.splice(i, 1);
        rb.nodes.splice(pos, 0, u);
        state.routeOf[u] = rb;
        state.afterChange(ra);
        state.afterChange(rb);
      }
    } else if (kind === 0 && isPair(inst, inst.unitOf[u])) {
      relocatePair(state, u, ra, rb, threshold);
    } else if (kind === 1 && movable(state, u) && movable(state, w)) {
      const ca = ra.replaceCost(i, i + 1, w);
      if (ca === Infinity) continue;
      const cb = rb.replaceCost(j, j + 1, u);
      if (ca + cb < threshold) {
        ra.nodes[i] = w;
        rb.nodes[j] = u;
        state.afterChange(ra);
        state.afterChange(rb);
      }
    } else if (kind === 2) {
      // u's tail after u follows w: a -> u -> w ...
      const c = twoOptStarCost(ra, i + 1, rb, j);
      if (c < threshold) applyTwoOptStar(state, ra, i + 1, rb, j);
    }
  }
}

/** Moves u's pickup-and-delivery pair from tour a to its cheapest place in tour b if that adds less than `maxIncrease`. */
function relocatePair(state: SolutionState, u: number, a: Route, b: Route, maxIncrease: number): void {
  const inst = state.inst;
  const pickup = inst.pairRole[u] === 1 ? u : inst.partner[u];
  const delivery = inst.partner[pickup];
  const out = a.pairRemovalCost(state.position[pickup], state.position[delivery]);
  if (out === Infinity) return;
  const into = b.pairInsertionCost(pickup, delivery, maxIncrease - out);
  if (into === Infinity) return;
  b.nodes = b.withPair(pickup, pairPlace.pickup, delivery, pairPlace.delivery);
  a.nodes = a.nodes.filter((n) => n !== pickup && n !== delivery);
  state.afterChange(a);
  state.afterChange(b);
}
