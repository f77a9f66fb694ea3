import { eq } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { createDb } from "../db/client";
import { companies } from "../db/schema";
import type { AppEnv, Company, Db } from "../env";
import { forbidden } from "../errors";
import { setLogSlug } from "../lib/log";

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

/**
 * Companies seen by this isolate, for a minute: every API request resolves its
 * slug, and company records hardly ever change. Unknown slugs are not cached,
 * so a company is usable the moment it is created.
 */
const recentCompanies = new Map<string, { company: Company; until: number }>();
const COMPANY_CACHE_MS = 60_000;

async function cachedCompany(db: Db, slug: string): Promise<Company | null> {
  const hit = recentCompanies.get(slug);
  if (hit && hit.until > Date.now()) return hit.company;
  const company = await findCompanyBySlug(db, slug);
  if (company) {
    if (recentCompanies.size > 1000) recentCompanies.clear();
    recentCompanies.set(slug, { company, until: Date.now() + COMPANY_CACHE_MS });
  }
  return company;
}

/** First link of the chain: the database handle and the company named by the slug (403 when unknown, revealing nothing). */
export const resolveCompany = createMiddleware<AppEnv>(async (c, next) => {
  const db = createDb(c.env.DB);
  c.set("db", db);
  const company = await cachedCompany(db, c.req.param("slug") ?? "");
  if (!company) throw forbidden("Unknown company or invalid credentials");
  c.set("company", company);
  setLogSlug(company.slug);
  await next();
});
