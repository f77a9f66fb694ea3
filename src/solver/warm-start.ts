import type { Instance } from "./model";
import { precedenceHolds } from "./route";
import { SolutionState } from "./state";
import type { InitialTour } from "./types";

/**
 * The search's start from given tours (`SolveOptions.initial`). Ids are
 * checked strictly: an unknown job or vehicle, a job on two tours, a vehicle
 * on two tours, a job that can never be served, or more tours than the
 * problem allows throw. A tour that breaks a constraint (window, capacity,
 * shift, a pair or group cut apart) is not kept: its jobs are placed again
 * like every job no tour names, by cheapest feasible insertion, opening a
 * tour only when none fits; what fits nowhere stays unassigned.
 */
export function warmStart(inst: Instance, initial: readonly InitialTour[]): SolutionState {
  const state = SolutionState.empty(inst);
  const jobIndex = new Map(inst.problem.jobs.map((j, i) => [j.id, i + 1]));
  const vehicleIndex = new Map(inst.vehicles.map((v) => [v.id, v]));
  const seen = new Set<number>();
  const usedVehicles = new Set<string>();
  if (initial.length > inst.maxTours) throw new Error(`initial: ${initial.length} tours, the problem allows ${inst.maxTours}`);
  const tours = initial.map((tour) => {
    const vehicle = vehicleIndex.get(tour.vehicleId);
    if (!vehicle) throw new Error(`initial: unknown vehicle ${tour.vehicleId}`);
    if (usedVehicles.has(tour.vehicleId)) throw new Error(`initial: vehicle ${tour.vehicleId} has two tours`);
    usedVehicles.add(tour.vehicleId);
    const nodes = tour.jobIds.map((id) => {
      const node = jobIndex.get(id);
      if (node === undefined) throw new Error(`initial: unknown job ${id}`);
      if (seen.has(node)) throw new Error(`initial: job ${id} is on two tours`);
      if (inst.invalid.has(node)) throw new Error(`initial: job ${id} cannot be served (${inst.invalid.get(node)})`);
      seen.add(node);
      return node;
    });
    return { vehicle, nodes };
  });
  const onTour = new Map<number, number>();
  tours.forEach((t, i) => t.nodes.forEach((n) => onTour.set(n, i)));
  // Units (pairs, groups) must sit whole on one tour.
  const broken = new Set<number>();
  for (const members of inst.units) {
    const where = new Set(members.map((n) => onTour.get(n)));
    if (where.size > 1) for (const i of where) if (i !== undefined) broken.add(i);
  }
  tours.forEach((t, i) => {
    if (t.nodes.length === 0 || broken.has(i)) return;
    const route = state.openTour(t.vehicle);
    route.nodes = t.nodes;
    route.update();
    if (!route.feasible || !precedenceHolds(inst, route.nodes)) {
      route.nodes = [];
      state.afterChange(route);
      return;
    }
    state.index(route);
  });
  const placed = new Set(state.routes.flatMap((r) => r.nodes.map((n) => inst.unitOf[n])));
  const rest = state.unassigned.filter((u) => !placed.has(u));
  state.unassigned = [];
  for (const u of rest) {
    state.unassigned.push(u);
    const placement = state.bestPlacement(u, null, 0, true);
    if (placement) state.apply(u, placement);
  }
  return state;
}
