/**
 * Big plans split across workers (queue consumers): a first solution is cut
 * into parts of whole tours, each part a standalone problem solved on its
 * own from its tours (warm start), and the improved parts are put back
 * together into one solution of the whole problem, followed by a final pass.
 * The parts are the subproblems of the decomposition (decomposition.ts):
 * tours grouped by the polar angle of their barycentres around the depot.
 * With several depots (`Problem.depots`) the angles are still taken around
 * `Problem.depot`, a grouping heuristic only: every part keeps all depots
 * and its vehicles' own, so its tours start and end where they did.
 */
import { polarGroups } from "./decomposition";
import { compile, fleetOf } from "./model";
import { Random } from "./random";
import { solve } from "./solve";
import type { InitialTour, Problem, Solution, SolveOptions, TravelMatrix } from "./types";
import { warmStart } from "./warm-start";

/** One part of a split plan. */
/**
 * Shares of a plan's search time when it is split: the first solution, the
 * parts together (each in proportion to its jobs, so together they search
 * as long as one solve would) and the final pass after the merge.
 */
export const SPLIT_BUDGET = { first: 0.15, parts: 0.7, final: 0.15 } as const;

export interface PlanPart {
  /** 0 .. parts - 1. */
  id: number;
  /** Standalone: the depot and model of the whole problem, the part's jobs, the vehicles of its tours plus spares. */
  problem: Problem;
  /** The part's tours in the solution that was split: the warm start of its search, and its fallback in `mergeParts`. */
  initial: InitialTour[];
  /** The vehicles the part may use (those of `problem`). */
  vehicleIds: string[];
}

export interface SplitOptions {
  /** Jobs per part at least (a part ends with the tour that reaches it; a small remainder joins the last part). */
  partJobs: number;
  /** Which tour the cut starts from (default 1). */
  seed?: number;
}

/** Unused vehicles handed to each part, so a part may change a vehicle's type; tours never exceed the problem's limit. */
const SPARES_PER_PART = 1;

/** The tours of a solution as job ids per vehicle (the form `SolveOptions.initial` takes). */
export const toursOf = (solution: Solution): InitialTour[] => solution.tours.map((t) => ({ vehicleId: t.vehicleId, jobIds: t.stops.map((s) => s.jobId) }));

/**
 * Splits a solution of `problem` into parts of whole tours. Jobs the
 * solution leaves unassigned belong to no part (the final pass of
 * `mergeParts` tries them again). Plans with `fixOrder` or relaxed windows
 * cannot be split (a part would lose the order, or the widening).
 */
export function splitPlan(problem: Problem, solution: Solution, options: SplitOptions): PlanPart[] {
  if (problem.fixOrder) throw new Error("a plan with fixOrder keeps its order and cannot be split");
  if (solution.relaxed.length) throw new Error("a solution with relaxed windows cannot be split");
  const inst = compile(problem);
  const state = warmStart(inst, toursOf(solution));
  const groups = polarGroups(state, new Random(options.seed ?? 1), Math.max(1, options.partJobs));
  const fleet = fleetOf(problem);
  const byId = new Map(fleet.map((v) => [v.id, v]));
  const used = new Set(state.routes.map((r) => r.vehicle.id));
  const spares = fleet.filter((v) => !used.has(v.id)).slice(0, Math.max(0, inst.maxTours - state.routes.length));
  const jobs = problem.jobs;
  const depotNodes = (problem.depots ?? []).map((_, k) => jobs.length + 1 + k);
  return groups.map((nodes, id) => {
    const routes = [...new Set(nodes.map((n) => state.routeOf[n]!))];
    const vehicles = [...routes.map((r) => byId.get(r.vehicle.id)!), ...spares.slice(id * SPARES_PER_PART, (id + 1) * SPARES_PER_PART)];
    const partNodes = routes.flatMap((r) => r.nodes);
    return {
      id,
      problem: {
        ...problem,
        jobs: partNodes.map((n) => jobs[n - 1]),
        vehicles,
        numVehicles: vehicles.length,
        // Further depots (Problem.depots, every part keeps them all) stay after the part's jobs.
        matrices: problem.matrices && Object.fromEntries(Object.entries(problem.matrices).map(([cls, m]) => [cls, m && subMatrix(m, [...partNodes, ...depotNodes])])),
      },
      initial: routes.map((r) => ({ vehicleId: r.vehicle.id, jobIds: r.nodes.map((n) => jobs[n - 1].id) })),
      vehicleIds: vehicles.map((v) => v.id),
    };
  });
}

/** The matrix over the depot and the given nodes (in that order: the part's jobs, then the further depots). */
function subMatrix(m: TravelMatrix, nodes: number[]): TravelMatrix {
  const index = [0, ...nodes];
  const size = index.length;
  const pick = (from: Float32Array | Float64Array) => {
    const out = from instanceof Float32Array ? new Float32Array(size * size) : new Float64Array(size * size);
    for (let i = 0; i < size; i++) for (let j = 0; j < size; j++) out[i * size + j] = from[index[i] * m.size + index[j]];
    return out;
  };
  const distances = pick(m.distances);
  return { size, distances, durations: m.durations === m.distances ? distances : pick(m.durations) };
}

/**
 * Puts the parts back into one solution of `problem` and runs a final pass
 * over the whole plan from there (`options`: its budget; the search never
 * returns worse than the merged tours). `results`: the improved tours by
 * part id. A part without a result, or whose result does not hold exactly
 * its jobs on its own vehicles, keeps its initial tours, so no job is lost
 * or doubled; jobs on no tour are placed by the final pass where they fit.
 */
export function mergeParts(
  problem: Problem,
  parts: readonly Pick<PlanPart, "id" | "initial" | "vehicleIds">[],
  results: ReadonlyMap<number, readonly InitialTour[]>,
  options: SolveOptions = {},
): Promise<Solution> {
  const tours = parts.flatMap((part) => {
    const result = results.get(part.id);
    return result && holdsPart(part, result) ? result : part.initial;
  });
  return solve(problem, { ...options, initial: tours });
}

/** Whether tours serve exactly the part's jobs, each once, on distinct vehicles of the part. */
function holdsPart(part: Pick<PlanPart, "initial" | "vehicleIds">, tours: readonly InitialTour[]): boolean {
  const sorted = (ts: readonly InitialTour[]) => ts.flatMap((t) => t.jobIds).sort();
  const want = sorted(part.initial);
  const got = sorted(tours);
  const allowed = new Set(part.vehicleIds);
  const vehicles = new Set(tours.map((t) => t.vehicleId));
  return got.length === want.length && got.every((id, i) => id === want[i]) && vehicles.size === tours.length && [...vehicles].every((v) => allowed.has(v));
}
