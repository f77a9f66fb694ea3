/**
 * Big plans split across routing consumers: in the test environment plans
 * from 60 deliveries are improved in parts of about 20 (vitest.config.ts).
 * Miniflare runs the consumers; where a test must hold part messages back,
 * it runs the routing job with a queue producer that records them, then
 * delivers them itself. Time is moved with a fake `Date` (the Durable Object
 * runs in the test's isolate).
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult, runDurableObjectAlarm } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createDb } from "../src/core/db/client";
import { companies, users } from "../src/core/db/schema";
import type { RoutingMessage, RoutingPartJob } from "../src/core/queues";
import worker from "../src/worker/index";
import { startRouting } from "../src/core/services/routing/request";
import { ORIGIN, type TestCompany, createCompany, tomorrowAt, until } from "./helpers";

/** A seeded scatter over Berlin with two-hour windows tomorrow and loads 1-3. */
function deliverydata(n: number, tag: string) {
  let seed = 31;
  const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  return Array.from({ length: n }, (_, i) => {
    const start = 7 + Math.floor(rnd() * 8);
    return { lat: 52.43 + rnd() * 0.18, lng: 13.25 + rnd() * 0.35, custom_id: `${tag}-${i}`, pdt_from: tomorrowAt(start), pdt_to: tomorrowAt(start + 2), els: 5, load: 1 + Math.floor(rnd() * 3) };
  });
}

const meta = (record: { meta: string }) => JSON.parse(record.meta) as Record<string, unknown>;

const finalOf = (co: TestCompany, pid: string) =>
  until(async () => {
    const res = await co.api("GET", `/process/status/${pid}`);
    return res.body.final.status === "finished" || res.body.final.status === "failed" ? res.body : undefined;
  }, `process ${pid} to end`);

type RoutedDelivery = { id: number; custom_id: string; status: number; route_id: number; tdt_from: string; pdt_from: string; pdt_to: string };

/** Every delivery of the plan on exactly one of the process's routes, served inside its window. */
async function expectRoutedOnce(co: TestCompany, pid: string, n: number, tag: string) {
  const routes = await co.api("GET", `/process/status/${pid}/final?response_data=base`);
  const all: RoutedDelivery[] = routes.body.objects.flatMap((r: { id: number; deliveries: RoutedDelivery[] }) => r.deliveries.map((d) => ({ ...d, route_id: r.id })));
  expect(all.map((d) => d.custom_id).sort()).toEqual(Array.from({ length: n }, (_, i) => `${tag}-${i}`).sort());
  for (const d of all) {
    expect(d.status).toBe(1);
    expect(d.tdt_from >= d.pdt_from && d.tdt_from <= d.pdt_to, `${d.custom_id} ${d.tdt_from} in [${d.pdt_from}, ${d.pdt_to}]`).toBe(true);
  }
  return routes.body.objects as { id: number; deliveries: RoutedDelivery[] }[];
}

/**
 * Registers a routing process of `n` new deliveries as the HTTP handler does
 * and runs its queue job with a producer that records the part messages
 * instead of sending them.
 */
async function fannedOut(co: TestCompany, n: number, tag: string) {
  const db = createDb(env.DB);
  const [company] = await db.select().from(companies).where(eq(companies.id, co.id));
  const [dispatcher] = await db.select({ id: users.id }).from(users).where(eq(users.email, co.dispatcher.email));
  const options = { truck: false, roundtrip: true, traffic: false, cancelroutes: false, assign_drivers: false, usearea: false, num_vehicles: 30 };
  const { processId, job } = await startRouting(env, db, company, dispatcher.id, { deliverydata: deliverydata(n, tag), vehcapacities: [20] }, options, "async", `${ORIGIN}/${co.slug}/api`);
  const recorded: RoutingMessage[] = [];
  const recorder = {
    send: async (body: RoutingMessage) => void recorded.push(body),
    sendBatch: async (messages: Iterable<{ body: RoutingMessage }>) => void recorded.push(...[...messages].map((m) => m.body)),
  };
  await deliver("dispatch-routing", [job], { ...env, ROUTING_QUEUE: recorder as unknown as typeof env.ROUTING_QUEUE });
  const parts = recorded.filter((m): m is RoutingPartJob => m.kind === "routing-part");
  expect(parts.length).toBe(recorded.length);
  return { processId, parts, stub: env.COMPANY.getByName(`company:${co.id}`) };
}

let delivered = 0;
/** Runs the routing consumer on messages, as the queue would (`queue`: the routing queue or its dead-letter queue). */
async function deliver(queue: string, bodies: RoutingMessage[], bindings: typeof env = env) {
  const batch = createMessageBatch(
    queue,
    bodies.map((body) => ({ id: `message-${++delivered}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, bindings);
  const result = await getQueueResult(batch, ctx);
  expect(result.retryMessages).toEqual([]);
}

describe("big plans in parts", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("routes a plan above the threshold in parts through the queue: parts shown in the process, every delivery on one route within its window", async () => {
    const co = await createCompany();
    const res = await co.api("POST", "/calcroute/optimized/timewindow?num_vehicles=30", { body: { deliverydata: deliverydata(80, "big"), vehcapacities: [20] } });
    expect(res.status).toBe(202);
    const state = await finalOf(co, res.body.process_id);
    expect(state.final.status, state.final.meta).toBe("finished");
    const routing = meta(state.routing);
    expect(routing.parts_total).toBeGreaterThanOrEqual(2);
    expect(routing.parts_done).toBe(routing.parts_total);
    expect(routing.parts_missing).toBeUndefined();
    const routes = await expectRoutedOnce(co, res.body.process_id, 80, "big");
    expect(routes.length).toBe(routing.tours);
    // The parts' objects are gone once the process is final.
    expect((await env.UPLOADS.list({ prefix: `fanout/${co.id}/${res.body.process_id}/` })).objects).toEqual([]);
  });

  it("a plan whose first solution leaves deliveries out is not split: it is searched on and fails as the single path does", async () => {
    const co = await createCompany();
    const res = await co.api("POST", "/calcroute/optimized/timewindow?num_vehicles=2", { body: { deliverydata: deliverydata(70, "few"), vehcapacities: [20] } });
    expect(res.status).toBe(202);
    const state = await finalOf(co, res.body.process_id);
    expect(state.final.status).toBe("failed");
    const routing = meta(state.routing);
    expect(routing.parts_total).toBeUndefined();
    expect((routing.unassigned as unknown[]).length).toBeGreaterThan(0);
  });

  it("a redelivered part message or a second result for the same part changes nothing", async () => {
    const co = await createCompany();
    const { processId, parts, stub } = await fannedOut(co, 70, "dup");
    expect(parts.length).toBeGreaterThanOrEqual(2);
    const [first, ...rest] = parts;
    await deliver("dispatch-routing", [first]);
    const afterFirst = meta((await stub.getProcess(processId))!.routing);
    expect(afterFirst).toMatchObject({ parts_total: parts.length, parts_done: 1 });
    // Progress: 15 % for the first solution, the parts' 70 % as they come in.
    expect(afterFirst.progress).toBeCloseTo(0.15 + 0.7 / parts.length, 1);
    await deliver("dispatch-routing", [first]);
    // Another result for the part: say, its first tour alone.
    const other = [{ vehicleId: "vehicle-1", jobIds: ["1"] }];
    expect(await stub.submitPart(processId, first.attempt, first.partId, other)).toBe(false);
    expect(meta((await stub.getProcess(processId))!.routing)).toMatchObject({ parts_done: 1 });
    // A part that failed every retry keeps its initial tours and counts as in.
    await deliver("dispatch-routing-dlq", [rest[0]]);
    await deliver("dispatch-routing", rest.slice(1));
    const state = await finalOf(co, processId);
    expect(state.final.status, state.final.meta).toBe("finished");
    expect(meta(state.routing)).toMatchObject({ parts_done: parts.length });
    await expectRoutedOnce(co, processId, 70, "dup");
  });

  it("a part that never arrives: at the parts' deadline the plan is merged with that part's initial tours", async () => {
    const co = await createCompany();
    const { processId, parts, stub } = await fannedOut(co, 70, "lost");
    await deliver("dispatch-routing", parts.slice(1));
    const waiting = (await stub.getProcess(processId))!;
    expect(waiting.final.status).toBe("waiting");
    expect(meta(waiting.routing)).toMatchObject({ parts_done: parts.length - 1 });

    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.parse(meta(waiting.routing).parts_deadline as string) + 2_000);
    await runDurableObjectAlarm(stub);
    vi.useRealTimers();

    const state = await finalOf(co, processId);
    expect(state.final.status, state.final.meta).toBe("finished");
    expect(meta(state.routing)).toMatchObject({ parts_missing: 1 });
    expect(meta(state.final).watchdog).toBeUndefined();
    await expectRoutedOnce(co, processId, 70, "lost");
    // The part arriving after all is ignored.
    await deliver("dispatch-routing", [parts[0]]);
    expect(meta((await stub.getProcess(processId))!.routing)).toMatchObject({ parts_done: parts.length - 1 });
  });

  it("a cancelled process ignores parts that arrive later and writes no route", async () => {
    const co = await createCompany();
    const { processId, parts, stub } = await fannedOut(co, 70, "gone");
    await deliver("dispatch-routing", parts.slice(0, 1));
    expect((await co.api("POST", `/process/cancel/${processId}`)).status).toBe(200);
    await deliver("dispatch-routing", parts.slice(1));
    const state = (await stub.getProcess(processId))!;
    expect(state.final.status).toBe("failed");
    expect(meta(state.final).error).toBe("cancelled");
    expect(meta(state.routing)).toMatchObject({ parts_done: 1 });
    const routes = await co.api("GET", `/process/status/${processId}/final?response_data=base`);
    expect(routes.body.num_results ?? 0).toBe(0);
    const open = await co.api("GET", "/delivery?results_per_page=100");
    const mine = open.body.objects.filter((d: { custom_id: string }) => d.custom_id?.startsWith("gone-"));
    expect(mine.length).toBe(70);
    for (const d of mine) expect(d.status).toBe(0);
  });
});
