import { type Instance, mergeJob, windowAt } from "./model";
import { granularNeighbours } from "./neighbours";
import type { Random } from "./random";
import type { Route } from "./route";
import * as segment from "./segment";

// Local bindings: a module namespace's exports may be getters once transpiled (tsx in the benchmarks), too slow for the hot loops.
const { EPS, merge, seg } = segment;
import type { SolutionState } from "./state";
import { type JoinCost, overlap, polarAngles, type Sector, sectorOf, swapStar } from "./swap-star";

/**
 * Granular local search in the style of HGS (Vidal 2022, "Hybrid genetic
 * search for the CVRP: open-source implementation and SWAP* neighborhood";
 * PyVRP): for a job u and each of its granular neighbours v (neighbours.ts)
 * it tries
 * - relocate of the string of 1-3 jobs starting at u to just after or just
 *   before v (or-opt; within a tour too),
 * - swap of strings of 1-2 jobs at u and at v (1-1, 2-1, 1-2, 2-2),
 * - 2-opt* (exchange of tails so that u is followed by v, or v by u),
 * - intra-tour 2-opt (reverse the piece after u up to v),
 * and applies the first move that lowers the cost. When no such move is
 * left, SWAP* (swap-star.ts) runs over the pairs of tours whose polar
 * sectors overlap and of which one changed since the last such pass; the
 * jobs of the tours it changes go back into the queue. Every move is checked
 * with the tours' prefix and suffix summaries (route.ts), against windows,
 * shift, maximum duration and all capacities: O(1) per move plus the jobs
 * it moves (the reversed or shifted piece for moves within one tour).
 *
 * Pickup-and-delivery pairs and groups stay valid: only plain single jobs
 * change tours; tails are exchanged only between tours without pairs or
 * group members; tours with pairs are not reordered.
 *
 * Move cache (HGS's "when last modified"): a job is tested against a
 * neighbour only when one of their two tours changed since the job was
 * last tested, so a search that starts from a few changed tours only
 * re-examines what those changes made possible.
 */
const MAX_STRING = 3;
const MAX_SWAP = 2;
const LEAN_STRING = 2;
/** An improvement must beat rounding noise (costs are sums of floats). */
const MIN_GAIN = 1e-6;

// Running concatenation of route pieces; module-level to keep the hot loop allocation-free.
const plain = new Float64Array(3);
const sum = new Float64Array(3);
const peak = new Float64Array(3);

/**
 * Cost of the tour prefix(x, i) + mid[from..to) + suffix(y, j) on x's
 * vehicle, or Infinity when it breaks a constraint; 0 when empty. y must be
 * x or a tour of the same vehicle type (its suffix summaries are reused).
 */
export function joinCost(x: Route, i: number, mid: ArrayLike<number>, from: number, to: number, y: Route, j: number): number {
  const inst = x.inst;
  const dims = x.dims;
  const v = x.vehicle;
  const yLen = y.nodes.length;
  if (i === 0 && from === to && j === yLen) return 0;
  if (i + to - from + yLen - j > v.maxStops) return Infinity;
  let dur = x.fDur[i];
  let warp = x.fWarp[i];
  let early = x.fEarly[i];
  let late = x.fLate[i];
  let dist = x.fDist[i];
  let travel = x.fTravel[i];
  let service = x.fService[i];
  for (let d = 0; d < dims; d++) {
    plain[d] = x.fPlain[i * dims + d];
    sum[d] = x.fSum[i * dims + d];
    peak[d] = x.fPeak[i * dims + d];
  }
  let last = i > 0 ? x.nodes[i - 1] : 0;
  for (let m = from; m < to; m++) {
    const node = mid[m];
    if ((inst.requires[node] & ~v.skills) !== 0) return Infinity;
    const t = x.time(last, node);
    if (inst.multiWindow) mergeJob(inst, dur, warp, early, late, t, node);
    else merge(dur, warp, early, late, t, inst.service[node], 0, inst.ready[node], inst.due[node]);
    if (seg.timeWarp > EPS) return Infinity;
    dur = seg.duration;
    warp = seg.timeWarp;
    early = seg.earliest;
    late = seg.latest;
    dist += x.dist(last, node);
    travel += t;
    service += inst.service[node];
    for (let d = 0; d < dims; d++) {
      plain[d] += inst.plain[node * dims + d];
      sum[d] += inst.delta[node * dims + d];
      if (sum[d] > peak[d]) peak[d] = sum[d];
    }
    last = node;
  }
  for (let d = 0; d < dims; d++) {
    const k = j * dims + d;
    if (plain[d] + y.bPlain[k] + Math.max(peak[d], sum[d] + y.bPeak[k]) > v.capacity[d] + EPS) return Infinity;
  }
  const first = j < yLen ? y.nodes[j] : -1;
  const t = x.time(last, first);
  merge(dur, warp, early, late, t, y.bDur[j], y.bWarp[j], y.bEarly[j], y.bLate[j]);
  if (seg.timeWarp > EPS || seg.duration > v.maxDuration + EPS) return Infinity;
  travel += t + y.bTravel[j];
  service += y.bService[j];
  dist += x.dist(last, first) + y.bDist[j];
  return x.costOf(dist, seg.duration, Math.max(0, seg.duration - travel - service));
}

/** Weights of the penalised search (hgs.ts): cost + timeWarp x (time warp + duration excess) + load x load excess. */
export interface Penalty {
  timeWarp: number;
  load: number;
}

/**
 * `joinCost` in the penalised space: the same piece, its violations priced
 * by `w` instead (time warp and duration excess, load excess of every
 * dimension); only what no price makes right (a job the vehicle may not
 * serve, stops beyond its limit) is still Infinity.
 */
export function joinPenalised(x: Route, i: number, mid: ArrayLike<number>, from: number, to: number, y: Route, j: number, w: Penalty, bound = Infinity): number {
  const inst = x.inst;
  const dims = x.dims;
  const v = x.vehicle;
  const yLen = y.nodes.length;
  if (i === 0 && from === to && j === yLen) return 0;
  if (i + to - from + yLen - j > v.maxStops) return Infinity;
  // Legs read straight from the matrices (Route.time / Route.dist add a branch and two property chains per leg).
  const durations = v.durations;
  const distances = v.distances;
  const scale = v.timeScale;
  const wWarp = w.timeWarp;
  const perMetre = v.costPerMetre;
  const service = inst.service;
  let dur = x.fDur[i];
  let warp = x.fWarp[i];
  let early = x.fEarly[i];
  let late = x.fLate[i];
  let dist = x.fDist[i];
  let travel = x.fTravel[i];
  let served = x.fService[i];
  let last = i > 0 ? x.nodes[i - 1] : 0;
  if (dims === 1) {
    plain[0] = x.fPlain[i];
    sum[0] = x.fSum[i];
    peak[0] = x.fPeak[i];
  } else {
    for (let d = 0; d < dims; d++) {
      plain[d] = x.fPlain[i * dims + d];
      sum[d] = x.fSum[i * dims + d];
      peak[d] = x.fPeak[i * dims + d];
    }
  }
  const ready = inst.ready;
  const due = inst.due;
  const multi = inst.multiWindow;
  for (let m = from; m < to; m++) {
    const node = mid[m];
    if ((inst.requires[node] & ~v.skills) !== 0) return Infinity;
    const t = durations.at(last, node) * scale;
    // merge(dur, warp, early, late, t, service, 0, ready, due) of segment.ts, written out (no call per job of the piece).
    const delta = dur - warp + t;
    let open = ready[node];
    let close = due[node];
    // A job with several windows: the one the tour's own pass would pick (model.ts, windowAt).
    if (multi && inst.winFrom[node + 1] > inst.winFrom[node]) {
      const k = windowAt(inst, node, early + delta);
      open = inst.winStart[k];
      close = inst.winEnd[k];
    }
    const wait = Math.max(open - delta - late, 0);
    const extra = Math.max(early + delta - close, 0);
    dur += service[node] + t + wait;
    warp += extra;
    early = Math.max(open - delta, early) - wait;
    late = Math.min(close - delta, late) + extra;
    dist += distances.at(last, node);
    // Distance and time warp only grow along the piece: a lower bound of its cost.
    if (perMetre * dist + wWarp * warp >= bound) return Infinity;
    travel += t;
    served += service[node];
    for (let d = 0; d < dims; d++) {
      plain[d] += inst.plain[node * dims + d];
      sum[d] += inst.delta[node * dims + d];
      if (sum[d] > peak[d]) peak[d] = sum[d];
    }
    last = node;
  }
  let overload = 0;
  for (let d = 0; d < dims; d++) {
    const k = j * dims + d;
    const load = plain[d] + y.bPlain[k] + Math.max(peak[d], sum[d] + y.bPeak[k]) - v.capacity[d];
    if (load > 0) overload += load;
  }
  let t: number;
  if (j < yLen) {
    const first = y.nodes[j];
    t = durations.at(last, first) * scale;
    dist += distances.at(last, first) + y.bDist[j];
  } else if (v.open) t = 0;
  else {
    t = durations.at(last, 0) * scale;
    dist += distances.at(last, 0);
  }
  // Everything but the last merge is known: stop here when even that bound is reached.
  if (v.fixedCost + perMetre * dist + wWarp * (warp + y.bWarp[j]) + w.load * overload >= bound) return Infinity;
  // merge(dur, warp, early, late, t, suffix) written out, as above.
  const delta = dur - warp + t;
  const wait = Math.max(y.bEarly[j] - delta - late, 0);
  const duration = dur + y.bDur[j] + t + wait;
  const timeWarp = warp + y.bWarp[j] + Math.max(early + delta - y.bLate[j], 0);
  travel += t + y.bTravel[j];
  served += y.bService[j];
  const excess = timeWarp + Math.max(0, duration - v.maxDuration);
  const waiting = Math.max(0, duration - travel - served);
  return v.fixedCost + perMetre * dist + v.costPerWaitSecond * waiting + v.costPerDurationSecond * duration + wWarp * excess + w.load * overload;
}

/**
 * A lower bound of `joinPenalised` from what only adds up: distance, travel
 * and service time (duration is at least their sum) and the time warp
 * already in the prefix and the suffix. O(piece) lookups, no segment merges:
 * the penalised search rejects most moves with it.
 */
export function joinLowerBound(x: Route, i: number, mid: ArrayLike<number>, from: number, to: number, y: Route, j: number, w: Penalty): number {
  const v = x.vehicle;
  const yLen = y.nodes.length;
  if (i === 0 && from === to && j === yLen) return 0;
  const distances = v.distances;
  let dist = x.fDist[i] + y.bDist[j];
  let last = i > 0 ? x.nodes[i - 1] : 0;
  const bound = v.fixedCost + w.timeWarp * (x.fWarp[i] + y.bWarp[j]);
  if (v.costPerDurationSecond > 0) {
    const durations = v.durations;
    const scale = v.timeScale;
    const service = x.inst.service;
    let time = x.fTravel[i] + x.fService[i] + y.bTravel[j] + y.bService[j];
    for (let m = from; m < to; m++) {
      const node = mid[m];
      dist += distances.at(last, node);
      time += durations.at(last, node) * scale + service[node];
      last = node;
    }
    if (j < yLen) {
      dist += distances.at(last, y.nodes[j]);
      time += durations.at(last, y.nodes[j]) * scale;
    } else if (!v.open) {
      dist += distances.at(last, 0);
      time += durations.at(last, 0) * scale;
    }
    return bound + v.costPerMetre * dist + v.costPerDurationSecond * time;
  }
  for (let m = from; m < to; m++) {
    const node = mid[m];
    dist += distances.at(last, node);
    last = node;
  }
  if (j < yLen) dist += distances.at(last, y.nodes[j]);
  else if (!v.open) dist += distances.at(last, 0);
  return bound + v.costPerMetre * dist;
}

/** A tour's cost in the penalised space. */
export function penalisedCost(r: Route, w: Penalty): number {
  return r.cost + w.timeWarp * r.warp + w.load * r.overload;
}

export interface LocalSearchOptions {
  /**
   * Search the penalised space (hgs.ts): tours may break windows, duration
   * and capacities at these prices; default: only feasible tours, every move
   * keeps them feasible.
   */
  penalty?: Penalty | null;
  /** Jobs to start from (default: every job on a tour, in random order). */
  start?: number[];
  /** Partners allowed (a decomposition's scope); default: all jobs. */
  mask?: Uint8Array | null;
  /** Checked every few jobs; the search stops early when it returns true. */
  shouldStop?: () => boolean;
  /**
   * PyVRP's smaller neighbourhood (hgs.ts): strings of at most LEAN_STRING
   * jobs, relocated only to just after v, swaps 1-1, 2-1 and 2-2 (1-2 is
   * v's 2-1), 2-opt* so that v follows u; about half the evaluations per
   * pair of neighbours.
   */
  lean?: boolean;
}

export class LocalSearch {
  readonly neighbours: Int32Array;
  readonly k: number;
  /** Per job: it belongs to a pair or group (must keep its tour). */
  private readonly bound: Uint8Array;
  private readonly lastTested: Float64Array;
  private readonly queued: Uint8Array;
  private readonly scratch: number[] = [];
  private stamps = new Map<Route, number>();
  private clock = 0;
  private readonly angles: Float64Array;
  /** Clock at the start of the last SWAP* pass: pairs of tours unchanged since were tested then. */
  private swapPass = 0;
  /** Moves applied over the lifetime of this search (for benchmarks and tests). */
  moves = 0;
  /** The current run's penalty weights (null: feasible moves only) and the matching piece evaluation. */
  private weights: Penalty | null = null;
  private join: JoinCost = joinCost;
  private readonly penalisedJoin: JoinCost = (x, i, mid, from, to, y, j, bound) => joinPenalised(x, i, mid, from, to, y, j, this.weights!, bound);
  /** In the penalised space: a cheap lower bound of `join`, checked first (null: feasible search, whose checks fail fast anyway). */
  private lowerBound: JoinCost | null = null;
  /** The current run's neighbourhood (see `LocalSearchOptions.lean`). */
  private maxString = MAX_STRING;
  private lean = false;
  private readonly penalisedBound: JoinCost = (x, i, mid, from, to, y, j) => joinLowerBound(x, i, mid, from, to, y, j, this.weights!);

  /** `neighbours`: the granular neighbours per job (default GRANULAR_NEIGHBOURS, neighbours.ts). */
  constructor(
    readonly inst: Instance,
    neighbours?: number,
  ) {
    const { list, count } = granularNeighbours(inst, neighbours);
    this.neighbours = list;
    this.k = count;
    this.bound = new Uint8Array(inst.size);
    for (let n = 1; n < inst.size; n++) if (inst.pairRole[n] !== 0 || inst.units[inst.unitOf[n]].length > 1) this.bound[n] = 1;
    this.lastTested = new Float64Array(inst.size);
    this.queued = new Uint8Array(inst.size);
    this.angles = polarAngles(inst);
  }

  /** Improves `state` in place until no move of the neighbourhood lowers the cost; returns the moves applied. */
  run(state: SolutionState, rng: Random, options: LocalSearchOptions = {}): number {
    const { mask = null, shouldStop } = options;
    this.weights = options.penalty ?? null;
    this.join = this.weights ? this.penalisedJoin : joinCost;
    this.lowerBound = this.weights ? this.penalisedBound : null;
    this.lean = options.lean ?? false;
    this.maxString = this.lean ? LEAN_STRING : MAX_STRING;
    let queue: number[];
    if (options.start) queue = options.start.filter((n) => state.routeOf[n] !== null);
    else {
      queue = [];
      for (const r of state.routes) for (const n of r.nodes) if (!mask || mask[n]) queue.push(n);
    }
    rng.shuffle(queue);
    this.stamps = new Map();
    this.clock = 1;
    this.swapPass = 0;
    this.lastTested.fill(-1);
    // The tours to start from count as changed (for SWAP*'s pairs).
    for (const n of queue) {
      this.queued[n] = 1;
      this.stamps.set(state.routeOf[n]!, 1);
    }
    const enqueue = (changed: Iterable<Route>) => {
      for (const r of changed) {
        for (const n of r.nodes) {
          if (!this.queued[n]) {
            this.queued[n] = 1;
            queue.push(n);
          }
        }
      }
    };
    const before = this.moves;
    let pops = 0;
    for (;;) {
      while (queue.length > 0) {
        // Checked before the first move too: a search stopped before it starts changes nothing.
        if ((pops++ & 15) === 0 && shouldStop?.()) break;
        const u = queue.pop()!;
        this.queued[u] = 0;
        const changed = this.improve(state, u, mask);
        if (changed) enqueue(changed);
      }
      if (queue.length > 0 || shouldStop?.()) break;
      const changed = this.swapStarPass(state, mask, shouldStop);
      if (changed.size === 0) break;
      enqueue(changed);
    }
    for (const n of queue) this.queued[n] = 0;
    return this.moves - before;
  }

  /** One SWAP* pass over the pairs of tours (of the scope) with overlapping sectors; returns the tours it changed. */
  private swapStarPass(state: SolutionState, mask: Uint8Array | null, shouldStop?: () => boolean): Set<Route> {
    const previous = this.swapPass;
    this.swapPass = this.clock;
    const routes = state.routes.filter((r) => r.feasible && (!mask || mask[r.nodes[0]]));
    const sectors: Sector[] = routes.map((r) => sectorOf(r, this.angles));
    const changed = new Set<Route>();
    for (let x = 0; x < routes.length; x++) {
      if (shouldStop?.()) break;
      for (let y = x + 1; y < routes.length; y++) {
        const a = routes[x];
        const b = routes[y];
        if (Math.max(this.stamp(a), this.stamp(b)) <= previous || !overlap(sectors[x], sectors[y])) continue;
        if (!swapStar(a, b, this.bound, this.join)) continue;
        this.moves++;
        this.clock++;
        for (const r of [a, b]) {
          state.afterChange(r);
          this.stamps.set(r, this.clock);
          changed.add(r);
        }
        sectors[x] = sectorOf(a, this.angles);
        sectors[y] = sectorOf(b, this.angles);
      }
    }
    return changed;
  }

  private routeCost(r: Route): number {
    return this.weights ? penalisedCost(r, this.weights) : r.cost;
  }

  private stamp(r: Route): number {
    return this.stamps.get(r) ?? 0;
  }

  /** Tries u against its neighbours; applies the first improving move and returns the tours it changed. */
  private improve(state: SolutionState, u: number, mask: Uint8Array | null): Route[] | null {
    const ru = state.routeOf[u];
    if (!ru || (!ru.feasible && !this.weights)) return null;
    const tested = this.lastTested[u];
    this.lastTested[u] = this.clock;
    const base = u * this.k;
    for (let c = 0; c < this.k; c++) {
      const v = this.neighbours[base + c];
      if (mask && !mask[v]) continue;
      const rv = state.routeOf[v];
      if (!rv || (!rv.feasible && !this.weights)) continue;
      if (Math.max(this.stamp(ru), this.stamp(rv)) <= tested) continue;
      const pu = state.position[u];
      const pv = state.position[v];
      const changed = ru === rv ? this.intra(ru, pu, pv) : this.inter(ru, pu, rv, pv);
      if (changed) {
        this.moves++;
        this.clock++;
        for (const r of changed) {
          state.afterChange(r);
          this.stamps.set(r, this.clock);
        }
        return changed;
      }
    }
    return null;
  }

  /** Moves between two tours; applies the first improving one. */
  private inter(ru: Route, pu: number, rv: Route, pv: number): Route[] | null {
    const a = ru.nodes;
    const b = rv.nodes;
    const base = this.routeCost(ru) + this.routeCost(rv);
    const joinCost = this.join;
    const lb = this.lowerBound;
    const limit = base - MIN_GAIN;
    // Relocate the string a[pu..pu+len) after or before v.
    const lowest = this.lean ? pv + 1 : pv;
    for (let len = 1; len <= this.maxString && pu + len <= a.length && !this.bound[a[pu + len - 1]]; len++) {
      const outBound = lb ? lb(ru, pu, a, 0, 0, ru, pu + len) : 0;
      let out = NaN;
      for (let at = pv + 1; at >= lowest; at--) {
        if (lb && outBound + lb(rv, at, a, pu, pu + len, rv, at) >= limit) continue;
        if (Number.isNaN(out)) out = joinCost(ru, pu, a, 0, 0, ru, pu + len);
        if (out === Infinity) break;
        const into = joinCost(rv, at, a, pu, pu + len, rv, at, base - out);
        if (out + into < base - MIN_GAIN) {
          b.splice(at, 0, ...a.splice(pu, len));
          return [ru, rv];
        }
      }
    }
    // Swap a[pu..pu+lu) and b[pv..pv+lv).
    for (let lu = 1; lu <= MAX_SWAP && pu + lu <= a.length && !this.bound[a[pu + lu - 1]]; lu++) {
      for (let lv = 1; lv <= MAX_SWAP && pv + lv <= b.length && !this.bound[b[pv + lv - 1]]; lv++) {
        if (lv > lu && this.lean) break;
        if (lb && lb(ru, pu, b, pv, pv + lv, ru, pu + lu) + lb(rv, pv, a, pu, pu + lu, rv, pv + lv) >= limit) continue;
        const ca = joinCost(ru, pu, b, pv, pv + lv, ru, pu + lu);
        if (ca === Infinity) continue;
        if (ca + joinCost(rv, pv, a, pu, pu + lu, rv, pv + lv, base - ca) < base - MIN_GAIN) {
          const s = a.slice(pu, pu + lu);
          a.splice(pu, lu, ...b.slice(pv, pv + lv));
          b.splice(pv, lv, ...s);
          return [ru, rv];
        }
      }
    }
    // 2-opt*: u then v's tail (i = pu + 1, j = pv), or v then u's tail (i = pu, j = pv + 1).
    if (ru.vehicle.typeKey === rv.vehicle.typeKey && !ru.hasUnits && !rv.hasUnits) {
      for (let variant = 0; variant < (this.lean ? 1 : 2); variant++) {
        const i = pu + 1 - variant;
        const j = pv + variant;
        if (lb && lb(ru, i, a, 0, 0, rv, j) + lb(rv, j, a, 0, 0, ru, i) >= limit) continue;
        const ca = joinCost(ru, i, a, 0, 0, rv, j);
        if (ca === Infinity) continue;
        if (ca + joinCost(rv, j, a, 0, 0, ru, i, base - ca) < base - MIN_GAIN) {
          const tailA = a.splice(i);
          a.push(...b.splice(j));
          b.push(...tailA);
          return [ru, rv];
        }
      }
    }
    return null;
  }

  /** Replaces r.nodes[lo..hi) by the scratch piece if that lowers the tour's cost below `base`. */
  private tryPiece(r: Route, lo: number, hi: number, base: number): boolean {
    const s = this.scratch;
    if (this.lowerBound && this.lowerBound(r, lo, s, 0, s.length, r, hi) >= base - MIN_GAIN) return false;
    if (this.join(r, lo, s, 0, s.length, r, hi, base) < base - MIN_GAIN) {
      r.nodes.splice(lo, hi - lo, ...s);
      return true;
    }
    return false;
  }

  /** Moves within one tour (not on tours with pairs: their order matters). */
  private intra(r: Route, pu: number, pv: number): Route[] | null {
    if (r.hasPairs) return null;
    const nodes = r.nodes;
    const s = this.scratch;
    const base = this.routeCost(r);
    // Relocate the string nodes[pu..pu+len) to just after v.
    for (let len = 1; len <= this.maxString && pu + len <= nodes.length; len++) {
      if (pv >= pu && pv < pu + len) break;
      s.length = 0;
      if (pv > pu) {
        for (let p = pu + len; p <= pv; p++) s.push(nodes[p]);
        for (let p = pu; p < pu + len; p++) s.push(nodes[p]);
        if (this.tryPiece(r, pu, pv + 1, base)) return [r];
      } else if (pv + 1 < pu) {
        for (let p = pu; p < pu + len; p++) s.push(nodes[p]);
        for (let p = pv + 1; p < pu; p++) s.push(nodes[p]);
        if (this.tryPiece(r, pv + 1, pu + len, base)) return [r];
      }
    }
    // Swap u and v.
    const lo = Math.min(pu, pv);
    const hi = Math.max(pu, pv);
    s.length = 0;
    for (let p = lo; p <= hi; p++) s.push(nodes[p]);
    s[0] = nodes[hi];
    s[hi - lo] = nodes[lo];
    if (this.tryPiece(r, lo, hi + 1, base)) return [r];
    // 2-opt: reverse nodes[pu+1..pv] so that v follows u.
    if (pv > pu + 1) {
      s.length = 0;
      for (let p = pv; p > pu; p--) s.push(nodes[p]);
      if (this.tryPiece(r, pu + 1, pv + 1, base)) return [r];
    }
    return null;
  }
}
