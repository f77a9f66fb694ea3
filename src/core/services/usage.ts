/**
 * What one company holds: rows of each table that grows, an estimate of their
 * bytes in D1, its proofs of delivery with their images in R2, and its
 * archived driver-days in R2 (operator
 * `GET /_operator/companies/<slug>/usage`).
 */
import type { Db } from "../context";
import { type SQL, count, eq, inArray, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Env } from "../env";
import { addresses, deliveries, deliveryProofs, driverTracking, events, idempotencyKeys, outbox, routes, webhookDeliveries, webhooks } from "../db/schema";

/**
 * Bytes per row with the table's indexes, measured by `npm run bench:capacity`
 * (docs/benchmarks.md, "Capacity"): the one copy of those figures in code.
 */
export const BYTES_PER_ROW = {
  driver_tracking: 94,
  outbox: 819,
  events: 138,
  webhook_deliveries: 73,
  deliveries: 264,
  addresses: 156,
  routes: 701,
  idempotency_keys: 2138,
} as const;
export type GrowingTable = keyof typeof BYTES_PER_ROW;

/** At most this many R2 list pages (1,000 keys each) per request: the count stops there and says so. */
export const ARCHIVE_LIST_PAGES = 10;

/** What the company holds (operator `GET /_operator/companies/<slug>/usage`). */
export interface CompanyUsage {
  slug: string;
  /** Rows per growing table x measured bytes per row (with its indexes). */
  tables: { table: GrowingTable; rows: number; bytes_per_row: number; estimated_bytes: number }[];
  /** Sum over the tables: an estimate (D1 does not report storage per company). */
  estimated_bytes: number;
  /** Proofs of delivery in D1 and their images in R2, as stored. */
  proofs: { records: number; image_bytes: number };
  /** Archived driver-days of positions in R2 and their size (gzip); `complete: false` when the bounded listing stopped. */
  archive: { driver_days: number; bytes: number; complete: boolean };
}

export async function companyUsage(env: Env, db: Db, company: { id: number; slug: string }): Promise<CompanyUsage> {
  const ofCompany: Record<GrowingTable, [SQLiteTable, SQL]> = {
    driver_tracking: [driverTracking, eq(driverTracking.company_id, company.id)],
    outbox: [outbox, eq(outbox.company_id, company.id)],
    events: [events, eq(events.company_id, company.id)],
    // Through the endpoints: webhook_deliveries is indexed by webhook, not by company.
    webhook_deliveries: [webhookDeliveries, inArray(webhookDeliveries.webhook_id, db.select({ id: webhooks.id }).from(webhooks).where(eq(webhooks.company_id, company.id)))],
    deliveries: [deliveries, eq(deliveries.company_id, company.id)],
    addresses: [addresses, eq(addresses.company_id, company.id)],
    routes: [routes, eq(routes.company_id, company.id)],
    idempotency_keys: [idempotencyKeys, eq(idempotencyKeys.company_id, company.id)],
  };
  const names = Object.keys(ofCompany) as GrowingTable[];
  const proofs = db
    .select({ records: count(), image_bytes: sql<number>`coalesce(sum(coalesce(${deliveryProofs.photo_bytes}, 0) + coalesce(${deliveryProofs.signature_bytes}, 0)), 0)` })
    .from(deliveryProofs)
    .where(eq(deliveryProofs.company_id, company.id));
  const [[proofTotals], ...counts] = await db.batch([proofs, ...names.map((name) => db.select({ n: count() }).from(ofCompany[name][0]).where(ofCompany[name][1]))]);
  const tables = names.map((table, i) => ({ table, rows: counts[i][0].n, bytes_per_row: BYTES_PER_ROW[table], estimated_bytes: counts[i][0].n * BYTES_PER_ROW[table] }));
  return { slug: company.slug, tables, estimated_bytes: tables.reduce((sum, t) => sum + t.estimated_bytes, 0), proofs: proofTotals, archive: await archivedDays(env, company.id) };
}

async function archivedDays(env: Env, companyId: number) {
  let driverDays = 0;
  let bytes = 0;
  let cursor: string | undefined;
  for (let page = 0; page < ARCHIVE_LIST_PAGES; page++) {
    const listed = await env.UPLOADS.list({ prefix: `positions/${companyId}/`, cursor });
    driverDays += listed.objects.length;
    for (const object of listed.objects) bytes += object.size;
    if (!listed.truncated) return { driver_days: driverDays, bytes, complete: true };
    cursor = listed.cursor;
  }
  return { driver_days: driverDays, bytes, complete: false };
}
