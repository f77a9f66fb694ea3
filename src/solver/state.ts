import type { Instance, VehicleModel } from "./model";
import type { Random } from "./random";
import { evaluateSequence, pairPlace, precedenceHolds, Route } from "./route";

/** Hierarchical objective: unassigned jobs, their priority, tours, then cost. */
export interface Objective {
  unassigned: number;
  unassignedPriority: number;
  /** The number of tours, or 0 under the "cost" objective (`Instance.fleetFirst` false), where it is not compared. */
  tours: number;
  cost: number;
}

/** a better than b (strictly)? */
export function better(a: Objective, b: Objective): boolean {
  if (a.unassigned !== b.unassigned) return a.unassigned < b.unassigned;
  if (a.unassignedPriority !== b.unassignedPriority) return a.unassignedPriority < b.unassignedPriority;
  if (a.tours !== b.tours) return a.tours < b.tours;
  return a.cost < b.cost - 1e-9;
}

/** Where a unit could go: into `route` (null = a new tour on `vehicle`). */
export interface Placement {
  route: Route | null;
  vehicle: VehicleModel;
  cost: number;
  /** Single job: insert before this position. */
  position: number;
  /** Multi-job unit: the complete new sequence of the tour. */
  sequence?: number[];
}

/** Free vehicles grouped by interchangeable type, first free one per type. */
export function vehicleTypes(inst: Instance): VehicleModel[][] {
  const byType = new Map<string, VehicleModel[]>();
  for (const v of inst.vehicles) {
    let list = byType.get(v.typeKey);
    if (!list) byType.set(v.typeKey, (list = []));
    list.push(v);
  }
  return [...byType.values()];
}

/**
 * A subproblem of a decomposition: the jobs of some whole tours. While a
 * state has a scope, ruins start only from these jobs and insertions go only
 * into tours of the scope (or a new tour), so tours outside stay untouched.
 */
export interface Scope {
  mask: Uint8Array;
  nodes: number[];
}

/** A solution under search: tours in use plus the units left out. */
export class SolutionState {
  routes: Route[] = [];
  /** Shared by clones; null = the whole problem. */
  scope: Scope | null = null;
  /** Unit indices not on any tour. */
  unassigned: number[] = [];
  /** Per node: its tour (or null) ... */
  routeOf: (Route | null)[];
  /** ... and its position there. */
  position: Int32Array;
  used: Uint8Array;
  /** Original sequences of the tours changed since `begin()`, for `rollback()`. */
  private journal: Map<Route, number[]> | null = null;
  private savedRoutes: Route[] = [];
  private savedUnassigned: number[] = [];
  /** SISR's blinks (`blinks`): the rate of the current countdown, and positions left before the next blink. */
  private blinkRate = -1;
  private untilBlink = 0;

  constructor(
    readonly inst: Instance,
    readonly types: VehicleModel[][],
    private readonly templates: Map<string, Route>,
  ) {
    this.routeOf = new Array(inst.size).fill(null);
    this.position = new Int32Array(inst.size).fill(-1);
    this.used = new Uint8Array(inst.vehicles.length);
  }

  static empty(inst: Instance): SolutionState {
    const types = vehicleTypes(inst);
    const templates = new Map(types.map((t) => [t[0].typeKey, new Route(inst, t[0])]));
    const s = new SolutionState(inst, types, templates);
    s.unassigned = inst.units.map((_, i) => i).filter((u) => !inst.invalid.has(inst.units[u][0]));
    return s;
  }

  clone(): SolutionState {
    const s = new SolutionState(this.inst, this.types, this.templates);
    s.routes = this.routes.map((r) => r.clone());
    s.unassigned = this.unassigned.slice();
    s.used.set(this.used);
    s.scope = this.scope;
    for (const r of s.routes) s.index(r);
    return s;
  }

  /**
   * Starts recording changes so that `rollback()` can undo them; cheaper
   * than cloning the whole solution for every ruin-and-recreate attempt.
   */
  begin(): void {
    this.journal = new Map();
    this.savedRoutes = this.routes.slice();
    this.savedUnassigned = this.unassigned.slice();
  }

  /** Jobs on the tours changed since `begin()` (tours since closed excluded). */
  changedJobs(): number[] {
    const jobs: number[] = [];
    for (const r of this.journal?.keys() ?? []) if (r.nodes.length > 0) jobs.push(...r.nodes);
    return jobs;
  }

  /** Keeps the changes made since `begin()`. */
  commit(): void {
    this.journal = null;
  }

  /** Undoes every change made since `begin()`. */
  rollback(): void {
    const journal = this.journal!;
    this.journal = null;
    for (const u of this.unassigned) for (const n of this.inst.units[u]) this.routeOf[n] = null;
    // Units unassigned at begin() may since sit on tours the rollback discards (e.g. tours opened meanwhile).
    for (const u of this.savedUnassigned) for (const n of this.inst.units[u]) this.routeOf[n] = null;
    this.routes = this.savedRoutes;
    this.unassigned = this.savedUnassigned;
    for (const [route, nodes] of journal) route.setNodes(nodes);
    for (const route of this.routes) if (journal.has(route)) this.index(route);
    this.used.fill(0);
    for (const r of this.routes) this.used[r.vehicle.index] = 1;
  }

  /** Records a tour's sequence before its first change (for moves made outside this class). */
  touch(route: Route): void {
    if (this.journal && !this.journal.has(route)) this.journal.set(route, route.nodes.slice());
  }

  /** Refreshes routeOf/position for one tour after it changed. */
  index(route: Route): void {
    const nodes = route.nodes;
    for (let i = 0; i < nodes.length; i++) {
      this.routeOf[nodes[i]] = route;
      this.position[nodes[i]] = i;
    }
  }

  objective(): Objective {
    let unassigned = 0;
    let unassignedPriority = 0;
    for (const u of this.unassigned) {
      for (const node of this.inst.units[u]) {
        unassigned++;
        unassignedPriority += this.inst.priority[node];
      }
    }
    let cost = 0;
    for (const r of this.routes) cost += r.cost;
    return { unassigned, unassignedPriority, tours: this.inst.fleetFirst ? this.routes.length : 0, cost };
  }

  cost(): number {
    let cost = 0;
    for (const r of this.routes) cost += r.cost;
    return cost;
  }

  /** Load excess over all tours (0 unless the penalised recreate overloaded one). */
  overload(): number {
    let overload = 0;
    for (const r of this.routes) overload += r.overload;
    return overload;
  }

  canOpenTour(): boolean {
    return this.routes.length < this.inst.maxTours;
  }

  freeVehicle(type: VehicleModel[]): VehicleModel | undefined {
    for (const v of type) if (!this.used[v.index]) return v;
    return undefined;
  }

  openTour(vehicle: VehicleModel): Route {
    const r = this.templates.get(vehicle.typeKey)!.withVehicle(vehicle);
    this.used[vehicle.index] = 1;
    this.routes.push(r);
    return r;
  }

  /** Removes the given nodes from their tours; empty tours are closed. */
  removeNodes(nodes: number[]): void {
    const touched = new Set<Route>();
    for (const n of nodes) {
      const r = this.routeOf[n];
      if (!r) continue;
      this.touch(r);
      touched.add(r);
      this.routeOf[n] = null;
      this.position[n] = -1;
    }
    for (const r of touched) {
      r.setNodes(r.nodes.filter((n) => this.routeOf[n] === r));
      if (r.nodes.length === 0) this.closeTour(r);
      else this.index(r);
    }
  }

  /** Removes a whole tour and returns its units to the unassigned list. */
  removeTour(route: Route): number[] {
    this.touch(route);
    const units = new Set<number>();
    for (const n of route.nodes) {
      units.add(this.inst.unitOf[n]);
      this.routeOf[n] = null;
      this.position[n] = -1;
    }
    route.nodes = [];
    this.afterChange(route);
    const list = [...units];
    this.unassigned.push(...list);
    return list;
  }

  afterChange(route: Route): void {
    if (route.nodes.length === 0) return this.closeTour(route);
    route.update();
    this.index(route);
  }

  /** Takes an emptied tour out of the plan and frees its vehicle. */
  private closeTour(route: Route): void {
    const i = this.routes.indexOf(route);
    if (i >= 0) {
      this.routes.splice(i, 1);
      this.used[route.vehicle.index] = 0;
    }
  }

  /**
   * Cheapest feasible placement of a unit among the `candidates` tours.
   * `blinkRate` skips candidate positions at random (SISR's blinks);
   * `allowNew` permits opening a tour when none of them fits; only
   * placements cheaper than `bound` count.
   */
  bestPlacement(unit: number, rng: Random | null, blinkRate: number, allowNew: boolean, candidates: Iterable<Route> = this.routes, bound = Infinity): Placement | null {
    let best: Placement | null = null;
    const scope = this.scope;
    for (const r of candidates) {
      if (scope && !scope.mask[r.nodes[0]]) continue;
      best = this.placementIn(r, r.vehicle, unit, rng, blinkRate, best, bound) ?? best;
    }
    // A new tour only when nothing else fits where the objective ranks tours above cost; under "cost" whenever it is cheaper.
    if (allowNew && (best === null || !this.inst.fleetFirst) && this.canOpenTour()) {
      for (const type of this.types) {
        const v = this.freeVehicle(type);
        if (v) best = this.placementIn(null, v, unit, rng, blinkRate, best, bound) ?? best;
      }
    }
    return best;
  }

  /**
   * Whether SISR skips the next candidate position: true for a share `rate`
   * of positions, independently, drawn as geometric gaps between blinks
   * (one random number per blink rather than per position scanned).
   */
  private blinks(rng: Random, rate: number): boolean {
    if (rate !== this.blinkRate) {
      this.blinkRate = rate;
      this.untilBlink = blinkGap(rng, rate);
    }
    if (this.untilBlink-- > 0) return false;
    this.untilBlink = blinkGap(rng, rate);
    return true;
  }

  /** The unit's cheapest placement in one tour (null: a new tour on `vehicle`) when cheaper than `best`, or than `limit` while there is none. */
  private placementIn(route: Route | null, vehicle: VehicleModel, unit: number, rng: Random | null, blinkRate: number, best: Placement | null, limit: number): Placement | null {
    const target = route ?? this.templates.get(vehicle.typeKey)!;
    const members = this.inst.units[unit];
    const bound = best ? best.cost : limit;
    if (members.length === 1) {
      const node = members[0];
      if (!target.hasRoomFor(node)) return null;
      let position = -1;
      let cost = bound;
      for (let p = target.firstPosition(node), last = target.lastPosition(node); p <= last; p++) {
        if (blinkRate > 0 && this.blinks(rng!, blinkRate)) continue;
        const c = target.insertionCost(node, p, cost);
        if (c < cost) {
          cost = c;
          position = p;
        }
      }
      return position >= 0 ? { route, vehicle, cost, position } : null;
    }
    if (isPair(this.inst, unit)) {
      const [pickup, delivery] = this.inst.pairRole[members[0]] === 1 ? members : [members[1], members[0]];
      const cost = target.pairInsertionCost(pickup, delivery, bound);
      if (cost === Infinity) return null;
      return { route, vehicle, cost, position: -1, sequence: target.withPair(pickup, pairPlace.pickup, delivery, pairPlace.delivery) };
    }
    const sequence = insertUnitGreedily(target, members);
    if (!sequence) return null;
    const { feasible, cost } = evaluateSequence(target, sequence);
    const delta = cost - target.cost;
    return feasible && delta < bound ? { route, vehicle, cost: delta, position: -1, sequence } : null;
  }

  apply(unit: number, placement: Placement): void {
    const route = placement.route ?? this.openTour(placement.vehicle);
    this.touch(route);
    if (placement.sequence) {
      route.nodes = placement.sequence.slice();
      route.update();
    } else route.insert(this.inst.units[unit][0], placement.position);
    this.index(route);
    const i = this.unassigned.indexOf(unit);
    if (i >= 0) this.unassigned.splice(i, 1);
  }
}

/** Whether the unit is one pickup-and-delivery pair and nothing else (not part of a larger group). */
export function isPair(inst: Instance, unit: number): boolean {
  const members = inst.units[unit];
  return members.length === 2 && inst.pairRole[members[0]] !== 0 && inst.partner[members[0]] === members[1];
}

/** Positions scanned before the next blink: geometric with success probability `rate`. */
function blinkGap(rng: Random, rate: number): number {
  return rate >= 1 ? 0 : Math.floor(Math.log(1 - rng.next()) / Math.log(1 - rate));
}

/**
 * Inserts a multi-job unit into a copy of the route, member by member at the
 * cheapest feasible position, pickups before their deliveries. Returns the
 * new sequence or null.
 */
export function insertUnitGreedily(route: Route, members: number[]): number[] | null {
  const inst = route.inst;
  const work = route.clone();
  const ordered = members.slice().sort((a, b) => (inst.pairRole[a] === 2 ? 1 : 0) - (inst.pairRole[b] === 2 ? 1 : 0));
  for (const node of ordered) {
    let bestPos = -1;
    let bestCost = Infinity;
    const from = inst.pairRole[node] === 2 ? work.nodes.indexOf(inst.partner[node]) + 1 : 0;
    for (let p = from; p <= work.nodes.length; p++) {
      const c = work.insertionCost(node, p);
      if (c < bestCost) {
        bestCost = c;
        bestPos = p;
      }
    }
    if (bestPos < 0) return null;
    work.insert(node, bestPos);
  }
  return precedenceHolds(inst, work.nodes) ? work.nodes : null;
}
