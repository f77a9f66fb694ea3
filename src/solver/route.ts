import type { Instance, VehicleModel } from "./model";
import { mergeJob, UNBOUNDED, windowAt } from "./model";
import * as segment from "./segment";

const EMPTY = new Float64Array(0);

/** Where `Route.pairInsertionCost` puts a pair: pickup before position `pickup`, delivery before original position `delivery`. */
export const pairPlace = { pickup: -1, delivery: -1 };

// Local bindings: a module namespace's exports may be getters once transpiled (tsx in the benchmarks), too slow for the hot loops.
const { EPS, merge, seg } = segment;

/**
 * One tour under construction: its job sequence plus prefix and suffix
 * summaries (duration segments, distance, load profile) so that inserting,
 * removing or replacing a job is checked in O(1).
 *
 * Prefix p covers the start depot and nodes[0 .. p-1]; suffix p covers
 * nodes[p .. L-1] and the end depot.
 */
export class Route {
  nodes: number[] = [];
  readonly size: number;
  readonly dims: number;
  fDur = EMPTY;
  fWarp = EMPTY;
  fEarly = EMPTY;
  fLate = EMPTY;
  fDist = EMPTY;
  fTravel = EMPTY;
  fService = EMPTY;
  bDur = EMPTY;
  bWarp = EMPTY;
  bEarly = EMPTY;
  bLate = EMPTY;
  bDist = EMPTY;
  bTravel = EMPTY;
  bService = EMPTY;
  /** Per position x dimension: delivered-from-depot sum, load-change sum, peak prefix change. */
  fPlain = EMPTY;
  fSum = EMPTY;
  fPeak = EMPTY;
  bPlain = EMPTY;
  bSum = EMPTY;
  bPeak = EMPTY;
  /**
   * Only with jobs of several windows (`inst.multiWindow`): the window each
   * position's job is served in on this tour (start, end), chosen by the
   * forward pass of `summarise` (`windowAt`: the first the earliest arrival
   * can still reach). Route-local, so tours of several solutions holding the
   * same job each keep their own choice; the suffix summaries use them.
   */
  wReady = EMPTY;
  wDue = EMPTY;
  distance = 0;
  duration = 0;
  waiting = 0;
  cost = 0;
  /** Whether the stored sequence satisfies every constraint. */
  feasible = true;
  /** Time warp + load excess + duration excess (0 when feasible); guides the squeeze. */
  penalty = 0;
  /** The parts of `penalty`: time warp plus duration excess, and load excess (for the penalised search, hgs.ts). */
  warp = 0;
  overload = 0;
  /** Whether some node has a partner (then precedence matters for moves). */
  hasPairs = false;
  /**
   * Whether some node belongs to a pair or group (a unit of several jobs,
   * e.g. a tour area): such jobs keep their tour, so no tail of this tour
   * may be exchanged with another (2-opt*).
   */
  hasUnits = false;

  constructor(
    readonly inst: Instance,
    readonly vehicle: VehicleModel,
    skipUpdate = false,
  ) {
    this.size = inst.size;
    this.dims = inst.dims;
    if (!skipUpdate) this.update();
  }

  clone(): Route {
    const r = new Route(this.inst, this.vehicle, true);
    r.nodes = this.nodes.slice();
    const n = this.nodes.length + 1;
    r.fDur = this.fDur.slice(0, n);
    r.fWarp = this.fWarp.slice(0, n);
    r.fEarly = this.fEarly.slice(0, n);
    r.fLate = this.fLate.slice(0, n);
    r.fDist = this.fDist.slice(0, n);
    r.fTravel = this.fTravel.slice(0, n);
    r.fService = this.fService.slice(0, n);
    r.bDur = this.bDur.slice(0, n);
    r.bWarp = this.bWarp.slice(0, n);
    r.bEarly = this.bEarly.slice(0, n);
    r.bLate = this.bLate.slice(0, n);
    r.bDist = this.bDist.slice(0, n);
    r.bTravel = this.bTravel.slice(0, n);
    r.bService = this.bService.slice(0, n);
    r.fPlain = this.fPlain.slice(0, n * this.dims);
    r.fSum = this.fSum.slice(0, n * this.dims);
    r.fPeak = this.fPeak.slice(0, n * this.dims);
    r.bPlain = this.bPlain.slice(0, n * this.dims);
    r.bSum = this.bSum.slice(0, n * this.dims);
    r.bPeak = this.bPeak.slice(0, n * this.dims);
    if (this.inst.multiWindow) {
      r.wReady = this.wReady.slice(0, n);
      r.wDue = this.wDue.slice(0, n);
    }
    r.distance = this.distance;
    r.duration = this.duration;
    r.waiting = this.waiting;
    r.cost = this.cost;
    r.feasible = this.feasible;
    r.penalty = this.penalty;
    r.warp = this.warp;
    r.overload = this.overload;
    r.hasPairs = this.hasPairs;
    r.hasUnits = this.hasUnits;
    return r;
  }

  /** The same tour on another (interchangeable) vehicle. */
  withVehicle(vehicle: VehicleModel): Route {
    const r = this.clone();
    (r as { vehicle: VehicleModel }).vehicle = vehicle;
    return r;
  }

  /** Planned travel time of the leg i -> j (j = -1: the end of the tour). */
  time(i: number, j: number): number {
    if (j < 0) return this.vehicle.open ? 0 : this.vehicle.durations.at(i, 0) * this.vehicle.timeScale;
    return this.vehicle.durations.at(i, j) * this.vehicle.timeScale;
  }

  dist(i: number, j: number): number {
    if (j < 0) return this.vehicle.open ? 0 : this.vehicle.distances.at(i, 0);
    return this.vehicle.distances.at(i, j);
  }

  get length(): number {
    return this.nodes.length;
  }

  /**
   * Room for summaries of `positions` positions (typed arrays, grown by
   * doubling and never shrunk: a tour's length changes at every move, and
   * resizing plain arrays each time cost a tenth of the search).
   */
  private reserve(positions: number): void {
    const cap = Math.max(positions, 2 * this.fDur.length, 8);
    const d = this.dims;
    this.fDur = new Float64Array(cap);
    this.fWarp = new Float64Array(cap);
    this.fEarly = new Float64Array(cap);
    this.fLate = new Float64Array(cap);
    this.fDist = new Float64Array(cap);
    this.fTravel = new Float64Array(cap);
    this.fService = new Float64Array(cap);
    this.bDur = new Float64Array(cap);
    this.bWarp = new Float64Array(cap);
    this.bEarly = new Float64Array(cap);
    this.bLate = new Float64Array(cap);
    this.bDist = new Float64Array(cap);
    this.bTravel = new Float64Array(cap);
    this.bService = new Float64Array(cap);
    this.fPlain = new Float64Array(cap * d);
    this.fSum = new Float64Array(cap * d);
    this.fPeak = new Float64Array(cap * d);
    this.bPlain = new Float64Array(cap * d);
    this.bSum = new Float64Array(cap * d);
    this.bPeak = new Float64Array(cap * d);
    if (this.inst.multiWindow) {
      this.wReady = new Float64Array(cap);
      this.wDue = new Float64Array(cap);
    }
  }

  /** Recomputes all summaries; O(length). */
  update(): void {
    this.summarise(0, 0, this.nodes.length);
    if (this.inst.multiWindow && this.warp > EPS) this.settleWindows();
  }

  /**
   * Recomputes the summaries after a change that kept the first `kept`
   * nodes and the last `keptTail` nodes of a tour of `oldLength` nodes:
   * their prefixes are still right, and so are the tail's suffixes (moved
   * to their new positions), so only the changed part is merged again.
   * SISR inserts one job at a time, and refreshing whole tours after each was
   * its largest cost on long tours (docs/experiments/2026-11-27-partial-refresh-of-tour-summaries.md).
   */
  updateBetween(kept: number, keptTail: number, oldLength: number): void {
    const len = this.nodes.length;
    if (this.fDur.length < len + 1) return this.update();
    const shift = len - oldLength;
    if (shift !== 0) {
      const to = len - keptTail;
      const from = oldLength - keptTail;
      const end = oldLength + 1;
      this.bDur.copyWithin(to, from, end);
      this.bWarp.copyWithin(to, from, end);
      this.bEarly.copyWithin(to, from, end);
      this.bLate.copyWithin(to, from, end);
      this.bDist.copyWithin(to, from, end);
      this.bTravel.copyWithin(to, from, end);
      this.bService.copyWithin(to, from, end);
      const d = this.dims;
      this.bPlain.copyWithin(to * d, from * d, end * d);
      this.bSum.copyWithin(to * d, from * d, end * d);
      this.bPeak.copyWithin(to * d, from * d, end * d);
      if (this.inst.multiWindow) {
        this.wReady.copyWithin(to, from, oldLength);
        this.wDue.copyWithin(to, from, oldLength);
      }
    }
    this.summarise(kept, keptTail, len);
    if (this.inst.multiWindow && this.warp > EPS) this.settleWindows();
  }

  /**
   * A tour with jobs of several windows that breaks a time limit after the
   * partial pass: the windows are chosen again over the whole tour, first
   * forward (each job in the first window its earliest arrival reaches: no
   * time warp if any choice has none, and the earliest end), then, if the
   * tour is still too long or late, backward (each job in the last window
   * that still lets the rest of the tour start in time, the latest
   * timetable: a tour that waits for a late window of a later job departs
   * later instead); the choice with less time warp plus duration excess is
   * kept. O(length), and only for tours that break a limit.
   */
  private settleWindows(): void {
    const { inst, nodes } = this;
    const len = nodes.length;
    let some = false;
    for (let p = 0; p < len && !some; p++) some = inst.winFrom[nodes[p] + 1] > inst.winFrom[nodes[p]];
    if (!some) return;
    this.summarise(0, 0, len);
    if (this.warp <= EPS) return;
    const forward = this.warp;
    this.chooseLatest();
    this.summarise(0, 0, len, false);
    if (this.warp < forward - EPS) return;
    this.summarise(0, 0, len);
  }

  /** Backward pass of `settleWindows`: per job the last window whose start still lets the rest of the tour start by its latest start. */
  private chooseLatest(): void {
    const { inst, nodes } = this;
    const service = inst.service;
    let d = 0;
    let w = 0;
    let e = -UNBOUNDED;
    let l = this.vehicle.latestEnd;
    let next = -1;
    for (let p = nodes.length - 1; p >= 0; p--) {
      const node = nodes[p];
      const t = this.time(node, next);
      let open = inst.ready[node];
      let close = inst.due[node];
      const first = inst.winFrom[node];
      let k = inst.winFrom[node + 1] - 1;
      if (k > first) {
        const latest = l - t - service[node];
        while (k > first && inst.winStart[k] > latest + EPS) k--;
        open = inst.winStart[k];
        close = inst.winEnd[k];
      }
      this.wReady[p] = open;
      this.wDue[p] = close;
      merge(service[node], 0, open, close, t, d, w, e, l);
      d = seg.duration;
      w = seg.timeWarp;
      e = seg.earliest;
      l = seg.latest;
      next = node;
    }
  }

  /** Replaces the sequence, merging again only what lies between the common start and end of the old and new sequences. */
  setNodes(nodes: number[]): void {
    const old = this.nodes;
    const most = Math.min(old.length, nodes.length);
    let kept = 0;
    while (kept < most && old[kept] === nodes[kept]) kept++;
    let keptTail = 0;
    while (keptTail < most - kept && old[old.length - 1 - keptTail] === nodes[nodes.length - 1 - keptTail]) keptTail++;
    this.nodes = nodes;
    this.updateBetween(kept, keptTail, old.length);
  }

  /** Prefixes after position `kept` and suffixes before the last `keptTail` nodes, then the tour's totals. */
  private summarise(kept: number, keptTail: number, len: number, choose = true): void {
    const { inst, vehicle: v, dims, nodes } = this;
    const ready = inst.ready;
    const due = inst.due;
    const service = inst.service;
    if (this.fDur.length < len + 1) this.reserve(len + 1);
    if (kept === 0) {
      this.fDur[0] = 0;
      this.fWarp[0] = 0;
      this.fEarly[0] = v.earliestStart;
      this.fLate[0] = v.latestStart;
      this.fDist[0] = 0;
      this.fTravel[0] = 0;
      this.fService[0] = 0;
      for (let d = 0; d < dims; d++) this.fPlain[d] = this.fSum[d] = this.fPeak[d] = 0;
    }
    // Without pairs or groups before the change, only the changed nodes can bring some.
    const unchanged = (kept > 0 || keptTail > 0) && !this.hasPairs && !this.hasUnits;
    let hasPairs = false;
    let hasUnits = false;
    for (let p = unchanged ? kept : 0, end = unchanged ? len - keptTail : len; p < end; p++) {
      const node = nodes[p];
      if (inst.pairRole[node] !== 0) hasPairs = true;
      if (inst.units[inst.unitOf[node]].length > 1) hasUnits = true;
    }
    this.hasPairs = hasPairs;
    this.hasUnits = hasUnits;
    const multi = inst.multiWindow;
    const tailFrom = len - keptTail;
    let changedTail = -1;
    let prev = kept > 0 ? nodes[kept - 1] : 0;
    for (let p = kept + 1; p <= len; p++) {
      const node = nodes[p - 1];
      const t = this.time(prev, node);
      let open = ready[node];
      let close = due[node];
      if (multi) {
        if (!choose) {
          // The windows chosen by `chooseLatest`.
          open = this.wReady[p - 1];
          close = this.wDue[p - 1];
        } else if (inst.winFrom[node + 1] > inst.winFrom[node]) {
          const k = windowAt(inst, node, this.fEarly[p - 1] + this.fDur[p - 1] - this.fWarp[p - 1] + t);
          open = inst.winStart[k];
          close = inst.winEnd[k];
          // A kept tail job served in another window than before: its suffix (and those before it) must be merged again.
          if (p - 1 >= tailFrom && (this.wReady[p - 1] !== open || this.wDue[p - 1] !== close)) changedTail = p - 1;
        }
        this.wReady[p - 1] = open;
        this.wDue[p - 1] = close;
      }
      merge(this.fDur[p - 1], this.fWarp[p - 1], this.fEarly[p - 1], this.fLate[p - 1], t, service[node], 0, open, close);
      this.fDur[p] = seg.duration;
      this.fWarp[p] = seg.timeWarp;
      this.fEarly[p] = seg.earliest;
      this.fLate[p] = seg.latest;
      this.fDist[p] = this.fDist[p - 1] + this.dist(prev, node);
      this.fTravel[p] = this.fTravel[p - 1] + t;
      this.fService[p] = this.fService[p - 1] + service[node];
      for (let d = 0; d < dims; d++) {
        const q = (p - 1) * dims + d;
        const k = p * dims + d;
        const delta = inst.delta[node * dims + d];
        this.fPlain[k] = this.fPlain[q] + inst.plain[node * dims + d];
        this.fSum[k] = this.fSum[q] + delta;
        this.fPeak[k] = Math.max(this.fPeak[q], this.fSum[k]);
      }
      prev = node;
    }
    if (changedTail >= 0) keptTail = Math.min(keptTail, len - 1 - changedTail);
    if (keptTail === 0) {
      this.bDur[len] = 0;
      this.bWarp[len] = 0;
      this.bEarly[len] = -UNBOUNDED;
      this.bLate[len] = v.latestEnd;
      this.bDist[len] = 0;
      this.bTravel[len] = 0;
      this.bService[len] = 0;
      for (let d = 0; d < dims; d++) this.bPlain[len * dims + d] = this.bSum[len * dims + d] = this.bPeak[len * dims + d] = 0;
    }
    let next = keptTail > 0 ? nodes[len - keptTail] : -1;
    for (let p = len - keptTail - 1; p >= 0; p--) {
      const node = nodes[p];
      const t = this.time(node, next);
      merge(service[node], 0, multi ? this.wReady[p] : ready[node], multi ? this.wDue[p] : due[node], t, this.bDur[p + 1], this.bWarp[p + 1], this.bEarly[p + 1], this.bLate[p + 1]);
      this.bDur[p] = seg.duration;
      this.bWarp[p] = seg.timeWarp;
      this.bEarly[p] = seg.earliest;
      this.bLate[p] = seg.latest;
      this.bDist[p] = this.bDist[p + 1] + this.dist(node, next);
      this.bTravel[p] = this.bTravel[p + 1] + t;
      this.bService[p] = this.bService[p + 1] + service[node];
      for (let d = 0; d < dims; d++) {
        const k = p * dims + d;
        const n1 = (p + 1) * dims + d;
        const delta = inst.delta[node * dims + d];
        this.bPlain[k] = this.bPlain[n1] + inst.plain[node * dims + d];
        this.bSum[k] = this.bSum[n1] + delta;
        this.bPeak[k] = Math.max(0, delta + this.bPeak[n1]);
      }
      next = node;
    }
    // Whole tour = prefix(len) + end depot.
    const tEnd = len > 0 ? this.time(nodes[len - 1], -1) : 0;
    merge(this.fDur[len], this.fWarp[len], this.fEarly[len], this.fLate[len], tEnd, 0, 0, -UNBOUNDED, v.latestEnd);
    this.duration = seg.duration;
    this.distance = this.fDist[len] + (len > 0 ? this.dist(nodes[len - 1], -1) : 0);
    const travel = this.fTravel[len] + tEnd;
    this.waiting = Math.max(0, this.duration - travel - this.fService[len]);
    this.warp = seg.timeWarp + Math.max(0, this.duration - v.maxDuration);
    let overload = Math.max(0, len - v.maxStops);
    for (let d = 0; d < dims; d++) {
      overload += Math.max(0, this.fPlain[len * dims + d] + this.fPeak[len * dims + d] - v.capacity[d]);
    }
    // A job this vehicle may not serve (a warm start, a crossover's tour) counts like a unit of excess load.
    if (inst.skillNames.length > 0) for (const node of nodes) if ((inst.requires[node] & ~v.skills) !== 0) overload++;
    this.overload = overload;
    const penalty = this.warp + overload;
    this.penalty = penalty;
    this.feasible = penalty < EPS;
    this.cost = len === 0 ? 0 : this.costOf(this.distance, this.duration, this.waiting);
  }

  costOf(distance: number, duration: number, waiting: number): number {
    const v = this.vehicle;
    return v.fixedCost + v.costPerMetre * distance + v.costPerWaitSecond * waiting + v.costPerDurationSecond * duration;
  }

  /**
   * The positions where `node` can go without breaking a time window lie in
   * [firstPosition, lastPosition]: on a tour without time warp the earliest
   * end of prefix p (fEarly + fDur) and the latest start of suffix p (bLate)
   * never decrease with p, and a position is infeasible once the prefix
   * cannot end before the job's due time, or while the suffix must start
   * before the job can be done. Binary searches; the bounds are exact
   * (insertionCost would refuse every position outside them), so scans
   * restricted to them find the same best position. A tour with time warp
   * (the penalised search) gets the whole range.
   */
  firstPosition(node: number): number {
    if (this.warp > EPS) return 0;
    const done = this.inst.ready[node] + this.inst.service[node] - EPS;
    let lo = 0;
    let hi = this.nodes.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.bLate[mid] < done) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  lastPosition(node: number): number {
    const len = this.nodes.length;
    if (this.warp > EPS) return len;
    const due = this.inst.due[node] + EPS;
    let lo = 0;
    let hi = len;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.fEarly[mid] + this.fDur[mid] > due) hi = mid - 1;
      else lo = mid;
    }
    return lo;
  }

  /**
   * Cost increase of inserting `node` before position p (0..length), or
   * Infinity when infeasible. Capacity, windows, shift and max duration are
   * all checked in O(dims), and the vehicle's skills and stops; `loads` =
   * false skips capacity (for SWAP*, where another job leaves the tour, and
   * the penalised recreate); `leaving` jobs leave the tour at the same time.
   */
  insertionCost(node: number, p: number, bound = Infinity, loads = true, leaving = 0): number {
    const { inst, vehicle: v, dims, nodes } = this;
    const len = nodes.length;
    if ((inst.requires[node] & ~v.skills) !== 0 || len - leaving >= v.maxStops) return Infinity;
    const a = p > 0 ? nodes[p - 1] : 0;
    const b = p < len ? nodes[p] : -1;
    const addDist = this.dist(a, node) + this.dist(node, b) - (len > 0 ? this.dist(a, b) : 0);
    let cost = v.costPerMetre * addDist + (len === 0 ? v.fixedCost : 0);
    const timeCosts = v.costPerWaitSecond !== 0 || v.costPerDurationSecond !== 0;
    // Without time-based costs the distance alone decides: skip the checks of hopeless positions.
    if (!timeCosts && cost >= bound) return Infinity;
    for (let d = 0; loads && d < dims; d++) if (this.peakLoadWith(node, p, d) > v.capacity[d] + EPS) return Infinity;
    const tav = this.time(a, node);
    this.mergeAfterPrefix(p, tav, node);
    if (seg.timeWarp > EPS) return Infinity;
    const tvb = this.time(node, b);
    merge(seg.duration, seg.timeWarp, seg.earliest, seg.latest, tvb, this.bDur[p], this.bWarp[p], this.bEarly[p], this.bLate[p]);
    if (seg.timeWarp > EPS || seg.duration > v.maxDuration + EPS) return Infinity;
    if (timeCosts) {
      const duration = seg.duration;
      const travel = this.fTravel[p] + tav + tvb + this.bTravel[p] - (len > 0 ? this.time(a, b) : 0);
      const waiting = Math.max(0, duration - travel - this.fService[p] - this.bService[p] - inst.service[node]);
      cost += v.costPerWaitSecond * (waiting - this.waiting) + v.costPerDurationSecond * (duration - this.duration);
    }
    return cost;
  }

  /**
   * Whether the tour's delivered load plus the job's leaves room in every
   * dimension: a lower bound on the peak at every position, so a full tour
   * is passed over without scanning its positions.
   */
  hasRoomFor(node: number): boolean {
    const { inst, vehicle: v, dims } = this;
    if ((inst.requires[node] & ~v.skills) !== 0 || this.nodes.length >= v.maxStops) return false;
    const end = this.nodes.length * dims;
    for (let d = 0; d < dims; d++) if (this.fPlain[end + d] + inst.plain[node * dims + d] > v.capacity[d] + EPS) return false;
    return true;
  }

  /** Load excess added by inserting `node` before position p (the penalised recreate of sisr.ts). */
  overloadIncrease(node: number, p: number): number {
    const { vehicle: v, dims } = this;
    const end = this.nodes.length * dims;
    let increase = 0;
    for (let d = 0; d < dims; d++) {
      const peak = this.fPlain[end + d] + this.fPeak[end + d];
      increase += Math.max(0, this.peakLoadWith(node, p, d) - v.capacity[d]) - Math.max(0, peak - v.capacity[d]);
    }
    return Math.max(0, increase);
  }

  /** The tour's highest load in dimension d with `node` inserted before position p. */
  private peakLoadWith(node: number, p: number, d: number): number {
    const { inst, dims } = this;
    const k = p * dims + d;
    const delta = inst.delta[node * dims + d];
    const plain = this.fPlain[k] + inst.plain[node * dims + d] + this.bPlain[k];
    return plain + Math.max(this.fPeak[k], this.fSum[k] + Math.max(0, delta + this.bPeak[k]));
  }

  /**
   * Cost change of replacing positions [i, j) by `node` (node = -1: remove
   * only), or Infinity when infeasible. Used by swaps and removals.
   */
  replaceCost(i: number, j: number, node: number): number {
    const { inst, vehicle: v, dims, nodes } = this;
    const len = nodes.length;
    if (node < 0 && i === 0 && j === len) return -this.cost;
    if (node >= 0 && ((inst.requires[node] & ~v.skills) !== 0 || len - (j - i) + 1 > v.maxStops)) return Infinity;
    for (let d = 0; d < dims; d++) {
      const ki = i * dims + d;
      const kj = j * dims + d;
      const plain = this.fPlain[ki] + (node >= 0 ? inst.plain[node * dims + d] : 0) + this.bPlain[kj];
      const delta = node >= 0 ? inst.delta[node * dims + d] : 0;
      const peak = Math.max(this.fPeak[ki], this.fSum[ki] + Math.max(0, delta + this.bPeak[kj]));
      if (plain + peak > v.capacity[d] + EPS) return Infinity;
    }
    const a = i > 0 ? nodes[i - 1] : 0;
    const b = j < len ? nodes[j] : -1;
    let travel = this.fTravel[i] + this.bTravel[j];
    let service = this.fService[i] + this.bService[j];
    let dist: number;
    if (node >= 0) {
      const tav = this.time(a, node);
      this.mergeAfterPrefix(i, tav, node);
      if (seg.timeWarp > EPS) return Infinity;
      const tvb = this.time(node, b);
      merge(seg.duration, seg.timeWarp, seg.earliest, seg.latest, tvb, this.bDur[j], this.bWarp[j], this.bEarly[j], this.bLate[j]);
      travel += tav + tvb;
      service += inst.service[node];
      dist = this.fDist[i] + this.dist(a, node) + this.dist(node, b) + this.bDist[j];
    } else {
      const tab = this.time(a, b);
      merge(this.fDur[i], this.fWarp[i], this.fEarly[i], this.fLate[i], tab, this.bDur[j], this.bWarp[j], this.bEarly[j], this.bLate[j]);
      travel += tab;
      dist = this.fDist[i] + this.dist(a, b) + this.bDist[j];
    }
    if (seg.timeWarp > EPS || seg.duration > v.maxDuration + EPS) return Infinity;
    const waiting = Math.max(0, seg.duration - travel - service);
    return this.costOf(dist, seg.duration, waiting) - this.cost;
  }

  /**
   * Penalty (time warp + load and duration excess) of prefix(i) + node +
   * suffix(j); node = -1 joins prefix and suffix directly. O(dims).
   */
  joinPenalty(i: number, j: number, node: number): number {
    const { inst, vehicle: v, dims, nodes } = this;
    let penalty = Math.max(0, nodes.length - (j - i) + (node >= 0 ? 1 : 0) - v.maxStops) + (node >= 0 && (inst.requires[node] & ~v.skills) !== 0 ? 1 : 0);
    for (let d = 0; d < dims; d++) {
      const ki = i * dims + d;
      const kj = j * dims + d;
      const plain = this.fPlain[ki] + (node >= 0 ? inst.plain[node * dims + d] : 0) + this.bPlain[kj];
      const delta = node >= 0 ? inst.delta[node * dims + d] : 0;
      const peak = Math.max(this.fPeak[ki], this.fSum[ki] + Math.max(0, delta + this.bPeak[kj]));
      penalty += Math.max(0, plain + peak - v.capacity[d]);
    }
    const a = i > 0 ? nodes[i - 1] : 0;
    const b = j < nodes.length ? nodes[j] : -1;
    if (node >= 0) {
      this.mergeAfterPrefix(i, this.time(a, node), node);
      merge(seg.duration, seg.timeWarp, seg.earliest, seg.latest, this.time(node, b), this.bDur[j], this.bWarp[j], this.bEarly[j], this.bLate[j]);
    } else {
      merge(this.fDur[i], this.fWarp[i], this.fEarly[i], this.fLate[i], this.time(a, b), this.bDur[j], this.bWarp[j], this.bEarly[j], this.bLate[j]);
    }
    return penalty + seg.timeWarp + Math.max(0, seg.duration - v.maxDuration);
  }

  /**
   * prefix(p) + travel + `node` into `seg`. A job with several windows is
   * evaluated in the window the tour's own pass would choose after this
   * prefix (the first its earliest arrival can reach: a later one only
   * starts service later), so the evaluation of the job itself is exact.
   */
  private mergeAfterPrefix(p: number, travel: number, node: number): void {
    const inst = this.inst;
    if (inst.multiWindow) mergeJob(inst, this.fDur[p], this.fWarp[p], this.fEarly[p], this.fLate[p], travel, node);
    else merge(this.fDur[p], this.fWarp[p], this.fEarly[p], this.fLate[p], travel, inst.service[node], 0, inst.ready[node], inst.due[node]);
  }

  /**
   * Cheapest insertion of a pickup-and-delivery pair: the pickup before
   * position i (first <= i <= last), the delivery before original position
   * j >= i (j = i: right after the pickup); the cost change, or Infinity when
   * no such placement is feasible or below `bound`, with the positions in
   * `pairPlace`. For each i the piece between the two grows one job at a
   * time, so a tour costs O(length^2) merges at most; the scan over j stops
   * once the piece cannot end before the delivery's due time or carries
   * more than the vehicle takes (both only grow with j), and over i once the
   * prefix cannot take the pickup (only later from there on a tour without
   * time warp). Jobs of several windows between the two keep the window the
   * tour chose for them (on the safe side, as in the O(1) moves).
   */
  pairInsertionCost(pickup: number, delivery: number, bound = Infinity, first = 0, last = this.nodes.length): number {
    const { inst, vehicle: v, dims, nodes } = this;
    const len = nodes.length;
    pairPlace.pickup = -1;
    if ((inst.requires[pickup] & ~v.skills) !== 0 || (inst.requires[delivery] & ~v.skills) !== 0 || len + 2 > v.maxStops) return Infinity;
    const timeCosts = v.costPerWaitSecond !== 0 || v.costPerDurationSecond !== 0;
    const service = inst.service;
    const multi = inst.multiWindow;
    const deliveryDue = inst.due[delivery] + EPS;
    const end = len * dims;
    const pickupDue = inst.due[pickup] + EPS;
    let best = bound;
    for (let i = first; i <= last && i <= len; i++) {
      // The prefix's earliest end and its peak load only grow with i.
      if (this.fEarly[i] + this.fDur[i] - this.fWarp[i] > pickupDue) break;
      let prefixFits = true;
      let pickupFits = true;
      for (let d = 0; d < dims; d++) {
        const total = this.fPlain[end + d] + inst.plain[pickup * dims + d] + inst.plain[delivery * dims + d];
        if (total + this.fPeak[i * dims + d] > v.capacity[d] + EPS) prefixFits = false;
        if (total + this.fSum[i * dims + d] + inst.delta[pickup * dims + d] > v.capacity[d] + EPS) pickupFits = false;
      }
      if (!prefixFits) break;
      if (!pickupFits) continue;
      const a = i > 0 ? nodes[i - 1] : 0;
      const tap = this.time(a, pickup);
      this.mergeAfterPrefix(i, tap, pickup);
      if (seg.timeWarp > EPS) continue;
      let dur = seg.duration;
      let warp = seg.timeWarp;
      let early = seg.earliest;
      let late = seg.latest;
      let dist = this.fDist[i] + this.dist(a, pickup);
      let travel = this.fTravel[i] + tap;
      let served = this.fService[i] + service[pickup];
      let prev = pickup;
      for (let j = i; j <= len; j++) {
        if (j > i) {
          const n = nodes[j - 1];
          const t = this.time(prev, n);
          merge(dur, warp, early, late, t, service[n], 0, multi ? this.wReady[j - 1] : inst.ready[n], multi ? this.wDue[j - 1] : inst.due[n]);
          if (seg.timeWarp > EPS) break;
          dur = seg.duration;
          warp = seg.timeWarp;
          early = seg.earliest;
          late = seg.latest;
          dist += this.dist(prev, n);
          travel += t;
          served += service[n];
          prev = n;
        }
        // The piece ends no earlier than this: the delivery's window is out of reach from here on.
        if (early + dur - warp > deliveryDue) break;
        let loadFits = true;
        let pieceFits = true;
        for (let d = 0; d < dims; d++) {
          const total = this.fPlain[end + d] + inst.plain[pickup * dims + d] + inst.plain[delivery * dims + d];
          const k = j * dims + d;
          const onBoard = this.fSum[k] + inst.delta[pickup * dims + d];
          if (total + onBoard > v.capacity[d] + EPS) pieceFits = false;
          if (total + onBoard + inst.delta[delivery * dims + d] + this.bPeak[k] > v.capacity[d] + EPS) loadFits = false;
        }
        if (!pieceFits) break;
        if (!loadFits) continue;
        const b = j < len ? nodes[j] : -1;
        const total = dist + this.dist(prev, delivery) + this.dist(delivery, b) + this.bDist[j];
        if (!timeCosts && this.costOf(total, 0, 0) - this.cost >= best) continue;
        const tpd = this.time(prev, delivery);
        if (multi) mergeJob(inst, dur, warp, early, late, tpd, delivery);
        else merge(dur, warp, early, late, tpd, service[delivery], 0, inst.ready[delivery], inst.due[delivery]);
        if (seg.timeWarp > EPS) continue;
        const tdb = this.time(delivery, b);
        merge(seg.duration, seg.timeWarp, seg.earliest, seg.latest, tdb, this.bDur[j], this.bWarp[j], this.bEarly[j], this.bLate[j]);
        if (seg.timeWarp > EPS || seg.duration > v.maxDuration + EPS) continue;
        const waiting = Math.max(0, seg.duration - travel - tpd - tdb - this.bTravel[j] - served - service[delivery] - this.bService[j]);
        const cost = this.costOf(total, seg.duration, waiting) - this.cost;
        if (cost < best) {
          best = cost;
          pairPlace.pickup = i;
          pairPlace.delivery = j;
        }
      }
    }
    return pairPlace.pickup >= 0 ? best : Infinity;
  }

  /** Cost change of removing the jobs at positions i < j (a pair), or Infinity when the rest breaks a constraint. */
  pairRemovalCost(i: number, j: number): number {
    const { inst, vehicle: v, nodes } = this;
    const len = nodes.length;
    if (len === 2) return -this.cost;
    let dur = this.fDur[i];
    let warp = this.fWarp[i];
    let early = this.fEarly[i];
    let late = this.fLate[i];
    let prev = i > 0 ? nodes[i - 1] : 0;
    let dist = this.fDist[i];
    let travel = this.fTravel[i];
    let served = this.fService[i];
    for (let m = i + 1; m < j; m++) {
      const n = nodes[m];
      const t = this.time(prev, n);
      merge(dur, warp, early, late, t, inst.service[n], 0, inst.multiWindow ? this.wReady[m] : inst.ready[n], inst.multiWindow ? this.wDue[m] : inst.due[n]);
      dur = seg.duration;
      warp = seg.timeWarp;
      early = seg.earliest;
      late = seg.latest;
      dist += this.dist(prev, n);
      travel += t;
      served += inst.service[n];
      prev = n;
    }
    const b = j + 1 < len ? nodes[j + 1] : -1;
    const t = this.time(prev, b);
    merge(dur, warp, early, late, t, this.bDur[j + 1], this.bWarp[j + 1], this.bEarly[j + 1], this.bLate[j + 1]);
    if (seg.timeWarp > EPS || seg.duration > v.maxDuration + EPS) return Infinity;
    travel += t + this.bTravel[j + 1];
    served += this.bService[j + 1];
    return this.costOf(dist + this.dist(prev, b) + this.bDist[j + 1], seg.duration, Math.max(0, seg.duration - travel - served)) - this.cost;
  }

  /** The sequence with `pickup` inserted before position i and `delivery` before original position j (`pairInsertionCost`'s positions). */
  withPair(pickup: number, i: number, delivery: number, j: number): number[] {
    const nodes = this.nodes;
    return [...nodes.slice(0, i), pickup, ...nodes.slice(i, j), delivery, ...nodes.slice(j)];
  }

  insert(node: number, p: number): void {
    const length = this.nodes.length;
    this.nodes.splice(p, 0, node);
    this.updateBetween(p, length - p, length);
  }
}


/** Evaluates an arbitrary sequence on a vehicle (O(length)); used for multi-job moves. */
export function evaluateSequence(route: Route, nodes: number[]): { feasible: boolean; cost: number } {
  const saved = route.nodes;
  route.nodes = nodes;
  route.update();
  const result = { feasible: route.feasible && precedenceHolds(route.inst, nodes), cost: route.cost };
  route.nodes = saved;
  route.update();
  return result;
}

/** Every pair's pickup precedes its delivery and both are present. */
export function precedenceHolds(inst: Instance, nodes: number[]): boolean {
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    if (inst.pairRole[n] === 2) {
      const p = nodes.indexOf(inst.partner[n]);
      if (p < 0 || p > i) return false;
    } else if (inst.pairRole[n] === 1 && nodes.indexOf(inst.partner[n]) < 0) return false;
  }
  return true;
}
