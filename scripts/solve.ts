/**
 * Solves a Solomon / Gehring-Homberger or Li & Lim PDPTW instance (the format
 * is detected from the file) and prints one JSON object:
 * {"routes": [[customer or task ids], ...], "vehicles": n, "distance": d, "seconds": t}
 *
 *   npm run solve -- --instance FILE --seconds S [--seed N]
 */
import { readFileSync } from "node:fs";
import { benchmarkProblem, check, type Problem, solveSync } from "../src/solver";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const file = arg("instance");
if (!file) {
  console.error("usage: npm run solve -- --instance FILE --seconds S [--seed N]");
  process.exit(2);
}
const seconds = Number(arg("seconds") ?? 10);
const seed = Number(arg("seed") ?? 1);
const started = Date.now();
/** The file as a Problem, its format detected; a file the readers refuse ends the run with their reason. */
function load(path: string): Problem {
  try {
    return benchmarkProblem(readFileSync(path, "utf8")).problem;
  } catch (e) {
    console.error(`${path}: ${(e as Error).message}`);
    process.exit(2);
  }
}
const problem = load(file);
const solution = solveSync(problem, { timeLimitMs: seconds * 1000, seed });
const violations = check(problem, solution);
if (violations.length > 0 || solution.unassigned.length > 0) {
  console.error(`infeasible: ${violations.length} violations, ${solution.unassigned.length} unassigned`);
  for (const v of violations.slice(0, 10)) console.error(`  ${v.code}: ${v.message}`);
}
// Distance recomputed in double precision from the Euclidean matrix (index 0 the depot, jobs[i] at i + 1).
const d = problem.matrices!.default!;
const indexOf = new Map(problem.jobs.map((j, i) => [j.id, i + 1]));
let distance = 0;
const routes = solution.tours.map((t) => {
  const ids = t.stops.map((s) => Number(s.jobId));
  let prev = 0;
  for (const s of t.stops) {
    const at = indexOf.get(s.jobId)!;
    distance += d.distances[prev * d.size + at];
    prev = at;
  }
  distance += d.distances[prev * d.size];
  return ids;
});
console.log(
  JSON.stringify({
    routes,
    vehicles: routes.length,
    distance: Math.round(distance * 1e4) / 1e4,
    seconds: Math.round((Date.now() - started) / 10) / 100,
  }),
);
