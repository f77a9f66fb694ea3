import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/core/db/client";
import { runBulkIntake, takeBulk } from "../src/core/services/bulk-intake";
import { loadCompany } from "../src/core/services/company-lookup";
import { type TestCompany, createCompany, tomorrowAt, until } from "./helpers";

const count = async (co: TestCompany, table: string) => (await co.d1.prepare(`SELECT count(*) AS n FROM ${table} WHERE company_id = ?`).bind(co.id).first<{ n: number }>())!.n;

/** An order with its address and coordinate, as a shop sends it. */
const order = (i: number, extra: Record<string, unknown> = {}) => ({
  external_id: `NIGHT-${i}`,
  contactlastname: `Kunde ${i}`,
  street: "Musterstraße",
  housenumber: String(i),
  postalcode: "10115",
  city: "Berlin",
  lat: 52.45 + (i % 50) * 0.003,
  lng: 13.3 + Math.floor(i / 50) * 0.01,
  pdt_from: tomorrowAt(8),
  pdt_to: tomorrowAt(16),
  load: 1,
  ...extra,
});

describe("bulk intake: POST /delivery/bulk", () => {
  it("writes 1,000 deliveries with their addresses in one request, and again by external id without a duplicate", async () => {
    const co = await createCompany();
    const addressesBefore = await count(co, "addresses");
    const items = Array.from({ length: 1000 }, (_, i) => order(i));
    const first = await co.api("POST", "/delivery/bulk", { body: { items } });
    expect(first.status, first.text.slice(0, 300)).toBe(200);
    expect([first.body.num_created, first.body.num_updated, first.body.num_refused]).toEqual([1000, 0, 0]);
    expect(first.body.results).toHaveLength(1000);
    expect(first.body.results[7]).toMatchObject({ index: 7, status: "created" });
    expect(await count(co, "deliveries")).toBe(1000);
    expect(await count(co, "addresses")).toBe(addressesBefore + 1000);
    const seventh = (await co.api("GET", `/delivery/${first.body.results[7].id}`)).body;
    expect(seventh).toMatchObject({ external_id: "NIGHT-7", address: { contactlastname: "Kunde 7", housenumber: "7" } });

    // The next night's file: the same orders, one of them with a later window, and one new.
    const again = await co.api("POST", "/delivery/bulk", { body: { items: [order(7, { pdt_from: tomorrowAt(12) }), order(1000)] } });
    expect(again.status).toBe(200);
    expect(again.body.results).toEqual([
      { index: 0, status: "updated", id: first.body.results[7].id },
      { index: 1, status: "created", id: expect.any(Number) },
    ]);
    expect(await count(co, "deliveries")).toBe(1001);
    expect((await co.api("GET", `/delivery/${first.body.results[7].id}`)).body.pdt_from).toBe(tomorrowAt(12));
  });

  it("all or nothing by default: one bad item is a 422 naming it, and nothing is stored", async () => {
    const co = await createCompany();
    const before = await count(co, "deliveries");
    const items = [order(1), order(2, { pdt_from: "tomorrow morning" }), order(3)];
    const res = await co.api("POST", "/delivery/bulk", { body: { items } });
    expect(res.status).toBe(422);
    expect(res.body.fields).toBe("items.1.pdt_from");
    expect(await count(co, "deliveries")).toBe(before);
    // A shape the schema refuses is a 422 in either mode.
    const shape = await co.api("POST", "/delivery/bulk", { body: { partial: true, items: [order(1, { load: "two" })] } });
    expect([shape.status, shape.body.fields]).toEqual([422, "items.0.load"]);
    const twice = await co.api("POST", "/delivery/bulk", { body: { items: [order(1), order(1)] } });
    expect([twice.status, twice.body.fields]).toEqual([422, "items.1.external_id"]);
    const many = await co.api("POST", "/delivery/bulk", { body: { items: Array.from({ length: 1001 }, (_, i) => order(i)) } });
    expect([many.status, many.body.fields]).toEqual([422, "items"]);
    expect(await count(co, "deliveries")).toBe(before);
  });

  it("per item with `partial`: the good items written, the bad one refused with its reason", async () => {
    const co = await createCompany();
    const items = [order(1), order(2, { pdt_from: tomorrowAt(18), pdt_to: tomorrowAt(9) }), order(3)];
    const res = await co.api("POST", "/delivery/bulk", { body: { partial: true, items } });
    expect(res.status).toBe(200);
    expect([res.body.num_created, res.body.num_refused]).toEqual([2, 1]);
    expect(res.body.results[1]).toEqual({ index: 1, status: "refused", message: "pdt_from must not be after pdt_to", fields: "items.1.pdt_from,items.1.pdt_to" });
    expect(res.body.results.map((r: { status: string }) => r.status)).toEqual(["created", "refused", "created"]);
    expect(await count(co, "deliveries")).toBe(2);
  });

  it("items without a coordinate are geocoded in the background: a process id at once, the results in its record", async () => {
    const co = await createCompany();
    const { lat: _lat, lng: _lng, ...noCoordinate } = order(1);
    const items = [noCoordinate, order(2), { ...order(3, { postalcode: "00000", city: "Nowhereville" }), lat: undefined, lng: undefined }];
    const started = await co.api("POST", "/delivery/bulk", { body: { partial: true, items } });
    expect(started.status, started.text).toBe(202);
    const pid = started.body.process_id;
    const done = await until(async () => {
      const status = await co.api("GET", `/process/status/${pid}`);
      return ["finished", "failed"].includes(status.body.final.status) ? status.body : undefined;
    }, "the bulk process");
    expect(done.final.status).toBe("finished");
    const meta = typeof done.import_deliveries.meta === "string" ? JSON.parse(done.import_deliveries.meta) : done.import_deliveries.meta;
    expect([meta.num_created, meta.num_refused]).toEqual([2, 1]);
    expect(meta.results[2]).toMatchObject({ index: 2, status: "refused", fields: expect.stringContaining("items.2.") });
    const geocoded = (await co.api("GET", `/delivery/${meta.results[0].id}`)).body;
    expect(geocoded.address.location.coordinates[1]).toBeCloseTo(52.53, 1);
    expect(await count(co, "deliveries")).toBe(2);
  });

  it("all or nothing in the background too: an address nothing is found for fails the process, nothing stored", async () => {
    const co = await createCompany();
    const before = await count(co, "deliveries");
    const { lat: _lat, lng: _lng, ...nowhere } = order(1, { postalcode: "00000", city: "Nowhereville" });
    const started = await co.api("POST", "/delivery/bulk", { body: { items: [order(2), nowhere] } });
    expect(started.status).toBe(202);
    const done = await until(async () => {
      const status = await co.api("GET", `/process/status/${started.body.process_id}`);
      return ["finished", "failed"].includes(status.body.final.status) ? status.body : undefined;
    }, "the bulk process");
    expect(done.final.status).toBe("failed");
    expect(JSON.stringify(done.import_deliveries.meta)).toContain("items.1.");
    expect(await count(co, "deliveries")).toBe(before);
  });
});

describe("bulk intake in the background: a consumer cut off after the write", () => {
  it("a redelivered job does not write the items again: the write and its mark are one transaction", async () => {
    const co = await createCompany();
    const db = createDb(env.DB);
    const company = await loadCompany(db, co.id);
    // The process is registered, its message held back: the test plays the consumer.
    const quiet = { ...env, ROUTING_QUEUE: { send: async () => undefined, sendBatch: async () => undefined } } as unknown as typeof env;
    // Without external ids: a second write would make two more deliveries.
    const { lat: _lat, lng: _lng, external_id: _one, ...noCoordinate } = order(1);
    const { external_id: _two, ...withCoordinate } = order(2);
    const dispatcherId = (await co.d1.prepare("SELECT id FROM users WHERE company_id = ? AND usertype = 'dispatcher'").bind(co.id).first<{ id: number }>())!.id;
    const taken = await takeBulk(quiet, db, company, dispatcherId, [noCoordinate, withCoordinate], false, `http://dispatch.test/${co.slug}/api`);
    if (!("processId" in taken)) throw new Error("expected a background process");
    const job = { processId: taken.processId, companyId: co.id, kind: "bulk" as const, apiBase: `http://dispatch.test/${co.slug}/api` };
    // The isolate goes away between the write and the process record's update.
    const cutOff = {
      ...env,
      COMPANY: {
        getByName: (name: string) => {
          const stub = env.COMPANY.getByName(name);
          return new Proxy(stub, {
            get: (target, key) =>
              key === "updateProcess"
                ? async (...args: Parameters<typeof stub.updateProcess>) => {
                    if (args[1] === "import_deliveries" && args[2].status === "finished") throw new Error("isolate gone");
                    return target.updateProcess(...args);
                  }
                : Reflect.get(target, key),
          });
        },
      },
    } as unknown as typeof env;
    await expect(runBulkIntake(cutOff, db, job, "message-1")).rejects.toThrow("isolate gone");
    expect(await count(co, "deliveries")).toBe(2);
    // The queue delivers the message again (same message id: the claim resumes).
    await runBulkIntake(env, db, job, "message-1");
    expect(await count(co, "deliveries")).toBe(2);
    const status = await co.api("GET", `/process/status/${taken.processId}`);
    expect(status.body.final.status).toBe("finished");
    expect(JSON.stringify(status.body.import_deliveries.meta)).toContain("written by an earlier attempt");
  });
});
