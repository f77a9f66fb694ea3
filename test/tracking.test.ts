import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { dayAt, dayBounds } from "../src/shared/wall-clock";
import { ORIGIN, type TestCompany, createCompany } from "./helpers";

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const point = (lng: number, lat: number) => ({ type: "Point", coordinates: [lng, lat] });
/** Today's midnight on the company's wall clock (the default zone). */
const midnight = () => dayBounds(dayAt(Date.now(), "Europe/Berlin"), "Europe/Berlin").start;

describe("driver tracking", () => {
  let co: TestCompany;
  let driver: { id: number; token: string };
  let other: { id: number; token: string };
  let watcher: { token: string };
  beforeAll(async () => {
    co = await createCompany();
    driver = await co.user("driver");
    other = await co.user("driver");
    watcher = await co.user("watcher");
  });

  it("a driver posts its own position; the timestamp defaults to now", async () => {
    const before = iso(Date.now() - 1000);
    const res = await co.api("POST", "/drivertracking", { token: driver.token, body: { position: point(13.3849, 52.5317) } });
    const after = iso(Date.now() + 1000);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.any(Number), driver_id: driver.id, position: point(13.3849, 52.5317), timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) });
    expect(res.body.timestamp >= before && res.body.timestamp <= after).toBe(true);
    const got = await co.api("GET", `/drivertracking/${res.body.id}`, { token: watcher.token });
    expect(got.body).toEqual(res.body);
  });

  it("explicit timestamps are normalised to UTC", async () => {
    const res = await co.api("POST", "/drivertracking", { token: driver.token, body: { timestamp: "2026-11-20T10:00:00+01:00", position: point(13, 52), driver_id: driver.id } });
    expect(res.status).toBe(200);
    expect(res.body.timestamp).toBe("2026-11-20T09:00:00Z");
    const noZone = await co.api("POST", "/drivertracking", { token: driver.token, body: { timestamp: "2026-11-20T10:00:00", position: point(13, 52) } });
    expect(noZone.body.timestamp).toBe("2026-11-20T10:00:00Z");
  });

  it("ownership: drivers only for themselves, dispatchers for the company's drivers", async () => {
    const forOther = await co.api("POST", "/drivertracking", { token: driver.token, body: { position: point(13, 52), driver_id: other.id } });
    expect(forOther.status).toBe(403);
    expect(forOther.body.code).toBe(403);
    const batchWithOther = await co.api("POST", "/drivertracking", { token: driver.token, body: [{ position: point(13, 52) }, { position: point(13, 52), driver_id: other.id }] });
    expect(batchWithOther.status).toBe(403);
    expect((await co.api("GET", `/drivertracking?q=${encodeURIComponent(JSON.stringify({ filters: [{ name: "driver_id", op: "==", val: other.id }] }))}`)).body.num_results).toBe(0);

    const byDispatcher = await co.api("POST", "/drivertracking", { body: { position: point(13.1, 52.1), driver_id: other.id } });
    expect(byDispatcher.status).toBe(200);
    expect(byDispatcher.body.driver_id).toBe(other.id);
    const missing = await co.api("POST", "/drivertracking", { body: { position: point(13, 52) } });
    expect(missing.status).toBe(422);
    expect(missing.body.fields).toBe("driver_id");
    const unknown = await co.api("POST", "/drivertracking", { body: { position: point(13, 52), driver_id: 999999 } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.fields).toBe("driver_id");
    const dispatcherId = (await co.api("GET", "/dispatcher")).body.objects[0].id;
    expect((await co.api("POST", "/drivertracking", { body: { position: point(13, 52), driver_id: dispatcherId } })).status).toBe(422);

    expect((await co.api("POST", "/drivertracking", { token: watcher.token, body: { position: point(13, 52), driver_id: driver.id } })).status).toBe(403);
    expect((await co.api("DELETE", `/drivertracking/${byDispatcher.body.id}`, { token: watcher.token })).status).toBe(403);
    expect((await co.api("DELETE", `/drivertracking/${byDispatcher.body.id}`, { token: other.token })).status).toBe(403);
  });

  it("validates coordinates and timestamps, naming the fields", async () => {
    const post = (body: unknown) => co.api("POST", "/drivertracking", { token: driver.token, body });
    const lng = await post({ position: point(181, 52) });
    expect(lng.status).toBe(422);
    expect(lng.body.fields).toBe("position.coordinates.0");
    const lat = await post({ position: point(13, -90.5) });
    expect(lat.body.fields).toBe("position.coordinates.1");
    expect((await post({ position: { type: "LineString", coordinates: [13, 52] } })).body.fields).toBe("position.type");
    expect((await post({ position: { type: "Point", coordinates: [13] } })).status).toBe(422);
    expect((await post({})).body.fields).toBe("position");
    const badTime = await post({ position: point(13, 52), timestamp: "yesterday" });
    expect(badTime.status).toBe(422);
    expect(badTime.body.fields).toBe("timestamp");
    const future = await post({ position: point(13, 52), timestamp: iso(Date.now() + 10 * 60_000) });
    expect(future.status).toBe(422);
    expect(future.body.fields).toBe("timestamp");
    expect((await post({ position: point(13, 52), timestamp: iso(Date.now() + 60_000) })).status).toBe(200);

    const inBatch = await post([{ position: point(13, 52) }, { position: point(13, 52) }, { position: point(13, 95) }]);
    expect(inBatch.status).toBe(422);
    expect(inBatch.body.fields).toBe("2.position.coordinates.1");
    const timeInBatch = await post([{ position: point(13, 52) }, { position: point(13, 52), timestamp: "2026-13-01T00:00:00Z" }]);
    expect(timeInBatch.body.fields).toBe("1.timestamp");
    expect((await post([])).status).toBe(422);
    const tooMany = await post(Array.from({ length: 501 }, () => ({ position: point(13, 52) })));
    expect(tooMany.status).toBe(422);
    const most = await post(Array.from({ length: 500 }, (_, i) => ({ position: point(13, 52), timestamp: iso(Date.parse("2026-01-02T00:00:00Z") + i * 1000) })));
    expect(most.status).toBe(200);
    expect(most.body).toHaveLength(500);
    expect(most.body[499].timestamp).toBe("2026-01-02T00:08:19Z");
    expect((await co.api("POST", "/drivertracking", { token: driver.token, raw: "{not json" })).status).toBe(422);
  });

  it("an array is stored in one request and answered in input order", async () => {
    const fresh = await co.user("driver");
    const base = Date.now() - 3600_000;
    const entries = Array.from({ length: 45 }, (_, i) => ({ timestamp: iso(base + i * 10_000), position: point(13 + i / 1000, 52 + i / 1000) }));
    const res = await co.api("POST", "/drivertracking", { token: fresh.token, body: entries });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(45);
    expect(res.body.map((e: any) => e.timestamp)).toEqual(entries.map((e) => e.timestamp));
    expect(res.body.map((e: any) => e.position)).toEqual(entries.map((e) => e.position));
    expect(res.body.every((e: any) => e.driver_id === fresh.id)).toBe(true);
    const q = JSON.stringify({ filters: [{ name: "driver_id", op: "==", val: fresh.id }], order_by: [{ field: "timestamp", direction: "desc" }] });
    const list = await co.api("GET", `/drivertracking?results_per_page=5&q=${encodeURIComponent(q)}`);
    expect(list.body.num_results).toBe(45);
    expect(list.body.total_pages).toBe(9);
    expect(list.body.objects[0]).toEqual(res.body[44]);

    // A dispatcher may send a mixed batch.
    const mixed = await co.api("POST", "/drivertracking", { body: [{ driver_id: driver.id, position: point(1, 2) }, { driver_id: other.id, position: point(3, 4) }] });
    expect(mixed.status).toBe(200);
    expect(mixed.body.map((e: any) => e.driver_id)).toEqual([driver.id, other.id]);
  });

  it("DELETE answers the deleted entry", async () => {
    const created = await co.api("POST", "/drivertracking", { body: { position: point(9, 48), driver_id: other.id, timestamp: "2026-01-01T00:00:00Z" } });
    const deleted = await co.api("DELETE", `/drivertracking/${created.body.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual(created.body);
    expect((await co.api("GET", `/drivertracking/${created.body.id}`)).status).toBe(404);
    expect((await co.api("DELETE", `/drivertracking/${created.body.id}`)).status).toBe(404);
  });

  it("driverposition: the newest position of every driver, with name and colour", async () => {
    const c2 = await createCompany();
    const anna = (await c2.api("POST", "/driver", { body: { email: "anna@example.com", firstname: "Anna", lastname: "A" } })).body;
    const bert = (await c2.api("POST", "/driver", { body: { email: "bert@example.com", firstname: "Bert", lastname: "B" } })).body;
    const silent = (await c2.api("POST", "/driver", { body: { email: "silent@example.com" } })).body;
    const now = Date.now();
    // Posted out of order: the newest by timestamp wins, not the last posted.
    const posted = await c2.api("POST", "/drivertracking", {
      body: [
        { driver_id: anna.id, timestamp: iso(now - 60_000), position: point(13.2, 52.2) },
        { driver_id: anna.id, timestamp: iso(now - 120_000), position: point(13.1, 52.1) },
        { driver_id: bert.id, timestamp: iso(now - 30_000), position: point(11.5, 48.1) },
      ],
    });
    expect(posted.status).toBe(200);
    const list = await c2.api("GET", "/driverposition");
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      num_results: 2,
      page: 1,
      total_pages: 1,
      objects: [
        { id: posted.body[0].id, driver_id: anna.id, timestamp: iso(now - 60_000), position: point(13.2, 52.2), firstname: "Anna", lastname: "A", htmlcolor: anna.htmlcolor },
        { id: posted.body[2].id, driver_id: bert.id, timestamp: iso(now - 30_000), position: point(11.5, 48.1), firstname: "Bert", lastname: "B", htmlcolor: bert.htmlcolor },
      ],
    });
    const one = await c2.api("GET", `/driverposition/${bert.id}`);
    expect(one.body).toEqual(list.body.objects[1]);
    expect((await c2.api("GET", `/driverposition/${silent.id}`)).status).toBe(404);
    expect((await c2.api("GET", "/driverposition/999999")).status).toBe(404);
    const q = JSON.stringify({ filters: [{ name: "firstname", op: "==", val: "Bert" }] });
    expect((await c2.api("GET", `/driverposition?q=${encodeURIComponent(q)}`)).body.objects.map((p: any) => p.driver_id)).toEqual([bert.id]);
  });

  it("drivertrace: today's positions in time order, or since the start of the route on the way", async () => {
    const c3 = await createCompany();
    const d = (await c3.api("POST", "/driver", { body: { email: "tracer@example.com" } })).body;
    const empty = await c3.api("GET", `/drivertrace/${d.id}`);
    expect(empty.body).toEqual({ type: "LineString", coordinates: [] });
    const m = midnight();
    await c3.api("POST", "/drivertracking", {
      body: [
        { driver_id: d.id, timestamp: iso(m + 3000), position: point(3, 3) },
        { driver_id: d.id, timestamp: iso(m - 60_000), position: point(0, 0) }, // yesterday
        { driver_id: d.id, timestamp: iso(m + 1000), position: point(1, 1) },
        { driver_id: d.id, timestamp: iso(m + 2000), position: point(2, 2) },
      ],
    });
    const today = await c3.api("GET", `/drivertrace/${d.id}`);
    expect(today.status).toBe(200);
    expect(today.body).toEqual({ type: "LineString", coordinates: [[1, 1], [2, 2], [3, 3]] });

    // A route on the way: the trace starts at its ast.
    await env.DB.prepare("insert into routes (company_id, driver_id, status, ast) values (?, ?, 3, ?)").bind(c3.id, d.id, iso(m + 2000)).run();
    const onRoute = await c3.api("GET", `/drivertrace/${d.id}`);
    expect(onRoute.body).toEqual({ type: "LineString", coordinates: [[2, 2], [3, 3]] });
    expect((await c3.api("GET", "/drivertrace/999999")).status).toBe(404);
  });

  it("tenancy: company B sees none of company A's tracking", async () => {
    const b = await createCompany();
    const entry = await co.api("POST", "/drivertracking", { token: driver.token, body: { position: point(13, 52) } });
    expect((await b.api("GET", `/drivertracking/${entry.body.id}`)).status).toBe(404);
    expect((await b.api("DELETE", `/drivertracking/${entry.body.id}`)).status).toBe(404);
    expect((await b.api("GET", "/drivertracking")).body.num_results).toBe(0);
    expect((await b.api("GET", "/driverposition")).body.num_results).toBe(0);
    expect((await b.api("GET", `/driverposition/${driver.id}`)).status).toBe(404);
    expect((await b.api("GET", `/drivertrace/${driver.id}`)).status).toBe(404);
    expect((await b.api("POST", "/drivertracking", { body: { position: point(13, 52), driver_id: driver.id } })).status).toBe(422);
    // A's token is not valid under B.
    expect((await b.api("POST", "/drivertracking", { token: driver.token, body: { position: point(13, 52) } })).status).toBe(403);
    expect((await co.api("GET", `/drivertracking/${entry.body.id}`)).status).toBe(200);
  });

  it("pushes the newest position of a batch to the dispatchers' websocket", async () => {
    const c4 = await createCompany();
    const d = await c4.user("driver");
    const res = await exports.default.fetch(new Request(`${ORIGIN}/${c4.slug}/api/ws?access_token=${c4.dispatcher.token}`, { headers: { Upgrade: "websocket" } }));
    expect(res.status).toBe(101);
    const ws = res.webSocket!;
    ws.accept();
    const messages: any[] = [];
    ws.addEventListener("message", (event) => messages.push(JSON.parse(event.data as string)));

    const now = Date.now();
    const posted = await c4.api("POST", "/drivertracking", {
      token: d.token,
      body: [
        { timestamp: iso(now - 20_000), position: point(13.1, 52.1) },
        { timestamp: iso(now - 5_000), position: point(13.3, 52.3) },
        { timestamp: iso(now - 10_000), position: point(13.2, 52.2) },
      ],
    });
    expect(posted.status).toBe(200);
    for (let i = 0; i < 100 && !messages.some((m) => m.type === "driverposition"); i++) await new Promise((r) => setTimeout(r, 20));
    ws.close(1000, "done");
    expect(messages.filter((m) => m.type === "driverposition")).toEqual([
      { type: "driverposition", driver_id: d.id, position: point(13.3, 52.3), timestamp: iso(now - 5_000) },
    ]);
  });

  it("benchmark: 50 POSTs of 20 positions (logged, not asserted)", async () => {
    const c5 = await createCompany();
    const d = await c5.user("driver");
    const base = Date.now() - 3600_000;
    const started = performance.now();
    for (let i = 0; i < 50; i++) {
      const body = Array.from({ length: 20 }, (_, k) => ({ timestamp: iso(base + (i * 20 + k) * 1000), position: point(13 + k / 100, 52 + i / 100) }));
      const res = await c5.api("POST", "/drivertracking", { token: d.token, body });
      expect(res.status).toBe(200);
    }
    const mean = (performance.now() - started) / 50;
    console.log(`[bench] POST /drivertracking, 20 positions: mean ${mean.toFixed(1)} ms per request over 50 requests`);
    expect((await c5.api("GET", "/drivertracking")).body.num_results).toBe(1000);
  });
});
