import { beforeAll, describe, expect, it } from "vitest";
import { dayAt, instantOf } from "../src/shared/wall-clock";
import { OPERATOR, type TestCompany, call, createCompany, insertAddress, routeAndStart } from "./helpers";

/** Two days ahead on the company's wall clock (Europe/Berlin) at hh:mm, as UTC ISO. */
const day = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
const at = (hhmm: string) => new Date(instantOf(day, hhmm, "Europe/Berlin")).toISOString().replace(".000Z", "Z");
const HOUR = 3_600_000;

interface RouteBreak { start: string; end: string; minutes: number; after_orderindex: number; where: string; reason: string }
interface PlannedStop { id: number; orderindex: number; tdt_from: string; tdt_to: string; eta_from: string }
interface PlannedRoute { id: number; tst_from: string; gross_duration: number; net_duration: number; breaks: RouteBreak[]; deliveries: PlannedStop[] }

/** `n` deliveries of `minutes` service each along a street north of the depot, in the window given. */
async function longDay(co: TestCompany, n: number, minutes: number, window: Record<string, string> = {}) {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const address = await insertAddress(co.id, { lng: 13.37 + (i % 6) * 0.01, lat: 52.54 + Math.floor(i / 6) * 0.01 });
    const res = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, els: minutes, ...window } });
    expect(res.status, res.text).toBe(201);
    ids.push(res.body.id);
  }
  return ids;
}

const ms = (iso: string) => Date.parse(iso);
const byOrder = (r: PlannedRoute) => [...r.deliveries].sort((a, b) => a.orderindex - b.orderindex);

/** The plan keeps its breaks between the stops it names: the stop after a break is served after it ends. */
function expectBreaksBetweenStops(route: PlannedRoute) {
  const stops = byOrder(route);
  for (const b of route.breaks) {
    expect(ms(b.end) - ms(b.start)).toBe(b.minutes * 60_000);
    const before = stops[b.after_orderindex - 1];
    const after = stops[b.after_orderindex];
    if (before) expect(ms(b.start)).toBeGreaterThanOrEqual(ms(before.tdt_to));
    if (after) expect(ms(after.tdt_from)).toBeGreaterThanOrEqual(ms(b.end));
  }
}

describe("working-time rules and breaks on the records", () => {
  let co: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
  });

  it("vehicles keep working_time_rules and fixed breaks (times as stored); bad ones are a 422 and nothing is stored", async () => {
    const res = await co.api("POST", "/vehicle", { body: { name: "Truck", working_time_rules: ["eu-561", "de-arbzg", "eu-561"], breaks: [{ from: "12:00", to: "13:30:00+01:00", minutes: 30 }] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ working_time_rules: ["eu-561", "de-arbzg"], breaks: [{ from: "12:00:00", to: "13:30:00+01:00", minutes: 30 }] });
    expect((await co.api("GET", `/vehicle/${res.body.id}`)).body).toMatchObject({ working_time_rules: ["eu-561", "de-arbzg"] });
    // Null: the company's rules.
    const plain = await co.api("POST", "/vehicle", { body: { name: "Van" } });
    expect(plain.body).toMatchObject({ working_time_rules: null, breaks: [] });
    const none = await co.api("PATCH", "/vehicle", { body: { id: res.body.id, working_time_rules: [], breaks: [] } });
    expect(none.body).toMatchObject({ working_time_rules: [], breaks: [] });

    for (const bad of [
      { working_time_rules: ["us-fmcsa"] },
      { breaks: [{ from: "25:00", to: "26:00", minutes: 30 }] },
      { breaks: [{ from: "12:00", to: "13:00", minutes: 0 }] },
      { breaks: [{ from: "12:00", minutes: 30 }] },
    ]) {
      const refused = await co.api("POST", "/vehicle", { body: { name: "Nope", ...bad } });
      expect(refused.status, JSON.stringify(bad)).toBe(422);
    }
    expect((await co.api("GET", "/vehicle")).body.objects.map((v: { name: string }) => v.name)).not.toContain("Nope");
  });

  it("drivers keep their own rules and breaks (null: the vehicle's), from creation and from a change", async () => {
    const created = await co.api("POST", "/driver", { body: { email: "rested@example.com", working_time_rules: ["eu-561"], breaks: [{ from: "14:00", to: "14:30", minutes: 20 }] } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ working_time_rules: ["eu-561"], breaks: [{ from: "14:00:00", to: "14:30:00", minutes: 20 }] });
    const reset = await co.api("PATCH", `/driver/${created.body.id}`, { body: { working_time_rules: null, breaks: null } });
    expect(reset.body).toMatchObject({ working_time_rules: null, breaks: null });
    expect((await co.api("PATCH", `/driver/${created.body.id}`, { body: { working_time_rules: ["§4"] } })).status).toBe(422);
  });

  it("the company's rules are a setting (default none) shown by GET /company", async () => {
    expect((await co.api("GET", "/company")).body.objects[0].working_time_rules).toEqual([]);
    const set = await call("PATCH", `/_operator/companies/${co.slug}`, { headers: OPERATOR, body: { working_time_rules: ["de-arbzg"] } });
    expect(set.status, set.text).toBe(200);
    expect((await co.api("GET", "/company")).body.objects[0].working_time_rules).toEqual(["de-arbzg"]);
    expect((await call("PATCH", `/_operator/companies/${co.slug}`, { headers: OPERATOR, body: { working_time_rules: ["none"] } })).status).toBe(422);
  });
});

describe("routing with breaks", () => {
  let co: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
  });

  it("de-arbzg: a day of more than 6 hours of work gets its 30 minutes, in the timetable, the route record and routemetadata", async () => {
    // Twelve stops of 35 minutes: 7 hours of service before any driving.
    const ids = await longDay(co, 12, 35);
    const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: ids, vehicles: [{ name: "Van", working_time_rules: ["de-arbzg"] }] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.objects).toHaveLength(1);
    const route = res.body.objects[0] as PlannedRoute;
    expect(route.breaks.length).toBeGreaterThan(0);
    expect(route.breaks.every((b) => b.reason === "de-arbzg")).toBe(true);
    expect(route.breaks.reduce((s, b) => s + b.minutes, 0)).toBeGreaterThanOrEqual(30);
    expect(route.breaks.every((b) => b.minutes >= 15)).toBe(true);
    expectBreaksBetweenStops(route);
    // At most 6 hours of work before the first break.
    expect(ms(route.breaks[0].start) - ms(route.tst_from)).toBeLessThanOrEqual(6 * HOUR);
    // Break minutes count in the gross duration, not in the net (driving) one.
    const service = route.deliveries.reduce((s, d) => s + (ms(d.tdt_to) - ms(d.tdt_from)) / 60_000, 0);
    expect(route.gross_duration - route.net_duration).toBeGreaterThanOrEqual(Math.round(service) + 30 - 1);

    const meta = await co.api("GET", `/routemetadata/${route.id}`);
    expect(meta.status, meta.text).toBe(200);
    expect(meta.body.breaks).toEqual(route.breaks);
    expect((await co.api("GET", `/route/${route.id}`)).body.breaks).toEqual(route.breaks);
  });

  it("the same day without rules has no break, and a vehicle without rules takes the company's", async () => {
    const ids = await longDay(co, 12, 35);
    const free = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: ids, vehicles: [{ name: "Van" }] } });
    expect(free.status, free.text).toBe(200);
    expect(free.body.objects[0].breaks).toEqual([]);

    const ruled = await createCompany();
    expect((await call("PATCH", `/_operator/companies/${ruled.slug}`, { headers: OPERATOR, body: { working_time_rules: ["de-arbzg"] } })).status).toBe(200);
    const more = await longDay(ruled, 12, 35);
    const res = await ruled.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: more, vehicles: [{ name: "Van" }] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.objects[0].breaks.map((b: RouteBreak) => b.reason)).toContain("de-arbzg");
    // [] on the vehicle: none, whatever the company says.
    const opted = await ruled.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: await longDay(ruled, 12, 35), vehicles: [{ name: "Van", working_time_rules: [] }] } });
    expect(opted.body.objects[0].breaks).toEqual([]);
  });

  it("a fixed break starts inside its window on the company's wall clock", async () => {
    const ids = await longDay(co, 8, 30, { pdt_from: at("08:00"), pdt_to: at("18:00") });
    const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false", {
      body: { deliveryids: ids, vehicles: [{ name: "Lunch van", departure_time_from: "08:00:00", breaks: [{ from: "12:00", to: "12:30", minutes: 45 }] }] },
    });
    expect(res.status, res.text).toBe(200);
    const route = res.body.objects[0] as PlannedRoute;
    expect(route.breaks).toHaveLength(1);
    expect(route.breaks[0]).toMatchObject({ reason: "fixed", minutes: 45 });
    expect(ms(route.breaks[0].start)).toBeGreaterThanOrEqual(ms(at("12:00")));
    expect(ms(route.breaks[0].start)).toBeLessThanOrEqual(ms(at("12:30")));
    expectBreaksBetweenStops(route);
  });

  it("with assign_drivers the bound driver's own breaks replace the vehicle's", async () => {
    const other = await createCompany();
    const driver = await other.user("driver");
    expect((await other.api("PATCH", `/driver/${driver.id}`, { body: { active: true, breaks: [{ from: "10:00", to: "10:15", minutes: 20 }] } })).status).toBe(200);
    const now = Date.now();
    await other.api("POST", "/driveravailability", { body: { driver_id: driver.id, fromtime: new Date(now - HOUR).toISOString(), totime: new Date(now + 72 * HOUR).toISOString() } });
    const vehicle = await other.api("POST", "/vehicle", { body: { name: "Shared van", driver_id: driver.id, departure_time_from: "08:00:00", breaks: [{ from: "11:00", to: "11:15", minutes: 30 }] } });
    expect(vehicle.status, vehicle.text).toBe(200);
    const ids = await longDay(other, 8, 30, { pdt_from: at("08:00"), pdt_to: at("18:00") });
    const res = await other.api("POST", "/calcroute/optimized/timewindow?async=false&assign_drivers=true", { body: { deliveryids: ids } });
    expect(res.status, res.text).toBe(200);
    const route = res.body.objects[0] as PlannedRoute & { driver_id: number };
    expect(route.driver_id).toBe(driver.id);
    expect(route.breaks).toHaveLength(1);
    expect(route.breaks[0].minutes).toBe(20);
    expect(ms(route.breaks[0].start)).toBeGreaterThanOrEqual(ms(at("10:00")));
    expect(ms(route.breaks[0].start)).toBeLessThanOrEqual(ms(at("10:15")));

    // Without assign_drivers no driver is known: the vehicle's break.
    const plain = await other.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: await longDay(other, 8, 30, { pdt_from: at("08:00"), pdt_to: at("18:00") }) } });
    expect(plain.body.objects[0].breaks).toMatchObject([{ minutes: 30, reason: "fixed" }]);
  });

  it("a day the rules cannot make legal is refused with each delivery left out, its reason and remedy, and nothing is routed", async () => {
    // 16 stops of 45 minutes on one van: 12 hours of work, over de-arbzg's 10.
    const ids = await longDay(co, 16, 45);
    const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: ids, vehicles: [{ name: "Van", working_time_rules: ["de-arbzg"] }] } });
    expect(res.status, res.text).toBe(422);
    expect(res.body.message).toMatch(/cannot be routed.*add a vehicle/);
    const left = String(res.body.fields).split(",").map(Number);
    expect(left.length).toBeGreaterThan(0);
    expect(left.every((id) => ids.includes(id))).toBe(true);
    for (const id of ids) expect((await co.api("GET", `/delivery/${id}`)).body.status).toBe(0);
    // Two vans make it legal.
    const two = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: ids, vehicles: [1, 2].map((i) => ({ name: `Van ${i}`, working_time_rules: ["de-arbzg"] })) } });
    expect(two.status, two.text).toBe(200);
    for (const r of two.body.objects as PlannedRoute[]) {
      const stops = byOrder(r);
      const work = ms(stops[stops.length - 1].tdt_to) - ms(r.tst_from) - r.breaks.reduce((s, b) => s + b.minutes * 60_000, 0);
      expect(work).toBeLessThanOrEqual(10 * HOUR);
      expectBreaksBetweenStops(r);
    }
  });
});

describe("breaks on the way and in the day report", () => {
  it("live ETAs keep the breaks still to take: the stop after a break is expected at least its minutes later", async () => {
    const co = await createCompany();
    const ids = await longDay(co, 8, 60);
    const { routeId, planned, driver } = await routeAndStart(co, ids, undefined, { vehicles: [{ name: "Van", working_time_rules: ["de-arbzg"] }] });
    const route = planned as PlannedRoute;
    expect(route.breaks.length).toBeGreaterThan(0);
    const etas = await co.api("GET", `/updateetas/timewindow/${routeId}`);
    expect(etas.status, etas.text).toBe(200);
    const live = new Map((etas.body.etas as { delivery_id: number; eta_from: string }[]).map((e) => [e.delivery_id, ms(e.eta_from)]));
    const stops = byOrder(route);
    const first = route.breaks.find((b) => b.after_orderindex > 0 && b.after_orderindex < stops.length)!;
    const before = stops[first.after_orderindex - 1];
    const after = stops[first.after_orderindex];
    // The stop before is served for an hour, then the break, then the drive.
    expect(live.get(after.id)! - live.get(before.id)!).toBeGreaterThanOrEqual((60 + first.minutes) * 60_000);

    // Every stop reported: the route is finished, and the day report counts its planned break minutes.
    for (const id of ids) expect((await co.api("POST", `/deliverydone/${id}`, { token: driver.token, body: { status: "delivered" } })).status).toBe(200);
    expect((await co.api("GET", `/route/${routeId}`)).body.status).toBe(4);
    const report = await co.api("GET", `/report/day?date=${dayAt(Date.now(), "Europe/Berlin")}`);
    expect(report.status, report.text).toBe(200);
    const minutes = route.breaks.reduce((s, b) => s + b.minutes, 0);
    expect(report.body.totals.break_minutes_planned).toBe(minutes);
    expect(report.body.routes[0].break_minutes_planned).toBe(minutes);
    const csv = await co.api("GET", `/report/day?date=${dayAt(Date.now(), "Europe/Berlin")}&format=csv`);
    expect(csv.text).toContain("break_minutes_planned");
  });
});
