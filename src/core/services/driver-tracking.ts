/**
 * Driver tracking as the API serves it: positions reported by driver apps
 * (one or a buffered batch), the company's entries, a driver's newest
 * position and its trace of the day (from the archive for past days).
 */
import { and, eq } from "drizzle-orm";
import { companyRow } from "../db/company-row";
import type { Point } from "../../shared/contract/geo";
import { dayAround } from "../../shared/wall-clock";
import type { AuthUser, Company, Db } from "../context";
import { type ListParams, listObjects } from "../db/list";
import { driverTracking } from "../db/schema";
import type { Env } from "../env";
import { forbidden, notFound, unprocessable } from "../errors";
import { formatDateTime, parseDateTime } from "../lib/time";
import { assertCompanyDrivers, loadDriver, routeOnTheWay } from "./drivers";
import { positionsOfDay } from "./position-archive";
import { type NewTracking, type TrackingRow, insertTracking, latestPositions, positionsSince, presentPosition, presentTracking, trackingFields } from "./tracking-positions";

/** Timestamps may run ahead of the server clock by at most this much (device clock skew). */
const MAX_FUTURE_MS = 5 * 60_000;

/** One reported position: drivers report their own (`driver_id` may be left out), dispatchers name the driver. */
export interface PositionReport {
  driver_id?: number;
  /** ISO 8601 (no zone = UTC); default now. */
  timestamp?: string;
  position: Point;
}

/** Validates one entry beyond its shape: ownership, timestamp. `prefix` names the array element in errors. */
function prepareEntry(user: AuthUser, entry: PositionReport, prefix: string, now: number): NewTracking {
  let driverId: number;
  if (user.role === "driver") {
    if (entry.driver_id !== undefined && entry.driver_id !== user.id) throw forbidden("Drivers may only report their own position");
    driverId = user.id;
  } else {
    if (entry.driver_id === undefined) throw unprocessable("driver_id is required", `${prefix}driver_id`);
    driverId = entry.driver_id;
  }
  let ms = now;
  if (entry.timestamp !== undefined) {
    const parsed = parseDateTime(entry.timestamp);
    if (parsed === null) throw unprocessable("timestamp is not an ISO 8601 date-time", `${prefix}timestamp`);
    if (parsed > now + MAX_FUTURE_MS) throw unprocessable("timestamp is more than 5 minutes in the future", `${prefix}timestamp`);
    ms = parsed;
  }
  const [lng, lat] = entry.position.coordinates;
  return { driver_id: driverId, timestamp: formatDateTime(ms), lng, lat };
}

/**
 * Stores reported positions (a batch names array elements in its errors);
 * answers the entries and the `driverposition` events to publish.
 */
export async function reportPositions(db: Db, companyId: number, user: AuthUser, reports: PositionReport[], batch: boolean) {
  const now = Date.now();
  const entries = reports.map((e, i) => prepareEntry(user, e, batch ? `${i}.` : "", now));
  // A driver's token already proves it is a driver of this company; dispatchers name drivers that must exist.
  if (user.role !== "driver") await assertCompanyDrivers(db, companyId, entries.map((e) => e.driver_id));
  const { rows, events } = await insertTracking(db, companyId, entries);
  return { entries: rows.map(presentTracking), events };
}

export const listTrackingEntries = (db: Db, companyId: number, params: ListParams) =>
  listObjects(db, { table: driverTracking, scope: eq(driverTracking.company_id, companyId), fields: trackingFields, idColumn: driverTracking.id, present: (rows: TrackingRow[]) => rows.map(presentTracking) }, params);

const entryOf = (companyId: number, id: number) => and(eq(driverTracking.id, id), eq(driverTracking.company_id, companyId));

export const getTrackingEntry = async (db: Db, companyId: number, id: number) => presentTracking(await companyRow(db, driverTracking, companyId, id, "Tracking entry"));

export async function deleteTrackingEntry(db: Db, companyId: number, id: number) {
  const [row] = await db.delete(driverTracking).where(entryOf(companyId, id)).returning();
  if (!row) throw notFound("Tracking entry");
  return presentTracking(row);
}

/** The driver's newest position with its name and colour, or 404. */
export async function driverPosition(db: Db, companyId: number, driverId: number) {
  const driver = await loadDriver(db, companyId, driverId);
  const [position] = await latestPositions(db, companyId, [driver.id]);
  if (!position) throw notFound("Driver position");
  return presentPosition(position, driver);
}

/**
 * The driver's trace as a line string: of `date` (a day on the company's
 * wall clock, archived days included), else since its route went on the way,
 * else since the start of today.
 */
export async function driverTrace(env: Env, db: Db, company: Pick<Company, "id" | "timezone">, driverId: number, date?: string) {
  await loadDriver(db, company.id, driverId);
  const rows =
    date !== undefined
      ? await positionsOfDay(env, db, company.id, driverId, date, company.timezone)
      : await positionsSince(db, company.id, driverId, (await routeOnTheWay(db, company.id, driverId))?.ast ?? formatDateTime(dayAround(Date.now(), company.timezone).start));
  return { type: "LineString" as const, coordinates: rows.map((r) => [r.lng, r.lat] as [number, number]) };
}
