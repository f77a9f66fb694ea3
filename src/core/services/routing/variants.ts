/** Alternatives for the same deliveries (POST /routingvariants), computed without writing anything. */
import type { RoutingVariant } from "../../../shared/contract/routing";
import type { Company, Db } from "../../context";
import { solve } from "../../../solver";
import { buildProblem, planningOrigin } from "../../domain/routing-plan";
import type { Env } from "../../env";
import { type RoutingOptions, prepareRouting } from "./request";
import { loadPlannedDeliveries } from "./run";

/**
 * POST /routingvariants: alternatives for the same deliveries, computed
 * without writing anything: the fewest tours (main variant), the same with
 * working days capped at 80 % of the main variant's longest tour, and one
 * more tour than the main variant with days balanced across all tours.
 */
export async function routingVariants(env: Env, db: Db, company: Company, deliveryids: number[]) {
  const defaults: RoutingOptions = { truck: false, roundtrip: true, traffic: false, cancelroutes: false, assign_drivers: false, usearea: false };
  const { params } = await prepareRouting(env, db, company, { deliveryids }, defaults, "sync");
  const planned = await loadPlannedDeliveries(db, company.id, params);
  const origin = planningOrigin(params, planned);
  const budget = Math.max(200, Math.floor(params.timeBudgetMs / 3));

  const run = async (name: RoutingVariant["name"], description: string, maxTourDuration?: number, numVehicles = params.numVehicles): Promise<RoutingVariant> => {
    const problem = buildProblem({ ...params, numVehicles }, planned, origin);
    if (maxTourDuration) for (const v of problem.vehicles ?? []) v.maxTourDuration = Math.min(v.maxTourDuration ?? Infinity, maxTourDuration);
    const solution = await solve(problem, { timeLimitMs: budget, seed: 1 });
    const tours = solution.tours.filter((t) => t.stops.length);
    return {
      name,
      description,
      tours: tours.length,
      distance: Math.round(solution.summary.distance),
      duration: Math.round(solution.summary.duration),
      longest_tour: Math.round(Math.max(0, ...tours.map((t) => t.duration))),
      waiting: Math.round(solution.summary.waiting),
      unassigned: solution.unassigned.map((u) => Number(u.jobId)),
      sequences: tours.map((t) => t.stops.map((s) => Number(s.jobId))),
    };
  };

  const main = await run("fewest_tours", "Fewest tours, then least cost (the plan routing would compute)");
  const variants: RoutingVariant[] = [];
  if (main.tours > 0) {
    variants.push(await run("shorter_days", "Working days capped at 80 % of the main variant's longest tour", Math.round(main.longest_tour * 0.8)));
    const balanced = Math.round((main.duration / (main.tours + 1)) * 1.15);
    variants.push(await run("one_more_tour", "One more tour than the main variant, days balanced across all tours", Math.max(balanced, 1), main.tours + 1));
  }
  return { mainvariant: [main], variants };
}
