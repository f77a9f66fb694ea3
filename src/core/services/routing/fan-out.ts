/**
 * Big plans split across routing consumers. From ROUTING_FANOUT_MIN_STOPS
 * deliveries on (default 1,500) the routing job builds a first solution on a
 * share of the budget, cuts it into parts of whole tours (about
 * ROUTING_FANOUT_PART_STOPS deliveries each, default 180; the solver's
 * `splitPlan`), stores each part in the UPLOADS bucket (a queue message holds
 * at most 128 KB) and sends one `routing-part` message per part. Consumers
 * improve the parts independently and hand their tours to the company's
 * Durable Object (`submitPart`, idempotent by part id). The last part in, or
 * the parts' deadline (the object's alarm), sends one `routing-merge` job:
 * a consumer merges the parts (a missing one keeps its initial tours), runs a
 * final pass and writes the routes like the single-consumer path
 * (`runRouting` in merge mode). The solver runs in consumers only, never in
 * the Durable Object, which serialises the company's changes.
 *
 * Budget: the first solution gets FIRST_SHARE of the plan's search time, the
 * parts PARTS_SHARE split by their size (so the parts together search as long
 * as the single path would), the final pass FINAL_SHARE. With k consumers in
 * parallel the wall time is about (FIRST_SHARE + PARTS_SHARE / k +
 * FINAL_SHARE) x budget plus queue and storage overhead.
 */
import { type PlanPart, type Problem, SPLIT_BUDGET, type Solution, splitPlan, solve, toursOf } from "../../../solver";
import type { RoutingMergeJob, RoutingPartJob } from "../../queues";
import { type FanOutPart, type PartTours, fanOutPrefix } from "../../coordinator/parts";
import type { Env } from "../../env";
import { companyStub } from "../live";

const DEFAULT_MIN_STOPS = 1500;
const DEFAULT_PART_STOPS = 180;
export const FIRST_SHARE = SPLIT_BUDGET.first;
const PARTS_SHARE = SPLIT_BUDGET.parts;
const FINAL_SHARE = SPLIT_BUDGET.final;
/** A part searches at least this long, however small its share. */
const MIN_PART_MS = 250;
/** Beyond the parts' search time (all of it, as if one consumer took every part): queue waits, storage, compiling. */
const PARTS_MARGIN_MS = 60_000;
/** How often a part's search asks whether its result is still wanted (a cancelled process stops its parts). */
const WANTED_CHECK_MS = 2_000;

const positive = (value: string | undefined, fallback: number) => {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : fallback;
};

/** Whether a plan of `stops` deliveries is split across consumers. */
export const fansOut = (env: Env, stops: number) => stops >= positive(env.ROUTING_FANOUT_MIN_STOPS, DEFAULT_MIN_STOPS);

/** Search time of the final pass over the merged plan. */
export const finalPassMs = (budgetMs: number) => Math.round(budgetMs * FINAL_SHARE);

/** Typed arrays (matrices) as tagged plain arrays, so a part survives JSON. */
function encodePart(part: PlanPart): string {
  return JSON.stringify(part, (_key, value: unknown) =>
    value instanceof Float32Array ? { $f32: Array.from(value) } : value instanceof Float64Array ? { $f64: Array.from(value) } : value,
  );
}

function decodePart(text: string): PlanPart {
  return JSON.parse(text, (_key, value: unknown) => {
    if (value && typeof value === "object" && "$f32" in value) return Float32Array.from((value as { $f32: number[] }).$f32);
    if (value && typeof value === "object" && "$f64" in value) return Float64Array.from((value as { $f64: number[] }).$f64);
    return value;
  }) as PlanPart;
}

/**
 * Splits the first solution of a plan and hands the parts out. False when
 * the run's claim was handed over meanwhile (nothing is sent then).
 */
export async function startFanOut(env: Env, job: Omit<RoutingMergeJob, "kind">, budgetMs: number, problem: Problem, first: Solution): Promise<boolean> {
  const parts = splitPlan(problem, first, { partJobs: positive(env.ROUTING_FANOUT_PART_STOPS, DEFAULT_PART_STOPS) });
  const jobs = problem.jobs.length;
  const prefix = `${fanOutPrefix(job.companyId, job.processId)}${encodeURIComponent(job.attempt)}/`;
  const messages: RoutingPartJob[] = [];
  let partsMs = 0;
  for (const part of parts) {
    const key = `${prefix}${part.id}.json`;
    await env.UPLOADS.put(key, encodePart(part), { httpMetadata: { contentType: "application/json" } });
    const partMs = Math.max(MIN_PART_MS, Math.round((budgetMs * PARTS_SHARE * part.problem.jobs.length) / jobs));
    partsMs += partMs;
    messages.push({ kind: "routing-part", processId: job.processId, companyId: job.companyId, attempt: job.attempt, partId: part.id, key, budgetMs: partMs });
  }
  const deadline = Date.now() + partsMs + PARTS_MARGIN_MS;
  const summary: FanOutPart[] = parts.map(({ id, initial, vehicleIds }) => ({ id, initial, vehicleIds }));
  const coordinator = companyStub(env, job.companyId);
  const finalBy = deadline + finalPassMs(budgetMs) + PARTS_MARGIN_MS;
  const plan = { deadline, finalBy, job: { kind: "routing-merge" as const, ...job }, progress: [FIRST_SHARE, FIRST_SHARE + PARTS_SHARE] as [number, number] };
  if (!(await coordinator.startParts(job.processId, job.attempt, summary, plan))) return false;
  for (let i = 0; i < messages.length; i += 100) await env.ROUTING_QUEUE.sendBatch(messages.slice(i, i + 100).map((body) => ({ body })));
  return true;
}

/**
 * A stop signal for a search, asked from its progress callback (`check`) at
 * most every WANTED_CHECK_MS whether the result is still `wanted`: aborted
 * once it is not (the process was cancelled, or its run lost the claim).
 */
export function stopUnlessWanted(wanted: () => Promise<boolean>) {
  const signal = { aborted: false };
  let lastCheck = Date.now();
  let checking = false;
  const check = () => {
    if (checking || Date.now() - lastCheck < WANTED_CHECK_MS) return;
    checking = true;
    lastCheck = Date.now();
    wanted()
      .then((still) => (signal.aborted ||= !still))
      .catch(() => undefined)
      .finally(() => (checking = false));
  };
  return { signal, check };
}

/**
 * A `routing-part` message: improves one part from its initial tours and
 * hands the tours to the company's Durable Object. Does nothing when the
 * result is no longer wanted (already in, merged, another run, cancelled).
 */
export async function runRoutingPart(env: Env, job: RoutingPartJob): Promise<void> {
  const coordinator = companyStub(env, job.companyId);
  if (!(await coordinator.partWanted(job.processId, job.attempt, job.partId))) return;
  const stored = await env.UPLOADS.get(job.key);
  if (!stored) throw new Error(`part ${job.partId} of process ${job.processId} is not in storage (${job.key})`);
  const part = decodePart(await stored.text());
  const stop = stopUnlessWanted(() => coordinator.partWanted(job.processId, job.attempt, job.partId));
  const solution = await solve(part.problem, { initial: part.initial, timeLimitMs: job.budgetMs, seed: 1 + job.partId, signal: stop.signal, onProgress: stop.check });
  if (stop.signal.aborted) return;
  await coordinator.submitPart(job.processId, job.attempt, job.partId, toursOf(solution));
}

/** A part message that failed every retry: the part keeps its initial tours (counted as in, so the merge need not wait for the deadline). */
export const givePartUp = (env: Env, job: RoutingPartJob) => companyStub(env, job.companyId).submitPart(job.processId, job.attempt, job.partId, null);

/**
 * For the merge: the parts and the results in, restricted to the jobs of
 * `problem` (deliveries deleted since the split drop out). Null when
 * another run holds the parts.
 */
export async function collectedParts(env: Env, job: Pick<RoutingMergeJob, "companyId" | "processId" | "attempt">, problem: Problem) {
  const collected = await companyStub(env, job.companyId).partsForMerge(job.processId, job.attempt);
  if (!collected) return null;
  const known = new Set(problem.jobs.map((j) => j.id));
  const restrict = (tours: PartTours) => tours.map((t) => ({ ...t, jobIds: t.jobIds.filter((id) => known.has(id)) })).filter((t) => t.jobIds.length > 0);
  return {
    parts: collected.parts.map((p) => ({ ...p, initial: restrict(p.initial) })),
    results: new Map(collected.results.map(({ id, tours }) => [id, restrict(tours)])),
  };
}
