import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { ApiError } from "../../core/errors";
import type { Context } from "hono";
import { clientAddress } from "../credential-attempts";

/** The interface's limit: requests per second per company, and per client on the service's own paths (`RATE_LIMIT_PER_SECOND` overrides it, e.g. for load benchmarks). */
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
 * most `rate` tokens: a burst of one second); the tokens left, or -1 when it
 * was empty.
 */
function takeToken(key: string, rate: number, now = Date.now()): number {
  let bucket = buckets.get(key);
  if (!bucket) {
    if (buckets.size >= MAX_BUCKETS) for (const [k, b] of buckets) if (now - b.at >= 1000) buckets.delete(k);
    bucket = { tokens: rate, at: now };
    buckets.set(key, bucket);
  }
  bucket.tokens = Math.min(rate, bucket.tokens + ((now - bucket.at) / 1000) * rate);
  bucket.at = now;
  if (bucket.tokens < 1) return -1;
  bucket.tokens -= 1;
  return bucket.tokens;
}

/**
 * The limit as the IETF draft "RateLimit header fields for HTTP" writes it: the policy (`q` requests per `w`
 * seconds) and what is left of it (`r`) with the seconds until the bucket is full again (`t`). What this edge's
 * bucket holds: the platform's limiter across locations may refuse earlier, with a 429 as this one.
 */
export const RATE_LIMIT_HEADERS = ["RateLimit-Policy", "RateLimit"] as const;
const limitHeaders = (policy: string, rate: number, left: number) => ({
  "RateLimit-Policy": `"${policy}";q=${rate};w=1`,
  RateLimit: `"${policy}";r=${Math.floor(left)};t=${Math.ceil((rate - left) / rate)}`,
});

/** 429; the next token comes within 1/rate s, the platform window may take longer: retry after a second either way. */
const tooMany = (policy: string, rate: number) =>
  new ApiError(429, `Rate limit exceeded: ${rate} requests per second`, "", { "Retry-After": "1", ...limitHeaders(policy, rate, 0) });

/**
 * Requests per key, in two stages:
 * 1. a token bucket in this isolate (`rate` per second, burst `rate`) refuses
 *    a burst at once, before any I/O;
 * 2. the platform's rate-limiting binding (2000 per 10 s, its finest period)
 *    holds the limit across isolates and locations.
 */
const limitBy = (policy: "company" | "client", keyOf: (c: Context<AppEnv>) => string) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const configured = Number(c.env.RATE_LIMIT_PER_SECOND);
    const rate = configured >= 1 ? configured : DEFAULT_RATE_PER_SECOND;
    const key = `${policy}:${keyOf(c)}`;
    const left = takeToken(key, rate);
    if (left < 0) throw tooMany(policy, rate);
    const limiter = c.env.RATE_LIMITER;
    if (limiter) {
      const { success } = await limiter.limit({ key });
      if (!success) throw tooMany(policy, rate);
    }
    await next();
    // A websocket's 101 comes from the company's object as it is (its headers cannot change).
    if (c.res.status === 101) return;
    for (const [name, value] of Object.entries(limitHeaders(policy, rate, left))) c.res.headers.set(name, value);
  });

/** The interface's limit: per company, on every path under `/<slug>`. */
export const rateLimit = limitBy("company", (c) => String(c.get("company").id));

/** The service's own paths (CLIENT_LIMITED_PATHS: `/tiles`, `/openapi.json`, `/docs`, `/_operator`; not `/health`): per client address, at the same rate. */
export const clientRateLimit = limitBy("client", clientAddress);
