import { describe, expect, it } from "vitest";
import { createCompany, insertAddress } from "./helpers";
import { deliveryAt, lngOf, openNow, twoRunningTours } from "./running-tours";

type Candidate = { route_id: number; feasible: boolean; added_distance: number | null; reason: string | null };

describe("a new order into the best running tour", () => {
  it("goes to the cheaper of two routes on the way, from where their drivers are, and that route is replaced", async () => {
    const co = await createCompany();
    const { west, east } = await twoRunningTours(co);
    const urgent = await deliveryAt(co, 3.5);
    const answer = await co.api("POST", "/calcroute/insert", { body: { deliveryids: [urgent] } });
    expect(answer.status, answer.text).toBe(200);
    const [insertion] = answer.body.insertions;
    expect(insertion.route_id).toBe(east.routeId);
    // Both were priced; the east one adds a short detour beyond its last stop, the west one the whole way across.
    const candidates: Candidate[] = insertion.candidates;
    expect(candidates.map((c) => c.route_id)).toEqual([east.routeId, west.routeId]);
    expect(candidates.every((c) => c.feasible)).toBe(true);
    expect(candidates[0].added_distance!).toBeLessThan(candidates[1].added_distance! / 3);
    // The east route is replaced by one that continues it with the new stop; the west one is untouched.
    const [route] = answer.body.routes;
    expect(route.id).toBe(insertion.new_route_id);
    expect(route.replaces).toBe(east.routeId);
    expect(route.status).toBe(3);
    expect(route.driver_id).toBe(east.driver.id);
    const stops = [...route.deliveries].sort((a: { orderindex: number }, b: { orderindex: number }) => a.orderindex - b.orderindex).map((d: { id: number }) => d.id);
    expect(stops).toContain(urgent);
    expect(route.deliveries.find((d: { id: number }) => d.id === urgent).status).toBe(1);
    expect((await co.api("GET", `/route/${east.routeId}`)).body.status).toBe(6);
    expect((await co.api("GET", `/route/${west.routeId}`)).body.status).toBe(3);
  });

  it("a dry run answers the prices and changes nothing", async () => {
    const co = await createCompany();
    const { west, east } = await twoRunningTours(co);
    const urgent = await deliveryAt(co, -3.5);
    const answer = await co.api("POST", "/calcroute/insert", { body: { deliveryids: [urgent], dry_run: true } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.insertions[0]).toMatchObject({ delivery_id: urgent, route_id: west.routeId, new_route_id: null });
    expect(answer.body.insertions[0].candidates[0]).toMatchObject({ route_id: west.routeId, feasible: true, orderindex: expect.any(Number), tdt: expect.any(String) });
    expect(answer.body.routes).toEqual([]);
    for (const { routeId } of [west, east]) expect((await co.api("GET", `/route/${routeId}`)).body.status).toBe(3);
    expect((await co.api("GET", `/delivery/${urgent}`)).body.status).toBe(0);
  });

  it("422 naming each route's reason and the remedy when no running tour can take it; nothing changes", async () => {
    const co = await createCompany();
    const { west, east } = await twoRunningTours(co);
    // 60 km away, its window closing in ten minutes: no driver gets there in time.
    const soon = { pdt_from: new Date(Date.now() - 3_600_000).toISOString(), pdt_to: new Date(Date.now() + 10 * 60_000).toISOString() };
    const far = await deliveryAt(co, 45, soon);
    const refused = await co.api("POST", "/calcroute/insert", { body: { deliveryids: [far] } });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.message).toContain(`route ${west.routeId}: `);
    expect(refused.body.message).toContain(`route ${east.routeId}: `);
    expect(refused.body.message).toMatch(/window/);
    expect(refused.body.message).toContain("open a new tour");
    for (const { routeId } of [west, east]) expect((await co.api("GET", `/route/${routeId}`)).body.status).toBe(3);
    expect((await co.api("GET", `/delivery/${far}`)).body.status).toBe(0);
  });

  it("counts the skills of each route's driver: a refrigerated order goes to the route whose driver is trained for it", async () => {
    const co = await createCompany();
    const { west, east } = await twoRunningTours(co);
    expect((await co.api("PATCH", `/driver/${west.driver.id}`, { body: { skills: ["refrigerated"] } })).status).toBe(200);
    const address = await insertAddress(co.id, { lng: lngOf(3.5), lat: 52.5317 });
    const cold = (await co.api("POST", "/delivery", { body: { deliverylocation_id: address, ...openNow(), els: 5, required_skills: ["refrigerated"] } })).body.id as number;
    const answer = await co.api("POST", "/calcroute/insert", { body: { deliveryids: [cold], dry_run: true } });
    expect(answer.status, answer.text).toBe(200);
    // East is nearer, but only west's driver may take it.
    const [insertion] = answer.body.insertions;
    expect(insertion.route_id).toBe(west.routeId);
    const refused = insertion.candidates.find((c: Candidate) => c.route_id === east.routeId);
    expect(refused.feasible).toBe(false);
    expect(refused.reason).toContain("refrigerated");
  });

  it("keeps a tour area with its driver: an order in the area goes to that driver's route, though another is nearer", async () => {
    const co = await createCompany();
    const { west, east } = await twoRunningTours(co);
    const [x, y] = [lngOf(-3.5), 52.5317];
    const square = [[[x - 0.01, y - 0.01], [x + 0.01, y - 0.01], [x + 0.01, y + 0.01], [x - 0.01, y + 0.01], [x - 0.01, y - 0.01]]];
    await co.d1
      .prepare("INSERT INTO tour_areas (company_id, areaname, driver_id, geom) VALUES (?, 'Far West', ?, ?)")
      .bind(co.id, east.driver.id, JSON.stringify({ type: "MultiPolygon", coordinates: [square] }))
      .run();
    const inArea = await deliveryAt(co, -3.5);
    const answer = await co.api("POST", "/calcroute/insert", { body: { deliveryids: [inArea], dry_run: true } });
    expect(answer.status, answer.text).toBe(200);
    const [insertion] = answer.body.insertions;
    expect(insertion.route_id).toBe(east.routeId);
    const refused = insertion.candidates.find((c: Candidate) => c.route_id === west.routeId);
    expect(refused).toMatchObject({ feasible: false, reason: expect.stringContaining("Far West") });
  });

  it("refuses deliveries that are unknown or already on a route, and routes of another company", async () => {
    const co = await createCompany();
    const { east } = await twoRunningTours(co);
    expect((await co.api("POST", "/calcroute/insert", { body: { deliveryids: [987654] } })).status).toBe(422);
    const routed = (await co.api("GET", `/route/${east.routeId}`)).body.deliveries[0].id;
    expect((await co.api("POST", "/calcroute/insert", { body: { deliveryids: [routed] } })).status).toBe(409);
    const other = await createCompany();
    const theirs = await deliveryAt(other, 1);
    expect((await other.api("POST", "/calcroute/insert", { body: { deliveryids: [theirs], route_ids: [east.routeId] } })).status).toBe(404);
  });
});
