import { createScheduledController, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../src/worker/index";
import { BATCH, EVENT_REPLAY_DAYS, MAX_BATCHES, OUTBOX_DAYS, ROUTE_DAYS, WEBHOOK_DELIVERY_DAYS } from "../src/core/services/retention";
import { addDays, dayAt, dayBounds } from "../src/shared/wall-clock";
import { MAX_DRIVER_DAYS } from "../src/core/services/position-archive";
import { OPERATOR, type TestCompany, call, createCompany, insertAddress, routeAndStart } from "./helpers";

const DAY = 86_400_000;
/** The webhook queue of the cron run, kept out of the way: these tests are about retention. */
const quietQueue = { send: async () => undefined, sendBatch: async () => undefined };

/** A cron run with the clock `days` ahead of now; returns the retention and archive log lines it wrote (`msg` `retention` unless `msg` says otherwise). */
async function cronAfterDays(days: number, msg = "retention", bindings: Partial<typeof env> = {}): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = [];
  const keep = (line: unknown) => {
    const parsed = JSON.parse(String(line));
    if (parsed.msg === msg) lines.push(parsed);
  };
  const spies = [vi.spyOn(console, "log").mockImplementation(keep), vi.spyOn(console, "error").mockImplementation(keep)];
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + days * DAY);
  try {
    await worker.scheduled(createScheduledController(), { ...env, WEBHOOK_QUEUE: quietQueue as never, ...bindings });
  } finally {
    vi.useRealTimers();
    for (const spy of spies) spy.mockRestore();
  }
  return lines;
}

const count = async (table: string, companyId: number) => (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE company_id = ?`).bind(companyId).first<{ n: number }>())!.n;
const eventIds = async (companyId: number) => (await env.DB.prepare("SELECT id FROM events WHERE company_id = ? ORDER BY id").bind(companyId).all<{ id: number }>()).results.map((r) => r.id);

async function newDeliveries(co: TestCompany, n: number): Promise<number[]> {
  const address = await insertAddress(co.id, { lng: 13.41, lat: 52.5 });
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const created = await co.api("POST", "/delivery", { body: { deliverylocation_id: address } });
    expect(created.status).toBe(201);
    ids.push(created.body.id);
  }
  return ids;
}

async function webhookWithDeliveries(co: TestCompany, n: number): Promise<number> {
  const hook = await co.api("POST", "/webhook", { body: { url: "https://receiver.example/hook", event_types: ["delivery.*"] } });
  expect(hook.status).toBe(201);
  await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO webhook_deliveries (company_id, webhook_id, event_id, event_type, attempt, status_code, latency_ms, succeeded) SELECT ?, ?, i, 'delivery.updated', 1, 200, 50, 1 FROM n`,
  )
    .bind(n, co.id, hook.body.id)
    .run();
  return hook.body.id;
}

afterEach(() => vi.useRealTimers());

describe("retention by the cron trigger", () => {
  it(`outbox rows go after ${OUTBOX_DAYS} days and webhook delivery logs after ${WEBHOOK_DELIVERY_DAYS}, not before`, async () => {
    const co = await createCompany();
    for (let i = 0; i < 3; i++) expect((await co.api("POST", "/adduser/watcher", { body: { email: `w${i}@retention.example` } })).status).toBe(201);
    await webhookWithDeliveries(co, 5);
    const outboxBefore = await count("outbox", co.id);
    expect(outboxBefore).toBeGreaterThanOrEqual(3);

    await cronAfterDays(Math.min(OUTBOX_DAYS, WEBHOOK_DELIVERY_DAYS) - 1);
    expect(await count("outbox", co.id)).toBe(outboxBefore);
    expect(await count("webhook_deliveries", co.id)).toBe(5);

    const lines = await cronAfterDays(Math.max(OUTBOX_DAYS, WEBHOOK_DELIVERY_DAYS) + 1);
    expect(await count("outbox", co.id)).toBe(0);
    expect(await count("webhook_deliveries", co.id)).toBe(0);
    expect(lines).toContainEqual(expect.objectContaining({ level: "info", table: "outbox", done: true }));
    expect(lines).toContainEqual(expect.objectContaining({ table: "webhook_deliveries", done: true }));
  });

  it(`the event log is pruned after ${EVENT_REPLAY_DAYS} days, never past an enabled endpoint's cursor`, async () => {
    const watched = await createCompany();
    const free = await createCompany();
    const hook = await webhookWithDeliveries(watched, 0);
    await newDeliveries(watched, 4);
    await newDeliveries(free, 2);
    const ids = await eventIds(watched.id);
    expect(ids).toHaveLength(4);
    // The endpoint has delivered the first two events.
    await env.DB.prepare("UPDATE webhooks SET cursor = ? WHERE id = ?").bind(ids[1], hook).run();

    await cronAfterDays(EVENT_REPLAY_DAYS - 1);
    expect(await eventIds(watched.id)).toEqual(ids);
    expect(await count("events", free.id)).toBe(2);

    const lines = await cronAfterDays(EVENT_REPLAY_DAYS + 1);
    expect(await eventIds(watched.id)).toEqual(ids.slice(2));
    expect(await count("events", free.id)).toBe(0);
    expect(lines).toContainEqual(expect.objectContaining({ table: "events", company_slug: watched.slug, deleted: 2, done: true }));

    // A disabled endpoint holds nothing back.
    await env.DB.prepare("UPDATE webhooks SET enabled = 0 WHERE id = ?").bind(hook).run();
    await cronAfterDays(EVENT_REPLAY_DAYS + 1);
    expect(await eventIds(watched.id)).toEqual([]);
  });

  it("a run deletes in bounded batches and the next run goes on where it stopped", async () => {
    const co = await createCompany();
    const perRun = BATCH * MAX_BATCHES;
    await cronAfterDays(WEBHOOK_DELIVERY_DAYS + 1); // what earlier tests' endpoints logged goes first
    await webhookWithDeliveries(co, perRun + 300);

    const first = await cronAfterDays(WEBHOOK_DELIVERY_DAYS + 1);
    expect(await count("webhook_deliveries", co.id)).toBe(300);
    expect(first).toContainEqual(expect.objectContaining({ table: "webhook_deliveries", deleted: perRun, done: false }));

    const second = await cronAfterDays(WEBHOOK_DELIVERY_DAYS + 1);
    expect(await count("webhook_deliveries", co.id)).toBe(0);
    expect(second).toContainEqual(expect.objectContaining({ table: "webhook_deliveries", deleted: 300, done: true }));

    // Nothing left to do: a run changes nothing and says nothing.
    expect((await cronAfterDays(WEBHOOK_DELIVERY_DAYS + 1)).filter((l) => l.table === "webhook_deliveries")).toEqual([]);
  });
});

describe(`cancelled and replaced routes go ${ROUTE_DAYS} days after their creation`, () => {
  it("unless a delivery still names them; the replacing route forgets the replaced one", async () => {
    const co = await createCompany();
    const [a1, a2, c1, e1, e2] = await newDeliveries(co, 5);
    const plan = async (ids: number[]) => {
      const routed = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { body: { deliveryids: ids } });
      expect(routed.status).toBe(200);
      return routed.body.objects[0].id as number;
    };
    const replaced = await plan([a1, a2]);
    const updated = await co.api("PATCH", `/calcroute/update/timewindow/${replaced}`, { body: { del_deliveryids: [a2] } });
    expect(updated.status).toBe(200);
    const successor = (await co.api("GET", `/route/${replaced}`)).body.replaced_by as number;
    expect((await co.api("GET", `/route/${successor}`)).body.replaces).toBe(replaced);
    const cancelled = await plan([c1]);
    expect((await co.api("POST", `/cancelroute/${cancelled}`)).status).toBe(200);
    // Cancelled on the way after one delivery was made: that delivery keeps its route.
    const { driver, routeId: reported } = await routeAndStart(co, [e1, e2]);
    expect((await co.api("POST", `/deliverydone/${e1}`, { token: driver.token, body: { status: "delivered" } })).status).toBe(200);
    expect((await co.api("POST", `/cancelroute/${reported}`)).status).toBe(200);
    const exists = async (id: number) => (await co.api("GET", `/route/${id}`)).status;

    await cronAfterDays(ROUTE_DAYS - 1);
    expect(await Promise.all([replaced, cancelled, reported, successor].map(exists))).toEqual([200, 200, 200, 200]);

    const lines = await cronAfterDays(ROUTE_DAYS + 1);
    expect(await Promise.all([replaced, cancelled, reported, successor].map(exists))).toEqual([404, 404, 200, 200]);
    expect(lines).toContainEqual(expect.objectContaining({ table: "routes", company_slug: co.slug, deleted: 2, done: true }));
    const kept = (await co.api("GET", `/route/${successor}`)).body;
    expect(kept.replaces).toBeNull();
    expect((await co.api("GET", `/delivery/${e1}`)).body.route_id).toBe(reported);
    expect((await co.api("GET", `/delivery/${c1}`)).status).toBe(200);
    // Idempotent: the next run finds nothing.
    expect((await cronAfterDays(ROUTE_DAYS + 1)).filter((l) => l.table === "routes" && l.company_slug === co.slug)).toEqual([]);
  });
});

describe("driver positions: archived to R2 after the company's position_retention_days", () => {
  const TZ = "Europe/Berlin";
  const today = dayAt(Date.now(), TZ);
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

  /** A driver with `n` positions on each of `days` (past days on the company's wall clock), posted through the API. */
  async function driverWithPositions(co: TestCompany, days: string[], n: number) {
    const driver = (await co.api("POST", "/driver", { body: { email: `archived-${Math.random().toString(36).slice(2)}@example.com` } })).body;
    for (const day of days) {
      const start = dayBounds(day, TZ).start;
      const body = Array.from({ length: n }, (_, i) => ({ driver_id: driver.id, timestamp: iso(start + 3_600_000 + i * 10_000), position: { type: "Point", coordinates: [13 + i / 1000, 52 + i / 1000] } }));
      expect((await co.api("POST", "/drivertracking", { body })).status).toBe(200);
    }
    return driver.id as number;
  }
  const trace = async (co: TestCompany, driverId: number, day: string) => (await co.api("GET", `/drivertrace/${driverId}?date=${day}`)).body;
  const stored = async (co: TestCompany, driverId: number) => (await env.DB.prepare("SELECT count(*) AS n FROM driver_tracking WHERE company_id = ? AND driver_id = ?").bind(co.id, driverId).first<{ n: number }>())!.n;

  it("a day older than the setting moves to one gzip NDJSON file per driver and day, and its trace answers the same", async () => {
    const co = await createCompany();
    const days = [addDays(today, -2), addDays(today, -1)];
    const driver = await driverWithPositions(co, days, 30);
    const before = await Promise.all(days.map((d) => trace(co, driver, d)));
    expect(before[0].coordinates).toHaveLength(30);

    await cronAfterDays(28, "position archive");
    expect(await stored(co, driver)).toBe(60);

    // 31 days on, both days lie before the 30 kept: archived, oldest first, one line per driver-day.
    const lines = await cronAfterDays(31, "position archive");
    expect(lines).toEqual(days.map((day) => expect.objectContaining({ level: "info", company_slug: co.slug, driver_id: driver, day, archived: 30 })));
    expect(await stored(co, driver)).toBe(0);
    const object = await env.UPLOADS.get(`positions/${co.id}/${driver}/${days[1]}.ndjson.gz`);
    expect(object?.httpMetadata?.contentEncoding).toBe("gzip");
    const text = await new Response(object!.body.pipeThrough(new DecompressionStream("gzip"))).text();
    const first = JSON.parse(text.split("\n")[0]);
    expect(first).toEqual({ id: expect.any(Number), timestamp: iso(dayBounds(days[1], TZ).start + 3_600_000), lng: 13, lat: 52 });
    expect(text.trim().split("\n")).toHaveLength(30);
    expect(await Promise.all(days.map((d) => trace(co, driver, d)))).toEqual(before);

    // A late position of an archived day joins its file at the next run; the trace has it all along.
    const late = iso(dayBounds(days[1], TZ).start + 60_000);
    expect((await co.api("POST", "/drivertracking", { body: { driver_id: driver, timestamp: late, position: { type: "Point", coordinates: [12, 51] } } })).status).toBe(200);
    const withLate = await trace(co, driver, days[1]);
    expect(withLate.coordinates).toEqual([[12, 51], ...before[1].coordinates]);
    await cronAfterDays(31, "position archive");
    expect(await stored(co, driver)).toBe(0);
    expect(await trace(co, driver, days[1])).toEqual(withLate);

    // Another company's driver id answers nothing.
    const other = await createCompany();
    expect((await other.api("GET", `/drivertrace/${driver}?date=${days[1]}`)).status).toBe(404);
  });

  it("the company setting decides; an archive that does not read back keeps the rows in D1", async () => {
    const co = await createCompany();
    const patched = await call("PATCH", `/_operator/companies/${co.slug}`, { headers: OPERATOR, body: { position_retention_days: 3 } });
    expect(patched.status).toBe(200);
    expect(patched.body.position_retention_days).toBe(3);
    expect((await call("PATCH", `/_operator/companies/${co.slug}`, { headers: OPERATOR, body: { position_retention_days: 0 } })).status).toBe(422);
    const day = addDays(today, -1);
    const driver = await driverWithPositions(co, [day], 5);

    await cronAfterDays(2, "position archive");
    expect(await stored(co, driver)).toBe(5);

    // A bucket that loses what it is given: nothing is deleted, the failure is logged.
    const lossy = { put: async (key: string) => env.UPLOADS.put(key, await new Response(new Blob(["\n"]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer()), get: (key: string) => env.UPLOADS.get(key) };
    const failed = await cronAfterDays(4, "position archive failed", { UPLOADS: lossy as never });
    expect(failed).toContainEqual(expect.objectContaining({ level: "error", company_slug: co.slug, driver_id: driver, day }));
    expect(await stored(co, driver)).toBe(5);

    await cronAfterDays(4, "position archive");
    expect(await stored(co, driver)).toBe(0);
    expect((await trace(co, driver, day)).coordinates).toHaveLength(5);
    expect((await co.api("GET", `/drivertrace/${driver}?date=2026-02-30`)).status).toBe(422);
  });

  it(`a run archives at most ${MAX_DRIVER_DAYS} driver-days; the next goes on`, async () => {
    const co = await createCompany();
    await cronAfterDays(40, "position archive"); // what earlier tests left goes first
    const days = Array.from({ length: MAX_DRIVER_DAYS + 2 }, (_, i) => addDays(today, -1 - i));
    const driver = await driverWithPositions(co, days, 1);
    const first = await cronAfterDays(40, "position archive");
    expect(first.filter((l) => l.driver_id === driver)).toHaveLength(MAX_DRIVER_DAYS);
    expect(first.at(-1)).toEqual(expect.objectContaining({ done: false }));
    expect(await stored(co, driver)).toBe(2);
    await cronAfterDays(40, "position archive");
    expect(await stored(co, driver)).toBe(0);
  });
});

describe("GET /_operator/companies/<slug>/usage", () => {
  const usage = (slug: string, headers: Record<string, string> = OPERATOR) => call("GET", `/_operator/companies/${slug}/usage`, { headers });
  const rowsOf = (body: { tables: { table: string; rows: number }[] }) => Object.fromEntries(body.tables.map((t) => [t.table, t.rows]));

  it("counts the company's rows, estimates bytes from the measured table, counts its R2 archive, and no one else's", async () => {
    const co = await createCompany();
    const other = await createCompany();
    const before = rowsOf((await usage(co.slug)).body);

    await newDeliveries(co, 3); // 1 address, 3 deliveries, 3 events
    await webhookWithDeliveries(co, 4);
    const driver = (await co.api("POST", "/driver", { body: { email: `usage-${co.slug}@example.com` } })).body.id;
    const positions = Array.from({ length: 5 }, (_, i) => ({ driver_id: driver, timestamp: new Date(Date.now() - i * 10_000).toISOString(), position: { type: "Point", coordinates: [13.4, 52.5] } }));
    expect((await co.api("POST", "/drivertracking", { body: positions })).status).toBe(200);
    await env.UPLOADS.put(`positions/${co.id}/${driver}/2020-01-01.ndjson.gz`, "abcdefg");
    // Someone else's rows and archive: not counted.
    await newDeliveries(other, 2);
    await webhookWithDeliveries(other, 3);
    await env.UPLOADS.put(`positions/${other.id}/1/2020-01-01.ndjson.gz`, "x");

    const res = await usage(co.slug);
    expect(res.status).toBe(200);
    const after = rowsOf(res.body);
    const grown = Object.fromEntries(Object.keys(after).map((t) => [t, after[t] - before[t]]));
    // The driver's invitation writes the outbox rows it writes (mail and its copies): counted as the table holds them.
    expect(grown).toEqual({ driver_tracking: 5, outbox: (await count("outbox", co.id)) - before.outbox, events: 3, webhook_deliveries: 4, deliveries: 3, addresses: 1, routes: 0, idempotency_keys: 0 });
    const deliveriesRow = res.body.tables.find((t: { table: string }) => t.table === "deliveries");
    expect(deliveriesRow.estimated_bytes).toBe(deliveriesRow.rows * deliveriesRow.bytes_per_row);
    expect(res.body.estimated_bytes).toBe(res.body.tables.reduce((sum: number, t: { estimated_bytes: number }) => sum + t.estimated_bytes, 0));
    expect(res.body.archive).toEqual({ driver_days: 1, bytes: 7, complete: true });
    expect(rowsOf((await usage(other.slug)).body).webhook_deliveries).toBe(3);
  });

  it("404 for an unknown company, 403 without the operator token; declared in /openapi.json", async () => {
    const co = await createCompany();
    expect((await usage("no-such-company")).status).toBe(404);
    expect((await usage(co.slug, {})).status).toBe(403);
    expect((await usage(co.slug, { Authorization: "Bearer wrong" })).status).toBe(403);
    expect((await usage(co.slug, { Authorization: `Bearer ${co.dispatcher.token}` })).status).toBe(403);
    expect((await call("GET", "/openapi.json")).body.paths["/_operator/companies/{slug}/usage"].get.responses[200]).toBeDefined();
  });
});
