/**
 * Big plans split across workers, as the routing service does it with queue
 * consumers (src/core/services/routing/fan-out.ts), measured under Node with
 * worker threads standing in for the consumers. Prints figures; asserts
 * nothing.
 *
 *   npm run bench:fanout -- [--jobs 2000] [--seconds 60] [--workers 1,2] [--part-jobs 180] [--seed 1]
 *
 * The service's shares (`SPLIT_BUDGET`): a first solution on 15 % of the budget, the
 * parts 70 % split by their size, a final pass 15 %. Every budget is CPU
 * time of the thread that searches (`process.threadCpuUsage`), so the search
 * effort is the same whatever the machine's load and the wall time shows
 * how much of it the cores ran side by side. The single path (one solve of
 * the whole budget) runs first for comparison.
 */
import { fileURLToPath } from "node:url";
import { isMainThread, parentPort, Worker } from "node:worker_threads";
import { SPLIT_BUDGET, check, mergeParts, type InitialTour, type PlanPart, solveSync, splitPlan, toursOf } from "../src/solver";
import { cityProblem } from "./city-problem";

const { first: FIRST_SHARE, parts: PARTS_SHARE, final: FINAL_SHARE } = SPLIT_BUDGET;

/** CPU time of the calling thread, ms. */
const threadClock = () => {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
};

interface PartTask {
  part: PlanPart;
  budgetMs: number;
}

if (!isMainThread) {
  // A worker: solve the parts it is handed, one at a time.
  parentPort!.on("message", ({ part, budgetMs }: PartTask) => {
    const solution = solveSync(part.problem, { initial: part.initial, timeLimitMs: budgetMs, clock: threadClock, seed: 1 + part.id });
    parentPort!.postMessage({ id: part.id, tours: toursOf(solution) });
  });
} else {
  await main();
}

async function main() {
  const arg = (name: string, fallback: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? process.argv[i + 1] : fallback;
  };
  const jobs = Number(arg("jobs", "2000"));
  const budgetMs = Number(arg("seconds", "60")) * 1000;
  const workerCounts = arg("workers", "1,2").split(",").map(Number);
  const partJobs = Number(arg("part-jobs", "180"));
  const seed = Number(arg("seed", "1"));
  const problem = cityProblem(jobs, seed);
  const km = (m: number) => `${(m / 1000).toFixed(1)} km`;
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  console.log(`${jobs} jobs (city instance, seed ${seed}), budget ${s(budgetMs)} of CPU per plan, parts of >= ${partJobs} jobs`);

  let t = performance.now();
  const single = solveSync(problem, { timeLimitMs: budgetMs, clock: threadClock, seed: 1 });
  console.log(`single path: wall ${s(performance.now() - t)}; ${single.summary.tours} tours, ${km(single.summary.distance)}, ${check(problem, single).length} violations`);

  for (const count of workerCounts) {
    const started = performance.now();
    const first = solveSync(problem, { timeLimitMs: budgetMs * FIRST_SHARE, clock: threadClock, seed: 1 });
    const parts = splitPlan(problem, first, { partJobs });
    const split = performance.now();
    const results = new Map<number, InitialTour[]>();
    const workers = Array.from({ length: count }, () => new Worker(fileURLToPath(import.meta.url)));
    const queue = parts.map((part) => ({ part, budgetMs: (budgetMs * PARTS_SHARE * part.problem.jobs.length) / jobs }));
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve, reject) => {
            const next = () => {
              const task = queue.shift();
              if (task) w.postMessage(task);
              else resolve();
            };
            w.on("message", ({ id, tours }: { id: number; tours: InitialTour[] }) => {
              results.set(id, tours);
              next();
            });
            w.on("error", reject);
            next();
          }),
      ),
    );
    const partsDone = performance.now();
    for (const w of workers) await w.terminate();
    t = performance.now();
    const merged = await mergeParts(problem, parts, results, { timeLimitMs: budgetMs * FINAL_SHARE, clock: threadClock, seed: 1 });
    const end = performance.now();
    console.log(
      `${count} worker${count > 1 ? "s" : " "}: wall ${s(end - started)} = first + split ${s(split - started)} + ${parts.length} parts ${s(partsDone - split)} + merge ${s(end - t)}; ` +
        `${first.summary.tours} -> ${merged.summary.tours} tours, ${km(first.summary.distance)} -> ${km(merged.summary.distance)}, ${check(problem, merged).length} violations`,
    );
  }
}
