import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";

/**
 * 200 requests per second per company (the interface's limit), counted by
 * the platform's rate-limiting binding (configured as 2000 per 10 s, the
 * finest period it offers).
 */
export const rateLimit = createMiddleware<AppEnv>(async (c, next) => {
  const limiter = c.env.RATE_LIMITER;
  if (limiter) {
    const { success } = await limiter.limit({ key: `company:${c.get("company").id}` });
    if (!success) throw new ApiError(429, "Rate limit exceeded: 200 requests per second", "", { "Retry-After": "1" });
  }
  await next();
});
