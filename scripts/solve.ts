/**
 * Solves a Solomon / Gehring-Homberger, Li & Lim PDPTW or Cordeau MDVRP
 * instance (the format is detected from the file) and prints one JSON object:
 * {"routes": [[customer or task ids], ...], "vehicles": n, "distance": d, "seconds": t}
 * and for Cordeau files also "depots": [the file's depot id (n+1 .. n+t) of each route].
 * Cordeau files are solved with the "cost" objective (distance, at most m
 * vehicles per depot), the others with "fleet"; `--objective` overrides.
 *
 *   npm run solve -- --instance FILE --seconds S [--seed N] [--objective fleet|cost]
 */
import { readFileSync } from "node:fs";
import { type BenchmarkFormat, benchmarkProblem, check, type Problem, solveSync } from "../src/solver";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const file = arg("instance");
if (!file) {
  console.error("usage: npm run solve -- --instance FILE --seconds S [--seed N] [--objective fleet|cost]");
  process.exit(2);
}
const seconds = Number(arg("seconds") ?? 10);
const seed = Number(arg("seed") ?? 1);
const started = Date.now();
/** The file as a Problem, its format detected; a file the readers refuse ends the run with their reason. */
function load(path: string): { format: BenchmarkFormat; problem: Problem } {
  try {
    return benchmarkProblem(readFileSync(path, "utf8"));
  } catch (e) {
    console.error(`${path}: ${(e as Error).message}`);
    process.exit(2);
  }
}
const { format, problem } = load(file);
const objective = (arg("objective") ?? (format === "cordeau" ? "cost" : "fleet")) as "fleet" | "cost";
const solution = solveSync(problem, { timeLimitMs: seconds * 1000, seed, objective });
const violations = check(problem, solution);
if (violations.length > 0 || solution.unassigned.length > 0) {
  console.error(`infeasible: ${violations.length} violations, ${solution.unassigned.length} unassigned`);
  for (const v of violations.slice(0, 10)) console.error(`  ${v.code}: ${v.message}`);
}
// Distance recomputed in double precision from the Euclidean matrix (index 0 the depot, jobs[i] at i + 1, depots[k] after the jobs).
const d = problem.matrices!.default!;
const indexOf = new Map(problem.jobs.map((j, i) => [j.id, i + 1]));
(problem.depots ?? []).forEach((dp, k) => indexOf.set(`depot ${dp.id}`, problem.jobs.length + 1 + k));
let distance = 0;
const routes = solution.tours.map((t) => {
  const ids = t.stops.map((s) => Number(s.jobId));
  const home = t.depot === undefined ? 0 : indexOf.get(`depot ${t.depot}`)!;
  let prev = home;
  for (const s of t.stops) {
    const at = indexOf.get(s.jobId)!;
    distance += d.distances[prev * d.size + at];
    prev = at;
  }
  distance += d.distances[prev * d.size + home];
  return ids;
});
console.log(
  JSON.stringify({
    routes,
    vehicles: routes.length,
    ...(format === "cordeau" ? { depots: solution.tours.map((t) => Number(t.depot)) } : {}),
    distance: Math.round(distance * 1e4) / 1e4,
    seconds: Math.round((Date.now() - started) / 10) / 100,
  }),
);
