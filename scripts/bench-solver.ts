/**
 * Solver benchmark (figures only, never a test).
 *
 *   npm run bench:solver -- [--seconds S] [--dir DIR] [--only C101,R101] [--seed N | --seeds 1,2]
 *   npm run bench:solver -- --set gh200|gh400|gh800|gh1000 [--seconds S] [--only C1_8_1,R1_8_6]
 *   npm run bench:solver -- --set lilim100|lilim200|lilim400 [--seconds S] [--only LC1_2_2,LR2_2_1]
 *   npm run bench:solver -- --scale [--seconds S] [--sizes 1000,2000]
 *   any mode: --clock cpu (budget in CPU time of this process, for a loaded machine),
 *   --search hgs|sisr (the final cost phase: hybrid genetic search or ruin and recreate),
 *   --iterations N (a budget of N search iterations instead of time: the same
 *   plan whatever the machine's load, for comparing settings that do not
 *   change the cost of an iteration)
 *
 * Instance mode (Solomon by default, `--set` picks a Gehring & Homberger or
 * Li & Lim PDPTW folder under /work/shared/bench; each file's format is
 * detected) solves every instance in the folder, checks each solution with
 * the independent checker and prints per instance and per class: vehicles
 * against bks.csv, distance gap, time to the first feasible solution, peak
 * memory (heap + array buffers) and the answers that are infeasible (a
 * violation found by `check`, or a job left unassigned); the rows go to
 * bench-results/<set>.csv. With several seeds (`--seeds 1,2`) every
 * instance is solved once per seed, the class lines are printed per seed,
 * and a spread line per class says how far the seeds lie apart (range of
 * the class mean gap over the seeds, and the mean and largest range of one
 * instance's gap), so a tuning result can be told from noise.
 * Scale mode solves generated city instances with time windows (embedded
 * great-circle matrices, as in production) and reports time to the first
 * feasible solution, the result after the budget and peak memory.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { benchmarkProblem, check, type Problem, type Progress, solveSync } from "../src/solver";
import { cityProblem } from "./city-problem";

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
/** `--search hgs|sisr`: the final cost phase's search (SolveOptions.search); default: the solver's. */
const search = arg("search") as "hgs" | "sisr" | undefined;
const iterations = arg("iterations") === undefined ? undefined : Number(arg("iterations"));
const seeds = (arg("seeds") ?? arg("seed") ?? "1").split(",").map(Number);
/**
 * `--clock cpu` measures the budget (and the time to first feasible) in CPU
 * time of this process instead of wall time: on a machine shared with other
 * work a solve then still gets its full budget of computing.
 */
const clock = arg("clock") === "cpu" ? cpuClock() : Date.now;

/**
 * CPU time in ms, read from the system at most once per millisecond of wall
 * time: the search asks the clock several times per iteration, and a
 * getrusage call each time took a fifth of the CPU at 800 jobs.
 */
function cpuClock(): () => number {
  let wall = -Infinity;
  let cpu = 0;
  return () => {
    const now = performance.now();
    if (now - wall >= 1) {
      wall = now;
      const u = process.cpuUsage();
      cpu = (u.user + u.system) / 1000;
    }
    return cpu;
  };
}

/** Solves `problem` within the budget, noting peak memory and when all jobs were first served. */
function timedSolve(problem: Problem, seed: number) {
  peakMemory = 0;
  sampleMemory();
  const started = clock();
  let firstFeasible = NaN;
  const onProgress = (p: Progress) => {
    sampleMemory();
    if (Number.isNaN(firstFeasible) && p.unassigned === 0) firstFeasible = (clock() - started) / 1000;
  };
  const solution = solveSync(problem, { ...(iterations === undefined ? { timeLimitMs: seconds * 1000 } : { maxIterations: iterations }), seed, onProgress, clock, search });
  sampleMemory();
  return { solution, firstFeasible, took: (clock() - started) / 1000, memory: peakMemory };
}

interface Row {
  name: string;
  seed: number;
  vehicles: number;
  bksVehicles: number;
  gap: number;
  firstFeasible: number;
  memory: number;
  feasible: boolean;
}

/** Solomon C101 and Gehring & Homberger C1_8_1 are both class C1; Li & Lim LC101 and LC1_2_1 are LC1. */
const classOf = (name: string) => /^L?(RC|R|C)\d/.exec(name)?.[0] ?? "?";

function instances(dir: string): void {
  const set = basename(dir);
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
  const csv: string[] = ["instance,seed,vehicles,distance,bks_vehicles,bks_distance,gap_percent,seconds,first_feasible_s,peak_mb,feasible"];
  const rows: Row[] = [];
  for (const f of files) for (const seed of seeds) {
    const name = f.replace(/\.txt$/i, "").toUpperCase();
    const { problem } = benchmarkProblem(readFileSync(join(dir, f), "utf8"));
    const { solution, firstFeasible, took, memory } = timedSolve(problem, seed);
    const violations = check(problem, solution);
    const feasible = violations.length === 0 && solution.unassigned.length === 0;
    const why = feasible ? "" : `  INFEASIBLE: ${violations.length} violations${violations[0] ? ` (first ${violations[0].code}: ${violations[0].message})` : ""}, ${solution.unassigned.length} unassigned`;
    const b = bks.get(name);
    const dist = solution.summary.distance;
    const gap = b ? ((dist - b.distance) / b.distance) * 100 : NaN;
    const vehicles = solution.tours.length;
    rows.push({ name, seed, vehicles, bksVehicles: b?.vehicles ?? NaN, gap, firstFeasible, memory, feasible });
    csv.push(
      [name, seed, vehicles, dist.toFixed(4), b?.vehicles ?? "", b?.distance ?? "", gap.toFixed(2), took.toFixed(2), firstFeasible.toFixed(2), (memory / 1048576).toFixed(1), feasible].join(","),
    );
    console.log(
      `${name.padEnd(8)} ${seeds.length > 1 ? `seed ${seed} ` : ""}${String(vehicles).padStart(3)} ${dist.toFixed(2).padStart(10)}  bks ${b?.vehicles ?? "?"} ${b?.distance.toFixed(2) ?? "?"}  ` +
        `gap ${gap.toFixed(2)}%  ${took.toFixed(1)}s  first feasible ${firstFeasible.toFixed(2)}s  ${mb(memory)}  ${solution.stats.iterations} it${why}`,
    );
  }
  mkdirSync("bench-results", { recursive: true });
  writeFileSync(`bench-results/${set === "solomon" ? "solver" : set}.csv`, csv.join("\n") + "\n");
  const percent = (x: number) => (Number.isNaN(x) ? "-" : `${x.toFixed(2)}%`);
  const summary = (list: Row[]) => {
    const withBks = list.filter((r) => !Number.isNaN(r.bksVehicles));
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);
    const atBksFleet = withBks.filter((r) => r.vehicles === r.bksVehicles);
    return {
      matched: atBksFleet.length,
      withBks: withBks.length,
      vehicles: list.reduce((a, r) => a + r.vehicles, 0),
      bksVehicles: withBks.reduce((a, r) => a + r.bksVehicles, 0),
      meanGap: mean(withBks.map((r) => r.gap)),
      // A plan with a tour more than the BKS is often shorter; the gap of the others is the fair one.
      gapAtBksFleet: atBksFleet.length ? mean(atBksFleet.map((r) => r.gap)) : NaN,
      maxGap: Math.max(...withBks.map((r) => r.gap)),
      firstFeasible: Math.max(...list.map((r) => r.firstFeasible)),
      memory: Math.max(...list.map((r) => r.memory)),
      infeasible: list.filter((r) => !r.feasible).length,
    };
  };
  const line = (label: string, list: Row[]) => {
    const s = summary(list);
    return (
      `${label.padEnd(12)} ${String(list.length).padStart(2)}  ${`${s.matched}/${s.withBks}`.padStart(12)}  ${`${s.vehicles} (${s.bksVehicles})`.padStart(14)}  ` +
      `${s.meanGap.toFixed(2).padStart(7)}%  ${percent(s.gapAtBksFleet).padStart(16)}  ${s.maxGap.toFixed(2).padStart(6)}%  ${s.firstFeasible.toFixed(2).padStart(17)}s  ${mb(s.memory).padStart(11)}  ${String(s.infeasible).padStart(10)}`
    );
  };
  /** How far the seeds lie apart: range of the mean gap over seeds; per instance, mean and largest range of its gap. */
  const spread = (list: Row[]) => {
    const means = seeds.map((sd) => summary(list.filter((r) => r.seed === sd)).meanGap);
    const ranges = [...new Set(list.map((r) => r.name))].map((name) => {
      const gaps = list.filter((r) => r.name === name).map((r) => r.gap);
      return Math.max(...gaps) - Math.min(...gaps);
    });
    const meanRange = ranges.reduce((a, x) => a + x, 0) / Math.max(1, ranges.length);
    return (
      `seed spread: mean gap ${Math.min(...means).toFixed(2)}% to ${Math.max(...means).toFixed(2)}% (mean ${(means.reduce((a, x) => a + x, 0) / means.length).toFixed(2)}%); ` +
      `per instance gap range mean ${meanRange.toFixed(2)}, max ${Math.max(...ranges).toFixed(2)} points`
    );
  };
  const several = seeds.length > 1;
  console.log("\nclass/seed    n  vehicles=BKS  vehicles (BKS)  mean gap  gap at BKS fleet  max gap  max first feasible  peak memory  infeasible");
  for (const cls of [...new Set(rows.map((r) => classOf(r.name)))].sort()) {
    const inClass = rows.filter((r) => classOf(r.name) === cls);
    for (const sd of seeds) console.log(line(several ? `${cls} seed ${sd}` : cls, inClass.filter((r) => r.seed === sd)));
    if (several) console.log(`${cls.padEnd(12)} ${spread(inClass)}`);
  }
  for (const sd of seeds) {
    const all = summary(rows.filter((r) => r.seed === sd));
    console.log(
      `\n${files.length} instances at ${seconds}s, seed ${sd}: vehicles = BKS on ${all.matched}/${all.withBks}; ` +
        `vehicles ${all.vehicles} vs BKS ${all.bksVehicles}; distance gap mean ${all.meanGap.toFixed(2)}% (${percent(all.gapAtBksFleet)} on the ${all.matched} with the BKS fleet), max ${all.maxGap.toFixed(2)}%; ` +
        `first feasible max ${all.firstFeasible.toFixed(2)}s; infeasible ${all.infeasible}; peak memory ${mb(all.memory)}`,
    );
  }
  if (several) console.log(`all seeds: ${spread(rows)}`);
}

function scale(): void {
  const sizes = (arg("sizes") ?? "1000,2000").split(",").map(Number);
  for (const n of sizes) {
    const problem = cityProblem(n, seeds[0]);
    const { solution, firstFeasible, took, memory } = timedSolve(problem, seeds[0]);
    const violations = check(problem, solution);
    console.log(
      `${n} jobs: first feasible ${firstFeasible.toFixed(1)}s; after ${took.toFixed(1)}s: ` +
        `${solution.tours.length} tours, ${solution.unassigned.length} unassigned, ${(solution.summary.distance / 1000).toFixed(1)} km, ` +
        `${solution.stats.iterations} iterations, ${violations.length} violations; peak heap+buffers ${mb(memory)}`,
    );
  }
}

if (process.argv.includes("--scale")) scale();
else instances(arg("dir") ?? `/work/shared/bench/${arg("set") ?? "solomon"}`);
