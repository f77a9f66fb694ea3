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
import type { RoutingParams } from "../../domain/routing-plan";
import type { Env } from "../../env";
import { formatDateTime } from "../../lib/time";
import { roadEngineMaxMs } from "../road-engine";

export const MAX_TIME_BUDGET_SECONDS = 120;
const DEFAULT_BASE_MS = 8_000;
const BASE_DELIVERIES = 200;
const MS_PER_EXTRA_DELIVERY = 65;
const SYNC_DEFAULT_MAX_MS = 3_000;
/** Loading the deliveries, the matrices and writing the routes, on top of the search (an estimate for the expected wait). */
const SETUP_ALLOWANCE_MS = 2_000;
/** The watchdog waits this long beyond the search time (queue wait, loading, writes), plus what the road engine may take, before it re-runs a job. */
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

/**
 * How long past its search time a routing run of `params` may take before
 * the watchdog acts: the fixed margin plus the longest the road engine may
 * take for the plan's matrices (its size in the engine's table blocks, per
 * vehicle class) and tour geometries, each request up to its timeout
 * (`roadEngineMaxMs`), so a slow engine is not taken for a dead run.
 */
export function watchdogMarginMs(env: Env, params: Pick<RoutingParams, "deliveryIds" | "vehicles" | "vehicleClass" | "numVehicles">): number {
  const stops = params.deliveryIds.length;
  const vehicleClasses = new Set(params.vehicles?.map((v) => v.vehicle_class ?? params.vehicleClass) ?? [params.vehicleClass]).size;
  return WATCHDOG_MARGIN_MS + roadEngineMaxMs(env, { points: stops + 1, vehicleClasses, tours: Math.min(params.numVehicles, stops) });
}

/** When a routing run of `params` that starts now, searching `budgetMs`, should be final at the latest. */
export const routingDeadline = (env: Env, params: RoutingParams, budgetMs: number, from = Date.now()) => from + budgetMs + watchdogMarginMs(env, params);

/**
 * When a one-step upload should be final at the latest: its import, then the
 * longest search; the routing run sets its own deadline once the plan's size is known.
 */
export const uploadDeadline = (from = Date.now()) => from + UPLOAD_IMPORT_ALLOWANCE_MS + MAX_TIME_BUDGET_SECONDS * 1000 + WATCHDOG_MARGIN_MS;
