import { describe, expect, it } from "vitest";
import { type TestCompany, createCompany, routeAndStart } from "./helpers";
import { deliveryAt, lngOf, twoRunningTours } from "./running-tours";

type Delivery = { id: number; status: number; route_id: number | null };
const deliveriesOf = async (co: TestCompany, ids: number[]): Promise<Delivery[]> => Promise.all(ids.map(async (id) => (await co.api("GET", `/delivery/${id}`)).body));
const stopsOf = async (co: TestCompany, routeId: number): Promise<number[]> => ((await co.api("GET", `/route/${routeId}`)).body.deliveries as { id: number }[]).map((d) => d.id);

describe("re-planning the rest of the day across running routes", () => {
  it("replaces each route by its new tour from where its driver is, places an open delivery, and keeps reported stops", async () => {
    const co = await createCompany();
    const { west, east } = await twoRunningTours(co);
    const westStops = await stopsOf(co, west.routeId);
    const eastStops = await stopsOf(co, east.routeId);
    const reported = westStops[0];
    expect((await co.api("POST", `/deliverydone/${reported}`, { token: west.driver.token, body: { status: "delivered" } })).status).toBe(200);
    const extra = await deliveryAt(co, 3.5);
    const res = await co.api("POST", "/calcroute/replan?async=false", { body: { deliveryids: [extra] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.unassigned).toEqual([]);
    expect(res.body.cancelled_route_ids).toEqual([]);
    const fresh = res.body.routes as { id: number; replaces: number; status: number; driver_id: number; routestring: { coordinates: number[][] }; deliveries: { id: number }[] }[];
    expect(fresh.map((r) => r.replaces).sort()).toEqual([west.routeId, east.routeId].sort());
    for (const [old, driver, k] of [[west.routeId, west.driver, -2.5], [east.routeId, east.driver, 2.5]] as const) {
      const next = fresh.find((r) => r.replaces === old)!;
      expect(next.status).toBe(3);
      expect(next.driver_id).toBe(driver.id);
      // Its line starts where the driver is.
      expect(next.routestring.coordinates[0][0]).toBeCloseTo(lngOf(k), 5);
      const before = (await co.api("GET", `/route/${old}`)).body;
      expect(before.status).toBe(6);
      expect(before.replaced_by).toBe(next.id);
    }
    // Every unfinished stop and the open delivery is on exactly one new route; the reported one stays delivered where it was.
    const placed = fresh.flatMap((r) => r.deliveries.map((d) => d.id)).sort((a, b) => a - b);
    expect(placed).toEqual([...westStops.slice(1), ...eastStops, extra].sort((a, b) => a - b));
    const [done] = await deliveriesOf(co, [reported]);
    expect(done).toMatchObject({ status: 2, route_id: west.routeId });
  });

  it("hands a broken-down route's stops to the other running route and cancels it", async () => {
    const co = await createCompany();
    const { west, east } = await twoRunningTours(co);
    const westStops = await stopsOf(co, west.routeId);
    const res = await co.api("POST", "/calcroute/replan?async=false", { body: { handover_route_id: west.routeId } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.cancelled_route_ids).toEqual([west.routeId]);
    expect((await co.api("GET", `/route/${west.routeId}`)).body.status).toBe(5);
    const [next] = res.body.routes as { id: number; replaces: number; driver_id: number; deliveries: { id: number }[] }[];
    expect(res.body.routes).toHaveLength(1);
    expect(next.replaces).toBe(east.routeId);
    expect(next.driver_id).toBe(east.driver.id);
    // Every stop of the broken-down route is on the other route now, or open with its reason.
    const unassigned = res.body.unassigned as { delivery_id: number; reason: string; remedy: string }[];
    for (const d of await deliveriesOf(co, westStops)) {
      const left = unassigned.find((u) => u.delivery_id === d.id);
      if (left) expect(d).toMatchObject({ status: 0, route_id: null });
      else expect(d).toMatchObject({ status: 1, route_id: next.id });
    }
    expect(next.deliveries.length + unassigned.length).toBe(6);
  });

  it("refuses a hand-over without another running route, and routes that do not run", async () => {
    const co = await createCompany();
    const { routeId } = await routeAndStart(co, [await deliveryAt(co, 1)]);
    const alone = await co.api("POST", "/calcroute/replan?async=false", { body: { handover_route_id: routeId } });
    expect(alone.status, alone.text).toBe(422);
    const planned = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { body: { deliveryids: [await deliveryAt(co, 2)] } });
    const idle = await co.api("POST", "/calcroute/replan?async=false", { body: { route_ids: [planned.body.objects[0].id] } });
    expect(idle.status, idle.text).toBe(409);
    expect((await co.api("POST", "/calcroute/replan?async=false", { body: { route_ids: [999999] } })).status).toBe(404);
  });

  it("a driver's report that arrives while the re-plan plans is never lost or undone (run many times)", async () => {
    for (let run = 0; run < 6; run++) {
      const co = await createCompany();
      const { west, east } = await twoRunningTours(co);
      const all = [...(await stopsOf(co, west.routeId)), ...(await stopsOf(co, east.routeId))];
      const reported = (await stopsOf(co, east.routeId))[run % 3];
      const replan = co.api("POST", "/calcroute/replan?async=false", { body: {} });
      await new Promise((r) => setTimeout(r, 40 * run));
      // The driver app sends a refused report again (its queue keeps it until the service takes it).
      let report = await co.api("POST", `/deliverydone/${reported}`, { token: east.driver.token, body: { status: "delivered" } });
      for (let retry = 0; report.status === 409 && retry < 5; retry++) {
        await new Promise((r) => setTimeout(r, 200));
        report = await co.api("POST", `/deliverydone/${reported}`, { token: east.driver.token, body: { status: "delivered" } });
      }
      const replanned = await replan;
      expect(report.status, `run ${run}: ${report.text}`).toBe(200);
      expect(replanned.status, `run ${run}: ${replanned.text}`).toBe(200);
      const now = await deliveriesOf(co, all);
      // The report stands; every other stop is on exactly one running route (none on a replaced one).
      expect(now.find((d) => d.id === reported)!.status).toBe(2);
      for (const d of now.filter((x) => x.id !== reported)) {
        expect(d.status, `run ${run}: delivery ${d.id}`).toBe(1);
        expect((await co.api("GET", `/route/${d.route_id}`)).body.status, `run ${run}: delivery ${d.id}`).toBe(3);
      }
    }
  }, 120_000);
});
