import type { Instance } from "./model";
import type { Route } from "./route";

/**
 * SWAP* (Vidal 2022, "Hybrid genetic search for the CVRP: open-source
 * implementation and SWAP* neighborhood"): exchange a job u of tour A with
 * a job v of tour B, each going to its best position in the other tour
 * rather than into the place of the other. u and v need not be granular
 * neighbours, which is what the relocate and swap of the local search
 * cannot reach. Per tour pair it costs O(|A| x |B|): the three cheapest
 * insertion positions of every job of A in B (and of B in A) are computed
 * once; a candidate (u, v) is then estimated in O(1) from them (or from the
 * exact cost of putting u in v's place), and the most promising candidates
 * are checked exactly with the segments (windows, shift, maximum duration,
 * capacities), the first that lowers the cost being applied.
 *
 * The three positions are those feasible (windows, shift, duration; not
 * capacity, as v leaves) with v still in B: with time windows an
 * approximation (PyVRP evaluates them with its penalised cost), which the
 * exact check makes safe.
 *
 * Only tours whose polar sectors around the depot overlap are paired (HGS's
 * CircleSector): two tours in different directions have nothing to gain.
 */

const TOP = 3;
/** Exact checks per tour pair: the best estimates first. */
const MAX_CHECKS = 8;
const MIN_GAIN = 1e-6;

/** Polar angle of every job around the depot (problem coordinates). */
export function polarAngles(inst: Instance): Float64Array {
  const { jobs, depot } = inst.problem;
  const angles = new Float64Array(inst.size);
  for (let n = 1; n < inst.size; n++) {
    const loc = jobs[n - 1].location;
    angles[n] = Math.atan2(loc.lat - depot.lat, loc.lon - depot.lon);
  }
  return angles;
}

/** Smallest arc holding the tour's jobs: [start, start + width] in radians (start in [-pi, pi]). */
export interface Sector {
  start: number;
  width: number;
}

export function sectorOf(route: Route, angles: Float64Array): Sector {
  const list = route.nodes.map((n) => angles[n]).sort((a, b) => a - b);
  // The arc is the circle minus its largest gap between consecutive angles.
  let gap = list[0] + 2 * Math.PI - list[list.length - 1];
  let start = list[0];
  for (let i = 1; i < list.length; i++) {
    if (list[i] - list[i - 1] > gap) {
      gap = list[i] - list[i - 1];
      start = list[i];
    }
  }
  return { start, width: 2 * Math.PI - gap };
}

const turn = (x: number) => ((x % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI);

export function overlap(a: Sector, b: Sector): boolean {
  return turn(b.start - a.start) <= a.width + 1e-9 || turn(a.start - b.start) <= b.width + 1e-9;
}

/**
 * Cost of an exactly evaluated piece, from the local search: prefix(x, i) +
 * mid[from..to) + suffix(y, j); may return Infinity once it is sure to
 * reach `bound`.
 */
export type JoinCost = (x: Route, i: number, mid: ArrayLike<number>, from: number, to: number, y: Route, j: number, bound?: number) => number;

// Scratch, reused between calls (the local search runs this on many pairs).
let topCost = new Float64Array(0);
let topPos = new Int32Array(0);
let removal = new Float64Array(0);
const piece: number[] = [];

/** Fills the TOP cheapest feasible insertion positions of every job of `from` into `into`, at offset `base`. */
function cheapestInsertions(from: Route, into: Route, base: number): void {
  const nodes = from.nodes;
  for (let i = 0; i < nodes.length; i++) {
    const k = (base + i) * TOP;
    for (let t = 0; t < TOP; t++) {
      topCost[k + t] = Infinity;
      topPos[k + t] = -1;
    }
    for (let p = into.firstPosition(nodes[i]), last = into.lastPosition(nodes[i]); p <= last; p++) {
      // A job of `into` leaves in exchange: its stops stay as many.
      const c = into.insertionCost(nodes[i], p, topCost[k + TOP - 1], false, 1);
      if (c >= topCost[k + TOP - 1]) continue;
      let t = TOP - 1;
      while (t > 0 && topCost[k + t - 1] > c) {
        topCost[k + t] = topCost[k + t - 1];
        topPos[k + t] = topPos[k + t - 1];
        t--;
      }
      topCost[k + t] = c;
      topPos[k + t] = p;
    }
  }
}

/**
 * Cheapest estimated insertion of the job with top-list `k` into a tour
 * from which the job at position `out` leaves: positions next to it are
 * skipped (their cost changes with it). Returns the index into the top list or -1.
 */
function bestAway(k: number, out: number): number {
  for (let t = 0; t < TOP; t++) {
    const p = topPos[k + t];
    if (p < 0) return -1;
    if (p !== out && p !== out + 1) return t;
  }
  return -1;
}

interface Candidate {
  gain: number;
  i: number;
  j: number;
  /** Position in B before which u goes (in B's indexing), or -1 for v's place. */
  intoB: number;
  /** Position in A before which v goes, or -1 for u's place. */
  intoA: number;
}

/**
 * Builds tour x without the job at `out` and with `node` before position
 * `into` (-1: in the place of `out`) over the window of positions it
 * changes; returns its exact cost via `join`.
 */
function exactCost(x: Route, out: number, node: number, into: number, join: JoinCost): number {
  const nodes = x.nodes;
  piece.length = 0;
  if (into < 0) {
    piece.push(node);
    return join(x, out, piece, 0, 1, x, out + 1);
  }
  const lo = Math.min(out, into);
  const hi = Math.max(out + 1, into);
  for (let p = lo; p < hi; p++) {
    if (p === into) piece.push(node);
    if (p !== out) piece.push(nodes[p]);
  }
  if (into === hi) piece.push(node);
  return join(x, lo, piece, 0, piece.length, x, hi);
}

/**
 * Looks for an improving SWAP* between tours a and b (plain single jobs
 * only: `bound` marks jobs of pairs and groups) and applies the first one
 * found among the best estimates. Returns whether the tours changed.
 */
export function swapStar(a: Route, b: Route, bound: Uint8Array, join: JoinCost): boolean {
  const la = a.nodes.length;
  const lb = b.nodes.length;
  const need = (la + lb) * TOP;
  if (topCost.length < need) {
    topCost = new Float64Array(2 * need);
    topPos = new Int32Array(2 * need);
  }
  if (removal.length < la + lb) removal = new Float64Array(2 * (la + lb));
  cheapestInsertions(a, b, 0);
  cheapestInsertions(b, a, la);
  for (let i = 0; i < la; i++) removal[i] = bound[a.nodes[i]] ? Infinity : a.replaceCost(i, i + 1, -1);
  for (let j = 0; j < lb; j++) removal[la + j] = bound[b.nodes[j]] ? Infinity : b.replaceCost(j, j + 1, -1);
  const candidates: Candidate[] = [];
  for (let i = 0; i < la; i++) {
    if (removal[i] === Infinity) continue;
    const u = a.nodes[i];
    const ku = i * TOP;
    for (let j = 0; j < lb; j++) {
      if (removal[la + j] === Infinity) continue;
      const v = b.nodes[j];
      const kv = (la + j) * TOP;
      // u into B without v: at its best position away from v, or in v's place.
      const tu = bestAway(ku, j);
      let intoB = tu < 0 ? -2 : topPos[ku + tu];
      let deltaB = tu < 0 ? Infinity : removal[la + j] + topCost[ku + tu];
      let deltaA: number;
      let intoA: number;
      const tv = bestAway(kv, i);
      intoA = tv < 0 ? -2 : topPos[kv + tv];
      deltaA = tv < 0 ? Infinity : removal[i] + topCost[kv + tv];
      // The exact in-place costs only when they could make the pair pay.
      if (deltaA + deltaB >= -MIN_GAIN) {
        const inPlaceB = b.replaceCost(j, j + 1, u);
        if (inPlaceB < deltaB) {
          deltaB = inPlaceB;
          intoB = -1;
        }
        if (deltaB === Infinity) continue;
        const inPlaceA = a.replaceCost(i, i + 1, v);
        if (inPlaceA < deltaA) {
          deltaA = inPlaceA;
          intoA = -1;
        }
        // Both in place is the local search's plain swap.
        if (intoA === -1 && intoB === -1) continue;
      }
      const gain = deltaA + deltaB;
      if (gain < -MIN_GAIN) candidates.push({ gain, i, j, intoB, intoA });
    }
  }
  if (candidates.length === 0) return false;
  candidates.sort((x, y) => x.gain - y.gain);
  const base = a.cost + b.cost;
  for (let c = 0; c < Math.min(MAX_CHECKS, candidates.length); c++) {
    const { i, j, intoA, intoB } = candidates[c];
    const u = a.nodes[i];
    const v = b.nodes[j];
    const costA = exactCost(a, i, v, intoA, join);
    if (costA === Infinity) continue;
    const costB = exactCost(b, j, u, intoB, join);
    if (costA + costB >= base - MIN_GAIN) continue;
    apply(a, i, v, intoA);
    apply(b, j, u, intoB);
    return true;
  }
  return false;
}

function apply(x: Route, out: number, node: number, into: number): void {
  if (into < 0) {
    x.nodes[out] = node;
    return;
  }
  x.nodes.splice(into, 0, node);
  x.nodes.splice(into <= out ? out + 1 : out, 1);
}
