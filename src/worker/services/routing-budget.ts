/**
 * How long a routing job searches, when it is expected to be done, and when
 * the company's watchdog gives up on it.
 *
 * Search time grows with the plan: the base (`ROUTING_TIME_BUDGET_MS`, default
 * 8 s) up to 200 deliveries, plus 65 ms per delivery beyond, at most 120 s:
 * 500 deliveries 27.5 s, 1,000 deliveries 60 s, 1,877 and more 120 s. The cap
 * keeps a job well inside the consumer's CPU limit (`[limits] cpu_ms` =
 * 300,000 in wrangler.toml), which also pays for matrices, import and writes.
 * Synchronous requests block their caller: by default they search at most 3 s.
 * A request may set its own time with `time_budget_seconds` (1 to 120).
 */
import type { Env } from "../env";
import { formatDateTime } from "../lib/time";

export const MAX_TIME_BUDGET_SECONDS = 120;
const DEFAULT_BASE_MS = 8_000;
const BASE_DELIVERIES = 200;
const MS_PER_EXTRA_DELIVERY = 65;
const SYNC_DEFAULT_MAX_MS = 3_000;
/** Loading the deliveries, the matrices and writing the routes, on top of the search (an estimate for the expected wait). */
const SETUP_ALLOWANCE_MS = 2_000;
/** The watchdog waits this long beyond the search time (queue wait, matrices from a road engine, writes) before it re-runs a job. */
const WATCHDOG_MARGIN_MS = 120_000;
/** A one-step upload imports (and geocodes) up to 5,000 rows before its size, and so its budget, is known. */
const UPLOAD_IMPORT_ALLOWANCE_MS = 5 * 60_000;

/** The solver's search time for a plan of `deliveries` stops. */
export function timeBudgetMs(env: Env, deliveries: number, mode: "async" | "sync", requestedSeconds?: number): number {
  if (requestedSeconds !== undefined) return requestedSeconds * 1000;
  const configured = Number(env.ROUTING_TIME_BUDGET_MS);
  const base = Number.isFinite(configured) && configured > 0 ? configured : DEFAULT_BASE_MS;
  const grown = Math.min(MAX_TIME_BUDGET_SECONDS * 1000, base + Math.max(0, deliveries - BASE_DELIVERIES) * MS_PER_EXTRA_DELIVERY);
  return mode === "sync" ? Math.min(grown, SYNC_DEFAULT_MAX_MS) : grown;
}

/** The expected wait, as the `routing` record's meta shows it. */
export function expectedWait(budgetMs: number, from = Date.now()) {
  const seconds = Math.ceil((budgetMs + SETUP_ALLOWANCE_MS) / 1000);
  return { expected_seconds: seconds, expected_finish: formatDateTime(from + seconds * 1000) };
}

/** When a routing run that starts now should be final at the latest. */
export const routingDeadline = (budgetMs: number, from = Date.now()) => from + budgetMs + WATCHDOG_MARGIN_MS;

/** When a one-step upload (import, then routing of a plan of unknown size) should be final at the latest. */
export const uploadDeadline = (from = Date.now()) => routingDeadline(MAX_TIME_BUDGET_SECONDS * 1000, from) + UPLOAD_IMPORT_ALLOWANCE_MS;
