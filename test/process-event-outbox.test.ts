import { env, runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ProcessState, processRecord } from "../src/core/coordinator/processes";
import { createCompany } from "./helpers";

const fresh = (): ProcessState => ({
  import_deliveries: processRecord("skipped"),
  cluster_deliveries: processRecord("skipped"),
  routing: processRecord("waiting"),
  final: processRecord("waiting"),
});

/** The process events in the D1 event log. */
async function logged(pid: string) {
  const { results } = await env.DB.prepare("select id, payload from events where type = 'process.updated' and json_extract(payload, '$.process_id') = ? order by id").bind(pid).all<{ id: number; payload: string }>();
  return results.map((r) => JSON.parse(r.payload) as { action: string; status: string });
}

/**
 * Makes inserts into the event log fail (the object runs in the test's isolate,
 * so it uses this D1 binding): `before` the insert commits, or `after` it
 * committed, when the answer is lost on the way back.
 */
function breakEventLog(when: "before" | "after") {
  const d1 = Object.getPrototypeOf(env.DB) as D1Database;
  const prepare = d1.prepare;
  return vi.spyOn(d1, "prepare").mockImplementation(function (this: D1Database, query: string) {
    const statement = prepare.call(this, query);
    if (!/^insert into "events"/i.test(query)) return statement;
    if (when === "before") throw new Error("D1 unavailable");
    const bind = statement.bind;
    statement.bind = (...values: unknown[]) => {
      const bound = bind.apply(statement, values);
      for (const method of ["all", "raw", "run", "first"] as const) {
        const run = bound[method] as (...args: unknown[]) => Promise<unknown>;
        (bound as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
          await run.apply(bound, args);
          throw new Error("connection lost after the commit");
        };
      }
      return bound;
    };
    return statement;
  });
}

describe("process events (the company object's outbox)", () => {
  afterEach(() => vi.restoreAllMocks());

  it("keeps a status change's event when the event log fails after the status was stored, and logs it from the alarm", async () => {
    const co = await createCompany();
    const stub = env.COMPANY.getByName(`company:${co.id}`);
    await stub.createProcess("outbox-1", fresh());
    const broken = breakEventLog("before");
    await stub.updateProcess("outbox-1", "routing", { status: "running" }).catch(() => undefined);
    broken.mockRestore();
    expect((await stub.getProcess("outbox-1"))?.routing.status).toBe("running");
    expect(await logged("outbox-1")).toEqual([]);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await logged("outbox-1")).toMatchObject([{ action: "routing", status: "running" }]);
  });

  it("logs an event once when the log's answer was lost (idempotent by the outbox entry's id), in order with later ones", async () => {
    const co = await createCompany();
    const stub = env.COMPANY.getByName(`company:${co.id}`);
    await stub.createProcess("outbox-2", fresh());
    const broken = breakEventLog("after");
    await stub.updateProcess("outbox-2", "routing", { status: "running" }).catch(() => undefined);
    broken.mockRestore();
    await stub.updateProcess("outbox-2", "routing", { status: "finished" });
    await runDurableObjectAlarm(stub);
    await runDurableObjectAlarm(stub);
    expect((await logged("outbox-2")).map((e) => e.status)).toEqual(["running", "finished"]);
  });
});
