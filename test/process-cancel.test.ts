/**
 * Cancelling a running process (beyond the interface documents): the search
 * stops at its next progress check, no route is written, the process fails
 * with the error `cancelled` (contract.md has no `cancelled` status).
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RoutingJob } from "../src/core/queues";
import worker from "../src/worker/index";
import { ORIGIN, type TestCompany, createCompany, insertAddress, until } from "./helpers";

const meta = (record: { meta: string }) => JSON.parse(record.meta) as Record<string, unknown>;

/** An optimisation of `n` deliveries searching `seconds`, registered but not queued: the test runs its job. */
async function startedNotQueued(co: TestCompany, n: number, seconds: number) {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const address = await insertAddress(co.id, { lng: 13.3 + (i % 7) * 0.03, lat: 52.45 + Math.floor(i / 7) * 0.02 });
    ids.push((await co.api("POST", "/delivery", { body: { deliverylocation_id: address } })).body.id);
  }
  const sent: RoutingJob[] = [];
  const request = new Request(`${ORIGIN}/${co.slug}/api/calcroute/optimized/timewindow?time_budget_seconds=${seconds}`, {
    method: "POST",
    headers: { Authorization: `JWT ${co.dispatcher.token}`, "content-type": "application/json" },
    body: JSON.stringify({ deliveryids: ids }),
  });
  const res = await worker.fetch(request, { ...env, ROUTING_QUEUE: { send: async (job: RoutingJob) => void sent.push(job) } } as never, createExecutionContext());
  expect(res.status).toBe(202);
  return { processId: (await res.json<{ process_id: string }>()).process_id, job: sent[0], ids };
}

/** The routing consumer running one job to its end. */
async function consume(job: RoutingJob) {
  const batch = createMessageBatch("dispatch-routing", [{ id: `cancel-${job.processId}`, timestamp: new Date(), attempts: 1, body: job }]);
  const ctx = createExecutionContext();
  await worker.queue(batch, env);
  return getQueueResult(batch, ctx);
}

describe("cancelling a process", () => {
  it("stops a running optimisation at its next progress check: no route, the deliveries stay open, the process fails with `cancelled`", async () => {
    const co = await createCompany();
    const { processId, job, ids } = await startedNotQueued(co, 40, 60);
    const started = Date.now();
    const consumer = consume(job);
    await until(async () => {
      const routing = (await co.api("GET", `/process/status/${processId}/routing`)).body;
      return routing.status === "running" ? routing : undefined;
    }, "the search to run");

    const cancelled = await co.api("POST", `/process/cancel/${processId}`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.final.status).toBe("failed");
    expect(meta(cancelled.body.final)).toMatchObject({ error: "cancelled" });
    expect(cancelled.body.routing.status).toBe("failed");

    expect((await consumer).retryMessages).toEqual([]);
    // It stopped long before its 60 s search time was up.
    expect(Date.now() - started).toBeLessThan(30_000);
    const state = (await co.api("GET", `/process/status/${processId}`)).body;
    expect(state.final.status).toBe("failed");
    expect(meta(state.final).error).toBe("cancelled");
    const { results } = await env.DB.prepare("select count(*) as n from routes where process_id = ?").bind(processId).all<{ n: number }>();
    expect(results[0].n).toBe(0);
    for (const id of ids.slice(0, 5)) expect((await co.api("GET", `/delivery/${id}`)).body).toMatchObject({ status: 0, route_id: null });

    const again = await co.api("POST", `/process/cancel/${processId}`);
    expect(again.status).toBe(409);
    expect(again.body.fields).toBe("process_id");
  });

  it("refuses a finished process (409), and an unknown or another company's process (404)", async () => {
    const co = await createCompany();
    const address = await insertAddress(co.id, { lng: 13.42, lat: 52.5 });
    const delivery = (await co.api("POST", "/delivery", { body: { deliverylocation_id: address } })).body;
    const { process_id } = (await co.api("POST", "/calcroute/optimized/timewindow", { body: { deliveryids: [delivery.id] } })).body;
    await until(async () => {
      const final = (await co.api("GET", `/process/status/${process_id}/final`)).body;
      return final.status === "finished" ? final : undefined;
    }, "the routing");
    const finished = await co.api("POST", `/process/cancel/${process_id}`);
    expect(finished.status).toBe(409);
    expect((await co.api("GET", `/process/status/${process_id}/final?response_data=base`)).body.num_results).toBe(1);

    const other = await createCompany();
    expect((await other.api("POST", `/process/cancel/${process_id}`)).status).toBe(404);
    expect((await co.api("POST", `/process/cancel/${crypto.randomUUID()}`)).status).toBe(404);
  });
});
