/** Driver availability windows: presentation, filters, and the merge of an overlapping window. */
import { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { driverAvailabilities } from "../db/schema";
import type { Db } from "../env";
import { unprocessable } from "../errors";
import type { FieldMap } from "../lib/filters";
import { normaliseDateTime } from "../lib/time";
import { DateTime } from "../openapi";

export type AvailabilityRow = typeof driverAvailabilities.$inferSelect;

export const AvailabilitySchema = z
  .object({
    id: z.number().int(),
    fromtime: DateTime,
    totime: DateTime,
    driver_id: z.number().int(),
  })
  .openapi("DriverAvailability");

export type Availability = z.infer<typeof AvailabilitySchema>;

export const presentAvailability = (r: AvailabilityRow): Availability => ({ id: r.id, fromtime: r.fromtime, totime: r.totime, driver_id: r.driver_id });

export const availabilityFields: FieldMap = {
  id: { column: driverAvailabilities.id, type: "integer" },
  fromtime: { column: driverAvailabilities.fromtime, type: "datetime" },
  totime: { column: driverAvailabilities.totime, type: "datetime" },
  driver_id: { column: driverAvailabilities.driver_id, type: "integer" },
};

/** An ISO 8601 date-time input, normalised to the stored UTC form (no zone = UTC). */
export const DateTimeInput = z
  .string()
  .transform((v, ctx) => {
    const normalised = normaliseDateTime(v);
    if (!normalised) {
      ctx.addIssue({ code: "custom", message: "not an ISO 8601 date-time" });
      return z.NEVER;
    }
    return normalised;
  })
  .openapi({ type: "string", format: "date-time", example: "2026-11-23T08:00:00Z" });

/** `fromtime < totime`, else 422 naming both fields. */
export function assertWindow(fromtime: string, totime: string) {
  if (!(fromtime < totime)) throw unprocessable("fromtime must be before totime", ["fromtime", "totime"]);
}

export interface MergeResult {
  merged: boolean;
  window: AvailabilityRow;
  /** Ids of the existing windows combined into `window` (including its own id). */
  mergedIds: number[];
}

/**
 * POST /mergedriveravailability. The existing windows of the driver that
 * overlap or touch [from, to] are combined with it into one window (the
 * union): the earliest of them keeps its id and takes the union's bounds, the
 * others are deleted. Without an overlapping window the new one is inserted.
 *
 * Serialisation: the read-check-write runs as ONE D1 batch, and D1 executes a
 * batch as a single transaction on the database's single writer. No other
 * statement can interleave between the overlap check and the writes, so two
 * concurrent merges for the same driver cannot both insert overlapping
 * windows. This is cheaper than a round trip through the company Durable
 * Object and gives the same guarantee for a change confined to one table.
 */
export async function mergeAvailability(db: Db, companyId: number, driverId: number, from: string, to: string): Promise<MergeResult> {
  const t = driverAvailabilities;
  const overlapping = sql`${t.company_id} = ${companyId} and ${t.driver_id} = ${driverId} and ${t.fromtime} <= ${to} and ${t.totime} >= ${from}`;
  const survivor = sql`(select ${t.id} from ${t} where ${overlapping} order by ${t.fromtime}, ${t.id} limit 1)`;
  const [before, updated, inserted] = await db.batch([
    // Ids of the windows being merged, read inside the transaction.
    db.all<{ id: number }>(sql`select ${t.id} as id from ${t} where ${overlapping} order by ${t.fromtime}, ${t.id}`),
    db.all<AvailabilityRow>(
      sql`update ${t} set fromtime = min(${from}, (select min(${t.fromtime}) from ${t} where ${overlapping})),
                          totime = max(${to}, (select max(${t.totime}) from ${t} where ${overlapping}))
          where ${t.id} = ${survivor} returning id, company_id, driver_id, fromtime, totime`,
    ),
    db.all<AvailabilityRow>(
      sql`insert into ${t} (company_id, driver_id, fromtime, totime)
          select ${companyId}, ${driverId}, ${from}, ${to} where not exists (select 1 from ${t} where ${overlapping})
          returning id, company_id, driver_id, fromtime, totime`,
    ),
    db.run(sql`delete from ${t} where ${overlapping} and ${t.id} <> ${survivor}`),
  ] as const);
  if (inserted.length) return { merged: false, window: inserted[0], mergedIds: [] };
  return { merged: true, window: updated[0], mergedIds: before.map((r) => r.id) };
}
