import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { dayAt, instantOf } from "../src/shared/wall-clock";
import { OPERATOR, type TestCompany, call, createCompany, insertAddress, routeAndStart, tomorrowAt } from "./helpers";

interface Setup {
  co: TestCompany;
  driver: { id: number; token: string };
  routeId: number;
  deliveryIds: number[];
}

/** A company with an active driver and one computed route of three deliveries. */
async function setup(): Promise<Setup> {
  const co = await createCompany();
  const driver = await co.user("driver");
  await env.DB.prepare("UPDATE users SET active = 1 WHERE id = ?").bind(driver.id).run();
  const deliveryIds: number[] = [];
  for (const [i, [lng, lat]] of [[13.42, 52.50], [13.45, 52.52], [13.40, 52.54]].entries()) {
    const address = await insertAddress(co.id, { lng, lat });
    await env.DB.prepare("UPDATE addresses SET email = ? WHERE id = ?").bind(`customer${i}@example.com`, address).run();
    const d = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: tomorrowAt(8), pdt_to: tomorrowAt(18), els: 5, notify_customer: i === 0 } });
    deliveryIds.push(d.body.id);
  }
  const routed = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { body: { deliveryids: deliveryIds } });
  expect(routed.status, routed.text).toBe(200);
  return { co, driver, routeId: routed.body.objects[0].id, deliveryIds };
}

describe("route lifecycle", () => {
  let s: Setup;
  beforeEach(async () => {
    s = await setup();
  });

  it("runs new -> assigned -> accepted -> on the way -> finished", async () => {
    const { co, driver, routeId, deliveryIds } = s;
    const assigned = await co.api("PATCH", `/route/${routeId}`, { body: { driver_id: driver.id } });
    expect(assigned.status, assigned.text).toBe(200);
    expect(assigned.body).toMatchObject({ status: 1, driver_id: driver.id });

    const accepted = await co.api("POST", `/setroutestatus/${routeId}`, { token: driver.token, body: { status: 2 } });
    expect(accepted.body.status).toBe(2);
    const started = await co.api("PATCH", `/route/${routeId}`, { token: driver.token, body: { status: 3 } });
    expect(started.status, started.text).toBe(200);
    expect(started.body.status).toBe(3);
    expect(started.body.ast).toMatch(/Z$/);
    for (const d of started.body.deliveries) {
      expect(d.eta_from <= d.eta_to).toBe(true);
      expect(d.tdt_from >= d.eta_from).toBe(true);
    }
    // The customer who asked for it gets the ETA by email.
    const outbox = await call("GET", `/_operator/companies/${co.slug}/outbox?q=${encodeURIComponent(JSON.stringify({ filters: [{ name: "template", op: "==", val: "delivery_eta" }] }))}`, { headers: OPERATOR });
    expect(outbox.body.objects.map((m: { to: string }) => m.to)).toEqual(["customer0@example.com"]);
    // The message carries the window it promises (its wording: test/notifications.test.ts).
    const first = started.body.deliveries.find((d: { id: number }) => d.id === deliveryIds[0]);
    expect(outbox.body.objects[0].data).toMatchObject({ delivery_id: deliveryIds[0], route_id: routeId, eta_from: first.eta_from, eta_to: first.eta_to });

    const etas = await co.api("GET", `/updateetas/timewindow/${routeId}`);
    expect(etas.status).toBe(200);
    expect(etas.body.etas).toHaveLength(3);

    const done1 = await co.api("POST", `/deliverydone/${deliveryIds[0]}`, { token: driver.token, body: { status: "delivered", drivernotes: "left at door" } });
    expect(done1.status, done1.text).toBe(200);
    expect(done1.body).toMatchObject({ status: 2, drivernotes: "left at door" });
    expect(done1.body.atd).toMatch(/Z$/);
    expect(done1.body.ata).toBe(done1.body.atd);
    expect((await co.api("POST", `/deliverydone/${deliveryIds[0]}`, { token: driver.token, body: { status: "delivered" } })).status).toBe(409);
    await co.api("POST", `/deliverydone/${deliveryIds[1]}`, { token: driver.token, body: { status: "undelivered" } });
    expect((await co.api("GET", `/route/${routeId}`)).body.status).toBe(3);
    // Undelivered: open for the next tour at once, while this route is still on the way.
    const retry = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: [deliveryIds[1]] } });
    expect(retry.status, retry.text).toBe(200);
    await co.api("POST", `/deliverydone/${deliveryIds[2]}`, { token: driver.token, body: { status: "delivered" } });
    expect((await co.api("GET", `/route/${routeId}`)).body.status).toBe(4);
  });

  it("refuses transitions outside the table with 409 and changes nothing", async () => {
    const { co, routeId } = s;
    for (const status of [2, 3, 4, 6]) {
      const res = await co.api("POST", `/setroutestatus/${routeId}`, { body: { status } });
      expect(res.status, `0 -> ${status}`).toBe(409);
    }
    expect((await co.api("POST", `/setroutestatus/${routeId}`, { body: { status: 1 } })).status).toBe(409); // no driver
    expect((await co.api("POST", `/setroutestatus/${routeId}`, { body: { status: 9 } })).status).toBe(422);
    expect((await co.api("GET", `/route/${routeId}`)).body.status).toBe(0);
  });

  it("keeps previous drivers, removes drivers, refuses inactive ones", async () => {
    const { co, driver, routeId } = s;
    const second = await co.user("driver");
    const inactive = await co.user("driver");
    await env.DB.prepare("UPDATE users SET active = 1 WHERE id = ?").bind(second.id).run();
    await co.api("PATCH", `/route/${routeId}`, { body: { driver_id: driver.id } });
    const changed = await co.api("PATCH", `/route/${routeId}`, { body: { driver_id: second.id } });
    expect(changed.body).toMatchObject({ status: 1, driver_id: second.id, previous_drivers: [driver.id] });
    expect((await co.api("PATCH", `/route/${routeId}`, { body: { driver_id: inactive.id } })).status).toBe(409);
    const removed = await co.api("PATCH", `/route/${routeId}`, { body: { driver_id: null } });
    expect(removed.body).toMatchObject({ status: 0, driver_id: null, previous_drivers: [driver.id, second.id] });
  });

  it("drivers may only accept and start their own routes", async () => {
    const { co, driver, routeId, deliveryIds } = s;
    const stranger = await co.user("driver");
    await co.api("PATCH", `/route/${routeId}`, { body: { driver_id: driver.id } });
    expect((await co.api("POST", `/setroutestatus/${routeId}`, { token: stranger.token, body: { status: 2 } })).status).toBe(403);
    expect((await co.api("PATCH", `/route/${routeId}`, { token: driver.token, body: { driver_id: stranger.id } })).status).toBe(403);
    expect((await co.api("POST", `/cancelroute/${routeId}`, { token: driver.token })).status).toBe(403);
    expect((await co.api("POST", `/deliverydone/${deliveryIds[0]}`, { token: driver.token, body: { status: "delivered" } })).status).toBe(409); // not on the way yet
  });

  it("cancels a route: unfinished deliveries return to the pool", async () => {
    const { co, routeId, deliveryIds } = s;
    const res = await co.api("POST", `/cancelroute/${routeId}`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe(5);
    expect((await co.api("GET", `/delivery/${deliveryIds[0]}`)).body).toMatchObject({ status: 0, route_id: null });
    expect((await co.api("POST", `/cancelroute/${routeId}`)).status).toBe(409);
  });

  it("concurrent changes never lose an update or leave the table", async () => {
    const { co, driver, routeId } = s;
    await co.api("PATCH", `/route/${routeId}`, { body: { driver_id: driver.id } });
    const results = await Promise.all([
      co.api("POST", `/setroutestatus/${routeId}`, { token: driver.token, body: { status: 2 } }),
      co.api("POST", `/cancelroute/${routeId}`),
      co.api("POST", `/setroutestatus/${routeId}`, { token: driver.token, body: { status: 2 } }),
    ]);
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((x) => x === 200).length).toBeGreaterThanOrEqual(1);
    const final = (await co.api("GET", `/route/${routeId}`)).body.status;
    expect([2, 5]).toContain(final);
    // Accept after cancel is refused; cancel after accept succeeds: either way the last 200 decides.
    if (final === 2) expect(results[1].status).toBe(409);
  });

  it("refreshes ETAs on an alarm while routes are on the way, then stops", async () => {
    const { co, driver, routeId } = s;
    await co.api("PATCH", `/route/${routeId}`, { body: { driver_id: driver.id } });
    await co.api("POST", `/setroutestatus/${routeId}`, { token: driver.token, body: { status: 2 } });
    await co.api("POST", `/setroutestatus/${routeId}`, { token: driver.token, body: { status: 3 } });
    const stub = env.COMPANY.getByName(`company:${co.id}`);
    expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).not.toBeNull();
    // The driver moved from the depot: the next refresh starts from the new position (before, the plan's ETAs held).
    const report = (lng: number, lat: number) => co.api("POST", "/drivertracking", { token: driver.token, body: { driver_id: driver.id, position: { type: "Point", coordinates: [lng, lat] } } });
    await report(13.3849, 52.5317);
    await report(13.2, 52.4);
    // (The window opens tomorrow, so the ETA starts then; its width follows the drive from the driver's position.)
    const before = (await co.api("GET", `/route/${routeId}`)).body.deliveries[0].eta_to;
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const after = (await co.api("GET", `/route/${routeId}`)).body.deliveries[0].eta_to;
    expect(after).not.toBe(before);
    expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).not.toBeNull();
    await co.api("POST", `/cancelroute/${routeId}`);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    // No more 5-minute refreshes: what is left is the pruning of the finished routing process, weeks away.
    const next = await runInDurableObject(stub, (_o, state) => state.storage.getAlarm());
    expect(next === null || next > Date.now() + 7 * 86_400_000, String(next)).toBe(true);
  });
});

describe("ETAs of a route started long before its day", () => {
  it("give windows of at most an hour that start when the delivery window opens", async () => {
    const co = await createCompany();
    const day = new Date(Date.now() + 60 * 86_400_000).toISOString().slice(0, 10);
    const ids: number[] = [];
    for (const [lng, lat] of [[13.42, 52.5], [13.45, 52.52], [13.4, 52.54], [13.3, 52.45]]) {
      const address = await insertAddress(co.id, { lng, lat });
      ids.push((await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: `${day}T08:00:00Z`, pdt_to: `${day}T16:00:00Z`, els: 10 } })).body.id);
    }
    const { started } = await routeAndStart(co, ids);
    for (const d of started.body.deliveries) {
      const width = (Date.parse(d.eta_to) - Date.parse(d.eta_from)) / 1000;
      expect(width).toBeGreaterThan(0);
      expect(width).toBeLessThanOrEqual(3600);
      expect(d.eta_from >= `${day}T08:00:00Z`).toBe(true);
    }
  });
});

describe("ETAs of a route started the evening before its day", () => {
  it("follow the plan until its planned start, or until the driver moves (updateetas and the tracking JSON)", async () => {
    const co = await createCompany();
    const tomorrow = dayAt(Date.now() + 86_400_000, "Europe/Berlin");
    const plannedStart = instantOf(tomorrow, "08:00", "Europe/Berlin");
    const ids: number[] = [];
    // No delivery windows: nothing but the plan says when the tour drives.
    for (const [lng, lat] of [[13.42, 52.5], [13.45, 52.52], [13.4, 52.54]]) {
      ids.push((await co.api("POST", "/delivery", { body: { deliverylocation_id: await insertAddress(co.id, { lng, lat }), els: 5 } })).body.id);
    }
    const { driver, routeId, started, planned } = await routeAndStart(co, ids, undefined, { start_time: new Date(plannedStart).toISOString() });
    type Stop = { id: number; tdt_from: string; eta_from: string; eta_to: string };
    const plan = new Map((planned.deliveries as Stop[]).map((d) => [d.id, { eta_from: d.eta_from, eta_to: d.eta_to }]));
    for (const d of planned.deliveries as Stop[]) {
      expect(Date.parse(d.eta_from)).toBeGreaterThanOrEqual(plannedStart);
      // The plan's window follows the ETA rule: from the service start, at most an hour wide.
      expect(d.eta_from).toBe(d.tdt_from);
      expect(Date.parse(d.eta_to) - Date.parse(d.eta_from)).toBeLessThanOrEqual(3600_000);
    }
    const planOf = (etas: { delivery_id: number; eta_from: string; eta_to: string }[]) => new Map(etas.map((e) => [e.delivery_id, { eta_from: e.eta_from, eta_to: e.eta_to }]));

    // Started tonight: the customers are told tomorrow's times, not tonight's.
    expect(new Map((started.body.deliveries as Stop[]).map((d) => [d.id, { eta_from: d.eta_from, eta_to: d.eta_to }]))).toEqual(plan);
    expect(planOf((await co.api("GET", `/updateetas/timewindow/${routeId}`)).body.etas)).toEqual(plan);
    const link = (await co.api("POST", `/delivery/${ids[0]}/trackinglink`)).body.link as string;
    const tracking = await call("GET", new URL(link).pathname.replace("/t/", "/track/"));
    expect(tracking.body.eta).toEqual({ from: plan.get(ids[0])!.eta_from, to: plan.get(ids[0])!.eta_to });

    // The driver's phone reports from the depot: still the plan.
    const report = (lng: number, lat: number) => co.api("POST", "/drivertracking", { token: driver.token, body: { driver_id: driver.id, position: { type: "Point", coordinates: [lng, lat] } } });
    await report(13.3849, 52.5317);
    expect(planOf((await co.api("GET", `/updateetas/timewindow/${routeId}`)).body.etas)).toEqual(plan);
    // Three kilometres on, the driver is under way: ETAs from now and where the driver is.
    await report(13.42, 52.52);
    const moving = (await co.api("GET", `/updateetas/timewindow/${routeId}`)).body.etas as { eta_from: string }[];
    expect(moving).toHaveLength(3);
    for (const e of moving) expect(Date.parse(e.eta_from)).toBeLessThan(plannedStart);
  });
});
