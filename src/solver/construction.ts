import type { Instance } from "./model";
import type { Route } from "./route";
import { SolutionState } from "./state";

/**
 * Parallel regret-2 insertion (Potvin & Rousseau 1993): repeatedly insert
 * the job whose best and second-best tours differ most, so that jobs with
 * few good options are placed first. A new tour is opened, seeded with the
 * job farthest from the depot (with several depots: from its nearest one),
 * only when nothing fits into the open ones.
 * Multi-job units (pairs, groups) are placed first, cheapest-first.
 */
export function regretInsertion(inst: Instance): SolutionState {
  const state = SolutionState.empty(inst);
  for (const u of state.unassigned.slice()) {
    if (inst.units[u].length > 1) {
      const pl = state.bestPlacement(u, null, 0, true);
      if (pl) state.apply(u, pl);
    }
  }
  const pending = state.unassigned.filter((u) => inst.units[u].length === 1);
  const givenUp: number[] = state.unassigned.filter((u) => inst.units[u].length > 1);
  // Best cost and position of every pending job in every open tour, plus
  // each job's best and second-best cost over all tours (kept incrementally).
  const costs = new Map<Route, Float64Array>();
  const positions = new Map<Route, Int32Array>();
  const best1 = new Float64Array(inst.size).fill(Infinity);
  const best2 = new Float64Array(inst.size).fill(Infinity);
  const bestRoute: (Route | null)[] = new Array(inst.size).fill(null);
  const secondRoute: (Route | null)[] = new Array(inst.size).fill(null);
  // Cheapest position of `node` in `route`.
  const evaluate = (route: Route, node: number) => {
    let best = Infinity;
    let bestPos = -1;
    for (let i = route.firstPosition(node), last = route.hasRoomFor(node) ? route.lastPosition(node) : -1; i <= last; i++) {
      const cost = route.insertionCost(node, i, best);
      if (cost < best) {
        best = cost;
        bestPos = i;
      }
    }
    costs.get(route)![node] = best;
    positions.get(route)![node] = bestPos;
  };
  const rank = (node: number) => {
    best1[node] = best2[node] = Infinity;
    bestRoute[node] = secondRoute[node] = null;
    for (const r of state.routes) offer(node, r, costs.get(r)![node]);
  };
  const offer = (node: number, r: Route, c: number) => {
    if (c < best1[node]) {
      best2[node] = best1[node];
      secondRoute[node] = bestRoute[node];
      best1[node] = c;
      bestRoute[node] = r;
    } else if (c < best2[node]) {
      best2[node] = c;
      secondRoute[node] = r;
    }
  };
  /**
   * Re-evaluates the pending jobs for `route` after `inserted` went in
   * before position `at` (a new tour: `inserted` = -1, full scan). Every
   * other edge of the tour is unchanged and can only have become tighter
   * (triangle inequality), so a job whose best edge survived keeps it
   * unless the new edges are cheaper: O(1) instead of a scan of the tour.
   */
  const refresh = (route: Route, inserted = -1, at = -1) => {
    const known = costs.has(route);
    if (!known) {
      costs.set(route, new Float64Array(inst.size));
      positions.set(route, new Int32Array(inst.size));
    }
    const c = costs.get(route)!;
    const pos = positions.get(route)!;
    for (const u of pending) {
      const node = inst.units[u][0];
      // A job that did not fit before still does not.
      if (known && c[node] === Infinity) continue;
      const before = c[node];
      const old = pos[node];
      if (inserted < 0 || old === at) evaluate(route, node);
      else {
        const kept = old < at ? old : old + 1;
        const again = route.insertionCost(node, kept);
        // Cheaper can only come from the new edges; dearer (time-based costs) needs a full scan.
        if (again > before + 1e-9) evaluate(route, node);
        else {
          c[node] = again;
          pos[node] = kept;
          for (const p of [at, at + 1]) {
            const cost = route.insertionCost(node, p, c[node]);
            if (cost < c[node]) {
              c[node] = cost;
              pos[node] = p;
            }
          }
        }
      }
      // The tour changed: a job ranked by it has to be re-ranked.
      if (bestRoute[node] === route || secondRoute[node] === route) rank(node);
      else offer(node, route, c[node]);
    }
  };
  for (const r of state.routes) refresh(r);
  while (pending.length > 0) {
    let chosen = -1;
    let chosenRegret = -Infinity;
    for (let k = 0; k < pending.length; k++) {
      const node = inst.units[pending[k]][0];
      if (bestRoute[node] === null) continue;
      // A job with a single option has "infinite" regret; among those prefer the cheapest.
      const regret = best2[node] === Infinity ? 1e12 - best1[node] : best2[node] - best1[node];
      if (regret > chosenRegret) {
        chosenRegret = regret;
        chosen = k;
      }
    }
    if (chosen >= 0) {
      const u = pending[chosen];
      const node = inst.units[u][0];
      const route = bestRoute[node]!;
      const at = positions.get(route)![node];
      pending.splice(chosen, 1);
      state.apply(u, { route, vehicle: route.vehicle, cost: 0, position: at });
      refresh(route, node, at);
      continue;
    }
    // Nothing fits: seed a new tour with the farthest job.
    let seed = -1;
    let far = -Infinity;
    for (let k = 0; k < pending.length; k++) {
      const node = inst.units[pending[k]][0];
      const d = inst.depotTrip ? inst.depotTrip[node] : inst.distances.at(0, node) + inst.distances.at(node, 0);
      if (d > far) {
        far = d;
        seed = k;
      }
    }
    const u = pending[seed];
    pending.splice(seed, 1);
    const pl = state.canOpenTour() ? state.bestPlacement(u, null, 0, true) : null;
    if (!pl) {
      givenUp.push(u);
      continue;
    }
    state.apply(u, pl);
    refresh(state.routeOf[inst.units[u][0]]!);
  }
  state.unassigned = givenUp.filter((u) => state.routeOf[inst.units[u][0]] === null);
  return state;
}

/** From this many jobs on, construction is `granularInsertion` (regret insertion grows with n^2 x tour length). */
export const GRANULAR_CONSTRUCTION_FROM = 2_000;

/**
 * Cheapest insertion for large plans, jobs farthest from the depot first,
 * each into the tours that hold one of its nearest neighbours (granular,
 * Toth & Vigo 2003), or a new tour when none of them fits: O(n x K x tour
 * length), a first feasible plan for 5,000 stops in seconds. Multi-job
 * units look at every tour.
 */
export function granularInsertion(inst: Instance): SolutionState {
  const state = SolutionState.empty(inst);
  const far = (u: number) => {
    const node = inst.units[u][0];
    return inst.depotTrip ? inst.depotTrip[node] : inst.distances.at(0, node) + inst.distances.at(node, 0);
  };
  const order = state.unassigned.slice().sort((a, b) => far(b) - far(a));
  const k = inst.neighbourCount;
  const near = new Set<Route>();
  for (const u of order) {
    const members = inst.units[u];
    near.clear();
    if (members.length === 1) {
      for (let i = 0; i < k; i++) {
        const r = state.routeOf[inst.neighbours[members[0] * k + i]];
        if (r) near.add(r);
      }
    }
    const placement = state.bestPlacement(u, null, 0, true, members.length === 1 ? near : state.routes);
    if (placement) state.apply(u, placement);
  }
  return state;
}
