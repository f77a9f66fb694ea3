/** Driver tracking entries: presentation, batched inserts, latest positions, traces. */
import type { LiveEntry, PublishedEvent } from "../coordinator/live";
import { type SQL, and, asc, between, desc, eq, gte, lte, sql } from "drizzle-orm";
import { haversineMeters } from "../geo/distance";
import { columnRef, embedded, jsonObject, jsonValue, pointJson, tableRef } from "../db/json";
import { driverTracking, users } from "../db/schema";
import type { Db } from "../context";
import type { FieldMap } from "../lib/filters";
import type { Point } from "../../shared/contract/geo";
import { type EventAnswer, eventInsert, loggedEvents, webhookWants } from "./events";

export type TrackingRow = typeof driverTracking.$inferSelect;

/** A tracking entry: where a driver was when. */
export interface Tracking {
  id: number;
  timestamp: string;
  position: Point;
  driver_id: number;
}

/** A tracking entry with the driver's name and colour (`GET /driverposition`). */
export interface PositionRecord extends Tracking {
  firstname: string | null;
  lastname: string | null;
  htmlcolor: string | null;
}

export const trackingFields: FieldMap = {
  id: { column: driverTracking.id, type: "integer" },
  driver_id: { column: driverTracking.driver_id, type: "integer" },
  timestamp: { column: driverTracking.timestamp, type: "datetime" },
  lng: { column: driverTracking.lng, type: "number" },
  lat: { column: driverTracking.lat, type: "number" },
};

export const presentTracking = (r: TrackingRow): Tracking => ({
  id: r.id,
  timestamp: r.timestamp,
  position: { type: "Point", coordinates: [r.lng, r.lat] },
  driver_id: r.driver_id,
});

type DriverInfo = { firstname: string | null; lastname: string | null; htmlcolor: string | null };

/** A tracking entry as position record; with `info`, the driver's name and colour. */
export function presentPosition(r: TrackingRow, info?: DriverInfo): Tracking & Partial<DriverInfo> {
  const base = presentTracking(r);
  return info ? { ...base, firstname: info.firstname, lastname: info.lastname, htmlcolor: info.htmlcolor } : base;
}

/**
 * `presentPosition` with the driver's name and colour, as SQL: the JSON of the
 * newest tracking entry of the driver in the FROM clause (a `users` row), null
 * when it has none; per driver an index seek on (company_id, driver_id,
 * timestamp) (db/json.ts; test/json-answers.test.ts compares it with `GET /driverposition/<id>`).
 */
export const positionJson = (() => {
  const t = driverTracking;
  const entry = jsonObject([
    ["id", jsonValue(t, t.id)],
    ["timestamp", jsonValue(t, t.timestamp)],
    ["position", pointJson(t, t.lng, t.lat)],
    ["driver_id", jsonValue(t, t.driver_id)],
    ["firstname", jsonValue(users, users.firstname)],
    ["lastname", jsonValue(users, users.lastname)],
    ["htmlcolor", jsonValue(users, users.htmlcolor)],
  ]);
  const newest = `select ${entry} from ${tableRef(t)} where ${columnRef(t, t.company_id)} = ${columnRef(users, users.company_id)} and ${columnRef(t, t.driver_id)} = ${columnRef(users, users.id)}
    order by ${columnRef(t, t.timestamp)} desc, ${columnRef(t, t.id)} desc limit 1`;
  return sql.raw(embedded(newest));
})();

/**
 * The newest tracking entry of each driver among `driverIds` (a parenthesised
 * subquery of user ids, `u.id in ${driverIds}`): one statement, per driver an
 * index seek on (company_id, driver_id, timestamp) for the newest row, so the
 * cost does not grow with the length of the track. Awaitable or batched.
 */
export function latestPositionsQuery(db: Db, companyId: number, driverIds: SQL) {
  // The correlated subquery uses explicit aliases: drizzle drops qualifiers in single-table selections.
  const newest = sql`select (select t2.id from driver_tracking t2 where t2.company_id = ${companyId} and t2.driver_id = u.id
      order by t2.timestamp desc, t2.id desc limit 1) from users u where u.company_id = ${companyId} and u.id in ${driverIds}`;
  return db
    .select()
    .from(driverTracking)
    .where(and(eq(driverTracking.company_id, companyId), sql`${driverTracking.id} in (${newest})`));
}

/** The newest tracking entry of each of the given drivers. */
export async function latestPositions(db: Db, companyId: number, driverIds: number[]): Promise<TrackingRow[]> {
  if (!driverIds.length) return [];
  return latestPositionsQuery(db, companyId, sql`(select value from json_each(${JSON.stringify(driverIds)}))`);
}

/** D1 binds at most 100 parameters per statement: 5 columns -> 20 rows per insert. */
const ROWS_PER_INSERT = 20;

export interface NewTracking {
  driver_id: number;
  timestamp: string;
  lng: number;
  lat: number;
}

/**
 * Stores the entries in one D1 batch (one round trip, one transaction);
 * answers the stored rows in input order, and the `driverposition` event of
 * each driver's newest entry. The events are logged in the same batch while
 * an enabled webhook of the company wants `driver.position`; otherwise they
 * are live only (positions are many, and `/driverposition` answers the latest).
 */
export async function insertTracking(db: Db, companyId: number, entries: NewTracking[]): Promise<{ rows: TrackingRow[]; events: PublishedEvent[] }> {
  const inserts = [];
  for (let i = 0; i < entries.length; i += ROWS_PER_INSERT) {
    const values = entries.slice(i, i + ROWS_PER_INSERT).map((e) => ({ company_id: companyId, ...e }));
    inserts.push(db.insert(driverTracking).values(values).returning());
  }
  // Of equal timestamps the later entry is the newer (it gets the higher id).
  const newest = new Map<number, NewTracking>();
  for (const e of entries) if (!(e.timestamp < (newest.get(e.driver_id)?.timestamp ?? ""))) newest.set(e.driver_id, e);
  const positions: LiveEntry[] = [...newest.values()].map((e) => ({
    event: { type: "driverposition", driver_id: e.driver_id, position: { type: "Point", coordinates: [e.lng, e.lat] }, timestamp: e.timestamp },
    driverId: e.driver_id,
  }));
  const wanted = webhookWants(companyId, "driver.position");
  const [first, ...rest] = [...inserts, ...positions.map((p) => eventInsert(db, companyId, { ...p, when: wanted }))];
  const results = await db.batch([first, ...rest]);
  // RETURNING order is not guaranteed by SQLite; ids grow with insertion order.
  const rows = (results.slice(0, inserts.length) as TrackingRow[][]).flat().sort((a, b) => a.id - b.id);
  // One condition for all: either every position was logged or none.
  const logged = loggedEvents(results.slice(inserts.length) as EventAnswer[]);
  return { rows, events: logged.length ? logged : positions };
}

/**
 * Positions of one driver since `since` (inclusive), in time order. At most
 * `limit` points: the newest ones, so a long day keeps its latest part.
 */
export async function positionsSince(db: Db, companyId: number, driverId: number, since: string, limit = 20_000): Promise<TrackingRow[]> {
  const rows = await db
    .select()
    .from(driverTracking)
    .where(and(eq(driverTracking.company_id, companyId), eq(driverTracking.driver_id, driverId), gte(driverTracking.timestamp, since)))
    .orderBy(desc(driverTracking.timestamp), desc(driverTracking.id))
    .limit(limit);
  return rows.reverse();
}

/** How close a position must be to a stop for the driver to count as arrived there (docs/features/live-replanning.md). */
export const ARRIVAL_RADIUS_METRES = 100;

/**
 * When the driver arrived at a stop by their positions: the time of the first position from `since` to `until`
 * within {@link ARRIVAL_RADIUS_METRES} of it, or null. A box around the stop narrows the rows by the
 * (driver, time) index; the distance decides.
 */
export async function arrivalFromPositions(db: Db, companyId: number, driverId: number, stop: { lng: number; lat: number }, since: string, until: string): Promise<string | null> {
  const dLat = ARRIVAL_RADIUS_METRES / 111_320;
  const dLng = dLat / Math.max(0.01, Math.cos((stop.lat * Math.PI) / 180));
  const near = await db
    .select({ timestamp: driverTracking.timestamp, lng: driverTracking.lng, lat: driverTracking.lat })
    .from(driverTracking)
    .where(
      and(
        eq(driverTracking.company_id, companyId),
        eq(driverTracking.driver_id, driverId),
        gte(driverTracking.timestamp, since),
        lte(driverTracking.timestamp, until),
        between(driverTracking.lat, stop.lat - dLat, stop.lat + dLat),
        between(driverTracking.lng, stop.lng - dLng, stop.lng + dLng),
      ),
    )
    .orderBy(asc(driverTracking.timestamp), asc(driverTracking.id))
    .limit(100);
  return near.find((p) => haversineMeters(p.lng, p.lat, stop.lng, stop.lat) <= ARRIVAL_RADIUS_METRES)?.timestamp ?? null;
}
