import type { AppEnv } from "../app-env";
import { createMiddleware } from "hono/factory";
import { createDb } from "../../core/db/client";
import { envForShard } from "../../core/db/shards";
import { ApiError, forbidden } from "../../core/errors";
import { setLogSlug } from "../../core/lib/log";
import { cachedCompany } from "../../core/services/company-lookup";

/** Seconds a client waits before writing again to a company that is moving between shards. */
export const MOVING_RETRY_AFTER_SECONDS = 60;

/**
 * First link of the chain: the company named by the slug (403 when unknown,
 * revealing nothing), read once with its place in the directory; from here on
 * `c.env.DB` and `c.var.db` are the company's shard. While the company moves to
 * another shard, everything but GET and HEAD answers 503 with Retry-After.
 */
export const resolveCompany = createMiddleware<AppEnv>(async (c, next) => {
  // `/register` and `/register/*` may both match one request: the company is resolved once.
  if (c.get("company")) return next();
  const placed = await cachedCompany(c.env, c.req.param("slug") ?? "");
  if (!placed) throw forbidden("Unknown company or invalid credentials");
  c.env = envForShard(c.env, placed.shard);
  c.set("db", createDb(c.env.DB));
  c.set("company", placed.company);
  setLogSlug(placed.company.slug);
  if (placed.readOnly && c.req.method !== "GET" && c.req.method !== "HEAD") {
    throw new ApiError(503, "The company's data is moving to another database: writes are paused for a few minutes, reads work", "", { "Retry-After": String(MOVING_RETRY_AFTER_SECONDS) });
  }
  await next();
});
