/**
 * Many conflicting lifecycle calls on the same routes at once, through HTTP:
 * assign / change / remove drivers, accept, start, set any status, cancel,
 * replace (update), move deliveries between routes and off them, report
 * deliveries delivered or undelivered, edit and cancel deliveries. Afterwards
 * every route and delivery satisfies the state rules of contract.md §5, no
 * delivery left its route but by a call that succeeded, and every refusal was
 * a 4xx with the error body.
 */
import { env } from "cloudflare:test";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type TestCompany, createCompany, insertAddress, tomorrowAt } from "./helpers";

const ROUNDS = 6;
const CALLS_PER_ROUND = 40;
/** Tours of the setup's plan: each holds at most TOUR_LOAD deliveries of load 1, so the plan needs all of them. Each round routes the open deliveries again in tours of TOUR_LOAD. */
const TOURS = 8;
const TOUR_LOAD = 3;

interface Route {
  id: number;
  status: number;
  driver_id: number | null;
  ast: string | null;
  replaced_by: number | null;
  deliveries: { id: number }[];
}
interface Delivery {
  id: number;
  status: number;
  route_id: number | null;
  atd: string | null;
}

type Call = { method: string; path: string; body?: unknown; token?: string };

async function all<T>(co: TestCompany, path: string): Promise<T[]> {
  const out: T[] = [];
  for (let page = 1; ; page++) {
    const res = await co.api("GET", `${path}?results_per_page=100&page=${page}`);
    expect(res.status, res.text).toBe(200);
    out.push(...res.body.objects);
    if (page >= res.body.total_pages) return out;
  }
}

/** The rules of contract.md §5 over the whole state; answers the violations found. */
function violations(routes: Route[], deliveries: Delivery[], activeDrivers: Set<number>): string[] {
  const found: string[] = [];
  const byId = new Map(routes.map((r) => [r.id, r]));
  for (const r of routes) {
    const on = deliveries.filter((d) => d.route_id === r.id);
    if (!(r.status >= 0 && r.status <= 6)) found.push(`route ${r.id}: status ${r.status} outside 0..6`);
    if (r.status === 0 && r.driver_id !== null) found.push(`route ${r.id}: new with driver ${r.driver_id}`);
    if ([1, 2, 3].includes(r.status) && r.driver_id === null) found.push(`route ${r.id}: status ${r.status} without a driver`);
    if ([1, 2, 3].includes(r.status) && r.driver_id !== null && !activeDrivers.has(r.driver_id)) found.push(`route ${r.id}: inactive driver ${r.driver_id}`);
    if ([3, 4].includes(r.status) && !r.ast) found.push(`route ${r.id}: status ${r.status} without ast`);
    const reported = on.filter((d) => d.status === 2 || d.status === 3).length;
    const open = on.filter((d) => d.status === 1).length;
    if (r.status === 4 && open) found.push(`route ${r.id}: finished with ${open} deliveries still routed`);
    if (r.status === 3 && on.length && !open && reported) found.push(`route ${r.id}: every delivery reported but still on the way`);
    if ([5, 6].includes(r.status) && open) found.push(`route ${r.id}: status ${r.status} still holds ${open} routed deliveries`);
    const listed = r.deliveries.map((d) => d.id).sort((a, b) => a - b);
    const actual = on.filter((d) => d.status !== 0).map((d) => d.id).sort((a, b) => a - b);
    if ([0, 1, 2, 3].includes(r.status) && JSON.stringify(listed) !== JSON.stringify(actual)) found.push(`route ${r.id}: lists ${listed} but holds ${actual}`);
  }
  const listedOn = new Map<number, number>();
  for (const r of routes.filter((r) => r.status <= 3))
    for (const { id } of r.deliveries) {
      if (listedOn.has(id)) found.push(`delivery ${id}: on routes ${listedOn.get(id)} and ${r.id}`);
      listedOn.set(id, r.id);
    }
  for (const d of deliveries) {
    const route = d.route_id === null ? undefined : byId.get(d.route_id);
    if (!(d.status >= 0 && d.status <= 4)) found.push(`delivery ${d.id}: status ${d.status} outside 0..4`);
    if (d.route_id !== null && !route) found.push(`delivery ${d.id}: on unknown route ${d.route_id}`);
    if (d.status === 0 && d.route_id !== null) found.push(`delivery ${d.id}: none but on route ${d.route_id}`);
    if (d.status === 1 && !(route && [0, 1, 2, 3].includes(route.status))) found.push(`delivery ${d.id}: routed on route ${d.route_id} with status ${route?.status}`);
    if ((d.status === 2 || d.status === 3) && !d.atd) found.push(`delivery ${d.id}: reported without atd`);
    if ((d.status === 2 || d.status === 3) && !(route && [3, 4, 5, 6].includes(route.status))) found.push(`delivery ${d.id}: reported on route ${d.route_id} with status ${route?.status}`);
  }
  return found;
}

/**
 * Lost updates of one round: every delivery routed on an unfinished route
 * before it is afterwards on that route or its replacement, or on the
 * replacement of the route a successful move took it to, or reported by a
 * successful `deliverydone`, or off its route by a successful move to "open",
 * update removing it or cancel of its route (and then possibly on the
 * replacement of a route whose successful update added it). Anything else is a change that
 * got lost (e.g. half of a move written, or an update written over a route
 * that changed meanwhile).
 */
function lostDeliveries(before: Delivery[], after: { routes: Route[]; deliveries: Delivery[] }, succeeded: Call[]): string[] {
  const found: string[] = [];
  const replacedBy = new Map(after.routes.map((r) => [r.id, r.replaced_by]));
  /** The route and every replacement after it. */
  const chain = (id: number) => {
    const ids = [id];
    for (let next = replacedBy.get(id); next != null && !ids.includes(next); next = replacedBy.get(next)) ids.push(next);
    return ids;
  };
  const now = new Map(after.deliveries.map((d) => [d.id, d]));
  const body = (c: Call) => (c.body ?? {}) as Record<string, unknown>;
  for (const was of before.filter((d) => d.status === 1 && d.route_id !== null)) {
    const from = was.route_id!;
    const d = now.get(was.id);
    const movedTo = succeeded.filter((c) => c.path === "/calcroute/move" && body(c).delivery_id === was.id && body(c).from_route_id === from).map((c) => body(c).to_route_id);
    const released =
      movedTo.includes("open") ||
      succeeded.some(
        (c) =>
          (c.path === `/calcroute/update/timewindow/${from}` && (body(c).del_deliveryids as number[]).includes(was.id)) ||
          c.path === `/cancelroute/${from}` ||
          (c.path === `/setroutestatus/${from}` && body(c).status === 5),
      );
    const reported = succeeded.some((c) => c.path === `/deliverydone/${was.id}`);
    // Once off its route, an update of another route that adds it may take it (the calls of a round run in any order).
    const addedTo = released
      ? succeeded
          .filter((c) => c.path.startsWith("/calcroute/update/timewindow/") && ((body(c).add_deliveryids as number[] | undefined) ?? []).includes(was.id))
          .map((c) => Number(c.path.split("/").pop()))
      : [];
    const allowed = [from, ...movedTo.filter((to): to is number => typeof to === "number"), ...addedTo].flatMap(chain);
    const where = `delivery ${was.id} (routed on ${from}) is now status ${d?.status} on route ${d?.route_id}`;
    if (!d) found.push(`delivery ${was.id} (routed on ${from}) is gone`);
    else if (d.route_id === null ? !released : !allowed.includes(d.route_id)) found.push(`${where}; allowed: ${released ? "off route, " : ""}${allowed}`);
    else if ((d.status === 2 || d.status === 3) && !reported && !released) found.push(`${where} without a report`);
  }
  return found;
}

describe("concurrent lifecycle calls through HTTP", () => {
  let co: TestCompany;
  let drivers: { id: number; token: string }[];
  let inactive: { id: number; token: string };
  let deliveryIds: number[];
  beforeAll(async () => {
    co = await createCompany();
    drivers = [];
    for (let i = 0; i < 3; i++) {
      const d = await co.user("driver");
      await env.DB.prepare("UPDATE users SET active = 1 WHERE id = ?").bind(d.id).run();
      drivers.push(d);
    }
    inactive = await co.user("driver");
    deliveryIds = [];
    // TOURS full tours and 3 open deliveries; the capacity holds only for this plan (updates and moves re-plan without it).
    for (let i = 0; i < TOURS * TOUR_LOAD + 3; i++) {
      const address = await insertAddress(co.id, { lng: 13.3 + (i % 5) * 0.04, lat: 52.45 + Math.floor(i / 5) * 0.04 });
      const d = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: tomorrowAt(7), pdt_to: tomorrowAt(20), els: 3, load: 1 } });
      expect(d.status, d.text).toBe(201);
      deliveryIds.push(d.body.id);
    }
    const routed = await co.api("POST", `/calcroute/optimized/timewindow?async=false&num_vehicles=${TOURS}`, {
      body: { deliveryids: deliveryIds.slice(0, TOURS * TOUR_LOAD), vehcapacities: [TOUR_LOAD] },
    });
    expect(routed.status, routed.text).toBe(200);
    expect(routed.body.objects, "one full tour per vehicle").toHaveLength(TOURS);
    // One route on the way from the start, so reports race with the other changes at once.
    const first = routed.body.objects[0].id;
    await co.api("PATCH", `/route/${first}`, { body: { driver_id: drivers[0].id } });
    await co.api("POST", `/setroutestatus/${first}`, { token: drivers[0].token, body: { status: 2 } });
    expect((await co.api("POST", `/setroutestatus/${first}`, { token: drivers[0].token, body: { status: 3 } })).status).toBe(200);
  }, 60_000);

  it(`${ROUNDS} rounds of ${CALLS_PER_ROUND} simultaneous conflicting calls keep every route and delivery within the state rules`, { timeout: 180_000 }, async () => {
    const active = new Set(drivers.map((d) => d.id));
    const figures = { rounds: 0, calls: 0, ok: 0, conflicts: 0, serverErrors: 0, refused: {} as Record<number, number>, moves: { calls: 0, ok: 0 }, violations: 0 };
    const problems: string[] = [];
    let deliveries = await all<Delivery>(co, "/delivery");
    for (let round = 0; round < ROUNDS; round++) {
      // A dispatcher routes the open deliveries again, so cancels and moves off routes do not use up the routes to fight over.
      const open = deliveries.filter((d) => d.status === 0 || d.status === 3).map((d) => d.id);
      if (open.length) {
        const replanned = await co.api("POST", `/calcroute/optimized/timewindow?async=false&num_vehicles=${Math.ceil(open.length / TOUR_LOAD)}`, {
          body: { deliveryids: open, vehcapacities: [TOUR_LOAD] },
        });
        expect(replanned.status, replanned.text).toBe(200);
        deliveries = await all<Delivery>(co, "/delivery");
      }
      const routeIds = (await all<Route>(co, "/route")).filter((r) => r.status < 4).map((r) => r.id);
      if (!routeIds.length) break;
      figures.rounds++;
      const routed = deliveries.filter((d) => d.status === 1 && d.route_id !== null && routeIds.includes(d.route_id));
      const anyToken = fc.constantFrom(co.dispatcher.token, ...drivers.map((d) => d.token), inactive.token);
      const route = fc.constantFrom(...routeIds);
      const delivery = fc.constantFrom(...deliveryIds);
      const call: fc.Arbitrary<Call> = fc.oneof(
        fc.record({ r: route, driver: fc.constantFrom<number | null>(...drivers.map((d) => d.id), inactive.id, null) }).map(({ r, driver }) => ({ method: "PATCH", path: `/route/${r}`, body: { driver_id: driver } })),
        fc.record({ r: route, token: anyToken, status: fc.constantFrom(2, 3) }).map(({ r, token, status }) => ({ method: "POST", path: `/setroutestatus/${r}`, body: { status }, token })),
        fc.record({ r: route, token: anyToken }).map(({ r, token }) => ({ method: "PATCH", path: `/route/${r}`, body: { status: 3 }, token })),
        fc.record({ r: route, status: fc.integer({ min: 0, max: 6 }) }).map(({ r, status }) => ({ method: "POST", path: `/setroutestatus/${r}`, body: { status } })),
        route.map((r) => ({ method: "POST", path: `/cancelroute/${r}` })),
        fc.record({ d: delivery, token: anyToken, status: fc.constantFrom("delivered", "undelivered") }).map(({ d, token, status }) => ({ method: "POST", path: `/deliverydone/${d}`, body: { status, drivernotes: `round ${round}` }, token })),
        fc.record({ d: delivery, change: fc.constantFrom<Record<string, unknown>>({ notes: `edited in round ${round}` }, { status: 4 }, { status: 0 }) }).map(({ d, change }) => ({ method: "PATCH", path: "/delivery", body: { id: d, ...change } })),
        fc.record({ r: route, add: delivery, del: delivery }).map(({ r, add, del }) => ({ method: "PATCH", path: `/calcroute/update/timewindow/${r}`, body: { add_deliveryids: [add], del_deliveryids: [del] } })),
        // Moves of deliveries on their routes (as the round starts) to another route, their own or off it: three times as often.
        ...(routed.length
          ? [
              {
                weight: 3,
                arbitrary: fc
                  .record({ d: fc.constantFrom(...routed), to: fc.oneof(route, fc.constant<"open">("open")) })
                  .map(({ d, to }) => ({ method: "POST", path: "/calcroute/move", body: { delivery_id: d.id, from_route_id: d.route_id, to_route_id: to } })),
              },
            ]
          : []),
      );
      const calls = fc.sample(call, { seed: 9000 + round, numRuns: CALLS_PER_ROUND });
      const results = await Promise.all(calls.map((c) => co.api(c.method, c.path, { body: c.body, ...(c.token ? { token: c.token } : {}) })));
      results.forEach((res, i) => {
        figures.calls++;
        const what = `${calls[i].method} ${calls[i].path} ${JSON.stringify(calls[i].body ?? {})}: ${res.status} ${res.text.slice(0, 160)}`;
        const isMove = calls[i].path === "/calcroute/move";
        if (isMove) figures.moves.calls++;
        if (res.status < 300) {
          figures.ok++;
          if (isMove) figures.moves.ok++;
        } else {
          figures.refused[res.status] = (figures.refused[res.status] ?? 0) + 1;
          if (res.status === 409) figures.conflicts++;
          if (res.status >= 500) figures.serverErrors++;
          if (![403, 404, 409, 422].includes(res.status)) problems.push(`unexpected status: ${what}`);
          if (!(res.body?.code === res.status && typeof res.body.message === "string" && typeof res.body.fields === "string")) problems.push(`error shape: ${what}`);
        }
      });
      const after = { routes: await all<Route>(co, "/route"), deliveries: await all<Delivery>(co, "/delivery") };
      const found = [
        ...violations(after.routes, after.deliveries, active),
        ...lostDeliveries(
          deliveries,
          after,
          calls.filter((_, i) => results[i].status < 300),
        ),
      ];
      deliveries = after.deliveries;
      figures.violations += found.length;
      problems.push(...found.map((v) => `after round ${round}: ${v}`));
    }
    console.log(`concurrency figures: ${JSON.stringify(figures)}`);
    expect(problems.slice(0, 30), `${problems.length} problems`).toEqual([]);
    expect(figures.ok).toBeGreaterThan(0);
    expect(figures.rounds, "several rounds ran (routes left to fight over)").toBeGreaterThan(1);
    expect(figures.moves.ok, "moves succeeded").toBeGreaterThan(0);
  });
});
