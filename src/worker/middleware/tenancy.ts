import { eq } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { createDb } from "../../core/db/client";
import { companies } from "../../core/db/schema";
import { DIRECTORY_CACHE_MS, directoryEntry, envForShard, shardBinding } from "../../core/db/shards";
import type { AppEnv, Company, Db, Env } from "../../core/env";
import { ApiError, forbidden } from "../errors";
import { setLogSlug } from "../../core/lib/log";

export const SLUG = /^[a-z0-9][a-z0-9-]{1,39}$/;

export async function findCompanyBySlug(db: Db, slug: string): Promise<Company | null> {
  if (!SLUG.test(slug)) return null;
  const [row] = await db
    .select({ id: companies.id, slug: companies.slug, companyname: companies.companyname, location_id: companies.location_id, timezone: companies.timezone })
    .from(companies)
    .where(eq(companies.slug, slug))
    .limit(1);
  return row ?? null;
}

/** A company with where it lives (db/shards.ts). */
export interface PlacedCompany {
  company: Company;
  shard: number;
  /** Moving to another shard: writes wait (503). */
  readOnly: boolean;
}

/** A company by slug through the directory: its shard, then its row there. Null when unknown. */
export async function findPlacedCompany(env: Env, slug: string): Promise<PlacedCompany | null> {
  if (!SLUG.test(slug)) return null;
  const entry = await directoryEntry(env, { slug });
  const shard = entry?.shard ?? 0;
  const binding = shardBinding(env, shard);
  if (!binding) throw new Error(`Company ${slug} lives on shard ${shard}, which has no binding`);
  const company = await findCompanyBySlug(createDb(binding), slug);
  return company ? { company, shard, readOnly: entry?.read_only ?? false } : null;
}

/**
 * Companies seen by this isolate, for a minute (DIRECTORY_CACHE_MS): every API
 * request resolves its slug, and company records and their shard hardly ever
 * change (a move waits longer than this before it copies). Unknown slugs are not
 * cached, so a company is usable the moment it is created.
 */
const recentCompanies = new Map<string, { placed: PlacedCompany; until: number }>();

async function cachedCompany(env: Env, slug: string): Promise<PlacedCompany | null> {
  const hit = recentCompanies.get(slug);
  if (hit && hit.until > Date.now()) return hit.placed;
  const placed = await findPlacedCompany(env, slug);
  if (placed) {
    if (recentCompanies.size > 1000) recentCompanies.clear();
    recentCompanies.set(slug, { placed, until: Date.now() + DIRECTORY_CACHE_MS });
  }
  return placed;
}

/** This isolate forgets a company (the move command, after changing its placement). */
export function forgetCompany(slug: string) {
  recentCompanies.delete(slug);
}

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
