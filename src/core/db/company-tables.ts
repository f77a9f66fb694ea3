/**
 * `MOVED_TABLES`: every table of company data (rows with a `company_id`, and
 * `companies` itself), in copy order: every row a later table refers to comes first.
 * A company's move between shards copies them in this order and cleans up
 * backwards (services/company-move.ts); the tables with AUTOINCREMENT ids take
 * them from the shard's block (db/shards.ts `ensureShardBlock`). A new table
 * of company data belongs here (test/shard-move-tables.test.ts fails
 * otherwise); reference tables (gazetteer, postal areas) keep the same ids on
 * every shard and are not listed.
 */
export const MOVED_TABLES = [
  "companies",
  "users",
  "addresses",
  "vehicles",
  "routes",
  "deliveries",
  "driver_availabilities",
  "driver_tracking",
  "tour_areas",
  "tour_area_members",
  "geocode_cache",
  "processes",
  "outbox",
  "events",
  "webhooks",
  "webhook_deliveries",
  "tracking_links",
  "delivery_proofs",
  "route_reports",
  "idempotency_keys",
] as const;

export type CompanyTable = (typeof MOVED_TABLES)[number];

/** The company tables without AUTOINCREMENT ids (keyed by their parents, a hash or a uuid). */
const UNSEQUENCED: readonly CompanyTable[] = ["tour_area_members", "geocode_cache", "processes", "tracking_links", "route_reports", "idempotency_keys"];

/** The AUTOINCREMENT tables of company data, whose ids come from the shard's block. */
export const SEQUENCED_TABLES: readonly CompanyTable[] = MOVED_TABLES.filter((t) => !UNSEQUENCED.includes(t));
