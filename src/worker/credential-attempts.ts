/**
 * Password and code attempts (`POST /auth`, `/register`, `/activatedriver`)
 * under the company's login throttle (src/durable/login-throttle.ts): a
 * throttled attempt is a 429 with `Retry-After` and one log line; the answer
 * is the same whether or not the account exists.
 */
import type { Context } from "hono";
import type { AttemptKind } from "../core/coordinator/login-throttle";
import type { AppEnv } from "./app-env";
import { ApiError } from "../core/errors";
import { log } from "../core/lib/log";
import { companyStub } from "../core/services/live";

/** The client's address as Cloudflare's edge reports it (one shared bucket where it is missing, e.g. in local tests). */
export const clientAddress = (c: Context<AppEnv>) => c.req.header("CF-Connecting-IP") ?? "unknown";

/** Runs `attempt` when the throttle lets it; a 403 from it stays counted as a failure, anything else takes the count back. */
export async function throttledAttempt<T>(c: Context<AppEnv>, kind: AttemptKind, account: string, attempt: () => Promise<T>): Promise<T> {
  const subjects = { account, address: clientAddress(c) };
  const coordinator = companyStub(c.env, c.get("company").id);
  const verdict = await coordinator.beginAttempt(kind, subjects);
  if (!verdict.allowed) {
    log("warn", "attempt throttled", { kind, account, address: subjects.address, failures: verdict.failures, retry_after_seconds: verdict.retryAfterSeconds });
    throw new ApiError(429, `Too many failed attempts; try again in ${verdict.retryAfterSeconds} s`, "", { "Retry-After": String(verdict.retryAfterSeconds) });
  }
  let result: T;
  try {
    result = await attempt();
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 403)) await coordinator.endAttempt(kind, subjects, "void");
    throw err;
  }
  await coordinator.endAttempt(kind, subjects, "succeeded");
  return result;
}
