/**
 * Shards (docs/operations/shards.md): two D1 databases, `DB` (shard 0) and
 * `DB_SHARD_1`; companies placed on either are served from theirs alone, and one
 * moves between them by the operator's copy-verify-switch command.
 */
import { createExecutionContext, createScheduledController, env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../src/worker/index";
import { ID_BLOCK } from "../src/core/db/shards";
import { OPERATOR, ORIGIN, type TestCompany, call, createCompany } from "./helpers";

const shard1 = env.DB_SHARD_1!;
const DAY = 86_400_000;

const rowsOf = async (d1: D1Database, table: string, companyId: number) =>
  (await d1.prepare(`select count(*) as n from ${table} where ${table === "companies" ? "id" : "company_id"} = ?`).bind(companyId).first<{ n: number }>())!.n;

/** A delivery at a new address of the company, through the API only (the fixtures of helpers.ts write to `DB`). */
async function newDelivery(co: TestCompany, name: string, lng = 13.41, lat = 52.52) {
  const address = await co.api("POST", "/address", { body: { contactcompany: name, city: "Berlin", country: "DE", lng, lat } });
  expect(address.status).toBe(201);
  const delivery = await co.api("POST", "/delivery", { body: { deliverylocation_id: address.body.id } });
  expect(delivery.status).toBe(201);
  return delivery.body as { id: number; deliverylocation_id: number };
}

/** Opens the company's websocket as its dispatcher; collects the messages. */
async function socket(co: TestCompany) {
  const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/ws?access_token=${co.dispatcher.token}`, { headers: { Upgrade: "websocket" } }));
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const messages: Record<string, unknown>[] = [];
  ws.addEventListener("message", (e) => {
    messages.push(JSON.parse(e.data as string));
  });
  return { ws, messages };
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("two shards", () => {
  it("places companies where the operator says (or on the least-loaded shard), with ids from separate blocks, and lists the shards", async () => {
    const a = await createCompany(undefined, { shard: 0 });
    const b = await createCompany(undefined, { shard: 1 });
    expect(a.id).toBeLessThan(ID_BLOCK);
    expect(b.id).toBeGreaterThanOrEqual(ID_BLOCK);
    expect(await rowsOf(env.DB, "companies", a.id)).toBe(1);
    expect(await rowsOf(shard1, "companies", a.id)).toBe(0);
    expect(await rowsOf(shard1, "companies", b.id)).toBe(1);
    expect(await rowsOf(env.DB, "companies", b.id)).toBe(0);

    const shards = await call("GET", "/_operator/shards", { headers: OPERATOR });
    expect(shards.status).toBe(200);
    expect(shards.body.map((s: { binding: string }) => s.binding)).toEqual(["DB", "DB_SHARD_1"]);
    expect(shards.body[1].companies).toBeGreaterThanOrEqual(1);

    const bad = await call("POST", "/_operator/companies", { headers: OPERATOR, body: { slug: "nowhere-co", companyname: "Nowhere", shard: 2, dispatcher: { email: "x@nowhere.example", password: "correct horse battery" } } });
    expect(bad.status).toBe(422);
    expect(bad.body.fields).toBe("shard");
    expect((await call("GET", "/_operator/companies/nowhere-co/usage", { headers: OPERATOR })).status).toBe(404);
    // A slug is unique across shards.
    const twice = await call("POST", "/_operator/companies", { headers: OPERATOR, body: { slug: b.slug, companyname: "Again", shard: 0, dispatcher: { email: "y@again.example", password: "correct horse battery" } } });
    expect(twice.status).toBe(409);
    expect(await rowsOf(env.DB, "companies", b.id)).toBe(0);

    // Without `shard`, the deployment's rule: least-loaded picks the shard with the fewest companies.
    const counts = (await call("GET", "/_operator/shards", { headers: OPERATOR })).body.map((s: { companies: number }) => s.companies);
    const emptier = counts[1] < counts[0] ? 1 : 0;
    const created = await worker.fetch(
      new Request(`${ORIGIN}/_operator/companies`, {
        method: "POST",
        headers: { ...OPERATOR, "content-type": "application/json" },
        body: JSON.stringify({ slug: `least-${Date.now()}`, companyname: "Least", dispatcher: { email: "z@least.example", password: "correct horse battery" } }),
      }),
      { ...env, SHARD_FOR_NEW_COMPANIES: "least-loaded" },
      createExecutionContext(),
    );
    expect(created.status).toBe(201);
    expect(((await created.json()) as { shard: number }).shard).toBe(emptier);
  });

  it("serves two companies on different shards: deliveries, lists, routing and the websocket, and neither sees the other", async () => {
    const a = await createCompany(undefined, { shard: 0 });
    const b = await createCompany(undefined, { shard: 1 });
    const live = { a: await socket(a), b: await socket(b) };

    const da = await newDelivery(a, "Alpha GmbH");
    const db = await newDelivery(b, "Beta AG", 13.43, 52.51);
    expect(db.id).toBeGreaterThanOrEqual(ID_BLOCK);
    expect(await rowsOf(shard1, "deliveries", b.id)).toBe(1);
    expect(await rowsOf(env.DB, "deliveries", b.id)).toBe(0);
    expect(await rowsOf(env.DB, "deliveries", a.id)).toBe(1);

    expect((await a.api("GET", `/delivery/${da.id}`)).status).toBe(200);
    expect((await b.api("GET", `/delivery/${db.id}`)).status).toBe(200);
    expect((await a.api("GET", `/delivery/${db.id}`)).status).toBe(404);
    expect((await b.api("GET", `/delivery/${da.id}`)).status).toBe(404);
    expect((await a.api("GET", "/delivery")).body.objects.map((d: { id: number }) => d.id)).toEqual([da.id]);
    expect((await b.api("GET", "/delivery")).body.objects.map((d: { id: number }) => d.id)).toEqual([db.id]);
    // Search (FTS on the shard) finds only the company's own address.
    expect((await b.api("GET", "/searchaddress?query=Alpha")).body.objects ?? []).toEqual([]);
    // A token of one company is refused by the other.
    expect((await call("GET", `/${b.slug}/api/delivery`, { token: a.dispatcher.token })).status).toBe(403);

    // Routing on shard 1: the route and its delivery's assignment are written there.
    const routed = await b.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { body: { deliveryids: [db.id] } });
    expect(routed.status).toBe(200);
    const routeId = routed.body.objects[0].id;
    expect(routeId).toBeGreaterThanOrEqual(ID_BLOCK);
    expect((await b.api("GET", `/delivery/${db.id}`)).body.route_id).toBe(routeId);
    expect(await rowsOf(shard1, "routes", b.id)).toBe(1);
    expect(await rowsOf(env.DB, "routes", b.id)).toBe(0);
    expect((await a.api("GET", `/route/${routeId}`)).status).toBe(404);

    // The routing queue's consumer works on the company's shard too.
    const second = await newDelivery(b, "Gamma KG", 13.44, 52.5);
    const started = await b.api("POST", "/calcroute/optimized/timewindow?num_vehicles=1", { body: { deliveryids: [second.id] } });
    expect(started.status).toBe(202);
    const final = await vi.waitFor(
      async () => {
        const status = (await b.api("GET", `/process/status/${started.body.process_id}/final`)).body;
        expect(["finished", "failed"]).toContain(status.status);
        return status;
      },
      { timeout: 20_000, interval: 200 },
    );
    expect(final.status).toBe("finished");
    expect((await b.api("GET", `/delivery/${second.id}`)).body.route_id).toBeGreaterThanOrEqual(ID_BLOCK);

    // The company's Durable Object logs and sends b's events from shard 1, to b's sockets only.
    await vi.waitFor(() => expect(live.b.messages.some((m) => m.type === "route")).toBe(true), { timeout: 10_000 });
    expect(live.a.messages.filter((m) => m.type === "route")).toEqual([]);
    expect(await rowsOf(shard1, "events", b.id)).toBeGreaterThan(0);
    expect(await rowsOf(env.DB, "events", b.id)).toBe(0);
    live.a.ws.close(1000);
    live.b.ws.close(1000);
  });

  it("runs the cron on every shard: each prunes its own old rows", async () => {
    const a = await createCompany(undefined, { shard: 0 });
    const b = await createCompany(undefined, { shard: 1 });
    const old = new Date(Date.now() - 40 * DAY).toISOString().replace(/\.\d+Z$/, "Z");
    const insert = "insert into outbox (company_id, channel, \"to\", template, status, created_at) values (?, 'email', 'x@example.com', 'test', 'sent', ?)";
    await env.DB.prepare(insert).bind(a.id, old).run();
    await shard1.prepare(insert).bind(b.id, old).run();
    const lines: Record<string, unknown>[] = [];
    vi.spyOn(console, "log").mockImplementation((line) => lines.push(JSON.parse(String(line))));
    await worker.scheduled(createScheduledController(), { ...env, WEBHOOK_QUEUE: { send: async () => undefined, sendBatch: async () => undefined } as never });
    expect(await rowsOf(env.DB, "outbox", a.id)).toBe(0);
    expect(await rowsOf(shard1, "outbox", b.id)).toBe(0);
    expect(lines.filter((l) => l.msg === "retention" && l.table === "outbox").length).toBe(2);
  });
});

/** Steps the move until done (MOVE_GRACE_SECONDS is 0 in tests); returns every step's answer. */
async function moveAll(slug: string, shard: number) {
  const steps: Record<string, any>[] = [];
  for (let i = 0; i < 200; i++) {
    const res = await call("POST", `/_operator/companies/${slug}/move`, { headers: OPERATOR, body: { shard } });
    expect(res.status).toBe(200);
    steps.push(res.body);
    if (res.body.done) return steps;
  }
  throw new Error("the move did not end");
}

describe("moving a company to another shard", () => {
  it("copies, verifies and switches: the company answers the same from its new shard, writes again, and leaves nothing behind", async () => {
    const co = await createCompany(undefined, { shard: 0 });
    const other = await createCompany(undefined, { shard: 0 });
    const deliveries = [await newDelivery(co, "Eins"), await newDelivery(co, "Zwei", 13.42, 52.53)];
    const routed = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { body: { deliveryids: deliveries.map((d) => d.id) } });
    expect(routed.status).toBe(200);
    const driver = await co.user("driver");
    await co.api("POST", "/webhooks", { body: { url: "https://hooks.example/x", event_types: ["route.*"] } });
    const otherBefore = (await other.api("GET", "/delivery")).body;
    const lastEvent = (await env.DB.prepare("select max(id) as id from events where company_id = ?").bind(co.id).first<{ id: number }>())!.id;

    // The first steps copy and check the positions and event log while the company works as ever.
    const first = await call("POST", `/_operator/companies/${co.slug}/move`, { headers: OPERATOR, body: { shard: 1 } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ from: 0, to: 1, phase: "preverify", done: false });
    expect(first.body.copied).toBeGreaterThan(0);
    // A write now adds an event after the pre-copied ones: the frozen copy takes it too.
    const during = await newDelivery(co, "Währenddessen");
    const eventsBeforeFreeze = await rowsOf(env.DB, "events", co.id);
    // The step that ends the pre-check freezes the company: reads work, writes answer 503 with Retry-After.
    const frozen = await call("POST", `/_operator/companies/${co.slug}/move`, { headers: OPERATOR, body: { shard: 1 } });
    expect(frozen.body.phase).toBe("freeze");
    // What the company answers while frozen, to compare with what it answers from the new shard.
    const before = { deliveries: (await co.api("GET", "/delivery")).body, routes: (await co.api("GET", "/route")).body, company: (await co.api("GET", "/company")).body };
    expect(before.deliveries.num_results).toBe(3);
    const refused = await co.api("POST", "/address", { body: { contactcompany: "Nicht jetzt", lat: 52.5, lng: 13.4 } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(refused.body).toMatchObject({ code: 503 });
    // Another company of the same shard writes as ever; a second target is refused.
    expect((await other.api("POST", "/address", { body: { contactcompany: "Andere", lat: 52.5, lng: 13.4 } })).status).toBe(201);
    expect((await call("POST", `/_operator/companies/${co.slug}/move`, { headers: OPERATOR, body: { shard: 0 } })).status).toBe(409);

    const steps = await moveAll(co.slug, 1);
    const phases = [...new Set([first.body.phase, frozen.body.phase, ...steps.map((s) => s.phase)])];
    expect(phases).toEqual(expect.arrayContaining(["preverify", "freeze", "copy", "verify", "switched", "cleanup", "done"]));
    const done = steps.at(-1)!;
    expect(done.copied).toBeGreaterThan(10);
    expect(done.failures).toBe(0);
    expect(done.verified.map((v: { table: string }) => v.table)).toContain("deliveries");
    expect(done.verified.find((v: { table: string }) => v.table === "deliveries").rows).toBe(3);
    expect(done.verified.find((v: { table: string }) => v.table === "events").rows).toBe(eventsBeforeFreeze);
    expect((await co.api("GET", `/delivery/${during.id}`)).status).toBe(200);

    // Same answers, from shard 1; nothing of the company left on shard 0; the other company untouched.
    expect((await co.api("GET", "/delivery")).body).toEqual(before.deliveries);
    expect((await co.api("GET", "/route")).body).toEqual(before.routes);
    expect((await co.api("GET", "/company")).body).toEqual(before.company);
    for (const table of ["companies", "deliveries", "addresses", "routes", "users", "events", "webhooks"]) {
      expect(await rowsOf(env.DB, table, co.id)).toBe(0);
      if (table !== "webhooks") expect(await rowsOf(shard1, table, co.id)).toBeGreaterThan(0);
    }
    expect((await other.api("GET", "/delivery")).body).toEqual(otherBefore);
    const shards = (await call("GET", "/_operator/shards", { headers: OPERATOR })).body;
    expect(shards[1].moving).toEqual([]);

    // Writes work again, on shard 1, with ids above every id the company had (its event cursor keeps growing).
    const after = await newDelivery(co, "Drei");
    expect(after.id).toBeGreaterThan(Math.max(...deliveries.map((d) => d.id), during.id));
    expect(await rowsOf(shard1, "deliveries", co.id)).toBe(4);
    const newest = (await shard1.prepare("select max(id) as id from events where company_id = ?").bind(co.id).first<{ id: number }>())!.id;
    expect(newest).toBeGreaterThan(lastEvent);
    // The driver logs in on the new shard.
    expect((await call("POST", `/${co.slug}/auth`, { body: { email: driver.email, password: "another good password" } })).status).not.toBe(503);
  });

  it("a copy that differs from the source fails verification, is wiped and made again", async () => {
    const co = await createCompany(undefined, { shard: 0 });
    await newDelivery(co, "Prüfung");
    // Step until the copy is complete, then damage the copy before it is verified.
    let step: Record<string, any> = {};
    for (let i = 0; i < 50 && step.phase !== "verify"; i++) step = (await call("POST", `/_operator/companies/${co.slug}/move`, { headers: OPERATOR, body: { shard: 1 } })).body;
    expect(step.phase).toBe("verify");
    await shard1.prepare("update addresses set city = 'Falsch' where company_id = ?").bind(co.id).run();
    const steps = await moveAll(co.slug, 1);
    expect(steps.map((s) => s.phase)).toContain("reset");
    expect(steps.at(-1)!.failures).toBe(1);
    const addresses = (await co.api("GET", "/address")).body.objects.map((a: { city: string }) => a.city);
    expect(addresses).not.toContain("Falsch");
    expect(await rowsOf(env.DB, "addresses", co.id)).toBe(0);
  });

  it("refuses moves to the shard the company lives on, to a shard that does not exist, and of unknown companies", async () => {
    const co = await createCompany(undefined, { shard: 1 });
    expect((await call("POST", `/_operator/companies/${co.slug}/move`, { headers: OPERATOR, body: { shard: 1 } })).status).toBe(422);
    expect((await call("POST", `/_operator/companies/${co.slug}/move`, { headers: OPERATOR, body: { shard: 5 } })).body.fields).toBe("shard");
    expect((await call("POST", "/_operator/companies/no-such-co/move", { headers: OPERATOR, body: { shard: 0 } })).status).toBe(404);
    expect((await call("POST", `/_operator/companies/${co.slug}/move`, { body: { shard: 0 } })).status).toBe(403);
  });
});
