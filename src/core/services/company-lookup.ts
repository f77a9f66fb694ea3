/** A company by its slug through the shard directory, as every request and the operator find it; cached per isolate. */
import { eq } from "drizzle-orm";
import type { Company, Db } from "../context";
import { createDb } from "../db/client";
import { companies } from "../db/schema";
import { DIRECTORY_CACHE_MS, directoryEntry, shardBinding } from "../db/shards";
import type { Env } from "../env";
import { notFound } from "../errors";

export const SLUG = /^[a-z0-9][a-z0-9-]{1,39}$/;

/**
 * Slugs the service's own top-level paths take (the worker's `/tiles`, `/docs`, `/health`; the static
 * pages' `/app` and `/assets`, wrangler.toml `[assets]`): a company there would be unreachable or shadow them.
 */
export const RESERVED_SLUGS: readonly string[] = ["tiles", "docs", "health", "app", "assets", "api", "openapi", "static", "operator"];

/** The columns a verb reads of its company. */
const companyColumns = { id: companies.id, slug: companies.slug, companyname: companies.companyname, location_id: companies.location_id, timezone: companies.timezone };

export async function findCompanyBySlug(db: Db, slug: string): Promise<Company | null> {
  if (!SLUG.test(slug)) return null;
  const [row] = await db.select(companyColumns).from(companies).where(eq(companies.slug, slug)).limit(1);
  return row ?? null;
}

/** A company by its id on its shard's database (jobs run for a company id), or 404. */
export async function loadCompany(db: Db, companyId: number): Promise<Company> {
  const [company] = await db.select(companyColumns).from(companies).where(eq(companies.id, companyId));
  if (!company) throw notFound("Company");
  return company;
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

export async function cachedCompany(env: Env, slug: string): Promise<PlacedCompany | null> {
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

/** The slug of a message's company for its log lines (null when unknown: logging never fails a job). */
export async function companySlug(db: Db, companyId: unknown): Promise<string | null> {
  if (typeof companyId !== "number") return null;
  const [company] = await db.select({ slug: companies.slug }).from(companies).where(eq(companies.id, companyId)).catch(() => []);
  return company?.slug ?? null;
}
