import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { addDays, dayAt, instantOf } from "../src/shared/wall-clock";
import { createDb } from "../src/core/db/client";
import { readCsv, readXlsx } from "../src/core/lib/spreadsheet";
import { formatDateTime } from "../src/core/lib/time";
import { archiveOldPositions } from "../src/core/services/position-archive";
import { type TestCompany, call, createCompany, insertAddress, routeAndStart } from "./helpers";

const TZ = "Europe/Berlin";
/** The seeded day: three days ago on the company's wall clock (inside the event log's and outside a 1-day position retention). */
const DAY = addDays(dayAt(Date.now(), TZ), -3);
const NEXT = addDays(DAY, 1);
/** An instant of the seeded day (or another) at a wall-clock time, stored form. */
const at = (time: string, day = DAY) => formatDateTime(instantOf(day, time, TZ));

async function insert(table: string, row: Record<string, unknown>): Promise<number> {
  const keys = Object.keys(row);
  const found = await env.DB.prepare(`INSERT INTO ${table} (${keys.join(", ")}) VALUES (${keys.map(() => "?").join(", ")}) RETURNING id`)
    .bind(...keys.map((k) => row[k] as string | number | null))
    .first<{ id: number }>();
  return found!.id;
}

async function driver(co: TestCompany, firstname: string, lastname: string) {
  const d = await co.user("driver");
  await env.DB.prepare("UPDATE users SET firstname = ?, lastname = ?, active = 1 WHERE id = ?").bind(firstname, lastname, d.id).run();
  return d;
}

interface Stop {
  status: number;
  from?: string;
  to?: string;
  ata: string;
  atd: string;
  code?: number;
  waiting?: number;
  notes?: string;
}

/** A finished route as an earlier day left it in D1 (no stored figures: finished before the report existed). */
async function finishedRoute(co: TestCompany, fields: { driver: number; ast: string; distance: number; gross: number; name: string; status?: number }, stops: Stop[]) {
  const routeId = await insert("routes", {
    company_id: co.id,
    custom_id: fields.name,
    driver_id: fields.driver,
    ast: fields.ast,
    tst_from: fields.ast,
    distance: fields.distance,
    gross_duration: fields.gross,
    net_duration: fields.gross,
    status: fields.status ?? 4,
  });
  const address = await insertAddress(co.id, { lng: 13.4, lat: 52.5 });
  for (const [i, s] of stops.entries()) {
    await insert("deliveries", {
      company_id: co.id,
      route_id: routeId,
      orderindex: i,
      deliverylocation_id: address,
      status: s.status,
      pdt_from: s.from ?? null,
      pdt_to: s.to ?? null,
      ata: s.ata,
      atd: s.atd,
      code: s.code ?? null,
      waiting_time: s.waiting ?? null,
      drivernotes: s.notes ?? null,
    });
  }
  return routeId;
}

async function position(co: TestCompany, driverId: number, timestamp: string, lat: number, lng = 13.4) {
  await insert("driver_tracking", { company_id: co.id, driver_id: driverId, timestamp, lng, lat });
}

/**
 * The seeded day, by hand:
 * Route A (Anna, truck, default 648 g/km): started 08:00, planned 20 km / 120 min.
 *   1 delivered, window 08:00–10:00, arrived 08:30: on time.
 *   2 delivered, window 09:00–09:30, arrived 09:40: 10 min late.
 *   3 not delivered (code 1 recipient_absent), window 10:00–11:00, arrived 09:50: 10 min early (waited 600 s); planned waiting 300 s.
 *   last report 09:55: 115 min. Track: 08:00 52.50 -> 08:30 52.55 -> 09:40 52.60 -> (GPS jump to 53.60 at 09:41 and back) -> 09:55 52.60
 *   = 2 × 0.05° of latitude = 11,119.5 m -> 11.1 km; positions before the start and after the last report do not count.
 *   CO₂e 11.1195 km × 648 g = 7,206 g.
 * Route B (Ben, car with his own 200 g/km): started 13:00, planned 10 km / 60 min, no track.
 *   1 delivered, window 13:00–14:00, arrived 13:20: on time.
 *   2 delivered, no window (not counted either way).
 *   3 delivered, window 13:00–13:30, arrived 14:00:30: 30.5 -> 31 min late (begun minutes count).
 *   4 not delivered, no code ("no reason given"), window 14:00–15:00, arrived 14:10: on time.
 *   last report 14:15: 75 min. CO₂e on planned km: 10 × 200 = 2,000 g.
 * Totals: 2 routes, 30.0 planned km, 11.1 actual km (1 route tracked), 180 / 190 min, 7 stops, 5 delivered, 2 not,
 *   6 with a window, 3 on time (0.5), 1 early, 2 late, 41 late minutes, 7 stops / 190 min = 2.21 per hour,
 *   waiting 5 min planned / 10 min actual, 9.21 kg CO₂e. Histogram: 4 not late, one 5–15, one 30–60.
 */
describe("day report on a seeded day", () => {
  let co: TestCompany;
  let anna: { id: number; token: string };
  let ben: { id: number; token: string };
  let routeA: number;
  let routeB: number;

  beforeAll(async () => {
    co = await createCompany();
    anna = await driver(co, "Anna", "Adler");
    ben = await driver(co, "Ben", "=HYPERLINK(\"http://x\")");
    expect((await co.api("POST", "/vehicle", { body: { name: "Truck 1", vehicle_class: "truck", driver_id: anna.id } })).status).toBe(200);
    const car = await co.api("POST", "/vehicle", { body: { name: "Van 2", vehicle_class: "car", driver_id: ben.id, co2e_g_per_km: 200 } });
    expect(car.status, car.text).toBe(200);
    expect(car.body.co2e_g_per_km).toBe(200);

    routeA = await finishedRoute(co, { driver: anna.id, ast: at("08:00"), distance: 20_000, gross: 7200, name: "Tour 1" }, [
      { status: 2, from: at("08:00"), to: at("10:00"), ata: at("08:30"), atd: at("08:35") },
      { status: 2, from: at("09:00"), to: at("09:30"), ata: at("09:40"), atd: at("09:45") },
      { status: 3, from: at("10:00"), to: at("11:00"), ata: at("09:50"), atd: at("09:55"), code: 1, waiting: 300, notes: "nobody home" },
    ]);
    routeB = await finishedRoute(co, { driver: ben.id, ast: at("13:00"), distance: 10_000, gross: 3600, name: "Tour 2" }, [
      { status: 2, from: at("13:00"), to: at("14:00"), ata: at("13:20"), atd: at("13:25") },
      { status: 2, ata: at("13:50"), atd: at("13:55") },
      { status: 2, from: at("13:00"), to: at("13:30"), ata: at("14:00:30"), atd: at("14:05") },
      { status: 3, from: at("14:00"), to: at("15:00"), ata: at("14:10"), atd: at("14:15") },
    ]);
    await position(co, anna.id, at("07:00"), 52.0); // before the start
    await position(co, anna.id, at("08:00"), 52.5);
    await position(co, anna.id, at("08:30"), 52.55);
    await position(co, anna.id, at("09:40"), 52.6);
    await position(co, anna.id, at("09:41"), 53.6); // GPS jump
    await position(co, anna.id, at("09:55"), 52.6);
    await position(co, anna.id, at("11:00"), 52.0); // after the last report

    // Not in the day: a route of the next day, a cancelled route, another company's route.
    await finishedRoute(co, { driver: anna.id, ast: at("09:00", NEXT), distance: 5000, gross: 1800, name: "Tour 3" }, [
      { status: 2, from: at("09:00", NEXT), to: at("10:00", NEXT), ata: at("09:10", NEXT), atd: at("09:15", NEXT) },
    ]);
    await finishedRoute(co, { driver: anna.id, ast: at("12:00"), distance: 99_000, gross: 9000, name: "Cancelled", status: 5 }, []);
    const other = await createCompany();
    const stranger = await driver(other, "Eve", "Else");
    await finishedRoute(other, { driver: stranger.id, ast: at("10:00"), distance: 77_000, gross: 600, name: "Theirs" }, [
      { status: 2, ata: at("10:10"), atd: at("10:20") },
    ]);

    // The positions of the day move to the archive in R2 before anyone reads the report.
    await env.DB.prepare("UPDATE companies SET position_retention_days = 1 WHERE id = ?").bind(co.id).run();
    await archiveOldPositions(env, createDb(env.DB));
    const left = await env.DB.prepare("SELECT count(*) AS n FROM driver_tracking WHERE company_id = ?").bind(co.id).first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it("matches the hand-computed figures per route, per driver and in total (actual km read from the archive)", async () => {
    const res = await co.api("GET", `/report/day?date=${DAY}`);
    expect(res.status, res.text).toBe(200);
    const r = res.body;
    expect(r).toMatchObject({ from: DAY, to: DAY, timezone: TZ, incomplete: false });
    expect(r.routes.map((x: { route_id: number }) => x.route_id)).toEqual([routeA, routeB]);
    expect(r.routes[0]).toMatchObject({
      name: "Tour 1", day: DAY, driver_name: "Anna Adler", started_at: at("08:00"), finished_at: at("09:55"), vehicle_class: "truck", co2e_factor: 648, co2e_basis: "tracked",
      planned_km: 20, actual_km: 11.1, routes_tracked: 1, planned_minutes: 120, actual_minutes: 115, stops: 3, delivered: 2, not_delivered: 1,
      with_window: 3, on_time: 1, on_time_share: 0.3333, early: 1, late: 1, late_minutes: 10, stops_per_hour: 1.57,
      waiting_minutes_planned: 5, waiting_minutes_actual: 10, co2e_kg: 7.21, reasons: [{ reason: "recipient_absent", count: 1 }],
    });
    expect(r.routes[1]).toMatchObject({
      name: "Tour 2", vehicle_class: "car", co2e_factor: 200, co2e_basis: "planned", planned_km: 10, actual_km: null, routes_tracked: 0,
      actual_minutes: 75, stops: 4, delivered: 3, not_delivered: 1, with_window: 3, on_time: 2, on_time_share: 0.6667, early: 0, late: 1, late_minutes: 31,
      stops_per_hour: 3.2, co2e_kg: 2, reasons: [{ reason: "no reason given", count: 1 }],
    });
    expect(r.totals).toEqual({
      routes: 2, planned_km: 30, actual_km: 11.1, routes_tracked: 1, planned_minutes: 180, actual_minutes: 190, stops: 7, delivered: 5, not_delivered: 2,
      with_window: 6, on_time: 3, on_time_share: 0.5, early: 1, late: 2, late_minutes: 41, stops_per_hour: 2.21, waiting_minutes_planned: 5,
      waiting_minutes_actual: 10, break_minutes_planned: 0, co2e_kg: 9.21, reasons: [{ reason: "no reason given", count: 1 }, { reason: "recipient_absent", count: 1 }],
    });
    expect(r.drivers.map((d: { driver_name: string; routes: number; on_time_share: number }) => [d.driver_name, d.routes, d.on_time_share])).toEqual([
      ["Anna Adler", 1, 0.3333],
      ['Ben =HYPERLINK("http://x")', 1, 0.6667],
    ]);
    expect(r.lateness_histogram.map((b: { count: number }) => b.count)).toEqual([4, 0, 1, 0, 1, 0]);
    expect(r.emission_factors.map((f: { vehicle_class: string }) => f.vehicle_class)).toEqual(["car", "truck", "bicycle"]);
    expect(r.routes[0].stop_details).toBeUndefined();
    const detailed = (await co.api("GET", `/report/day?date=${DAY}&stops=true`)).body.routes[0].stop_details;
    expect(detailed.map((s: { outcome: string; on_time: boolean; late_minutes: number; early_minutes: number; reason: string | null }) => [s.outcome, s.on_time, s.late_minutes, s.early_minutes, s.reason])).toEqual([
      ["delivered", true, 0, 0, null],
      ["delivered", false, 10, 0, null],
      ["not_delivered", false, 0, 10, "recipient_absent"],
    ]);
  });

  it("stores each route's figures on first read and then reads them, never recomputing", async () => {
    const stored = await env.DB.prepare("SELECT route_id FROM route_reports WHERE company_id = ? ORDER BY route_id").bind(co.id).all<{ route_id: number }>();
    expect(stored.results.map((s) => s.route_id)).toContain(routeA);
    // The records change afterwards; the report keeps the figures computed when it first saw the finished route.
    await env.DB.prepare("UPDATE routes SET distance = 1 WHERE id = ?").bind(routeA).run();
    const again = await co.api("GET", `/report/day?date=${DAY}`);
    expect(again.body.routes[0].planned_km).toBe(20);
  });

  it("sums a range of days, and the next day alone", async () => {
    const range = await co.api("GET", `/report/day?from=${DAY}&to=${NEXT}`);
    expect(range.status, range.text).toBe(200);
    expect(range.body.totals).toMatchObject({ routes: 3, planned_km: 35, stops: 8, delivered: 6 });
    expect(range.body.drivers.find((d: { driver_id: number }) => d.driver_id === anna.id)).toMatchObject({ routes: 2, planned_km: 25 });
    const next = await co.api("GET", `/report/day?date=${NEXT}`);
    expect(next.body.routes.map((x: { name: string }) => x.name)).toEqual(["Tour 3"]);
    const empty = await co.api("GET", `/report/day?date=${addDays(DAY, -10)}`);
    expect(empty.body.totals).toMatchObject({ routes: 0, planned_km: 0, actual_km: null, on_time_share: null, stops_per_hour: null });
  });

  it("downloads CSV (per route or per driver) and XLSX with the same figures, formulas neutralised", async () => {
    const csv = await co.api("GET", `/report/day?date=${DAY}&format=csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(csv.headers.get("content-disposition")).toContain(`day-report-${co.slug}-${DAY}-routes.csv`);
    const rows = readCsv(csv.text.replace(/^\uFEFF/, ""));
    expect(rows[0].slice(0, 8)).toEqual(["day", "route_id", "route", "driver", "vehicle_class", `started (${TZ})`, `finished (${TZ})`, "planned_km"]);
    // Times on the company's wall clock.
    expect(rows[1].slice(5, 7)).toEqual([`${DAY} 08:00`, `${DAY} 09:55`]);
    expect(rows).toHaveLength(4);
    const col = (name: string) => rows[0].indexOf(name);
    expect(rows[1][col("actual_km")]).toBe("11.1");
    expect(rows[2][col("driver")]).toBe('Ben =HYPERLINK("http://x")');
    expect(rows[3][col("route")]).toBe("total");
    expect(rows[3][col("on_time_percent")]).toBe("50");
    const drivers = readCsv((await co.api("GET", `/report/day?date=${DAY}&format=csv&table=drivers`)).text.replace(/^\uFEFF/, ""));
    expect(drivers.map((r) => r[1])).toEqual(["driver", "Anna Adler", 'Ben =HYPERLINK("http://x")', "total"]);

    // Per stop: outcome, arrival, window, lateness, reason and the driver's notes.
    const stops = readCsv((await co.api("GET", `/report/day?date=${DAY}&format=csv&table=stops`)).text.replace(/^\uFEFF/, ""));
    expect(stops).toHaveLength(8);
    expect(stops[3].slice(4)).toEqual([stops[3][4], "not delivered", `${DAY} 09:50`, `${DAY} 10:00`, `${DAY} 11:00`, "no", "0", "10", "recipient_absent", "nobody home"]);
    expect(stops[2].slice(9, 12)).toEqual(["no", "10", "0"]);

    const response = await fetchRaw(co, `/report/day?date=${DAY}&format=xlsx`);
    expect(response.headers.get("content-type")).toBe("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
    const sheet = await readXlsx(new Uint8Array(await response.arrayBuffer()));
    expect(sheet).toEqual(rows);
  });

  it("refuses bad days and ranges with 422 naming the field", async () => {
    for (const [query, field] of [
      ["", "from,to"],
      ["date=2026-02-30", "date"],
      ["date=yesterday", "date"],
      [`from=${DAY}`, "to"],
      [`from=${NEXT}&to=${DAY}`, "to"],
      [`from=${DAY}&to=${addDays(DAY, 31)}`, "to"],
      [`date=${DAY}&from=${DAY}`, "date,from,to"],
      [`date=${DAY}&format=pdf`, "format"],
    ]) {
      const res = await co.api("GET", `/report/day?${query}`);
      expect(res.status, query).toBe(422);
      expect(res.body.fields, query).toBe(field);
    }
    expect((await co.api("GET", `/report/day?from=${DAY}&to=${addDays(DAY, 30)}`)).status).toBe(200);
  });

  it("is documented in the OpenAPI with its three answers", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    const op = doc.paths["/{slug}/api/report/day"]?.get ?? (Object.entries(doc.paths) as [string, any][]).find(([path]) => path.endsWith("/report/day"))?.[1].get;
    expect(Object.keys(op.responses[200].content)).toEqual(["application/json", "text/csv", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"]);
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(["date", "from", "to", "format", "table"]));
  });

  it("is for dispatchers and watchers, and shows only the company's own routes", async () => {
    expect((await co.api("GET", `/report/day?date=${DAY}`, { token: anna.token })).status).toBe(403);
    const watcher = await co.user("watcher");
    const seen = await co.api("GET", `/report/day?date=${DAY}`, { token: watcher.token });
    expect(seen.status).toBe(200);
    expect(seen.body.routes.map((x: { name: string }) => x.name)).toEqual(["Tour 1", "Tour 2"]);
  });
});

async function fetchRaw(co: TestCompany, path: string) {
  const { exports } = await import("cloudflare:workers");
  return exports.default.fetch(new Request(`http://dispatch.test/${co.slug}/api${path}`, { headers: { Authorization: `JWT ${co.dispatcher.token}` } }));
}

describe("day report of a route finished through the API", () => {
  // Shard 1 as well: the company's Durable Object stores the figures on the company's own database.
  it.each([0, 1])("is stored when the route finishes, counting an undelivered stop that has moved to another route since (company on shard %i)", async (shard) => {
    const co = await createCompany(undefined, { shard });
    const ids: number[] = [];
    for (const [lng, lat] of [[13.42, 52.5], [13.45, 52.52], [13.4, 52.54]]) {
      const address = await insertAddress(co.id, { lng, lat }, co.d1);
      ids.push((await co.api("POST", "/delivery", { body: { deliverylocation_id: address, els: 5 } })).body.id);
    }
    const { driver, routeId } = await routeAndStart(co, ids);
    const order = (await co.api("GET", `/route/${routeId}`)).body.deliveries.map((d: { id: number }) => d.id);
    await co.d1.prepare("INSERT INTO driver_tracking (company_id, driver_id, timestamp, lng, lat) VALUES (?, ?, ?, 13.4, 52.5), (?, ?, ?, 13.4, 52.51)")
      .bind(co.id, driver.id, new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, "Z"), co.id, driver.id, new Date().toISOString().replace(/\.\d+Z$/, "Z"))
      .run();
    await co.d1.prepare("UPDATE routes SET ast = ? WHERE id = ?").bind(new Date(Date.now() - 120_000).toISOString().replace(/\.\d+Z$/, "Z"), routeId).run();
    expect((await co.api("POST", `/deliverydone/${order[0]}`, { token: driver.token, body: { status: "delivered" } })).status).toBe(200);
    expect((await co.api("POST", `/deliverydone/${order[1]}`, { token: driver.token, body: { status: "undelivered", drivernotes: "gate closed" } })).status).toBe(200);
    // Open for routing at once: it goes onto a new route before this one finishes.
    const retry = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: [order[1]] } });
    expect(retry.status, retry.text).toBe(200);
    expect(await storedReport(routeId, co.d1)).toBeNull();
    expect((await co.api("POST", `/deliverydone/${order[2]}`, { token: driver.token, body: { status: "delivered" } })).status).toBe(200);
    expect((await co.api("GET", `/route/${routeId}`)).body.status).toBe(4);

    // Stored by the company's Durable Object right after the finishing report, before any read.
    const figures = await storedReport(routeId, co.d1);
    expect(figures).toMatchObject({ route_id: routeId, driver_id: driver.id, stops: 3, delivered: 2, not_delivered: 1, actual_distance_m: 1112, positions: 2 });
    const report = await co.api("GET", `/report/day?date=${dayAt(Date.now() - 120_000, TZ)}`);
    expect(report.body.routes.find((r: { route_id: number }) => r.route_id === routeId)).toMatchObject({ delivered: 2, not_delivered: 1, actual_km: 1.1, reasons: [{ reason: "no reason given", count: 1 }] });
  });
});

async function storedReport(routeId: number, d1: D1Database) {
  const row = await d1.prepare("SELECT figures FROM route_reports WHERE route_id = ?").bind(routeId).first<{ figures: string }>();
  return row ? JSON.parse(row.figures) : null;
}
