import { createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import worker from "../src/worker/index";
import { beforeAll, describe, expect, it } from "vitest";
import { ORIGIN, type TestCompany, createCompany, insertAddress, tomorrowAt } from "./helpers";

/** A deterministic pseudo-random scatter of deliveries around Berlin with windows and loads. */
async function berlinDeliveries(co: TestCompany, n: number, tag: string) {
  const ids: number[] = [];
  let seed = 7;
  const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  for (let i = 0; i < n; i++) {
    const address = await insertAddress(co.id, { lng: 13.25 + rnd() * 0.35, lat: 52.43 + rnd() * 0.18, postalcode: `10${100 + Math.floor(rnd() * 900)}` });
    const start = 7 + Math.floor(rnd() * 8);
    const res = await co.api("POST", "/delivery", {
      body: { deliverylocation_id: address, pdt_from: tomorrowAt(start), pdt_to: tomorrowAt(start + 2), els: 5, load: 1 + Math.floor(rnd() * 4), custom_id: `${tag}-${i}` },
    });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
  return ids;
}

async function waitForProcess(co: TestCompany, pid: string) {
  for (let i = 0; i < 150; i++) {
    const res = await co.api("GET", `/process/status/${pid}/final`);
    if (res.body.status === "finished" || res.body.status === "failed") return res.body;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error("process did not finish");
}

describe("route calculation", () => {
  let co: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
  });

  it("routes 50 deliveries synchronously: every delivery once, windows and capacities respected", async () => {
    const ids = await berlinDeliveries(co, 50, "sync");
    const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=10&nameprefix=B-", { body: { deliveryids: ids, vehcapacities: [40] } });
    expect(res.status, res.text).toBe(200);
    const routes = res.body.objects;
    expect(res.body.num_results).toBe(routes.length);
    expect(routes.length).toBeGreaterThan(0);
    expect(routes.length).toBeLessThanOrEqual(10);
    const seen = routes.flatMap((r: { deliveries: { id: number }[] }) => r.deliveries.map((d) => d.id)).sort((a: number, b: number) => a - b);
    expect(seen).toEqual([...ids].sort((a, b) => a - b));
    for (const [i, route] of routes.entries()) {
      expect(route.custom_id).toBe(routes.length > 1 ? `B-${i + 1}` : "B-");
      expect(route.status).toBe(0);
      expect(route.distance).toBeGreaterThan(0);
      expect(route.routebase_address_id).toBe((await co.api("GET", "/company")).body.objects[0].location_id);
      const load = route.deliveries.reduce((sum: number, d: { load: number }) => sum + d.load, 0);
      expect(load).toBeLessThanOrEqual(40);
      let previous = "";
      for (const [k, d] of route.deliveries.entries()) {
        expect(d.status).toBe(1);
        expect(d.route_id).toBe(route.id);
        expect(d.orderindex).toBe(k + 1);
        expect(d.tdt_from >= d.pdt_from && d.tdt_from <= d.pdt_to, `${d.id} ${d.tdt_from} in [${d.pdt_from}, ${d.pdt_to}]`).toBe(true);
        expect(d.eta_from <= d.tdt_from).toBe(true);
        expect(d.tdt_from >= previous).toBe(true);
        previous = d.tdt_to;
      }
    }
    // Routed deliveries are no longer open: routing them again is a conflict.
    const again = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: ids.slice(0, 2) } });
    expect(again.status).toBe(409);
  });

  it("fails without computing a route when num_vehicles is insufficient", async () => {
    const ids = await berlinDeliveries(co, 6, "tight");
    const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { body: { deliveryids: ids, vehcapacities: [5] } });
    expect(res.status).toBe(422);
    expect(res.body.fields.split(",").length).toBeGreaterThan(0);
    for (const id of res.body.fields.split(",")) expect(ids).toContain(Number(id));
    const still = await co.api("GET", `/delivery/${ids[0]}`);
    expect(still.body).toMatchObject({ status: 0, route_id: null });
  });

  it("validates the request", async () => {
    expect((await co.api("POST", "/calcroute/optimized/timewindow", { body: {} })).status).toBe(422);
    expect((await co.api("POST", "/calcroute/optimized/timewindow?relax_minutes=45", { body: { deliveryids: [1] } })).body.fields).toBe("relax_minutes");
    expect((await co.api("POST", "/calcroute/optimized/timewindow?relax_minutes=330", { body: { deliveryids: [1] } })).status).toBe(422);
    expect((await co.api("POST", "/calcroute/optimized/timewindow", { body: { deliveryids: [987654] } })).body.fields).toBe("deliveryids");
  });

  it("creates deliveries from deliverydata and routes them asynchronously, reporting progress", async () => {
    const deliverydata = [
      { postalcode: "10115", city: "Berlin", custom_id: "dd-1", pdt_from: tomorrowAt(8), pdt_to: tomorrowAt(12), els: 4, load: 2 },
      { postalcode: "10243", city: "Berlin", custom_id: "dd-2", pdt_from: tomorrowAt(9), pdt_to: tomorrowAt(13), els: 4, load: 2 },
      { lat: 52.49, lng: 13.42, custom_id: "dd-3" },
    ];
    const res = await co.api("POST", "/calcroute/optimized/timewindow?num_vehicles=2", { body: { deliverydata } });
    expect(res.status).toBe(202);
    const pid = res.body.process_id;
    expect(pid).toMatch(/^[0-9a-f-]{36}$/);
    const final = await waitForProcess(co, pid);
    expect(final.status, final.meta).toBe("finished");
    expect(final.link).toContain(pid);
    const all = await co.api("GET", `/process/status/${pid}`);
    expect(all.body.import_deliveries.status).toBe("finished");
    expect(all.body.routing.status).toBe("finished");
    expect(JSON.parse(all.body.routing.meta).progress).toBe(1);
    const routes = await co.api("GET", `/process/status/${pid}/final?response_data=all`);
    expect(routes.body.num_results).toBeGreaterThan(0);
    const customIds = routes.body.objects.flatMap((r: { deliveries: { custom_id: string }[] }) => r.deliveries.map((d) => d.custom_id)).sort();
    expect(customIds).toEqual(["dd-1", "dd-2", "dd-3"]);
    const dd1 = routes.body.objects.flatMap((r: { deliveries: unknown[] }) => r.deliveries).find((d: { custom_id: string }) => d.custom_id === "dd-1");
    expect(dd1).toMatchObject({ pdt_from: tomorrowAt(8), pdt_to: tomorrowAt(12), els: 4, load: 2, status: 1, notify_customer: false });
    expect(dd1.address).toMatchObject({ postalcode: "10115", city: "Berlin", country: "DE" });
    expect(routes.body.objects[0].routestring.type).toBe("LineString");
    expect(routes.body.objects[0].areatext).toContain("Berlin");

    // At-least-once delivery: the same job again writes no second set of routes.
    const batch = createMessageBatch("dispatch-routing", [{ id: "redelivered-1", timestamp: new Date(), attempts: 2, body: { processId: pid, companyId: co.id } }]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toEqual(["redelivered-1"]);
    const after = await co.api("GET", `/process/status/${pid}/final?response_data=base`);
    expect(after.body.num_results).toBe(routes.body.num_results);
  });

  it("answers 404 for unknown processes and other companies' processes", async () => {
    expect((await co.api("GET", "/process/status/00000000-0000-4000-8000-000000000000")).status).toBe(404);
    const other = await createCompany();
    const ids = await berlinDeliveries(co, 2, "own");
    const started = await co.api("POST", "/calcroute/optimized/timewindow", { body: { deliveryids: ids } });
    expect((await other.api("GET", `/process/status/${started.body.process_id}`)).status).toBe(404);
    await waitForProcess(co, started.body.process_id);
  });

  it("pushes process events to a dispatcher's websocket", async () => {
    const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/ws?access_token=${co.dispatcher.token}`, { headers: { Upgrade: "websocket" } }));
    expect(res.status).toBe(101);
    const ws = res.webSocket!;
    ws.accept();
    const messages: { type: string; status?: string; action?: string }[] = [];
    ws.addEventListener("message", (e) => messages.push(JSON.parse(e.data as string)));
    ws.send(JSON.stringify({ type: "ping" }));
    const ids = await berlinDeliveries(co, 3, "ws");
    const started = await co.api("POST", "/calcroute/optimized/timewindow", { body: { deliveryids: ids } });
    await waitForProcess(co, started.body.process_id);
    await new Promise((r) => setTimeout(r, 100));
    expect(messages).toContainEqual({ type: "pong" });
    expect(messages.some((m) => m.type === "process" && m.action === "routing" && m.status === "running")).toBe(true);
    const routingDone = messages.find((m) => m.type === "process" && m.action === "routing" && m.status === "finished") as { meta: string } | undefined;
    expect(JSON.parse(routingDone!.meta).progress).toBe(1);
    expect(messages.some((m) => m.type === "process" && m.action === "final" && m.status === "finished")).toBe(true);
    expect(messages.some((m) => m.type === "route")).toBe(true);
    ws.close();
  });

  it("assigns available drivers, uses inline vehicles and a given start, and cancels earlier routes on request", async () => {
    const fresh = await createCompany();
    const driver = await fresh.user("driver");
    await env.DB.prepare("UPDATE users SET active = 1 WHERE id = ?").bind(driver.id).run();
    const from = new Date(Date.now() - 3600_000).toISOString().replace(/\.\d{3}Z$/, "Z");
    const to = new Date(Date.now() + 86_400_000 * 2).toISOString().replace(/\.\d{3}Z$/, "Z");
    expect((await fresh.api("POST", "/driveravailability", { body: { driver_id: driver.id, fromtime: from, totime: to } })).status).toBe(200);
    const first = await berlinDeliveries(fresh, 4, "first");
    const res = await fresh.api("POST", "/calcroute/optimized/timewindow?async=false&assign_drivers=true", {
      body: {
        deliveryids: first,
        vehicles: [{ name: "Van", capacity_1: 100, vehicle_class: "truck" }],
        startaddress: { lat: 52.5, lng: 13.4, city: "Berlin" },
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.num_results).toBe(1);
    const route = res.body.objects[0];
    expect(route).toMatchObject({ status: 1, driver_id: driver.id, custom_id: "Tour 1" });
    expect(route.routebase_address.location).toEqual({ type: "Point", coordinates: [13.4, 52.5] });

    // cancelroutes: the earlier route is cancelled and its deliveries can be routed again.
    const again = await fresh.api("POST", "/calcroute/optimized/timewindow?async=false&cancelroutes=true", { body: { deliveryids: first } });
    expect(again.status, again.text).toBe(200);
    expect((await fresh.api("GET", `/route/${route.id}`)).body.status).toBe(5);
    expect(again.body.objects[0].deliveries.map((d: { id: number }) => d.id).sort()).toEqual([...first].sort());
  });
});

describe("tour names", () => {
  it("numbers generated names on through the company's day, a prefix's numbers too; another day starts at 1", async () => {
    const co = await createCompany();
    const ids = await berlinDeliveries(co, 16, "names");
    /** A synchronous run of `deliveryids` on tours of capacity 4 (the loads are 1-4: several tours). */
    const run = async (deliveryids: number[], query = "") => {
      const res = await co.api("POST", `/calcroute/optimized/timewindow?async=false&num_vehicles=8${query}`, { body: { deliveryids, vehcapacities: [4] } });
      expect(res.status, res.text).toBe(200);
      return (res.body.objects as { custom_id: string; tst_from: string }[]).map((r) => r.custom_id);
    };
    const first = await run(ids.slice(0, 4));
    const second = await run(ids.slice(4, 8));
    expect(first.length).toBeGreaterThan(1);
    expect([...first, ...second]).toEqual([...first, ...second].map((_, i) => `Tour ${i + 1}`));
    const prefixed = await run(ids.slice(8, 12), "&nameprefix=North-");
    const prefixedAgain = await run(ids.slice(12, 16), "&nameprefix=North-");
    expect([...prefixed, ...prefixedAgain]).toEqual([...prefixed, ...prefixedAgain].map((_, i) => `North-${i + 1}`));

    const address = await insertAddress(co.id, { lng: 13.4, lat: 52.52 });
    const later = new Date(Date.parse(tomorrowAt(10)) + 2 * 86_400_000).toISOString().replace(".000Z", "Z");
    const untilLater = new Date(Date.parse(later) + 7200_000).toISOString().replace(".000Z", "Z");
    const other = (await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: later, pdt_to: untilLater } })).body;
    expect(await run([other.id])).toEqual(["Tour 1"]);
  });
});

describe("route update", () => {
  it("adds and removes deliveries: a new route replaces the old one", async () => {
    const co = await createCompany();
    const ids = await berlinDeliveries(co, 4, "upd");
    const first = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1&nameprefix=North", { body: { deliveryids: ids.slice(0, 3) } });
    expect(first.status, first.text).toBe(200);
    const old = first.body.objects[0];
    const res = await co.api("PATCH", `/calcroute/update/timewindow/${old.id}`, { body: { add_deliveryids: [ids[3]], del_deliveryids: [ids[0]] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ replaces: old.id, custom_id: "North", status: old.status });
    expect(res.body.deliveries.map((d: { id: number }) => d.id).sort()).toEqual([ids[1], ids[2], ids[3]].sort());
    expect(res.body.previous_deliveries).toEqual([ids[0]]);
    const replaced = await co.api("GET", `/route/${old.id}`);
    expect(replaced.body).toMatchObject({ status: 6, replaced_by: res.body.id });
    expect((await co.api("GET", `/delivery/${ids[0]}`)).body).toMatchObject({ status: 0, route_id: null });
    // The replaced route cannot be updated again.
    expect((await co.api("PATCH", `/calcroute/update/timewindow/${old.id}`, { body: {} })).status).toBe(409);
    expect((await co.api("PATCH", `/calcroute/update/timewindow/${res.body.id}`, { body: { del_deliveryids: [ids[0]] } })).body.fields).toBe("del_deliveryids");
  });

  it("refuses deliveries from another depot", async () => {
    const co = await createCompany();
    const ids = await berlinDeliveries(co, 2, "dep");
    const route = (await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: [ids[0]] } })).body.objects[0];
    const elsewhere = await insertAddress(co.id, { lng: 11.57, lat: 48.14, city: "München" });
    await co.api("PATCH", "/delivery", { body: { id: ids[1], supplierlocation_id: elsewhere } });
    const res = await co.api("PATCH", `/calcroute/update/timewindow/${route.id}`, { body: { add_deliveryids: [ids[1]] } });
    expect(res.status).toBe(422);
    expect(res.body.fields).toBe("add_deliveryids");
  });
});

describe("routing variants", () => {
  it("offers the fewest tours and real alternatives with their figures, storing nothing", async () => {
    const co = await createCompany();
    const ids = await berlinDeliveries(co, 12, "var");
    const res = await co.api("POST", "/routingvariants", { body: { deliveryids: ids } });
    expect(res.status, res.text).toBe(200);
    const [main] = res.body.mainvariant;
    expect(main.name).toBe("fewest_tours");
    expect(main.unassigned).toEqual([]);
    expect(main.sequences.flat().sort((a: number, b: number) => a - b)).toEqual([...ids].sort((a, b) => a - b));
    expect(res.body.variants.map((v: { name: string }) => v.name)).toEqual(["shorter_days", "one_more_tour"]);
    const shorter = res.body.variants[0];
    if (shorter.unassigned.length === 0) expect(shorter.longest_tour).toBeLessThanOrEqual(Math.round(main.longest_tour * 0.8) + 1);
    const more = res.body.variants[1];
    expect(more.tours).toBeGreaterThanOrEqual(main.tours);
    expect((await co.api("GET", "/route")).body.num_results).toBe(0);
    expect((await co.api("GET", `/delivery/${ids[0]}`)).body.status).toBe(0);
  });
});

describe("routing options", () => {
  it("usearea keeps a tour area's deliveries together and gives the tour to the area's driver", async () => {
    const co = await createCompany();
    const driver = await co.user("driver");
    const other = await co.user("driver");
    for (const d of [driver, other]) {
      await env.DB.prepare("UPDATE users SET active = 1 WHERE id = ?").bind(d.id).run();
      await co.api("POST", "/driveravailability", { body: { driver_id: d.id, fromtime: new Date(Date.now() - 3600_000).toISOString(), totime: new Date(Date.now() + 3 * 86_400_000).toISOString() } });
    }
    const area = await co.api("POST", "/areafromplz", { body: { plz_list: ["10115"], areaname: "Mitte" } });
    expect(area.status, area.text).toBe(200);
    await co.api("PATCH", `/tourarea/${area.body.id}`, { body: { driver_id: other.id } });
    const ids: number[] = [];
    for (const plz of ["10115", "10115", "10243", "10245"]) {
      const address = await co.api("POST", "/address", { body: { postalcode: plz, city: "Berlin" } });
      ids.push((await co.api("POST", "/delivery", { body: { deliverylocation_id: address.body.id, pdt_from: tomorrowAt(8), pdt_to: tomorrowAt(16) } })).body.id);
    }
    const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false&usearea=true&assign_drivers=true", { body: { deliveryids: ids } });
    expect(res.status, res.text).toBe(200);
    const tourOf = (id: number) => res.body.objects.find((r: { deliveries: { id: number }[] }) => r.deliveries.some((d) => d.id === id));
    expect(tourOf(ids[0]).id).toBe(tourOf(ids[1]).id);
    expect(tourOf(ids[0]).driver_id).toBe(other.id);
  });

  it("fix_order keeps the given order; start_time/end_time frame deliveries without a window", async () => {
    const co = await createCompany();
    const ids: number[] = [];
    for (const [lng, lat] of [[13.50, 52.45], [13.30, 52.55], [13.45, 52.56], [13.32, 52.44]]) {
      const address = await insertAddress(co.id, { lng, lat });
      ids.push((await co.api("POST", "/delivery", { body: { deliverylocation_id: address, els: 5 } })).body.id);
    }
    const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", {
      body: { deliveryids: ids, fix_order: true, start_time: tomorrowAt(8), end_time: tomorrowAt(12) },
    });
    expect(res.status, res.text).toBe(200);
    const deliveries = res.body.objects[0].deliveries;
    expect(deliveries.map((d: { id: number }) => d.id)).toEqual(ids);
    for (const d of deliveries) expect(d.tdt_from >= tomorrowAt(8) && d.tdt_from <= tomorrowAt(12), d.tdt_from).toBe(true);
  });

  it("relax_minutes widens a window that cannot be met, only when needed", async () => {
    const co = await createCompany();
    const potsdam = await insertAddress(co.id, { lng: 13.06, lat: 52.39, city: "Potsdam" });
    const id = (await co.api("POST", "/delivery", { body: { deliverylocation_id: potsdam, pdt_from: tomorrowAt(8), pdt_to: tomorrowAt(8, 5) } })).body.id;
    const body = { deliveryids: [id], start_time: tomorrowAt(8) };
    const strict = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body });
    expect(strict.status).toBe(422);
    expect(strict.body.fields).toBe(String(id));
    const relaxed = await co.api("POST", "/calcroute/optimized/timewindow?async=false&relax_minutes=120", { body });
    expect(relaxed.status, relaxed.text).toBe(200);
    const delivery = relaxed.body.objects[0].deliveries[0];
    expect(delivery.tdt_from > tomorrowAt(8, 5)).toBe(true);
    expect(delivery.tdt_from <= tomorrowAt(10, 5)).toBe(true);
  });
});
