import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { type TestCompany, call, createCompany, insertAddress } from "./helpers";

const q = (value: unknown) => `q=${encodeURIComponent(JSON.stringify(value))}`;

interface RouteFixture {
  status: number;
  gross?: number;
  net?: number;
  distance?: number;
  custom_id?: string;
  routebase?: number | null;
  driver_id?: number | null;
  previous_drivers?: number[];
  previous_deliveries?: number[];
  routestring?: { type: "LineString"; coordinates: number[][] } | null;
  tst_from?: string | null;
  htmlcolor?: string | null;
  areatext?: string | null;
}

async function insertRoute(companyId: number, r: RouteFixture): Promise<number> {
  const row = await env.DB.prepare(
    `INSERT INTO routes (company_id, status, gross_duration, net_duration, distance, custom_id, routebase_address_id, driver_id,
       previous_drivers, previous_deliveries, routestring, tst_from, htmlcolor, areatext)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
  )
    .bind(
      companyId, r.status, r.gross ?? 0, r.net ?? 0, r.distance ?? 0, r.custom_id ?? null, r.routebase ?? null, r.driver_id ?? null,
      JSON.stringify(r.previous_drivers ?? []), JSON.stringify(r.previous_deliveries ?? []),
      r.routestring ? JSON.stringify(r.routestring) : null, r.tst_from ?? null, r.htmlcolor ?? null, r.areatext ?? null,
    )
    .first<{ id: number }>();
  return row!.id;
}

async function insertDelivery(companyId: number, d: { route: number; orderindex: number | null; status: number; target: number; supplier: number; custom_id?: string }) {
  const row = await env.DB.prepare(
    "INSERT INTO deliveries (company_id, route_id, orderindex, status, deliverylocation_id, supplierlocation_id, custom_id) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
  )
    .bind(companyId, d.route, d.orderindex, d.status, d.target, d.supplier, d.custom_id ?? null)
    .first<{ id: number }>();
  return row!.id;
}

/** Haversine in metres (mean Earth radius), as a check independent of the service code. */
function haversine([lng1, lat1]: [number, number], [lng2, lat2]: [number, number]) {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lng2 - lng1) * rad) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.sqrt(a));
}
const road = (a: [number, number], b: [number, number]) => haversine(a, b) * 1.3;

const BASE: [number, number] = [13.4, 52.52];
const DEPOT: [number, number] = [13.3849, 52.5317];
const P1: [number, number] = [13.45, 52.51];
const P2: [number, number] = [13.38, 52.49];
const P3: [number, number] = [13.3, 52.55];
const LINE = { type: "LineString" as const, coordinates: [BASE, P1, P2, P3] };

const ids = (body: { objects: { id: number }[] }) => body.objects.map((o) => o.id);

describe("route reads", () => {
  let co: TestCompany;
  let other: TestCompany;
  let driver: number;
  let base: number;
  let depot: number;
  let a1: number;
  let a2: number;
  let a3: number;
  /** R1 accepted, 3 deliveries stored out of order, base address, line string. */
  let r1: number;
  let r1Order: number[];
  let r2: number;
  let r3: number;
  let r4: number;
  let r5: number;
  let r6: number;
  let otherRoute: number;

  beforeAll(async () => {
    [co, other] = await Promise.all([createCompany(), createCompany()]);
    driver = (await co.user("driver")).id;
    depot = (await co.api("GET", "/company")).body.objects[0].location_id;
    base = await insertAddress(co.id, { lng: BASE[0], lat: BASE[1], contactcompany: "Hub Nord" });
    a1 = await insertAddress(co.id, { lng: P1[0], lat: P1[1] });
    a2 = await insertAddress(co.id, { lng: P2[0], lat: P2[1] });
    a3 = await insertAddress(co.id, { lng: P3[0], lat: P3[1] });

    r1 = await insertRoute(co.id, {
      status: 2, gross: 5430, net: 3599, distance: 12345, custom_id: "T-1", routebase: base, driver_id: driver,
      previous_drivers: [driver, 999], previous_deliveries: [4242], routestring: LINE, tst_from: "2026-11-23T08:00:00Z", htmlcolor: "#ff0000", areatext: "Mitte",
    });
    // Stored out of driving order: ids ascend as orderindex 2, 0, 1.
    const third = await insertDelivery(co.id, { route: r1, orderindex: 2, status: 1, target: a3, supplier: base, custom_id: "R1-c" });
    const first = await insertDelivery(co.id, { route: r1, orderindex: 0, status: 2, target: a1, supplier: base, custom_id: "R1-a" });
    const second = await insertDelivery(co.id, { route: r1, orderindex: 1, status: 1, target: a2, supplier: base, custom_id: "R1-b" });
    r1Order = [first, second, third];

    r2 = await insertRoute(co.id, { status: 1, gross: 600, net: 29, custom_id: "T-2" });
    await insertDelivery(co.id, { route: r2, orderindex: 0, status: 1, target: a2, supplier: depot });
    await insertDelivery(co.id, { route: r2, orderindex: 1, status: 1, target: a3, supplier: depot });

    r3 = await insertRoute(co.id, { status: 4, custom_id: "T-3" });
    await insertDelivery(co.id, { route: r3, orderindex: 0, status: 2, target: a1, supplier: depot });

    r4 = await insertRoute(co.id, { status: 3, custom_id: "T-4" });
    await insertDelivery(co.id, { route: r4, orderindex: 0, status: 2, target: a1, supplier: depot });
    await insertDelivery(co.id, { route: r4, orderindex: 1, status: 4, target: a2, supplier: depot });

    r5 = await insertRoute(co.id, { status: 0, custom_id: "T-5" });
    await insertDelivery(co.id, { route: r5, orderindex: 0, status: 1, target: a3, supplier: depot });

    r6 = await insertRoute(co.id, { status: 6, custom_id: "T-6", previous_drivers: [777] });
    await insertDelivery(co.id, { route: r6, orderindex: 0, status: 1, target: a1, supplier: depot });

    const otherAddress = await insertAddress(other.id, { lng: 13.5, lat: 52.5 });
    otherRoute = await insertRoute(other.id, { status: 2, custom_id: "T-1", previous_drivers: [driver] });
    await insertDelivery(other.id, { route: otherRoute, orderindex: 0, status: 2, target: otherAddress, supplier: otherAddress });
  });

  it("GET /route/{id}: full record, durations in minutes, deliveries in driving order, base address", async () => {
    const res = await co.api("GET", `/route/${r1}`);
    expect(res.status).toBe(200);
    const r = res.body;
    expect(r).toMatchObject({
      id: r1,
      status: 2,
      gross_duration: 91, // 5430 s = 90.5 min, rounded
      net_duration: 60, // 3599 s
      distance: 12345,
      driver_id: driver,
      custom_id: "T-1",
      previous_drivers: [driver, 999],
      previous_deliveries: [4242],
      replaces: null,
      replaced_by: null,
      routebase_address_id: base,
      sorted_deliveries: r1Order,
      tst_from: "2026-11-23T08:00:00Z",
      tst_to: null,
      ast: null,
      htmlcolor: "#ff0000",
      areatext: "Mitte",
    });
    expect(r.creationtime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(r.deliveries.map((d: { id: number }) => d.id)).toEqual(r1Order);
    expect(r.deliveries.map((d: { orderindex: number }) => d.orderindex)).toEqual([0, 1, 2]);
    expect(r.deliveries[0]).toMatchObject({ custom_id: "R1-a", status: 2, route_id: r1, deliverylocation_id: a1 });
    expect(r.deliveries[0].address).toMatchObject({ id: a1, location: { type: "Point", coordinates: P1 } });
    expect(r.deliveries[0].delivery_address).toEqual({ type: "Point", coordinates: P1 });
    expect(r.routebase_address).toMatchObject({ id: base, contactcompany: "Hub Nord", location: { type: "Point", coordinates: BASE } });
    expect(r).not.toHaveProperty("routestring");
    expect(r).not.toHaveProperty("company_id");
    expect(r).not.toHaveProperty("process_id");
  });

  it("GET /route lists full records with q filters and paging", async () => {
    const all = await co.api("GET", "/route?results_per_page=100");
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ num_results: 6, page: 1, total_pages: 1 });
    expect(ids(all.body)).toEqual([r1, r2, r3, r4, r5, r6]);
    const second = all.body.objects[1];
    expect(second).toMatchObject({ id: r2, gross_duration: 10, net_duration: 0, routebase_address: null, routebase_address_id: null });
    expect(second.deliveries).toHaveLength(2);
    expect(all.body.objects[0].deliveries.map((d: { id: number }) => d.id)).toEqual(r1Order);

    const page2 = await co.api("GET", "/route?results_per_page=4&page=2");
    expect(page2.body).toMatchObject({ num_results: 6, page: 2, total_pages: 2 });
    expect(ids(page2.body)).toEqual([r5, r6]);
    const past = await co.api("GET", "/route?results_per_page=4&page=3");
    expect(past.status).toBe(200);
    expect(past.body.objects).toEqual([]);

    const byStatus = await co.api("GET", `/route?${q({ filters: [{ name: "status", op: "==", val: 2 }] })}`);
    expect(ids(byStatus.body)).toEqual([r1]);
    const delivered = await co.api("GET", `/route?${q({ filters: [{ name: "deliveries", op: "any", val: { name: "status", op: "==", val: 2 } }] })}`);
    expect(ids(delivered.body)).toEqual([r1, r3, r4]);
    const byDeliveryCustomId = await co.api("GET", `/route?${q({ filters: [{ name: "deliveries", op: "any", val: { name: "custom_id", op: "==", val: "R1-b" } }] })}`);
    expect(ids(byDeliveryCustomId.body)).toEqual([r1]);
    const prevDriver = await co.api("GET", `/route?${q({ filters: [{ name: "previous_drivers", op: "any", val: driver }] })}`);
    expect(ids(prevDriver.body)).toEqual([r1]);
    const prev777 = await co.api("GET", `/route?${q({ filters: [{ name: "previous_drivers", op: "any", val: 777 }] })}`);
    expect(ids(prev777.body)).toEqual([r6]);
    const ordered = await co.api("GET", `/route?${q({ filters: [{ name: "status", op: "in", val: [0, 1] }], order_by: [{ field: "status", direction: "asc" }] })}`);
    expect(ids(ordered.body)).toEqual([r5, r2]);
    const single = await co.api("GET", `/route?${q({ filters: [{ name: "custom_id", op: "==", val: "T-4" }], single: true })}`);
    expect(single.body).toMatchObject({ id: r4, status: 3 });

    const unknown = await co.api("GET", `/route?${q({ filters: [{ name: "nope", op: "==", val: 1 }] })}`);
    expect(unknown.status).toBe(422);
    expect(unknown.body.fields).toBe("nope");
    const noAny = await co.api("GET", `/route?${q({ filters: [{ name: "deliveries", op: "==", val: 1 }] })}`);
    expect(noAny.status).toBe(422);
  });

  it("GET /routemetadata: ids only, durations in seconds, line string only on request", async () => {
    const res = await co.api("GET", `/routemetadata?${q({ filters: [{ name: "id", op: "in", val: [r1, r2] }] })}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ num_results: 2, page: 1, total_pages: 1 });
    const [m1, m2] = res.body.objects;
    expect(m1).toMatchObject({
      id: r1, gross_duration: 5430, net_duration: 3599, deliveries: r1Order, sorted_deliveries: r1Order, routebase_address_id: base,
      previous_drivers: [driver, 999], custom_id: "T-1", htmlcolor: "#ff0000", status: 2, distance: 12345,
    });
    expect(m1).not.toHaveProperty("routebase_address");
    expect(m1).not.toHaveProperty("routestring");
    expect(m2).toMatchObject({ id: r2, gross_duration: 600, net_duration: 29 });

    const withLine = await co.api("GET", `/routemetadata?routestring=true&${q({ filters: [{ name: "id", op: "in", val: [r1, r2] }] })}`);
    expect(withLine.body.objects[0].routestring).toEqual(LINE);
    expect(withLine.body.objects[1].routestring).toBeNull();
    const explicitFalse = await co.api("GET", `/routemetadata?routestring=false&${q({ filters: [{ name: "id", op: "==", val: r1 }] })}`);
    expect(explicitFalse.body.objects[0]).not.toHaveProperty("routestring");

    const one = await co.api("GET", `/routemetadata/${r1}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: r1, gross_duration: 5430, deliveries: r1Order });
    expect(one.body).not.toHaveProperty("routestring");
    expect((await co.api("GET", `/routemetadata/${r1}?routestring=1`)).body.routestring).toEqual(LINE);
    expect((await co.api("GET", `/routemetadata/${r1}?routestring=maybe`)).status).toBe(422);

    const paged = await co.api("GET", "/routemetadata?results_per_page=5&page=2");
    expect(paged.body).toMatchObject({ num_results: 6, page: 2, total_pages: 2 });
    expect(ids(paged.body)).toEqual([r6]);
  });

  it("GET /routedeliverydistances/{id}: metres from the predecessor, great circle x 1.3", async () => {
    const res = await co.api("GET", `/routedeliverydistances/${r1}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ num_results: 3, page: 1, total_pages: 1 });
    const rows = res.body.objects as { delivery_id: number; orderindex: number; distance: number }[];
    expect(rows.map((r) => [r.delivery_id, r.orderindex])).toEqual([[r1Order[0], 0], [r1Order[1], 1], [r1Order[2], 2]]);
    const expected = [road(BASE, P1), road(P1, P2), road(P2, P3)];
    rows.forEach((r, i) => expect(Math.abs(r.distance - expected[i])).toBeLessThanOrEqual(1));
    expect(Number.isInteger(rows[0].distance)).toBe(true);

    // Without a routebase address the first leg starts at the deliveries' pickup location (the depot).
    const fallback = (await co.api("GET", `/routedeliverydistances/${r2}`)).body.objects as { distance: number }[];
    expect(fallback).toHaveLength(2);
    expect(Math.abs(fallback[0].distance - road(DEPOT, P2))).toBeLessThanOrEqual(1);
    expect(Math.abs(fallback[1].distance - road(P2, P3))).toBeLessThanOrEqual(1);
  });

  it("GET /routestatus lists every status", async () => {
    const res = await co.api("GET", "/routestatus");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      num_results: 7,
      page: 1,
      total_pages: 1,
      objects: [
        { id: 0, name: "new" },
        { id: 1, name: "assigned" },
        { id: 2, name: "accepted" },
        { id: 3, name: "ontheway" },
        { id: 4, name: "finished" },
        { id: 5, name: "cancelled" },
        { id: 6, name: "route_replaced" },
      ],
    });
  });

  it("GET /updateableroutes: unfinished routes with routed deliveries, as reduced records", async () => {
    const res = await co.api("GET", "/updateableroutes");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ num_results: 3, page: 1, total_pages: 1 });
    expect(ids(res.body)).toEqual([r1, r2, r5]);
    expect(res.body.objects[0]).toMatchObject({ id: r1, gross_duration: 5430, deliveries: r1Order });
    expect(res.body.objects[0]).not.toHaveProperty("routebase_address");
    const paged = await co.api("GET", "/updateableroutes?results_per_page=2&page=2");
    expect(paged.body).toMatchObject({ num_results: 3, page: 2, total_pages: 2 });
    expect(ids(paged.body)).toEqual([r5]);
    // r4 (on the way, no routed delivery), r3 (finished) and r6 (replaced) are not updateable.
    for (const id of [r3, r4, r6]) expect(ids(res.body)).not.toContain(id);
  });

  it("keeps companies apart", async () => {
    for (const path of [`/route/${r1}`, `/routemetadata/${r1}`, `/routedeliverydistances/${r1}`]) {
      const res = await other.api("GET", path);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe(404);
    }
    expect((await co.api("GET", `/route/${otherRoute}`)).status).toBe(404);
    expect((await co.api("GET", "/route/987654")).status).toBe(404);
    const theirs = await other.api("GET", "/route");
    expect(ids(theirs.body)).toEqual([otherRoute]);
    expect((await other.api("GET", "/updateableroutes")).body.num_results).toBe(0);
    const mine = await co.api("GET", `/route?${q({ filters: [{ name: "custom_id", op: "==", val: "T-1" }] })}`);
    expect(ids(mine.body)).toEqual([r1]);
    // another company's token under this company's slug is rejected
    expect((await call("GET", `/${co.slug}/api/route`, { token: other.dispatcher.token })).status).toBe(403);
  });

  it("is readable by watchers and drivers, and documented once per endpoint", async () => {
    const watcher = await co.user("watcher");
    expect((await co.api("GET", `/route/${r1}`, { token: watcher.token })).status).toBe(200);
    const driverUser = await co.user("driver");
    expect((await co.api("GET", "/routemetadata", { token: driverUser.token })).status).toBe(200);
    const doc = await call("GET", "/openapi.json");
    const paths = Object.keys(doc.body.paths);
    for (const p of ["/route", "/route/{route_id}", "/routemetadata", "/routemetadata/{route_id}", "/routedeliverydistances/{route_id}", "/routestatus", "/updateableroutes"])
      expect(paths).toContain(`/{slug}/api${p}`);
    expect(doc.body.components.schemas.Route.properties.gross_duration.description).toMatch(/MINUTES/);
    expect(doc.body.components.schemas.RouteMetadata.properties.gross_duration.description).toMatch(/SECONDS/);
  });
});
