/**
 * POST /calcroute/move: a delivery between two routes (or off its route) in
 * one request, both routes re-planned and replaced together or not at all.
 */
import { env } from "cloudflare:test";
import { startRouting } from "../src/core/services/routing/request";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/core/db/client";
import { companies, users } from "../src/core/db/schema";
import { runRouting } from "../src/core/services/routing/run";
import { ORIGIN, type TestCompany, createCompany, insertAddress, tomorrowAt } from "./helpers";

interface Route {
  id: number;
  status: number;
  replaced_by: number | null;
  deliveries: { id: number }[];
}

/** A delivery in Berlin tomorrow; `at`: the start hour of its window (two hours, or `minutes` long). */
async function delivery(co: TestCompany, lng: number, lat: number, at = 9, minutes = 120, els = 5) {
  const address = await insertAddress(co.id, { lng, lat });
  const res = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: tomorrowAt(at), pdt_to: tomorrowAt(at + Math.floor(minutes / 60), minutes % 60), els } });
  expect(res.status, res.text).toBe(201);
  return res.body.id as number;
}

/** One tour of the deliveries. */
async function route(co: TestCompany, ids: number[]): Promise<Route> {
  const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { body: { deliveryids: ids } });
  expect(res.status, res.text).toBe(200);
  expect(res.body.objects).toHaveLength(1);
  return res.body.objects[0];
}

const move = (co: TestCompany, deliveryId: number, from: number, to: number | "open") =>
  co.api("POST", "/calcroute/move", { body: { delivery_id: deliveryId, from_route_id: from, to_route_id: to } });

const idsOf = (r: { deliveries: { id: number }[] }) => r.deliveries.map((d) => d.id).sort((a, b) => a - b);
const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);

/** The company's unfinished routes (0..3) with their deliveries. */
async function unfinished(co: TestCompany): Promise<Route[]> {
  const res = await co.api("GET", "/route?limit=100");
  expect(res.status, res.text).toBe(200);
  return (res.body.objects as Route[]).filter((r) => r.status <= 3);
}

/** Every delivery of `ids` is routed on exactly one unfinished route, or open on none (`open`). */
async function expectPlan(co: TestCompany, ids: number[], open: number[] = []) {
  const routes = await unfinished(co);
  const onRoutes = routes.flatMap(idsOf);
  expect(sorted(onRoutes), "each delivery on exactly one unfinished route").toEqual(sorted(ids.filter((id) => !open.includes(id))));
  for (const r of routes) expect(r.deliveries.length, `route ${r.id} has deliveries`).toBeGreaterThan(0);
  for (const id of open) expect((await co.api("GET", `/delivery/${id}`)).body).toMatchObject({ status: 0, route_id: null });
  return routes;
}

/** Three deliveries on a source route, one on each of two target routes. */
async function twoTargets() {
  const co = await createCompany();
  const [a, b, c, d, e] = [
    await delivery(co, 13.4, 52.52),
    await delivery(co, 13.41, 52.51),
    await delivery(co, 13.42, 52.5),
    await delivery(co, 13.3, 52.45),
    await delivery(co, 13.5, 52.55),
  ];
  return { co, ids: [a, b, c, d, e], source: await route(co, [a, b, c]), t1: await route(co, [d]), t2: await route(co, [e]) };
}

describe("moving a delivery between routes", () => {
  it("re-plans and replaces both routes in one request", async () => {
    const { co, ids, source, t1 } = await twoTargets();
    const [a, b, c, d] = ids;
    const res = await move(co, a, source.id, t1.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body.from_route).toMatchObject({ replaces: source.id, status: source.status });
    expect(res.body.to_route).toMatchObject({ replaces: t1.id, status: t1.status });
    expect(idsOf(res.body.from_route)).toEqual(sorted([b, c]));
    expect(idsOf(res.body.to_route)).toEqual(sorted([a, d]));
    expect(res.body.from_route.previous_deliveries).toEqual([a]);
    expect((await co.api("GET", `/route/${source.id}`)).body).toMatchObject({ status: 6, replaced_by: res.body.from_route.id });
    expect((await co.api("GET", `/route/${t1.id}`)).body).toMatchObject({ status: 6, replaced_by: res.body.to_route.id });
    expect((await co.api("GET", `/delivery/${a}`)).body).toMatchObject({ status: 1, route_id: res.body.to_route.id });
    await expectPlan(co, ids);

    // Off its route, back among the open deliveries.
    const off = await move(co, b, res.body.from_route.id, "open");
    expect(off.status, off.text).toBe(200);
    expect(off.body.to_route).toBeNull();
    expect(idsOf(off.body.from_route)).toEqual([c]);
    await expectPlan(co, ids, [b]);
  });

  it("refuses a move the target cannot take and leaves both routes as they were, with the reason", async () => {
    const co = await createCompany();
    // Two half-hour stops that must both start between 8:00 and 8:10: one tour cannot serve both.
    const early = await delivery(co, 13.3, 52.45, 8, 10, 30);
    const rival = await delivery(co, 13.5, 52.55, 8, 10, 30);
    const other = await delivery(co, 13.41, 52.51);
    const source = await route(co, [rival, other]);
    const target = await route(co, [early]);
    const before = await unfinished(co);

    const res = await move(co, rival, source.id, target.id);
    expect(res.status, res.text).toBe(422);
    // The deliveries the target's tour leaves out, with the remedy (as the update answers).
    expect([String(rival), String(early)]).toContain(res.body.fields);
    expect(res.body.message).toContain(`${res.body.fields} (`);
    expect(await unfinished(co)).toEqual(before);
    expect((await co.api("GET", `/delivery/${rival}`)).body).toMatchObject({ status: 1, route_id: source.id });

    // Not on the source, the source left empty, an unknown or finished route: refused, nothing changes.
    // The move's own fields are named.
    expect((await move(co, early, source.id, target.id)).body).toMatchObject({ code: 422, fields: "delivery_id" });
    expect((await move(co, early, target.id, source.id)).body).toMatchObject({ code: 422, fields: "delivery_id" });
    expect((await move(co, other, source.id, 999999)).status).toBe(404);
    expect((await move(co, other, source.id, source.id)).status).toBe(422);
    expect((await move(co, other, source.id, "nowhere" as never)).status).toBe(422);
    expect(await unfinished(co)).toEqual(before);
  });

  it("concurrent moves of the same delivery to different routes: exactly one wins, nothing is lost", async () => {
    const { co, ids, source, t1, t2 } = await twoTargets();
    const [a] = ids;
    const answers = await Promise.all([move(co, a, source.id, t1.id), move(co, a, source.id, t2.id)]);
    expect(answers.map((r) => r.status).sort(), answers.map((r) => r.text).join("\n")).toEqual([200, 409]);
    const loser = answers.find((r) => r.status === 409)!;
    expect(loser.body.message).toMatch(/changed meanwhile|cannot be updated/);
    const winner = answers.find((r) => r.status === 200)!;
    const routes = await expectPlan(co, ids);
    expect(routes.filter((r) => idsOf(r).includes(a)).map((r) => r.id)).toEqual([winner.body.to_route.id]);
    // The route that lost the race is untouched.
    const untouched = winner.body.to_route.replaces === t1.id ? t2 : t1;
    expect((await co.api("GET", `/route/${untouched.id}`)).body).toMatchObject({ status: untouched.status, replaced_by: null });
  });

  for (const edited of ["source", "target"] as const) {
    it(`a concurrent update of the ${edited} route: one of the two wins, the other changes nothing`, async () => {
      const { co, ids, source, t1 } = await twoTargets();
      const [a, b, , d] = ids;
      const extra = await delivery(co, 13.45, 52.53);
      const edit =
        edited === "source"
          ? co.api("PATCH", `/calcroute/update/timewindow/${source.id}`, { body: { del_deliveryids: [b] } })
          : co.api("PATCH", `/calcroute/update/timewindow/${t1.id}`, { body: { add_deliveryids: [extra] } });
      const [moved, updated] = await Promise.all([move(co, a, source.id, t1.id), edit]);
      expect([moved.status, updated.status].sort(), `${moved.text}\n${updated.text}`).toEqual([200, 409]);
      const refused = moved.status === 409 ? moved : updated;
      expect(refused.body.message).toMatch(/changed meanwhile|cannot be updated/);
      if (moved.status === 200) {
        // The edit changed nothing: the plan is the move's.
        await expectPlan(co, [...ids, extra], [extra]);
        expect((await co.api("GET", `/delivery/${a}`)).body.route_id).toBe(moved.body.to_route.id);
      } else {
        // The move changed nothing: `a` is still on the source (or its replacement), `d` on the target (or its replacement).
        const released = edited === "source" ? [b, extra] : [];
        const routes = await expectPlan(co, [...ids, extra], released);
        const routeOf = (id: number) => routes.find((r) => idsOf(r).includes(id))!;
        expect(routeOf(a).id).not.toBe(routeOf(d).id);
        expect([source.id, updated.body.id]).toContain(routeOf(a).id);
      }
    });
  }

  it("a half of a move is never written alone (the watchdog's re-run of a move whose request died)", async () => {
    const co = await createCompany();
    const ids = [await delivery(co, 13.4, 52.52), await delivery(co, 13.41, 52.51), await delivery(co, 13.42, 52.5)];
    const source = await route(co, ids);
    // The source's half of a move of ids[0], registered as the move registers it; the request died before writing.
    const db = createDb(env.DB);
    const [company] = await db.select().from(companies).where(eq(companies.id, co.id));
    const [dispatcher] = await db.select({ id: users.id }).from(users).where(eq(users.email, co.dispatcher.email));
    const options = { truck: false, roundtrip: true, traffic: false, cancelroutes: false, num_vehicles: 1, assign_drivers: false, usearea: false };
    const apiBase = `${ORIGIN}/${co.slug}/api`;
    const half = { routeId: source.id, status: source.status, driverId: null, ast: null, htmlcolor: null, released: [ids[0]], onRoute: ids, previousDeliveries: [], move: {} };
    const { processId } = await startRouting(env, db, company, dispatcher.id, { deliveryids: ids.slice(1), startaddress_id: company.location_id! }, options, "async", apiBase, half);

    // The queue consumer runs it as the watchdog's re-run would.
    const outcome = await runRouting(env, db, co.id, processId, "watchdog-rerun", apiBase, "fan-out");
    expect(outcome).toMatchObject({ ok: false, error: expect.stringMatching(/nothing was moved/) });
    expect((await co.api("GET", `/process/status/${processId}/final`)).body.status).toBe("failed");
    expect((await co.api("GET", `/route/${source.id}`)).body).toMatchObject({ status: source.status, replaced_by: null });
    await expectPlan(co, ids);
  });
});
