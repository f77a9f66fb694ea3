/**
 * The optimiser's search time grows with the plan, may be chosen per request
 * (validated), and the process record shows the expected wait.
 */
import { createExecutionContext, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/worker/index";
import type { Env } from "../src/core/env";
import { MAX_TIME_BUDGET_SECONDS, timeBudgetMs } from "../src/core/services/routing/budget";
import { ORIGIN, call, createCompany, insertAddress } from "./helpers";

const production = { ROUTING_TIME_BUDGET_MS: undefined } as unknown as Env;

describe("routing time budget", () => {
  it("grows with the number of deliveries from the base up to the cap; synchronous requests stay short unless asked", () => {
    expect(timeBudgetMs(production, 50, "async")).toBe(8_000);
    expect(timeBudgetMs(production, 200, "async")).toBe(8_000);
    expect(timeBudgetMs(production, 500, "async")).toBe(27_500);
    expect(timeBudgetMs(production, 1_000, "async")).toBe(60_000);
    expect(timeBudgetMs(production, 5_000, "async")).toBe(MAX_TIME_BUDGET_SECONDS * 1000);
    expect(timeBudgetMs({ ROUTING_TIME_BUDGET_MS: "20000" } as Env, 100, "async")).toBe(20_000);
    expect(timeBudgetMs(production, 1_000, "sync")).toBe(3_000);
    expect(timeBudgetMs(production, 1_000, "sync", 12)).toBe(12_000);
    expect(timeBudgetMs(production, 10, "async", 90)).toBe(90_000);
  });

  it("the routing record shows the expected wait of the chosen budget", async () => {
    const co = await createCompany();
    const address = await insertAddress(co.id, { lng: 13.42, lat: 52.5 });
    const delivery = (await co.api("POST", "/delivery", { body: { deliverylocation_id: address } })).body;
    const before = Date.now();
    const started = await co.api("POST", "/calcroute/optimized/timewindow?time_budget_seconds=2", { body: { deliveryids: [delivery.id] } });
    expect(started.status).toBe(202);
    const routing = (await co.api("GET", `/process/status/${started.body.process_id}/routing`)).body;
    const meta = JSON.parse(routing.meta);
    expect(meta.expected_seconds).toBe(4); // 2 s search plus 2 s to load, build matrices and write
    const finish = Date.parse(meta.expected_finish);
    expect(meta.expected_finish).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(finish).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 4_000);
    expect(finish).toBeLessThanOrEqual(Date.now() + 5_000);
  });

  it("gives the watchdog as long again as a road engine may take: every matrix block and tour geometry up to its timeout", async () => {
    /** The watchdog's deadline (the company object's alarm) of a routing of 3 deliveries started under `vars`; no consumer takes the job. */
    const deadlineAfter = async (vars: Partial<Env>) => {
      const co = await createCompany();
      const ids = [];
      for (const lng of [13.41, 13.42, 13.43]) ids.push((await co.api("POST", "/delivery", { body: { deliverylocation_id: await insertAddress(co.id, { lng, lat: 52.5 }) } })).body.id);
      const request = new Request(`${ORIGIN}/${co.slug}/api/calcroute/optimized/timewindow?num_vehicles=2&time_budget_seconds=10`, {
        method: "POST",
        headers: { Authorization: `JWT ${co.dispatcher.token}`, "content-type": "application/json" },
        body: JSON.stringify({ deliveryids: ids }),
      });
      const started = Date.now();
      const res = await worker.fetch(request, { ...env, ...vars, ROUTING_QUEUE: { send: async () => undefined } } as never, createExecutionContext());
      expect(res.status).toBe(202);
      const alarm = await runInDurableObject(env.COMPANY.getByName(`company:${co.id}`), (_o, state) => state.storage.getAlarm());
      return alarm! - started;
    };
    const plain = await deadlineAfter({});
    expect(plain).toBeGreaterThanOrEqual(10_000 + 120_000 - 1_000);
    expect(plain).toBeLessThanOrEqual(10_000 + 120_000 + 1_000);
    // 4 points (depot and 3 stops) in blocks of 2: 2 x 2 table requests, and 2 tour geometries, each up to 15 s.
    const withEngine = await deadlineAfter({ ROAD_ENGINE_URL: "http://osrm.test", ROAD_ENGINE_MAX_TABLE: "2" });
    expect(withEngine - plain).toBeGreaterThanOrEqual(6 * 15_000 - 2_000);
    expect(withEngine - plain).toBeLessThanOrEqual(6 * 15_000 + 2_000);
  });

  it("refuses a budget that is not a whole number of seconds from 1 to 120, on routing and uploads", async () => {
    const co = await createCompany();
    for (const bad of ["0", "121", "1.5", "abc", ""]) {
      const res = await co.api("POST", `/calcroute/optimized/timewindow?time_budget_seconds=${bad}`, { body: { deliveryids: [1] } });
      expect(res.status, bad).toBe(422);
      expect(res.body.fields, bad).toBe("time_budget_seconds");
      const upload = await co.api("POST", `/upload/onestep?time_budget_seconds=${bad}`, { raw: "" });
      expect(upload.status, bad).toBe(422);
      expect(upload.body.fields, bad).toContain("time_budget_seconds");
    }
    expect((await co.api("POST", `/batchrouting/00000000-0000-4000-8000-000000000000?time_budget_seconds=500`)).status).toBe(422);
  });

  it("documents the parameter in the OpenAPI description", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    for (const path of ["/{slug}/api/calcroute/optimized/timewindow", "/{slug}/api/upload/onestep", "/{slug}/api/batchrouting/{process_id}"]) {
      const param = Object.values(doc.paths[path] as Record<string, { parameters: { name: string; description?: string; schema: { maximum?: number } }[] }>)[0].parameters.find(
        (p) => p.name === "time_budget_seconds",
      );
      expect(param?.description, path).toContain("65 ms per delivery");
      expect(param?.schema.maximum, path).toBe(120);
    }
  });
});
