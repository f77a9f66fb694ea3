/**
 * Every table of company data (rows with a `company_id`, and `companies`
 * itself), in copy order: every row a later table refers to comes first.
 * A company's move between shards copies them in this order and cleans up
 * backwards (services/company-move.ts); the tables with AUTOINCREMENT ids take
 * them from the shard's block (db/shards.ts `ensureShardBlock`). A new table
 * of company data belongs here (test/shard-move-tables.test.ts fails
 * otherwise); reference tables (gazetteer, postal areas) keep the same ids on
 * every shard and are not listed.
 */
const COMPANY_TABLES = [
  { name: "companies", sequenced: true },
  { name: "users", sequenced: true },
  { name: "addresses", sequenced: true },
  { name: "vehicles", sequenced: true },
  { name: "routes", sequenced: true },
  { name: "deliveries", sequenced: true },
  { name: "driver_availabilities", sequenced: true },
  { name: "driver_tracking", sequenced: true },
  { name: "tour_areas", sequenced: true },
  { name: "tour_area_members", sequenced: false },
  { name: "geocode_cache", sequenced: false },
  { name: "processes", sequenced: false },
  { name: "outbox", sequenced: true },
  { name: "events", sequenced: true },
  { name: "webhooks", sequenced: true },
  { name: "webhook_deliveries", sequenced: true },
  { name: "tracking_links", sequenced: false },
  { name: "delivery_proofs", sequenced: true },
  { name: "route_reports", sequenced: false },
] as const;

export type CompanyTable = (typeof COMPANY_TABLES)[number]["name"];

/** Company tables in copy order. */
export const MOVED_TABLES: readonly CompanyTable[] = COMPANY_TABLES.map((t) => t.name);

/** The AUTOINCREMENT tables of company data, whose ids come from the shard's block. */
export const SEQUENCED_TABLES: readonly CompanyTable[] = COMPANY_TABLES.filter((t) => t.sequenced).map((t) => t.name);
