import { createExecutionContext, createMessageBatch, createScheduledController, env, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import type { PublishedEvent } from "../src/core/coordinator/live";
import { exports } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../src/worker/index";
import { eq } from "drizzle-orm";
import { createDb } from "../src/core/db/client";
import { companies, users } from "../src/core/db/schema";
import type { Db } from "../src/core/context";
import { eventTypeOf } from "../src/core/services/events";
import { applyLifecycleOp } from "../src/core/services/route-lifecycle";
import { ORIGIN, OPERATOR, type TestCompany, call, createCompany, insertAddress, routeAndStart, tomorrowAt } from "./helpers";

interface Received {
  url: string;
  headers: Headers;
  body: string;
}

/** A fake receiver behind fetch: records every POST and answers with `status`. */
function receiver(status: () => number = () => 200) {
  const received: Received[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    received.push({ url: request.url, headers: request.headers, body: await request.text() });
    return new Response(null, { status: status() });
  });
  return received;
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** One delivery run of an endpoint, as the webhook queue consumer does it. */
async function run(co: TestCompany, webhookId: number, overrides: Partial<typeof env> = {}) {
  const batch = createMessageBatch("dispatch-webhooks", [{ id: `w-${webhookId}-${Math.random()}`, timestamp: new Date(), attempts: 1, body: { webhookId, companyId: co.id } }]);
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ...overrides });
  return getQueueResult(batch, ctx);
}

/** Runs until no run is held off by another (the queue's own consumer may be running too). */
async function runUntilSettled(co: TestCompany, webhookId: number, overrides: Partial<typeof env> = {}) {
  for (let i = 0; i < 20; i++) {
    const result = await run(co, webhookId, overrides);
    if (result.retryMessages.length === 0) return;
    await env.DB.prepare("UPDATE webhooks SET lease_until = NULL WHERE id = ? AND retry_at IS NULL").bind(webhookId).run();
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function routeEvents(co: TestCompany, n = 2) {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const address = await insertAddress(co.id, { lng: 13.4 + i * 0.01, lat: 52.5 });
    ids.push((await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: tomorrowAt(8), pdt_to: tomorrowAt(18) } })).body.id);
  }
  const routed = await co.api("POST", `/calcroute/optimized/timewindow?async=false&num_vehicles=${n}`, { body: { deliveryids: ids } });
  expect(routed.status, routed.text).toBe(200);
  return routed.body.objects.map((r: { id: number }) => r.id) as number[];
}

const register = (co: TestCompany, body: Record<string, unknown>) => co.api("POST", "/webhook", { body });

describe("webhook endpoints", () => {
  it("refuse URLs that point inside (SSRF), plain http and bad event types, storing nothing", async () => {
    const co = await createCompany();
    for (const url of [
      "http://receiver.example/hook",
      "https://localhost/hook",
      "https://127.0.0.1/hook",
      "https://2130706433/hook",
      "https://10.1.2.3/hook",
      "https://192.168.0.10/hook",
      "https://172.20.0.1/hook",
      "https://169.254.169.254/latest/meta-data",
      "https://[::1]/hook",
      "https://[fd00::1]/hook",
      "https://[::ffff:127.0.0.1]/hook",
      "https://printer.local/hook",
      "https://db.internal/hook",
      "https://intranet/hook",
      "https://user:pw@receiver.example/hook",
      "ftp://receiver.example/hook",
      "not a url",
    ]) {
      const res = await register(co, { url, event_types: ["route.*"] });
      expect(res.status, url).toBe(422);
      expect(res.body.fields).toBe("url");
    }
    for (const event_types of [[], ["route.created.bad"], ["*.*"], ["nonsense"]]) {
      expect((await register(co, { url: "https://receiver.example/hook", event_types })).status, JSON.stringify(event_types)).toBe(422);
    }
    expect((await co.api("GET", "/webhook")).body.num_results).toBe(0);
  });

  it("shows the secret once, lists, changes and removes endpoints, only for the own company's dispatchers", async () => {
    const co = await createCompany();
    const created = await register(co, { url: "https://receiver.example/hook", event_types: ["route.*", "delivery.updated"], description: "ERP" });
    expect(created.status, created.text).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const id = created.body.id;
    const listed = await co.api("GET", "/webhook");
    expect(listed.body.objects).toHaveLength(1);
    expect(listed.body.objects[0]).not.toHaveProperty("secret");
    const patched = await co.api("PATCH", `/webhook/${id}`, { body: { event_types: ["*"], enabled: false } });
    expect(patched.body).toMatchObject({ event_types: ["*"], enabled: false });
    expect((await co.api("PATCH", `/webhook/${id}`, { body: { url: "https://10.0.0.1/x" } })).status).toBe(422);
    const other = await createCompany();
    expect((await other.api("GET", `/webhook/${id}`)).status).toBe(404);
    expect((await other.api("DELETE", `/webhook/${id}`)).status).toBe(404);
    const watcher = await co.user("watcher");
    expect((await co.api("GET", "/webhook", { token: watcher.token })).status).toBe(403);
    expect((await co.api("DELETE", `/webhook/${id}`)).status).toBe(204);
    expect((await co.api("GET", `/webhook/${id}`)).status).toBe(404);
  });
});

describe("webhook delivery", () => {
  it("POSTs the events in order, signed so the Standard Webhooks reference library verifies them", async () => {
    const co = await createCompany();
    const created = await register(co, { url: "https://receiver.example/hook", event_types: ["route.*"] });
    const received = receiver();
    const routeIds = await routeEvents(co, 2);
    await runUntilSettled(co, created.body.id);
    const verifier = new Webhook(created.body.secret);
    const bodies = received.map((r) => {
      expect(r.url).toBe("https://receiver.example/hook");
      const payload = verifier.verify(r.body, Object.fromEntries(r.headers)) as { type: string; event_id: number; data: { type: string; id: number } };
      expect(r.headers.get("webhook-id")).toBe(`evt_${payload.event_id}`);
      return payload;
    });
    expect(bodies.map((b) => b.type)).toEqual(routeIds.map(() => "route.updated"));
    expect(bodies.map((b) => b.data.id).sort()).toEqual([...routeIds].sort());
    const eventIds = bodies.map((b) => b.event_id);
    expect(eventIds).toEqual([...eventIds].sort((a, b) => a - b));
    // A tampered body fails verification.
    expect(() => verifier.verify(received[0].body.replace("route", "rout"), Object.fromEntries(received[0].headers))).toThrow();
    // The delivery log shows each attempt.
    const log = await co.api("GET", `/webhook/${created.body.id}/deliveries`);
    expect(log.body.objects.filter((d: { succeeded: boolean }) => d.succeeded)).toHaveLength(routeIds.length);
    expect(log.body.objects[0]).toMatchObject({ status_code: 200, attempt: 1, error: null });
    // Replay from the first event sends the rest again, with the same ids.
    const replay = await co.api("POST", `/webhook/${created.body.id}/replay`, { body: { after_event_id: eventIds[0] } });
    expect(replay.status, replay.text).toBe(202);
    const before = received.length;
    await runUntilSettled(co, created.body.id);
    expect(received.slice(before).map((r) => r.headers.get("webhook-id"))).toEqual(eventIds.slice(1).map((id) => `evt_${id}`));
    expect((await co.api("POST", `/webhook/${created.body.id}/replay`, { body: {} })).status).toBe(422);
  });

  it("retries a failing receiver with backoff, then disables it and emails the dispatchers", async () => {
    const co = await createCompany();
    const created = await register(co, { url: "https://receiver.example/down", event_types: ["*"] });
    const id = created.body.id;
    const received = receiver(() => 503);
    await routeEvents(co, 1);
    const limits = { WEBHOOK_MAX_FAILURES: "3" };
    const first = await run(co, id, limits);
    expect(first.retryMessages).toHaveLength(1);
    let hook = await env.DB.prepare("SELECT failures, retry_at, enabled, cursor FROM webhooks WHERE id = ?").bind(id).first<{ failures: number; retry_at: number; enabled: number; cursor: number }>();
    expect(hook!.failures).toBeGreaterThanOrEqual(1);
    expect(hook!.retry_at).toBeGreaterThan(Date.now() / 1000);
    // During the backoff no run sends anything.
    const during = received.length;
    expect((await run(co, id, limits)).retryMessages).toHaveLength(1);
    expect(received.length).toBe(during);
    // Let the backoff pass until the limit is reached.
    for (let i = 0; i < 5 && hook!.enabled; i++) {
      await env.DB.prepare("UPDATE webhooks SET retry_at = NULL, lease_until = NULL WHERE id = ?").bind(id).run();
      await run(co, id, limits);
      hook = await env.DB.prepare("SELECT failures, retry_at, enabled, cursor FROM webhooks WHERE id = ?").bind(id).first();
    }
    expect(hook!.enabled).toBe(0);
    const shown = await co.api("GET", `/webhook/${id}`);
    expect(shown.body).toMatchObject({ enabled: false, last_event_id: hook!.cursor });
    expect(shown.body.failures).toBeGreaterThanOrEqual(3);
    expect(shown.body.disabled_reason).toContain("failed deliveries in a row");
    const q = encodeURIComponent(JSON.stringify({ filters: [{ name: "template", op: "==", val: "webhook_disabled" }] }));
    const mails = (await call("GET", `/_operator/companies/${co.slug}/outbox?q=${q}`, { headers: OPERATOR })).body.objects;
    expect(mails.map((m: { to: string }) => m.to)).toEqual([co.dispatcher.email]);
    const log = await co.api("GET", `/webhook/${id}/deliveries`);
    expect(log.body.objects[0]).toMatchObject({ succeeded: false, status_code: 503, error: "answered 503" });
    expect(log.body.objects[0].attempt).toBeGreaterThan(1);
  });
});

/** The event log rows of a company, oldest first. */
async function eventLog(co: TestCompany) {
  const { results } = await env.DB.prepare("SELECT id, type, driver_id, payload FROM events WHERE company_id = ? ORDER BY id").bind(co.id).all<{ id: number; type: string; driver_id: number | null; payload: string }>();
  return results.map((r) => ({ ...r, payload: JSON.parse(r.payload) }));
}

/** The rows `published` events stand for in the log. */
const rowsOf = (published: PublishedEvent[]) => published.map((p) => ({ id: p.eventId, type: eventTypeOf(p.event), driver_id: p.driverId, payload: p.event }));

/** A db whose next batch runs after `write`: another writer's change between the checks and the batch of a change. */
function racedBy(db: Db, write: () => Promise<unknown>): Db {
  let pending: (() => Promise<unknown>) | undefined = write;
  return new Proxy(db, {
    get: (target, prop, receiver) =>
      prop === "batch"
        ? async (...args: Parameters<Db["batch"]>) => {
            const race = pending;
            pending = undefined;
            await race?.();
            return target.batch(...args);
          }
        : Reflect.get(target, prop, receiver),
  });
}

/** What the company's coordinator passes to a change. */
async function changeContext(co: TestCompany) {
  const db = createDb(env.DB);
  const [company] = await db.select().from(companies).where(eq(companies.id, co.id));
  const [dispatcher] = await db.select({ id: users.id }).from(users).where(eq(users.email, co.dispatcher.email));
  return { db, company, actor: { id: dispatcher.id, role: "dispatcher" as const, companyId: co.id } };
}

describe("event log: each event is committed with the change that causes it", () => {
  it("a change whose live channel and queue send fail still has its event in the log; the sweep delivers it to the webhook", async () => {
    const co = await createCompany();
    const created = await register(co, { url: "https://receiver.example/hook", event_types: ["delivery.*"] });
    const received = receiver();
    const address = await insertAddress(co.id, { lng: 13.41, lat: 52.5 });
    const delivery = (await co.api("POST", "/delivery", { body: { deliverylocation_id: address } })).body;
    // The company's coordinator (websockets, webhook kick) is unreachable once the change is written.
    const unreachable = { getByName: () => ({ broadcast: async () => Promise.reject(new Error("coordinator unreachable")) }) };
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request(`${ORIGIN}/${co.slug}/api/delivery`, { method: "PATCH", headers: { Authorization: `JWT ${co.dispatcher.token}`, "content-type": "application/json" }, body: JSON.stringify({ id: delivery.id, status: 4 }) }),
      { ...env, COMPANY: unreachable as never },
      ctx,
    );
    expect(res.status, await res.text()).toBe(200);
    await waitOnExecutionContext(ctx).catch(() => undefined);
    expect(received).toHaveLength(0);
    const sent: unknown[] = [];
    const queue = { send: async (b: unknown) => void sent.push(b), sendBatch: async (bs: { body: unknown }[]) => void sent.push(...bs.map((b) => b.body)) };
    await worker.scheduled(createScheduledController(), { ...env, WEBHOOK_QUEUE: queue as never });
    expect(sent).toContainEqual({ webhookId: created.body.id, companyId: co.id });
    await runUntilSettled(co, created.body.id);
    // The creation's event (published normally) comes first, then the cancellation's, which only the log kept.
    const [createdEvent, cancelled] = await eventLog(co);
    expect(received.map((r) => JSON.parse(r.body))).toEqual([
      { type: "delivery.updated", timestamp: expect.any(String), event_id: createdEvent.id, data: { type: "delivery", id: delivery.id, status: 0, route_id: null } },
      { type: "delivery.updated", timestamp: expect.any(String), event_id: cancelled.id, data: { type: "delivery", id: delivery.id, status: 4, route_id: null } },
    ]);
  });

  it("a driver assignment refused by its compare-and-set logs no event; an applied one logs exactly the event it publishes", async () => {
    const co = await createCompany();
    const driver = await co.user("driver");
    await env.DB.prepare("UPDATE users SET active = 1 WHERE id = ?").bind(driver.id).run();
    const [[kept], [raced]] = [await routeEvents(co, 1), await routeEvents(co, 1)];
    const { db, company, actor } = await changeContext(co);
    const assign = (routeId: number) => ({ kind: "route" as const, company, actor, routeId, change: { driver_id: driver.id }, base: ORIGIN });
    const before = await eventLog(co);

    const applied = await applyLifecycleOp(env, db, assign(kept));
    expect(applied.ok).toBe(true);
    const published = applied.ok ? applied.events : [];
    expect(published.map((p) => p.event)).toEqual([{ type: "route", id: kept, status: 1, driver_id: driver.id }]);
    const after = await eventLog(co);
    expect(after.slice(before.length)).toEqual(rowsOf(published));

    // Another writer cancels the route between the checks and the batch.
    const cancelMeanwhile = () => env.DB.prepare("UPDATE routes SET status = 5 WHERE id = ?").bind(raced).run();
    const refused = await applyLifecycleOp(env, racedBy(db, cancelMeanwhile), assign(raced));
    expect(refused).toMatchObject({ ok: false, status: 409 });
    expect(await eventLog(co)).toEqual(after);
    expect((await co.api("GET", `/route/${raced}`)).body).toMatchObject({ status: 5, driver_id: null });
  });

  it("a report refused by its compare-and-set logs no event; the last report logs the delivery's and the finished route's events", async () => {
    const co = await createCompany();
    const address = await insertAddress(co.id, { lng: 13.42, lat: 52.51 });
    const deliver = async () => (await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: tomorrowAt(8), pdt_to: tomorrowAt(18) } })).body.id as number;
    const [first, second] = [await deliver(), await deliver()];
    const { routeId: finishing } = await routeAndStart(co, [first]);
    const { routeId: cancelled } = await routeAndStart(co, [second]);
    const { db, company, actor } = await changeContext(co);
    const report = (deliveryId: number) => ({ kind: "report" as const, company, actor, deliveryId, outcome: "delivered" as const, base: ORIGIN });
    const before = await eventLog(co);

    const applied = await applyLifecycleOp(env, db, report(first));
    const published = applied.ok ? applied.events : [];
    expect(published.map((p) => p.event)).toEqual([
      { type: "delivery", id: first, status: 2, route_id: finishing },
      { type: "route", id: finishing, status: 4, driver_id: expect.any(Number) },
    ]);
    const after = await eventLog(co);
    expect(after.slice(before.length)).toEqual(rowsOf(published));

    // The route is cancelled between the checks and the batch: its delivery is back in the pool.
    const cancelMeanwhile = () =>
      env.DB.batch([
        env.DB.prepare("UPDATE routes SET status = 5 WHERE id = ?").bind(cancelled),
        env.DB.prepare("UPDATE deliveries SET status = 0, route_id = NULL WHERE route_id = ?").bind(cancelled),
      ]);
    const refused = await applyLifecycleOp(env, racedBy(db, cancelMeanwhile), report(second));
    expect(refused).toMatchObject({ ok: false, status: 409 });
    expect(await eventLog(co)).toEqual(after);
  });

  it("logs driver positions with their insert only while an enabled webhook wants them: the newest per driver", async () => {
    const co = await createCompany();
    const driver = await co.user("driver");
    const at = (lng: number, minutesAgo: number) => ({ driver_id: driver.id, position: { type: "Point", coordinates: [lng, 52.5] }, timestamp: new Date(Date.now() - minutesAgo * 60_000).toISOString() });
    const positionEvents = async () => (await eventLog(co)).filter((e) => e.type === "driver.position");
    expect((await co.api("POST", "/drivertracking", { body: [at(13.1, 3)] })).status).toBe(200);
    expect(await positionEvents()).toEqual([]);

    const created = await register(co, { url: "https://receiver.example/hook", event_types: ["driver.*"] });
    const received = receiver();
    // Sent out of order: the newest is the first entry.
    expect((await co.api("POST", "/drivertracking", { body: [at(13.3, 1), at(13.2, 2)] })).status).toBe(200);
    const logged = await positionEvents();
    expect(logged).toEqual([{ id: expect.any(Number), type: "driver.position", driver_id: driver.id, payload: expect.objectContaining({ type: "driverposition", position: { type: "Point", coordinates: [13.3, 52.5] } }) }]);
    await runUntilSettled(co, created.body.id);
    expect(received.map((r) => JSON.parse(r.body).event_id)).toEqual([logged[0].id]);

    expect((await co.api("PATCH", `/webhook/${created.body.id}`, { body: { enabled: false } })).status).toBe(200);
    expect((await co.api("POST", "/drivertracking", { body: [at(13.4, 0)] })).status).toBe(200);
    expect(await positionEvents()).toEqual(logged);
  });
});

describe("websocket resume", () => {
  it("a reconnecting client gets what it missed, in order, from the event log", async () => {
    const co = await createCompany();
    const connect = async () => {
      const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/ws?access_token=${co.dispatcher.token}`, { headers: { Upgrade: "websocket" } }));
      const ws = res.webSocket!;
      ws.accept();
      const messages: { type: string; event_id?: number; id?: number; complete?: boolean; last_event_id?: number }[] = [];
      ws.addEventListener("message", (e) => messages.push(JSON.parse(e.data as string)));
      return { ws, messages };
    };
    const first = await connect();
    await routeEvents(co, 1);
    await new Promise((r) => setTimeout(r, 100));
    const seen = first.messages.filter((m) => m.event_id !== undefined);
    expect(seen.length).toBeGreaterThan(0);
    const lastSeen = seen.at(-1)!.event_id!;
    first.ws.close(1000);
    // Missed while away.
    const missedRoutes = await routeEvents(co, 2);
    const second = await connect();
    second.ws.send(JSON.stringify({ type: "resume", after: lastSeen }));
    await new Promise((r) => setTimeout(r, 200));
    const resumed = second.messages.find((m) => m.type === "resumed")!;
    expect(resumed).toMatchObject({ complete: true });
    const replayed = second.messages.filter((m) => m.event_id !== undefined && m.event_id > lastSeen);
    expect(replayed.map((m) => m.event_id)).toEqual([...replayed.map((m) => m.event_id)].sort((a, b) => a! - b!));
    expect(replayed.filter((m) => m.type === "route").map((m) => m.id).sort()).toEqual([...missedRoutes].sort());
    expect(resumed.last_event_id).toBe(replayed.at(-1)!.event_id);
    second.ws.send(JSON.stringify({ type: "resume", after: "yesterday" }));
    await new Promise((r) => setTimeout(r, 50));
    expect(second.messages.at(-1)).toMatchObject({ type: "error" });
    second.ws.close(1000);
  });
});
