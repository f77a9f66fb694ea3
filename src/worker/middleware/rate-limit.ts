import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { ApiError } from "../../core/errors";

/** The interface's limit: requests per second per company (`RATE_LIMIT_PER_SECOND` overrides it, e.g. for load benchmarks). */
const DEFAULT_RATE_PER_SECOND = 200;

interface Bucket {
  tokens: number;
  at: number;
}

/** Token buckets of this isolate, one per company; a bucket idle for a second is full again and can go. */
const buckets = new Map<string, Bucket>();
const MAX_BUCKETS = 10_000;

/**
 * Takes one token from the key's bucket (refilled at `rate` per second, at
 * most `rate` tokens: a burst of one second); false when it is empty.
 */
function takeToken(key: string, rate: number, now = Date.now()): boolean {
  let bucket = buckets.get(key);
  if (!bucket) {
    if (buckets.size >= MAX_BUCKETS) for (const [k, b] of buckets) if (now - b.at >= 1000) buckets.delete(k);
    bucket = { tokens: rate, at: now };
    buckets.set(key, bucket);
  }
  bucket.tokens = Math.min(rate, bucket.tokens + ((now - bucket.at) / 1000) * rate);
  bucket.at = now;
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

/** 429; the next token comes within 1/rate s, the platform window may take longer: retry after a second either way. */
const tooMany = (rate: number) => new ApiError(429, `Rate limit exceeded: ${rate} requests per second`, "", { "Retry-After": "1" });

/**
 * Requests per company, in two stages:
 * 1. a token bucket in this isolate (`rate` per second, burst `rate`) refuses
 *    a burst at once, before any I/O;
 * 2. the platform's rate-limiting binding (2000 per 10 s, its finest period)
 *    holds the limit across isolates and locations.
 */
export const rateLimit = createMiddleware<AppEnv>(async (c, next) => {
  const configured = Number(c.env.RATE_LIMIT_PER_SECOND);
  const rate = configured >= 1 ? configured : DEFAULT_RATE_PER_SECOND;
  const key = `company:${c.get("company").id}`;
  if (!takeToken(key, rate)) throw tooMany(rate);
  const limiter = c.env.RATE_LIMITER;
  if (limiter) {
    const { success } = await limiter.limit({ key });
    if (!success) throw tooMany(rate);
  }
  await next();
});
