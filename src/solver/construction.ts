import type { Instance } from "./model";
import type { Route } from "./route";
import { SolutionState } from "./state";

/**
 * Parallel regret-2 insertion (Potvin & Rousseau 1993): repeatedly insert
 * the job whose best and second-best tours differ most, so that jobs with
 * few good options are placed first. A new tour is opened, seeded with the
 * job farthest from the depot, only when nothing fits into the open ones.
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
  // Best cost and position of every pending job in every open tour.
  const costs = new Map<Route, Float64Array>();
  const positions = new Map<Route, Int32Array>();
  const refresh = (route: Route) => {
    let c = costs.get(route);
    let p = positions.get(route);
    if (!c || !p) {
      costs.set(route, (c = new Float64Array(inst.size)));
      positions.set(route, (p = new Int32Array(inst.size)));
    }
    for (const u of pending) {
      const node = inst.units[u][0];
      let best = Infinity;
      let bestPos = -1;
      for (let i = 0; i <= route.nodes.length; i++) {
        const cost = route.insertionCost(node, i);
        if (cost < best) {
          best = cost;
          bestPos = i;
        }
      }
      c[node] = best;
      p[node] = bestPos;
    }
  };
  for (const r of state.routes) refresh(r);
  while (pending.length > 0) {
    let chosen = -1;
    let chosenRoute: Route | null = null;
    let chosenRegret = -Infinity;
    for (let k = 0; k < pending.length; k++) {
      const node = inst.units[pending[k]][0];
      let best = Infinity;
      let second = Infinity;
      let bestRoute: Route | null = null;
      for (const r of state.routes) {
        const c = costs.get(r)![node];
        if (c < best) {
          second = best;
          best = c;
          bestRoute = r;
        } else if (c < second) second = c;
      }
      if (!bestRoute) continue;
      // A job with a single option has "infinite" regret; among those prefer the cheapest.
      const regret = second === Infinity ? 1e12 - best : second - best;
      if (regret > chosenRegret) {
        chosenRegret = regret;
        chosen = k;
        chosenRoute = bestRoute;
      }
    }
    if (chosenRoute) {
      const u = pending[chosen];
      const node = inst.units[u][0];
      pending.splice(chosen, 1);
      state.apply(u, { route: chosenRoute, vehicle: chosenRoute.vehicle, cost: 0, position: positions.get(chosenRoute)![node] });
      refresh(chosenRoute);
      continue;
    }
    // Nothing fits: seed a new tour with the farthest job.
    let seed = -1;
    let far = -Infinity;
    for (let k = 0; k < pending.length; k++) {
      const node = inst.units[pending[k]][0];
      const d = inst.distances[node] + inst.distances[node * inst.size];
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
