/**
 * Nothing hangs, nothing is lost: the company coordinator's watchdog re-runs
 * and then fails overdue processes, the routing dead-letter queue fails the
 * process, and final process records are pruned after the retention period.
 * Time is moved with fake `Date` (the Durable Object runs in the test's isolate).
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult, runDurableObjectAlarm } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ProcessState, processRecord } from "../src/core/coordinator/processes";
import { createDb } from "../src/core/db/client";
import { companies, users } from "../src/core/db/schema";
import type { RoutingJob } from "../src/core/queues";
import worker from "../src/worker/index";
import { startRouting } from "../src/core/services/routing/request";
import { ORIGIN, type TestCompany, createCompany, insertAddress, until } from "./helpers";

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

const waiting = (): ProcessState => ({
  import_deliveries: processRecord("skipped"),
  cluster_deliveries: processRecord("skipped"),
  routing: processRecord("waiting"),
  final: processRecord("waiting"),
});
const finished = (): ProcessState => ({ ...waiting(), routing: processRecord("finished"), final: processRecord("finished") });

type LiveMessage = { type: string; process_id?: string; action?: string; status?: string; meta?: string; link?: string };

/** A dispatcher's websocket and the messages it received. */
async function listen(co: TestCompany) {
  const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/ws?access_token=${co.dispatcher.token}`, { headers: { Upgrade: "websocket" } }));
  const ws = res.webSocket!;
  ws.accept();
  const messages: LiveMessage[] = [];
  ws.addEventListener("message", (e) => messages.push(JSON.parse(e.data as string)));
  return { ws, messages };
}

/** A routing process registered as the HTTP handler does, but whose queue message is lost (never sent). */
async function registerWithoutQueueing(co: TestCompany) {
  const address = await insertAddress(co.id, { lng: 13.42, lat: 52.5 });
  const delivery = (await co.api("POST", "/delivery", { body: { deliverylocation_id: address } })).body;
  const db = createDb(env.DB);
  const [company] = await db.select().from(companies).where(eq(companies.id, co.id));
  const [dispatcher] = await db.select({ id: users.id }).from(users).where(eq(users.email, co.dispatcher.email));
  const options = { truck: false, roundtrip: true, traffic: false, cancelroutes: false, assign_drivers: false, usearea: false };
  return startRouting(env, db, company, dispatcher.id, { deliveryids: [delivery.id] }, options, "async", `${ORIGIN}/${co.slug}/api`);
}

const meta = (record: { meta: string }) => JSON.parse(record.meta) as Record<string, unknown>;

describe("process watchdog", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a claimed process whose consumer never finishes is queued again at its deadline, and the re-run finishes it", async () => {
    const co = await createCompany();
    const { ws, messages } = await listen(co);
    const { processId } = await registerWithoutQueueing(co);
    const stub = env.COMPANY.getByName(`company:${co.id}`);
    // A consumer claims the process, promising a result within ten minutes, and dies.
    expect(await stub.claimRouting(processId, "dead-consumer", Date.now() + 10 * MINUTE)).toBe(true);

    await runDurableObjectAlarm(stub);
    expect((await stub.getProcess(processId))!.final.status).toBe("waiting"); // not overdue yet: nothing happens

    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 11 * MINUTE);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    vi.useRealTimers();

    const final = await until(async () => {
      const state = await stub.getProcess(processId);
      return state?.final.status === "finished" ? state.final : undefined;
    }, "the re-run");
    expect(meta(final).watchdog).toMatch(/^No result by .*Z: the job was queued again$/);
    // The re-run took over the dead consumer's claim and wrote the routes; were the old consumer alive, it may write nothing.
    expect(await stub.holdsClaim(processId, "dead-consumer")).toBe(false);
    const routes = await co.api("GET", `/process/status/${processId}/final?response_data=base`);
    expect(routes.body.num_results).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(messages.some((m) => m.type === "process" && m.process_id === processId && m.action === "final" && String(m.meta).includes("queued again"))).toBe(true);
    expect(messages.some((m) => m.type === "process" && m.process_id === processId && m.action === "final" && m.status === "finished")).toBe(true);
    ws.close(1000);
  });

  it("a process whose re-run never finishes either is marked failed with the reason, on the websocket too", async () => {
    const co = await createCompany();
    const { ws, messages } = await listen(co);
    const stub = env.COMPANY.getByName(`company:${co.id}`);
    // The job's process has no row in D1: each run the queue delivers ends without a result.
    const processId = crypto.randomUUID();
    const job: RoutingJob = { processId, companyId: co.id, apiBase: `${ORIGIN}/${co.slug}/api` };
    const start = Date.now();
    await stub.createProcess(processId, waiting(), { job, deadline: start + 5 * MINUTE });
    await stub.updateProcess(processId, "routing", { status: "running" });

    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(start + 6 * MINUTE);
    await runDurableObjectAlarm(stub);
    expect(meta((await stub.getProcess(processId))!.final).watchdog).toContain("queued again");
    vi.setSystemTime(start + 12 * MINUTE);
    await runDurableObjectAlarm(stub);
    vi.useRealTimers();

    const state = (await stub.getProcess(processId))!;
    expect(state.final.status).toBe("failed");
    expect(state.routing.status).toBe("failed");
    expect(meta(state.final).error).toMatch(/^No result by .*Z, also after queueing the job again: the routing consumer stopped or ran out of time$/);
    expect(meta(state.routing).error).toBe(meta(state.final).error);
    // Failed once: a later alarm changes nothing and the process can no longer be claimed.
    expect(await stub.claimRouting(processId, "late", Date.now())).toBe(false);
    await new Promise((r) => setTimeout(r, 100));
    expect(messages).toContainEqual(expect.objectContaining({ type: "process", process_id: processId, action: "final", status: "failed" }));
    ws.close(1000);
  });

  it("a routing job on the dead-letter queue marks its process failed with the last error, on the websocket too", async () => {
    const co = await createCompany();
    const { ws, messages } = await listen(co);
    const { processId, job } = await registerWithoutQueueing(co);
    const stub = env.COMPANY.getByName(`company:${co.id}`);
    await stub.noteFailedAttempt(processId, "D1_ERROR: database is locked");

    const batch = createMessageBatch("dispatch-routing-dlq", [{ id: "dead-1", timestamp: new Date(), attempts: 1, body: job }]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["dead-1"]);

    const final = await co.api("GET", `/process/status/${processId}/final`);
    expect(final.body.status).toBe("failed");
    expect(meta(final.body).error).toBe("The job failed on every retry and went to the dead-letter queue; last error: D1_ERROR: database is locked");
    expect((await co.api("GET", `/process/status/${processId}/routing`)).body.status).toBe("failed");
    // The dead letter is not routed again by the routing consumer: no routes appear.
    await new Promise((r) => setTimeout(r, 300));
    expect((await co.api("GET", `/process/status/${processId}/final?response_data=base`)).body.status).toBe("failed");
    expect(messages).toContainEqual(expect.objectContaining({ type: "process", process_id: processId, action: "final", status: "failed" }));
    ws.close(1000);
  });

  it("prunes final process records after the retention period, and only those", async () => {
    const stub = env.COMPANY.getByName("company:test-pruning");
    const start = Date.now();
    await stub.createProcess("old", finished());
    await stub.createProcess("open", waiting());
    await stub.createProcess("recent", waiting());
    await stub.createProcess("reopened", finished());

    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(start + 29 * DAY);
    await stub.updateProcess("recent", "final", { status: "finished" });
    // Batch routing of an earlier upload opens the same process again; it finishes later.
    await stub.createProcess("reopened", waiting());
    await stub.updateProcess("reopened", "final", { status: "failed" });

    vi.setSystemTime(start + 31 * DAY);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.getProcess("old")).toBeNull();
    for (const kept of ["open", "recent", "reopened"]) expect(await stub.getProcess(kept), kept).not.toBeNull();

    vi.setSystemTime(start + 60 * DAY);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.getProcess("recent")).toBeNull();
    expect(await stub.getProcess("reopened")).toBeNull();
    expect((await stub.getProcess("open"))!.final.status).toBe("waiting");
  });
});
