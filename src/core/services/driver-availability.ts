/** Driver availability windows: presentation, filters, and the merge of an overlapping window. */
import { driverAvailabilities } from "../db/schema";
import { unprocessable } from "../errors";
import type { FieldMap } from "../lib/filters";

export type AvailabilityRow = typeof driverAvailabilities.$inferSelect;

/** An availability window of a driver (date-times in UTC). */
export interface Availability {
  id: number;
  fromtime: string;
  totime: string;
  driver_id: number;
}

export const presentAvailability = (r: AvailabilityRow): Availability => ({ id: r.id, fromtime: r.fromtime, totime: r.totime, driver_id: r.driver_id });

export const availabilityFields: FieldMap = {
  id: { column: driverAvailabilities.id, type: "integer" },
  fromtime: { column: driverAvailabilities.fromtime, type: "datetime" },
  totime: { column: driverAvailabilities.totime, type: "datetime" },
  driver_id: { column: driverAvailabilities.driver_id, type: "integer" },
};

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
export async function mergeAvailability(d1: D1Database, companyId: number, driverId: number, from: string, to: string): Promise<MergeResult> {
  // Plain D1 statements: drizzle cannot batch raw SQL with parameters. Every subquery is uncorrelated.
  const overlapping = "company_id = ?1 and driver_id = ?2 and fromtime <= ?4 and totime >= ?3";
  const survivor = `(select id from driver_availabilities where ${overlapping} order by fromtime, id limit 1)`;
  const columns = "id, company_id, driver_id, fromtime, totime";
  const bind = (statement: string) => d1.prepare(statement).bind(companyId, driverId, from, to);
  const [before, updated, inserted] = await d1.batch<AvailabilityRow>([
    // Ids of the windows being merged, read inside the transaction.
    bind(`select ${columns} from driver_availabilities where ${overlapping} order by fromtime, id`),
    bind(
      `update driver_availabilities
          set fromtime = min(?3, (select min(fromtime) from driver_availabilities where ${overlapping})),
              totime = max(?4, (select max(totime) from driver_availabilities where ${overlapping}))
        where id = ${survivor} returning ${columns}`,
    ),
    bind(
      `insert into driver_availabilities (company_id, driver_id, fromtime, totime)
       select ?1, ?2, ?3, ?4 where not exists (select 1 from driver_availabilities where ${overlapping})
       returning ${columns}`,
    ),
    bind(`delete from driver_availabilities where ${overlapping} and id <> ${survivor}`),
  ]);
  if (inserted.results.length) return { merged: false, window: inserted.results[0], mergedIds: [] };
  return { merged: true, window: updated.results[0], mergedIds: before.results.map((r) => r.id) };
}
