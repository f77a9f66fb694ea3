/**
 * Solver benchmark (figures only, never a test).
 *
 *   npm run bench:solver -- [--seconds S] [--dir DIR] [--only C101,R101] [--seed N]
 *   npm run bench:solver -- --scale [--seconds S] [--sizes 1000,2000]
 *
 * Solomon mode solves every instance in DIR (default /work/shared/bench/solomon),
 * checks each solution with the independent checker, writes
 * bench-results/solver.csv and prints a summary against bks.csv.
 * Scale mode solves generated city instances with time windows (embedded
 * great-circle matrices, as in production) and reports time to the first
 * feasible solution, the result after the budget and peak memory.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { check, parseSolomon, type Problem, solomonProblem, solveSync } from "../src/solver";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

let peakMemory = 0;
function sampleMemory(): void {
  const m = process.memoryUsage();
  peakMemory = Math.max(peakMemory, m.heapUsed + m.arrayBuffers);
}
const mb = (b: number) => `${(b / 1048576).toFixed(1)} MB`;

const seconds = Number(arg("seconds") ?? 10);
const seed = Number(arg("seed") ?? 1);

if (process.argv.includes("--scale")) scale();
else solomon();

function solomon(): void {
  const dir = arg("dir") ?? "/work/shared/bench/solomon";
  const only = arg("only")?.split(",").map((s) => s.trim().toUpperCase());
  const bks = new Map<string, { vehicles: number; distance: number }>();
  const bksFile = join(dir, "bks.csv");
  if (existsSync(bksFile)) {
    for (const line of readFileSync(bksFile, "utf8").split(/\r?\n/).slice(1)) {
      const [name, v, d] = line.split(",");
      if (name) bks.set(name.toUpperCase(), { vehicles: Number(v), distance: Number(d) });
    }
  }
  const files = readdirSync(dir)
    .filter((f) => f.toLowerCase().endsWith(".txt"))
    .filter((f) => !only || only.includes(f.replace(/\.txt$/i, "").toUpperCase()))
    .sort();
  const rows: string[] = ["instance,vehicles,distance,bks_vehicles,bks_distance,gap_percent,seconds,feasible"];
  let matched = 0;
  let vehicles = 0;
  let bksVehicles = 0;
  const gaps: number[] = [];
  let infeasible = 0;
  for (const f of files) {
    const name = f.replace(/\.txt$/i, "").toUpperCase();
    const problem = solomonProblem(parseSolomon(readFileSync(join(dir, f), "utf8")));
    const started = Date.now();
    const solution = solveSync(problem, { timeLimitMs: seconds * 1000, seed, onProgress: sampleMemory });
    const took = (Date.now() - started) / 1000;
    sampleMemory();
    const feasible = check(problem, solution).length === 0 && solution.unassigned.length === 0;
    if (!feasible) infeasible++;
    const b = bks.get(name);
    const dist = solution.summary.distance;
    const gap = b ? ((dist - b.distance) / b.distance) * 100 : NaN;
    if (b) {
      if (solution.tours.length === b.vehicles) matched++;
      bksVehicles += b.vehicles;
      gaps.push(gap);
    }
    vehicles += solution.tours.length;
    rows.push([name, solution.tours.length, dist.toFixed(4), b?.vehicles ?? "", b?.distance ?? "", gap.toFixed(2), took.toFixed(2), feasible].join(","));
    console.log(`${name.padEnd(6)} ${String(solution.tours.length).padStart(3)} ${dist.toFixed(2).padStart(9)}  bks ${b?.vehicles ?? "?"} ${b?.distance.toFixed(2) ?? "?"}  gap ${gap.toFixed(2)}%  ${took.toFixed(1)}s${feasible ? "" : "  INFEASIBLE"}`);
  }
  mkdirSync("bench-results", { recursive: true });
  writeFileSync("bench-results/solver.csv", rows.join("\n") + "\n");
  const mean = gaps.reduce((a, g) => a + g, 0) / Math.max(1, gaps.length);
  console.log(
    `\n${files.length} instances at ${seconds}s, seed ${seed}: vehicles = BKS on ${matched}/${gaps.length}; ` +
      `vehicles ${vehicles} vs BKS ${bksVehicles}; distance gap mean ${mean.toFixed(2)}%, max ${Math.max(...gaps).toFixed(2)}%; ` +
      `infeasible ${infeasible}; peak memory ${mb(peakMemory)}`,
  );
}

/** A seeded city instance: jobs around a depot, 1-3 h windows over a 10 h day. */
function cityProblem(jobs: number, seedValue: number): Problem {
  let s = seedValue >>> 0;
  const rand = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const depot = { lat: 52.52, lon: 13.405 };
  const dayStart = 7 * 3600;
  const dayEnd = 19 * 3600;
  return {
    depot,
    jobs: Array.from({ length: jobs }, (_, i) => {
      const r = 0.2 * Math.sqrt(rand());
      const a = rand() * 2 * Math.PI;
      const open = dayStart + rand() * 8 * 3600;
      const width = 3600 * (1 + 2 * rand());
      return {
        id: `job-${i + 1}`,
        location: { lat: depot.lat + r * Math.sin(a), lon: depot.lon + 1.6 * r * Math.cos(a) },
        service: 300,
        timeWindow: { start: open, end: Math.min(dayEnd - 1800, open + width) },
        load: [1 + Math.floor(rand() * 10)],
      };
    }),
    numVehicles: jobs,
    vehicleCapacity: [150],
    vehicles: Array.from({ length: Math.ceil(jobs / 8) }, (_, i) => ({
      id: `van-${i + 1}`,
      capacity: [150],
      shift: { earliestStart: dayStart, latestEnd: dayEnd },
    })),
  };
}

function scale(): void {
  const sizes = (arg("sizes") ?? "1000,2000").split(",").map(Number);
  for (const n of sizes) {
    peakMemory = 0;
    sampleMemory();
    const problem = cityProblem(n, seed);
    const started = Date.now();
    let firstFeasible = NaN;
    const solution = solveSync(problem, {
      timeLimitMs: seconds * 1000,
      seed,
      onProgress: (p) => {
        sampleMemory();
        if (Number.isNaN(firstFeasible) && p.unassigned === 0) firstFeasible = (Date.now() - started) / 1000;
      },
    });
    sampleMemory();
    const violations = check(problem, solution);
    console.log(
      `${n} jobs: first feasible ${firstFeasible.toFixed(1)}s; after ${((Date.now() - started) / 1000).toFixed(1)}s: ` +
        `${solution.tours.length} tours, ${solution.unassigned.length} unassigned, ${(solution.summary.distance / 1000).toFixed(1)} km, ` +
        `${solution.stats.iterations} iterations, ${violations.length} violations; peak heap+buffers ${mb(peakMemory)}`,
    );
  }
}
