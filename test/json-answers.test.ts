/**
 * The hot reads answer JSON that SQLite builds (src/core/db/json.ts):
 * `GET /delivery`, `GET /route/<id>` (and the route lifecycle answers),
 * `GET /driverposition`. Each must be exactly what the JavaScript presenters
 * answer for the same rows elsewhere in the API (`GET /delivery/<id>`,
 * `GET /route` lists, `GET /driverposition/<id>`), for awkward values too:
 * nulls, booleans stored as 0/1, reals with 17 digits or none, text that JSON
 * must escape. A column added to the schema shows up in both or the test fails.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { AddressSchema } from "../src/worker/schemas/addresses";
import { DeliverySchema } from "../src/worker/schemas/deliveries";
import { RouteSchema } from "../src/worker/schemas/routes";
import { PositionRecordSchema } from "../src/worker/schemas/tracking";
import { type TestCompany, createCompany } from "./helpers";

const q = (value: unknown) => `q=${encodeURIComponent(JSON.stringify(value))}`;
const AWKWARD = 'quote " backslash \\ newline \n tab \t nul-ish \u0001 umlaut ü emoji 🚚 </script>';

let co: TestCompany;
let other: TestCompany;
const deliveryIds: number[] = [];
let routeId: number;
let emptyRouteId: number;
const driverIds: number[] = [];

/** Every key of the object and of the objects inside it, sorted: the shape, apart from the values. */
const keysOf = (value: unknown, prefix = ""): string[] =>
  value && typeof value === "object" && !Array.isArray(value)
    ? Object.entries(value).flatMap(([k, v]) => [`${prefix}${k}`, ...keysOf(v, `${prefix}${k}.`)]).sort()
    : [];

beforeAll(async () => {
  co = await createCompany();
  other = await createCompany();
  const d1 = co.d1;
  const address = async (values: Record<string, unknown>) => {
    const columns = Object.keys(values);
    const row = await d1
      .prepare(`INSERT INTO addresses (company_id, ${columns.join(", ")}) VALUES (?, ${columns.map(() => "?").join(", ")}) RETURNING id`)
      .bind(co.id, ...Object.values(values))
      .first<{ id: number }>();
    return row!.id;
  };
  // Every column shown filled, with 17-digit and integral reals; one without coordinates; one with almost nothing.
  const full = await address({
    contactcompany: AWKWARD, customernr: "K-1", contactfirstname: "Ada", contactlastname: "Lovelace", street: "Teststraße", housenumber: "1a",
    postalcode: "10115", city: "Berlin", district: "Mitte", country: "DE", email: "ada@example.com", phonenr: "+49 30 1234", lng: 13.123456789012345, lat: 52, addresstype: "business",
  });
  const noPoint = await address({ city: "Nowhere", lng: null, lat: 52.5 });
  const bare = await address({ lng: 0.1 + 0.2, lat: -33.8688 });
  const other1 = (await other.api("GET", "/company")).body.objects[0].location_id as number;

  routeId = (await d1
    .prepare(
      `INSERT INTO routes (company_id, status, gross_duration, net_duration, distance, custom_id, routebase_address_id, previous_drivers, previous_deliveries, tst_from, htmlcolor, areatext)
       VALUES (?, 1, 5430, 89, 12345, ?, ?, '[7,8]', '[3]', '2026-11-27T07:00:00Z', '#ff0000', ?) RETURNING id`,
    )
    .bind(co.id, AWKWARD, full, AWKWARD)
    .first<{ id: number }>())!.id;
  // A route without deliveries and without a base address.
  emptyRouteId = (await d1.prepare("INSERT INTO routes (company_id, status) VALUES (?, 0) RETURNING id").bind(co.id).first<{ id: number }>())!.id;

  const delivery = async (values: Record<string, unknown>) => {
    const columns = Object.keys(values);
    const row = await d1
      .prepare(`INSERT INTO deliveries (company_id, ${columns.join(", ")}) VALUES (?, ${columns.map(() => "?").join(", ")}) RETURNING id`)
      .bind(co.id, ...Object.values(values))
      .first<{ id: number }>();
    deliveryIds.push(row!.id);
  };
  await delivery({
    deliveryissuename: AWKWARD, pdt_from: "2026-11-27T08:00:00Z", pdt_to: "2026-11-27T10:00:00Z", eta_from: "2026-11-27T08:30:00Z", els: 5, als: 0.1 + 0.2, tfp: 600,
    deliverprio: 2, orderindex: 1, load: 3, notes: AWKWARD, custom_id: "c-1", custom_tour: "t", drivernotes: "d", final: 1, vehicle: "v", scancode: "s",
    notify_customer: 1, notify_customer_email: 0, notify_customer_sms: null, deliverylocation_id: full, supplierlocation_id: bare, route_id: routeId, status: 1,
    code: 4, distances: '{"a":1}', deliverytype_id: 2, waiting_time: 30,
  });
  await delivery({ final: 0, notify_customer_email: 1, notify_customer_sms: 1, deliverylocation_id: noPoint, supplierlocation_id: full, route_id: routeId, orderindex: 0, status: 1 });
  // Unset orderindex sorts last; no addresses at all; an address of another company shows as none.
  await delivery({ deliverylocation_id: null, supplierlocation_id: null, route_id: routeId, orderindex: null, status: 1, pickup_ref_id: 1 });
  await delivery({ deliverylocation_id: other1, supplierlocation_id: bare, status: 0 });

  for (const [firstname, colour, lng] of [[AWKWARD, "#00ff00", 13.123456789012345], [null, null, 13]] as const) {
    const driver = await co.user("driver");
    driverIds.push(driver.id);
    await d1.prepare("UPDATE users SET firstname = ?, lastname = ?, htmlcolor = ? WHERE id = ?").bind(firstname, firstname && "Last", colour, driver.id).run();
    // Two positions each: the newer one is shown.
    await co.api("POST", "/drivertracking", { token: driver.token, body: [{ timestamp: "2026-11-26T08:00:00Z", position: { type: "Point", coordinates: [1, 2] } }, { timestamp: "2026-11-26T09:00:00Z", position: { type: "Point", coordinates: [lng, 52.5] } }] });
  }
  // A driver without positions is not listed.
  await co.user("driver");
});

describe("answers built by SQLite", () => {
  it("GET /delivery shows every delivery exactly as GET /delivery/<id> does, in the schema's shape", async () => {
    const list = await co.api("GET", "/delivery?results_per_page=100");
    expect(list.status).toBe(200);
    expect(list.headers.get("content-type")).toMatch(/^application\/json/);
    expect(list.body).toMatchObject({ num_results: 4, page: 1, total_pages: 1 });
    expect(list.body.objects.map((d: { id: number }) => d.id)).toEqual(deliveryIds);
    for (const shown of list.body.objects) {
      const one = await co.api("GET", `/delivery/${shown.id}`);
      expect(shown).toStrictEqual(one.body);
      expect(keysOf(shown)).toEqual(keysOf(DeliverySchema.parse(shown)));
    }
    const [first, second, third, foreign] = list.body.objects;
    // The awkward values survive as they were stored.
    expect(first).toMatchObject({ notes: AWKWARD, als: 0.1 + 0.2, final: true, notify_customer: true, notify_customer_email: false, notify_customer_sms: null });
    expect(first.address).toMatchObject({ contactcompany: AWKWARD, location: { type: "Point", coordinates: [13.123456789012345, 52] } });
    expect(first.supplier_address).toEqual({ type: "Point", coordinates: [0.1 + 0.2, -33.8688] });
    expect(second).toMatchObject({ final: false, delivery_address: null, address: { location: null, city: "Nowhere" } });
    expect(third).toMatchObject({ address: null, delivery_address: null, supplier_address: null, final: null });
    expect(foreign).toMatchObject({ address: null, delivery_address: null });
    expect(keysOf(first.address)).toEqual(keysOf(AddressSchema.parse(first.address)));
  });

  it("GET /delivery pages, counts and answers single objects as before", async () => {
    const page2 = await co.api("GET", "/delivery?results_per_page=3&page=2");
    expect(page2.body).toMatchObject({ num_results: 4, page: 2, total_pages: 2 });
    expect(page2.body.objects.map((d: { id: number }) => d.id)).toEqual(deliveryIds.slice(3));
    const past = await co.api("GET", "/delivery?results_per_page=3&page=5");
    expect(past.body).toEqual({ num_results: 4, objects: [], page: 5, total_pages: 2 });
    const none = await co.api("GET", `/delivery?${q({ filters: [{ name: "status", op: "==", val: 9 }] })}`);
    expect(none.body).toEqual({ num_results: 0, objects: [], page: 1, total_pages: 0 });
    const single = await co.api("GET", `/delivery?${q({ filters: [{ name: "id", op: "==", val: deliveryIds[1] }], single: true })}`);
    expect(single.body).toStrictEqual((await co.api("GET", `/delivery/${deliveryIds[1]}`)).body);
    expect((await co.api("GET", `/delivery?${q({ filters: [{ name: "status", op: "==", val: 1 }], single: true })}`)).status).toBe(422);
    expect((await co.api("GET", `/delivery?${q({ filters: [{ name: "status", op: "==", val: 9 }], single: true })}`)).status).toBe(404);
    // Another company's page holds none of these.
    expect((await other.api("GET", "/delivery?results_per_page=100")).body.num_results).toBe(0);
  });

  it("GET /route/<id> is the record GET /route lists, with its deliveries in driving order", async () => {
    for (const id of [routeId, emptyRouteId]) {
      const record = await co.api("GET", `/route/${id}`);
      expect(record.status).toBe(200);
      const listed = await co.api("GET", `/route?${q({ filters: [{ name: "id", op: "==", val: id }] })}`);
      expect(record.body).toStrictEqual(listed.body.objects[0]);
      expect(keysOf(record.body)).toEqual(keysOf(RouteSchema.parse(record.body)));
    }
    const record = (await co.api("GET", `/route/${routeId}`)).body;
    // Driving order: orderindex 0, 1, then unset.
    expect(record.sorted_deliveries).toEqual([deliveryIds[1], deliveryIds[0], deliveryIds[2]]);
    expect(record.deliveries.map((d: { id: number }) => d.id)).toEqual(record.sorted_deliveries);
    expect(record).toMatchObject({ gross_duration: 91, net_duration: 1, custom_id: AWKWARD, previous_drivers: [7, 8], previous_deliveries: [3], routebase_address: { contactcompany: AWKWARD } });
    expect((await co.api("GET", `/route/${emptyRouteId}`)).body).toMatchObject({ deliveries: [], sorted_deliveries: [], routebase_address: null });
    // Unknown and foreign routes stay unknown.
    expect((await other.api("GET", `/route/${routeId}`)).status).toBe(404);
    expect((await co.api("GET", "/route/999999")).status).toBe(404);
  });

  it("GET /driverposition shows each driver's newest position as GET /driverposition/<id> does", async () => {
    const list = await co.api("GET", "/driverposition");
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ num_results: 2, page: 1, total_pages: 1 });
    expect(list.body.objects.map((p: { driver_id: number }) => p.driver_id)).toEqual(driverIds);
    for (const shown of list.body.objects) {
      expect(shown).toStrictEqual((await co.api("GET", `/driverposition/${shown.driver_id}`)).body);
      expect(keysOf(shown)).toEqual(keysOf(PositionRecordSchema.parse(shown)));
    }
    expect(list.body.objects[0]).toMatchObject({ firstname: AWKWARD, position: { coordinates: [13.123456789012345, 52.5] }, timestamp: "2026-11-26T09:00:00Z" });
    expect(list.body.objects[1]).toMatchObject({ firstname: null, lastname: null, htmlcolor: null, position: { coordinates: [13, 52.5] } });
    expect((await other.api("GET", "/driverposition")).body.num_results).toBe(0);
  });

  it("reads carry the session's bookmark like every answer", async () => {
    for (const path of ["/delivery", `/route/${routeId}`, "/driverposition"]) {
      const res = await co.api("GET", path);
      expect(res.headers.get("x-d1-bookmark"), path).toMatch(/^[0-9a-f]{8}-/);
    }
  });
});
