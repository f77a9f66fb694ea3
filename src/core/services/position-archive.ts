/**
 * The position archive: driver positions older than the company's
 * `position_retention_days` move from D1 to R2 (`UPLOADS`), one gzip NDJSON
 * object per driver and day (the day on the company's wall clock), at
 * `positions/<company_id>/<driver_id>/<YYYY-MM-DD>.ndjson.gz`, one line
 * `{"id","timestamp","lng","lat"}` per position in time order.
 *
 * A driver-day is written, read back and compared before its rows leave D1,
 * and only the rows written are deleted. A run cut off anywhere loses nothing:
 * rows still in D1 are archived again, merged with what the object already
 * holds (by id), so a late position with an old timestamp joins its day too.
 * `positionsOfDay` reads both, so a trace answers the same before, during and
 * after the archiving.
 */
import { and, eq, gte, lt, lte, sql } from "drizzle-orm";
import type { Db } from "../context";
import { addDays, dayAt, dayBounds } from "../../shared/wall-clock";
import { companies, driverTracking, users } from "../db/schema";
import type { Env } from "../env";
import { log } from "../lib/log";
import { formatDateTime } from "../lib/time";
import type { TrackingRow } from "./tracking-positions";

/** Driver-days archived per cron run at most: about 5 D1/R2 calls each, far inside a Worker's subrequest limit. */
export const MAX_DRIVER_DAYS = 20;
/** Points of one trace at most (the newest), as GET /drivertrace answers them. */
export const TRACE_LIMIT = 20_000;

const archiveKey = (companyId: number, driverId: number, day: string) => `positions/${companyId}/${driverId}/${day}.ndjson.gz`;

const inOrder = (a: TrackingRow, b: TrackingRow) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : a.id - b.id);

async function gzip(text: string): Promise<ArrayBuffer> {
  return new Response(new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer();
}

/** The archived positions of a driver-day (none when there is no object). */
async function readArchivedDay(env: Env, companyId: number, driverId: number, day: string): Promise<TrackingRow[]> {
  const object = await env.UPLOADS.get(archiveKey(companyId, driverId, day));
  if (!object) return [];
  const text = await new Response(object.body.pipeThrough(new DecompressionStream("gzip"))).text();
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => ({ company_id: companyId, driver_id: driverId, ...(JSON.parse(line) as Pick<TrackingRow, "id" | "timestamp" | "lng" | "lat">) }));
}

const dayRange = (day: string, timeZone: string) => {
  const { start, end } = dayBounds(day, timeZone);
  return { from: formatDateTime(start), to: formatDateTime(end) };
};

const rowsOfDay = (db: Db, companyId: number, driverId: number, from: string, to: string) =>
  db
    .select()
    .from(driverTracking)
    .where(and(eq(driverTracking.company_id, companyId), eq(driverTracking.driver_id, driverId), gte(driverTracking.timestamp, from), lt(driverTracking.timestamp, to)));

/** A driver's positions on a day of the company's wall clock, from D1 and the archive, in time order; at most TRACE_LIMIT (the newest). */
export async function positionsOfDay(env: Env, db: Db, companyId: number, driverId: number, day: string, timeZone: string): Promise<TrackingRow[]> {
  const { from, to } = dayRange(day, timeZone);
  const [archived, live] = await Promise.all([readArchivedDay(env, companyId, driverId, day), rowsOfDay(db, companyId, driverId, from, to)]);
  const byId = new Map([...archived, ...live].map((r) => [r.id, r]));
  return [...byId.values()].sort(inOrder).slice(-TRACE_LIMIT);
}

/** Archives one driver-day: merged with what the object holds, written, read back and compared; then exactly those rows are deleted. */
async function archiveDay(env: Env, db: Db, companyId: number, driverId: number, day: string, timeZone: string): Promise<number> {
  const { from, to } = dayRange(day, timeZone);
  const rows = await rowsOfDay(db, companyId, driverId, from, to);
  if (!rows.length) return 0;
  const byId = new Map([...(await readArchivedDay(env, companyId, driverId, day)), ...rows].map((r) => [r.id, r]));
  const all = [...byId.values()].sort(inOrder);
  const text = all.map(({ id, timestamp, lng, lat }) => JSON.stringify({ id, timestamp, lng, lat })).join("\n") + "\n";
  await env.UPLOADS.put(archiveKey(companyId, driverId, day), await gzip(text), {
    httpMetadata: { contentType: "application/x-ndjson", contentEncoding: "gzip" },
    customMetadata: { positions: String(all.length) },
  });
  const back = await readArchivedDay(env, companyId, driverId, day);
  const written = new Map(back.map((r) => [r.id, r]));
  const same = (r: TrackingRow, w: TrackingRow | undefined) => w !== undefined && w.timestamp === r.timestamp && w.lng === r.lng && w.lat === r.lat;
  const lost = rows.find((r) => !same(r, written.get(r.id)));
  if (back.length !== all.length || lost) throw new Error(`The archive of driver ${driverId} on ${day} does not read back what was written: positions stay in D1`);
  // Rows of the day that arrived after the read have higher ids and wait for the next run.
  const lastId = Math.max(...rows.map((r) => r.id));
  await db
    .delete(driverTracking)
    .where(and(eq(driverTracking.company_id, companyId), eq(driverTracking.driver_id, driverId), gte(driverTracking.timestamp, from), lt(driverTracking.timestamp, to), lte(driverTracking.id, lastId)));
  return rows.length;
}

/**
 * One archive run: every driver whose oldest position lies before the company's
 * retention (the `position_retention_days` days before today stay), oldest day
 * first, at most MAX_DRIVER_DAYS driver-days; one log line per driver-day.
 */
export async function archiveOldPositions(env: Env, db: Db): Promise<void> {
  const now = Date.now();
  const settings = new Map((await db.select({ id: companies.id, slug: companies.slug, timezone: companies.timezone, days: companies.position_retention_days }).from(companies)).map((c) => [c.id, c]));
  // Spelt out with table names: drizzle leaves columns of a one-table select unqualified, which the subquery would read as its own.
  const oldest = sql<string | null>`(select t.timestamp from driver_tracking t where t.company_id = users.company_id and t.driver_id = users.id order by t.timestamp limit 1)`;
  const drivers = await db.select({ companyId: users.company_id, driverId: users.id, oldest }).from(users).where(eq(users.usertype, "driver"));
  let budget = MAX_DRIVER_DAYS;
  for (const driver of drivers) {
    const company = settings.get(driver.companyId);
    if (!company || driver.oldest === null) continue;
    const keepFrom = dayRange(addDays(dayAt(now, company.timezone), -company.days), company.timezone).from;
    let first: string | null = driver.oldest;
    while (first !== null && first < keepFrom) {
      if (budget-- <= 0) {
        log("info", "position archive", { done: false });
        return;
      }
      const started = Date.now();
      const day = dayAt(Date.parse(first), company.timezone);
      try {
        const archived = await archiveDay(env, db, company.id, driver.driverId, day, company.timezone);
        log("info", "position archive", { company_slug: company.slug, driver_id: driver.driverId, day, archived, duration_ms: Date.now() - started });
      } catch (error) {
        // This driver waits for the next run; the others go on.
        log("error", "position archive failed", { company_slug: company.slug, driver_id: driver.driverId, day, error });
        break;
      }
      const [next] = await db
        .select({ timestamp: driverTracking.timestamp })
        .from(driverTracking)
        .where(and(eq(driverTracking.company_id, company.id), eq(driverTracking.driver_id, driver.driverId)))
        .orderBy(driverTracking.timestamp)
        .limit(1);
      first = next?.timestamp ?? null;
    }
  }
}
