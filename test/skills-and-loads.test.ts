import { beforeAll, describe, expect, it } from "vitest";
import { OPERATOR, type TestCompany, call, createCompany, insertAddress, routeAndStart } from "./helpers";

/** Four deliveries: three side by side north of the depot, one far south; `cold` marks the middle one. */
async function scene(co: TestCompany, cold: Record<string, unknown>) {
  const near = [0, 1, 2].map((i) => insertAddress(co.id, { lng: 13.38 + i * 0.003, lat: 52.56 }));
  const far = insertAddress(co.id, { lng: 13.39, lat: 52.45 });
  const [a, b, c, d] = await Promise.all([...near, far]);
  const make = (address: number, extra: Record<string, unknown> = {}) => co.api("POST", "/delivery", { body: { deliverylocation_id: address, load: 1, ...extra } });
  const created = await Promise.all([make(a), make(b, cold), make(c), make(d)]);
  for (const r of created) expect(r.status, r.text).toBe(201);
  return created.map((r) => r.body.id as number);
}

const routeOf = (routes: { driver_id?: number; deliveries: { id: number }[] }[], id: number) => routes.find((r) => r.deliveries.some((d) => d.id === id))!;

async function activeAvailableDriver(co: TestCompany, skills: string[]) {
  const driver = await co.user("driver");
  const patched = await co.api("PATCH", `/driver/${driver.id}`, { body: { active: true, skills } });
  expect(patched.status, patched.text).toBe(200);
  const now = Date.now();
  const window = await co.api("POST", "/driveravailability", { body: { driver_id: driver.id, fromtime: new Date(now - 3600_000).toISOString(), totime: new Date(now + 12 * 3600_000).toISOString() } });
  expect(window.status, window.text).toBe(200);
  return driver;
}

describe("skills, stops and loads on the records", () => {
  let co: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
  });

  it("vehicles keep skills (lower-case, without repeats) and max_stops; a bad skill name is a 422 and nothing is stored", async () => {
    const res = await co.api("POST", "/vehicle", { body: { name: "Reefer", skills: [" Refrigerated", "tail-lift", "refrigerated", "Tail-Lift"], max_stops: 12 } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ skills: ["refrigerated", "tail-lift"], max_stops: 12 });
    expect((await co.api("GET", `/vehicle/${res.body.id}`)).body).toMatchObject({ skills: ["refrigerated", "tail-lift"], max_stops: 12 });
    expect((await co.api("GET", `/vehicle?q=${encodeURIComponent(JSON.stringify({ filters: [{ name: "max_stops", op: "eq", val: 12 }] }))}`)).body.num_results).toBe(1);

    const plain = await co.api("POST", "/vehicle", { body: { name: "Van" } });
    expect(plain.body).toMatchObject({ skills: [], max_stops: null });

    for (const bad of [{ skills: ["cold, dry"] }, { skills: [""] }, { skills: Array.from({ length: 21 }, (_, i) => `s${i}`) }, { max_stops: 0 }]) {
      const refused = await co.api("POST", "/vehicle", { body: { name: "Nope", ...bad } });
      expect(refused.status, JSON.stringify(bad)).toBe(422);
    }
    expect((await co.api("GET", "/vehicle")).body.objects.map((v: { name: string }) => v.name)).not.toContain("Nope");
  });

  it("drivers keep skills, from creation and from a change", async () => {
    const created = await co.api("POST", "/driver", { body: { email: "skilled@example.com", skills: ["ADR", "two-person"] } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.skills).toEqual(["adr", "two-person"]);
    const changed = await co.api("PATCH", `/driver/${created.body.id}`, { body: { skills: ["adr"] } });
    expect(changed.body.skills).toEqual(["adr"]);
    expect((await co.api("GET", `/driver/${created.body.id}`)).body.skills).toEqual(["adr"]);
  });

  it("deliveries keep required_skills, load_2 and load_3, from POST /delivery and from deliverydata", async () => {
    const address = await insertAddress(co.id, { lng: 13.4, lat: 52.52 });
    const res = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, load: 3, load_2: 2, load_3: 1, required_skills: ["Refrigerated"] } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ load: 3, load_2: 2, load_3: 1, required_skills: ["refrigerated"] });
    const listed = await co.api("GET", `/delivery?q=${encodeURIComponent(JSON.stringify({ filters: [{ name: "id", op: "eq", val: res.body.id }] }))}`);
    expect(listed.body.objects[0]).toMatchObject({ load_2: 2, load_3: 1, required_skills: ["refrigerated"] });

    const routed = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", {
      body: { deliverydata: [{ lat: 52.53, lng: 13.41, city: "Berlin", load: 1, load_2: 4, required_skills: ["tail-lift"] }], vehicles: [{ name: "Lift", skills: ["tail-lift"], capacity_2: 10 }] },
    });
    expect(routed.status, routed.text).toBe(200);
    expect(routed.body.objects[0].deliveries[0]).toMatchObject({ load: 1, load_2: 4, load_3: null, required_skills: ["tail-lift"] });
    expect((await co.api("POST", "/delivery", { body: { deliverylocation_id: address, load_2: -1 } })).status).toBe(422);
  });
});

describe("routing with skills, stops, loads and service times", () => {
  let co: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
  });

  it("a delivery that needs a skill rides on the vehicle that has it, though another plan would be shorter", async () => {
    // The refrigerated truck has room for one delivery: without the skill it takes the far one.
    const fleet = [
      { name: "Van", capacity_1: 3 },
      { name: "Reefer", capacity_1: 1, skills: ["refrigerated"] },
    ];
    const free = await scene(co, {});
    const freeRun = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: free, vehicles: fleet } });
    expect(freeRun.status, freeRun.text).toBe(200);
    expect(routeOf(freeRun.body.objects, free[1]).deliveries).toHaveLength(3);

    const ids = await scene(co, { required_skills: ["refrigerated"] });
    const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: ids, vehicles: fleet } });
    expect(res.status, res.text).toBe(200);
    expect(routeOf(res.body.objects, ids[1]).deliveries.map((d: { id: number }) => d.id)).toEqual([ids[1]]);
    // Each route says which vehicle it was planned for.
    expect(routeOf(res.body.objects, ids[1])).toMatchObject({ vehicle: "Reefer", vehicle_id: null });
    expect(routeOf(res.body.objects, ids[0])).toMatchObject({ vehicle: "Van" });
  });

  it("a route planned with the company's stored vehicles names the vehicle and its id", async () => {
    const other = await createCompany();
    const reefer = (await other.api("POST", "/vehicle", { body: { name: "Cold 1", skills: ["refrigerated"] } })).body;
    await other.api("POST", "/vehicle", { body: { name: "Dry 1" } });
    const ids = await scene(other, { required_skills: ["refrigerated"] });
    const res = await other.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: [ids[1]] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.objects[0]).toMatchObject({ vehicle: "Cold 1", vehicle_id: reefer.id });
    expect((await other.api("GET", `/route/${res.body.objects[0].id}`)).body).toMatchObject({ vehicle: "Cold 1", vehicle_id: reefer.id });
  });

  it("no vehicle with the skill: 422 naming the delivery and the missing skill, and nothing is routed", async () => {
    const ids = await scene(co, { required_skills: ["adr"] });
    const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: ids, vehicles: [{ name: "Van", skills: ["refrigerated"] }] } });
    expect(res.status).toBe(422);
    expect(res.body.fields).toBe(String(ids[1]));
    expect(res.body.message).toMatch(/needs adr, which no vehicle has/);
    const after = await co.api("GET", `/delivery/${ids[0]}`);
    expect(after.body.status).toBe(0);
  });

  it("more than 31 distinct skills in one run: 422 before anything is stored", async () => {
    const deliverydata = Array.from({ length: 32 }, (_, i) => ({ lat: 52.5 + i * 0.001, lng: 13.4, city: "Berlin", required_skills: [`skill ${i}`] }));
    const before = (await co.api("GET", "/delivery")).body.num_results;
    const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliverydata } });
    expect(res.status).toBe(422);
    expect(res.body.fields).toBe("deliverydata");
    expect((await co.api("GET", "/delivery")).body.num_results).toBe(before);
  });

  it("with assign_drivers a driver's skills count: the tour that needs one goes to the driver who has it", async () => {
    const other = await createCompany();
    const plain = await activeAvailableDriver(other, []);
    const skilled = await activeAvailableDriver(other, ["two-person"]);
    const ids = await scene(other, { required_skills: ["two-person"] });
    const res = await other.api("POST", "/calcroute/optimized/timewindow?async=false&assign_drivers=true&num_vehicles=2", { body: { deliveryids: ids, vehcapacities: [2] } });
    expect(res.status, res.text).toBe(200);
    expect(routeOf(res.body.objects, ids[1]).driver_id).toBe(skilled.id);
    expect(res.body.objects.map((r: { driver_id: number }) => r.driver_id).sort()).toEqual([plain.id, skilled.id].sort());

    // Without assign_drivers no driver is known, so only the vehicles' skills count.
    const more = await scene(other, { required_skills: ["two-person"] });
    const refused = await other.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=2", { body: { deliveryids: more, vehcapacities: [2] } });
    expect(refused.status).toBe(422);
    expect(refused.body.message).toMatch(/needs two-person/);
  });

  it("a tour has at most its vehicle's max_stops", async () => {
    const ids = await scene(co, {});
    const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: ids, vehicles: [1, 2, 3].map((i) => ({ name: `Bike ${i}`, max_stops: 2, daily_rate: 100 })) } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.objects.map((r: { deliveries: unknown[] }) => r.deliveries.length).sort()).toEqual([2, 2]);
    const tooFew = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: await scene(co, {}), vehicles: [{ name: "Bike", max_stops: 3 }] } });
    expect(tooFew.status).toBe(422);
    expect(tooFew.body.message).toMatch(/stops used up \(at most 3\)/);
  });

  it("second and third loads are held against capacity_2 and capacity_3", async () => {
    const ids = await scene(co, {});
    for (const id of ids) expect((await co.api("PATCH", "/delivery", { body: { id, load: 1, load_2: 1, load_3: 5 } })).status).toBe(200);
    // Room for all four by the first load, for two by the third.
    const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: ids, vehicles: [1, 2, 3].map((i) => ({ name: `Truck ${i}`, capacity_1: 10, capacity_2: 10, capacity_3: 10 })) } });
    expect(res.status, res.text).toBe(200);
    for (const route of res.body.objects) expect(route.deliveries.reduce((s: number, d: { load_3: number }) => s + d.load_3, 0)).toBeLessThanOrEqual(10);
    expect(res.body.objects.length).toBeGreaterThanOrEqual(2);
  });

  it("a delivery without els takes its type's service minutes from the company setting", async () => {
    const other = await createCompany();
    const set = await call("PATCH", `/_operator/companies/${other.slug}`, { headers: OPERATOR, body: { service_minutes_by_type: { "2": 25 } } });
    expect(set.status, set.text).toBe(200);
    expect((await other.api("GET", "/company")).body.objects[0].service_minutes_by_type).toEqual({ "2": 25 });
    expect((await call("PATCH", `/_operator/companies/${other.slug}`, { headers: OPERATOR, body: { service_minutes_by_type: { "99": 5 } } })).status).toBe(422);

    const address = await insertAddress(other.id, { lng: 13.4, lat: 52.53 });
    const make = async (extra: Record<string, unknown>) => (await other.api("POST", "/delivery", { body: { deliverylocation_id: address, ...extra } })).body.id as number;
    const pickup = await make({ deliverytype_id: 2 });
    const own = await make({ deliverytype_id: 2, els: 3 });
    const untyped = await make({ deliverytype_id: 1 });
    const minutes = async (id: number) => {
      const res = await other.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { body: { deliveryids: [id] } });
      expect(res.status, res.text).toBe(200);
      const stop = res.body.objects[0].deliveries[0];
      return (Date.parse(stop.tdt_to) - Date.parse(stop.tdt_from)) / 60_000;
    };
    expect(await minutes(pickup)).toBe(25);
    expect(await minutes(own)).toBe(3);
    expect(await minutes(untyped)).toBe(0);

    // On the way, ETAs from the driver's position keep the type's stay.
    const onTheWay = await make({ deliverytype_id: 2 });
    const { driver, routeId } = await routeAndStart(other, [onTheWay]);
    await other.api("POST", "/drivertracking", { token: driver.token, body: { driver_id: driver.id, position: { type: "Point", coordinates: [13.43, 52.5] } } });
    const [eta] = (await other.api("GET", `/updateetas/timewindow/${routeId}`)).body.etas as { eta_from: string }[];
    const stored = (await other.api("GET", `/delivery/${onTheWay}`)).body;
    expect(stored.eta_from).toBe(eta.eta_from);
    expect((Date.parse(stored.tdt_to) - Date.parse(stored.tdt_from)) / 60_000).toBe(25);
  });
});
