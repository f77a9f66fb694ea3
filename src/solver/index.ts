/**
 * Route optimiser: a pure VRPTW library (no platform APIs), used by the
 * queue consumer in production and by Node for benchmarks. See README.md.
 */
export type * from "./types";
export { improvePlan, type PlannedTour, solve, solveSync } from "./solve";
export { check } from "./checker";
export { cheapestInsertion, type Insertion, type InsertionResult } from "./insertion";
export { VEHICLE_CLASSES } from "./vehicle-classes";
export {
  CIRCUITY_FACTOR,
  DEFAULT_SPEED_FACTORS,
  greatCircleProvider,
  prepareMatrices,
  type MatrixProvider,
} from "./matrix";
export { parseSolomon, solomonProblem, type SolomonInstance } from "./solomon";
export { liLimProblem, parseLiLim, type LiLimInstance, type LiLimTask } from "./lilim";
export { cordeauProblem, parseCordeau, type CordeauDepot, type CordeauInstance, type CordeauPoint } from "./cordeau";
export { benchmarkFormat, benchmarkProblem, type BenchmarkFormat } from "./benchmark";
export { SPLIT_BUDGET, mergeParts, splitPlan, toursOf, type PlanPart, type SplitOptions } from "./partition";
