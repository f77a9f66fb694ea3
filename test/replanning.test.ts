import { describe, expect, it } from "vitest";
import { type TestCompany, createCompany, insertAddress, routeAndStart, tomorrowAt } from "./helpers";

const lngOf = (k: number) => 13.3849 + 0.02 * k;

/**
 * Deliveries on a line east of the depot (13.3849, 52.5317), about 1.4 km apart (the k-th at `lngOf(k)`), open
 * tomorrow or, with `openNow`, from now on; answers their ids west to east.
 */
async function eastwardLine(co: TestCompany, count = 5, openNow = false) {
  const window = openNow ? { pdt_from: new Date(Date.now() - 3_600_000).toISOString(), pdt_to: new Date(Date.now() + 10 * 3_600_000).toISOString() } : { pdt_from: tomorrowAt(6), pdt_to: tomorrowAt(20) };
  const ids: number[] = [];
  for (let k = 1; k <= count; k++) {
    const address = await insertAddress(co.id, { lng: lngOf(k), lat: 52.5317 });
    ids.push((await co.api("POST", "/delivery", { body: { deliverylocation_id: address, ...window, els: 5 } })).body.id);
  }
  return ids;
}

type Stop = { id: number; orderindex: number };
const drivingOrder = (route: { deliveries: Stop[] }) => [...route.deliveries].sort((a, b) => a.orderindex - b.orderindex).map((d) => d.id);

describe("an update of a route on the way plans from where its driver is", () => {
  it("starts at the driver's fresh position: the stops near it first, then the others on the way back", async () => {
    const co = await createCompany();
    const ids = await eastwardLine(co, 5, true);
    const { driver, routeId, started } = await routeAndStart(co, ids.slice(0, 4));
    // The driver is at the far end now (beside the fifth address), and the delivery there joins the route.
    const here = { type: "Point", coordinates: [lngOf(4.9), 52.5317] };
    expect((await co.api("POST", "/drivertracking", { token: driver.token, body: { driver_id: driver.id, position: here } })).status).toBe(200);
    const updated = await co.api("PATCH", `/calcroute/update/timewindow/${routeId}`, { body: { add_deliveryids: [ids[4]] } });
    expect(updated.status, updated.text).toBe(200);
    // From the driver's position: the two stops at the far end first, then back west towards the depot.
    expect(drivingOrder(updated.body)).toEqual([ids[4], ids[3], ids[2], ids[1], ids[0]]);
    expect(updated.body.status).toBe(3);
    // Out and back from the depot (5.6 km each way) would be twice the rest of the tour from there.
    expect(updated.body.distance).toBeLessThan(0.7 * started.body.distance * (5 / 4));
    // The new tour's line starts where the driver is and, a round trip, ends at the depot.
    const line = updated.body.routestring.coordinates as number[][];
    expect(line[0][0]).toBeCloseTo(here.coordinates[0], 5);
    expect(line[line.length - 1][0]).toBeCloseTo(13.3849, 4);
    // It leaves now (the windows are open), from there: the first stop a few minutes ahead.
    expect(Date.parse(updated.body.tst_from)).toBeLessThan(Date.now() + 5 * 60_000);
    const first = updated.body.deliveries.find((d: { id: number }) => d.id === ids[4]);
    expect(Date.parse(first.eta_from)).toBeLessThan(Date.now() + 10 * 60_000);
  });

  it("without a fresh position it starts from the last stop the driver reported, and plans for the route's own vehicle", async () => {
    const co = await createCompany();
    const ids = await eastwardLine(co);
    const van = await co.api("POST", "/vehicle", { body: { name: "Van 7", capacity_1: 100 } });
    expect(van.status, van.text).toBe(200);
    const { driver, routeId } = await routeAndStart(co, ids.slice(0, 4), undefined, { vehicles: [] });
    const planned = await co.api("GET", `/route/${routeId}`);
    expect(planned.body.vehicle_id).toBe(van.body.id);
    // An old position (an hour ago, at the depot) does not count; the reports do: three stops in driving order.
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    await co.api("POST", "/drivertracking", { token: driver.token, body: { driver_id: driver.id, timestamp: hourAgo, position: { type: "Point", coordinates: [13.3849, 52.5317] } } });
    const order = drivingOrder(planned.body);
    for (const id of order.slice(0, 3)) expect((await co.api("POST", `/deliverydone/${id}`, { token: driver.token, body: { status: "delivered" } })).status).toBe(200);
    // A second vehicle now exists; the update keeps the route's.
    expect((await co.api("POST", "/vehicle", { body: { name: "Truck 2", capacity_1: 100, vehicle_class: "truck" } })).status).toBe(200);
    const updated = await co.api("PATCH", `/calcroute/update/timewindow/${routeId}`, { body: { add_deliveryids: [ids[4]] } });
    expect(updated.status, updated.text).toBe(200);
    expect(drivingOrder(updated.body).sort()).toEqual([order[3], ids[4]].sort());
    const line = updated.body.routestring.coordinates as number[][];
    expect(line[0][0]).toBeCloseTo(lngOf(ids.indexOf(order[2]) + 1), 5);
    expect(updated.body.vehicle_id).toBe(van.body.id);
  });

  it("a route not yet on the way is planned from its depot, as before", async () => {
    const co = await createCompany();
    const ids = await eastwardLine(co, 3);
    const routed = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { body: { deliveryids: ids.slice(0, 2) } });
    expect(routed.status, routed.text).toBe(200);
    const updated = await co.api("PATCH", `/calcroute/update/timewindow/${routed.body.objects[0].id}`, { body: { add_deliveryids: [ids[2]] } });
    expect(updated.status, updated.text).toBe(200);
    expect(drivingOrder(updated.body)).toEqual(ids);
    expect((updated.body.routestring.coordinates as number[][])[0][0]).toBeCloseTo(13.3849, 4);
  });

  it("goes on with the driver's working day so far: after 5.5 hours on the way without a break, the break comes early in the new tour", async () => {
    const co = await createCompany();
    await co.d1.prepare(`UPDATE companies SET working_time_rules = '["de-arbzg"]' WHERE id = ?`).bind(co.id).run();
    const ids = await eastwardLine(co, 4, true);
    const { driver, routeId } = await routeAndStart(co, ids.slice(0, 3));
    const started = new Date(Date.now() - 5.5 * 3_600_000).toISOString().replace(/\.\d+Z$/, "Z");
    await co.d1.prepare("UPDATE routes SET ast = ? WHERE id = ?").bind(started, routeId).run();
    const here = { type: "Point", coordinates: [lngOf(0.5), 52.5317] };
    expect((await co.api("POST", "/drivertracking", { token: driver.token, body: { driver_id: driver.id, position: here } })).status).toBe(200);
    const updated = await co.api("PATCH", `/calcroute/update/timewindow/${routeId}`, { body: { add_deliveryids: [ids[3]] } });
    expect(updated.status, updated.text).toBe(200);
    // The rest of the tour alone (under an hour) would need no break; with 5.5 h behind it, one within half an hour.
    const breaks = updated.body.breaks as { start: string; minutes: number; reason: string }[];
    expect(breaks.length).toBeGreaterThan(0);
    expect(Date.parse(breaks[0].start) - Date.now()).toBeLessThan(31 * 60_000);
    expect(breaks[0].reason).toBe("de-arbzg");
    expect(breaks.reduce((sum, b) => sum + b.minutes, 0)).toBeGreaterThanOrEqual(15);
  });
});
