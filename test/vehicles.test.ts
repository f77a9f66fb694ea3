import { beforeAll, describe, expect, it } from "vitest";
import { VEHICLE_CLASSES } from "../src/solver/vehicle-classes";
import { type TestCompany, createCompany } from "./helpers";

describe("vehicles", () => {
  let co: TestCompany;
  let depotId: number;
  let driverId: number;
  let watcher: { token: string };
  let driver: { id: number; token: string };
  beforeAll(async () => {
    co = await createCompany();
    depotId = (await co.api("GET", "/companyaddress")).body.id;
    driver = await co.user("driver");
    driverId = driver.id;
    watcher = await co.user("watcher");
  });

  it("GET /vehicletype lists the optimiser's vehicle classes", async () => {
    const res = await co.api("GET", "/vehicletype", { token: driver.token });
    expect(res.status).toBe(200);
    expect(res.body.num_results).toBe(VEHICLE_CLASSES.length);
    expect(res.body.objects.map((t: any) => t.id)).toEqual(expect.arrayContaining(["car", "truck", "bicycle"]));
    const car = res.body.objects.find((t: any) => t.id === "car");
    const source = VEHICLE_CLASSES.find((c) => c.id === "car")!;
    expect(car).toEqual({ id: "car", name: source.name, speed_kmh: source.speedKmh, restrictions: source.restrictions });
  });

  it("POST /vehicle: every field round-trips; defaults", async () => {
    const body = {
      name: "Van 1",
      plate: "B-XY 123",
      vehicle_class: "truck",
      depot_location_id: depotId,
      driver_id: driverId,
      capacity_1: 100,
      capacity_2: 20,
      capacity_3: 0,
      daily_rate: 120.5,
      km_rate: 0.35,
      waiting_hour_rate: 18,
      traveltime_factor: 1.2,
      departure_time_from: "07:30:00+01:00",
      departure_time_to: "09:00:00+01:00",
      return_time_to: "18:00:00+01:00",
      max_tour_duration: 480,
      max_stops: 40,
      skills: ["refrigerated", "tail-lift"],
      working_time_rules: ["eu-561"],
      breaks: [{ from: "12:00:00", to: "12:30:00+01:00", minutes: 45 }],
      co2e_g_per_km: 250.5,
      active: false,
    };
    const res = await co.api("POST", "/vehicle", { body });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.any(Number), ...body });
    const got = await co.api("GET", `/vehicle/${res.body.id}`, { token: watcher.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);

    const minimal = await co.api("POST", "/vehicle", { body: { name: "Bike" } });
    expect(minimal.status).toBe(200);
    expect(minimal.body).toEqual({
      id: expect.any(Number),
      name: "Bike",
      plate: null,
      vehicle_class: "car",
      depot_location_id: null,
      driver_id: null,
      capacity_1: null,
      capacity_2: null,
      capacity_3: null,
      daily_rate: null,
      km_rate: null,
      waiting_hour_rate: null,
      traveltime_factor: null,
      departure_time_from: null,
      departure_time_to: null,
      return_time_to: null,
      max_tour_duration: null,
      max_stops: null,
      skills: [],
      working_time_rules: null,
      breaks: [],
      co2e_g_per_km: null,
      active: true,
    });
  });

  it("times of day without offset are the company's wall clock, kept as such; with one, normalised", async () => {
    const res = await co.api("POST", "/vehicle", { body: { name: "Zoned", departure_time_from: "08:00", return_time_to: "17:30:00Z" } });
    expect(res.status).toBe(200);
    expect(res.body.departure_time_from).toBe("08:00:00");
    expect(res.body.return_time_to).toBe("17:30:00+00:00");
    const bad = await co.api("POST", "/vehicle", { body: { name: "Bad times", departure_time_from: "25:00:00", departure_time_to: "8 am", return_time_to: "18:00:00" } });
    expect(bad.status).toBe(422);
    expect(bad.body.fields).toBe("departure_time_from,departure_time_to");
  });

  it("validation: name unique (409), class known, references of the company (422)", async () => {
    await co.api("POST", "/vehicle", { body: { name: "Unique" } });
    const dup = await co.api("POST", "/vehicle", { body: { name: "Unique" } });
    expect(dup.status).toBe(409);
    expect(dup.body.fields).toBe("name");
    const cls = await co.api("POST", "/vehicle", { body: { name: "Boat", vehicle_class: "boat" } });
    expect(cls.status).toBe(422);
    expect(cls.body.fields).toBe("vehicle_class");
    const depot = await co.api("POST", "/vehicle", { body: { name: "No depot", depot_location_id: 999999 } });
    expect(depot.status).toBe(422);
    expect(depot.body.fields).toBe("depot_location_id");
    const drv = await co.api("POST", "/vehicle", { body: { name: "No driver", driver_id: 999999 } });
    expect(drv.status).toBe(422);
    expect(drv.body.fields).toBe("driver_id");
    const missing = await co.api("POST", "/vehicle", { body: { plate: "X" } });
    expect(missing.status).toBe(422);
    expect(missing.body.fields).toBe("name");
    const negative = await co.api("POST", "/vehicle", { body: { name: "Neg", capacity_1: -1, km_rate: -2 } });
    expect(negative.body.fields.split(",").sort()).toEqual(["capacity_1", "km_rate"]);
    // Another company's address and driver are unknown here.
    const b = await createCompany();
    const foreignDepot = (await b.api("GET", "/companyaddress")).body.id;
    const foreign = await co.api("POST", "/vehicle", { body: { name: "Foreign", depot_location_id: foreignDepot } });
    expect(foreign.status).toBe(422);
    expect(foreign.body.fields).toBe("depot_location_id");
    const foreignDriver = await b.api("POST", "/vehicle", { body: { name: "Foreign", driver_id: driverId } });
    expect(foreignDriver.status).toBe(422);
    // Names are unique per company only.
    expect((await b.api("POST", "/vehicle", { body: { name: "Unique" } })).status).toBe(200);
  });

  it("PATCH /vehicle identifies by id in the body", async () => {
    const v = (await co.api("POST", "/vehicle", { body: { name: "Patchme", capacity_1: 10, plate: "P-1" } })).body;
    const res = await co.api("PATCH", "/vehicle", { body: { id: v.id, capacity_1: 15, plate: null, vehicle_class: "bicycle", departure_time_to: "10:00:00+02:00" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...v, capacity_1: 15, plate: null, vehicle_class: "bicycle", departure_time_to: "10:00:00+02:00" });
    expect((await co.api("GET", `/vehicle/${v.id}`)).body).toEqual(res.body);
    expect((await co.api("PATCH", "/vehicle", { body: { id: v.id, name: "Unique" } })).status).toBe(409);
    expect((await co.api("PATCH", "/vehicle", { body: { id: v.id, vehicle_class: "rocket" } })).body.fields).toBe("vehicle_class");
    expect((await co.api("PATCH", "/vehicle", { body: { id: v.id, driver_id: 999999 } })).body.fields).toBe("driver_id");
    expect((await co.api("PATCH", "/vehicle", { body: { capacity_1: 1 } })).body.fields).toBe("id");
    expect((await co.api("PATCH", "/vehicle", { body: { id: 999999, capacity_1: 1 } })).status).toBe(404);
    expect((await co.api("PATCH", "/vehicle", { body: { id: v.id } })).body).toEqual(res.body);
  });

  it("lists with q; watchers and drivers may read but not write", async () => {
    const c2 = await createCompany();
    await c2.api("POST", "/vehicle", { body: { name: "A", capacity_1: 5 } });
    await c2.api("POST", "/vehicle", { body: { name: "B", capacity_1: 50, active: false } });
    const all = await c2.api("GET", "/vehicle");
    expect(all.body.num_results).toBe(2);
    expect(all.body.objects.map((v: any) => v.name)).toEqual(["A", "B"]);
    const q = JSON.stringify({ filters: [{ name: "capacity_1", op: ">", val: 10 }] });
    expect((await c2.api("GET", `/vehicle?q=${encodeURIComponent(q)}`)).body.objects.map((v: any) => v.name)).toEqual(["B"]);
    const inactive = JSON.stringify({ filters: [{ name: "active", op: "==", val: false }] });
    expect((await c2.api("GET", `/vehicle?q=${encodeURIComponent(inactive)}`)).body.objects.map((v: any) => v.name)).toEqual(["B"]);

    const id = all.body.objects[0].id;
    for (const token of [watcher.token, driver.token]) {
      expect((await co.api("POST", "/vehicle", { token, body: { name: "Nope" } })).status).toBe(403);
      expect((await co.api("PATCH", "/vehicle", { token, body: { id, name: "Nope" } })).status).toBe(403);
    }
    expect((await co.api("GET", "/vehicle", { token: driver.token })).status).toBe(200);
  });

  it("tenancy: another company's vehicle is 404", async () => {
    const a = await createCompany();
    const b = await createCompany();
    const v = (await a.api("POST", "/vehicle", { body: { name: "Mine" } })).body;
    expect((await b.api("GET", `/vehicle/${v.id}`)).status).toBe(404);
    expect((await b.api("PATCH", "/vehicle", { body: { id: v.id, name: "Stolen" } })).status).toBe(404);
    expect((await b.api("GET", "/vehicle")).body.num_results).toBe(0);
    expect((await a.api("GET", `/vehicle/${v.id}`)).body.name).toBe("Mine");
  });
});

describe("lookup lists page like every list", () => {
  it("vehicletype and driverstatus take page and results_per_page", async () => {
    const co = await createCompany();
    const page2 = await co.api("GET", "/driverstatus?results_per_page=3&page=2");
    expect(page2.body).toEqual({ num_results: 4, objects: [{ id: 3, name: "break" }], page: 2, total_pages: 2 });
    const past = await co.api("GET", "/vehicletype?page=5");
    expect(past.status).toBe(200);
    expect(past.body).toMatchObject({ num_results: VEHICLE_CLASSES.length, objects: [], page: 5 });
    expect((await co.api("GET", "/vehicletype?page=0")).status).toBe(422);
  });
});
