/**
 * Solves a Solomon / Gehring-Homberger instance and prints one JSON object:
 * {"routes": [[customer numbers], ...], "vehicles": n, "distance": d, "seconds": t}
 *
 *   npm run solve -- --instance FILE --seconds S [--seed N]
 */
import { readFileSync } from "node:fs";
import { check, parseSolomon, solomonProblem, solveSync } from "../src/solver";

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
const problem = solomonProblem(parseSolomon(readFileSync(file, "utf8")));
const solution = solveSync(problem, { timeLimitMs: seconds * 1000, seed });
const violations = check(problem, solution);
if (violations.length > 0 || solution.unassigned.length > 0) {
  console.error(`infeasible: ${violations.length} violations, ${solution.unassigned.length} unassigned`);
  for (const v of violations.slice(0, 10)) console.error(`  ${v.code}: ${v.message}`);
}
// Distance recomputed in double precision from the Euclidean matrix.
const d = problem.matrices!.default!;
let distance = 0;
const routes = solution.tours.map((t) => {
  const ids = t.stops.map((s) => Number(s.jobId));
  let prev = 0;
  for (const id of ids) {
    distance += d.distances[prev * d.size + id];
    prev = id;
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
