import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { type TestCompany, createCompany, insertAddress } from "./helpers";

const q = (value: unknown) => `q=${encodeURIComponent(JSON.stringify(value))}`;

describe("deliveries", () => {
  let co: TestCompany;
  let other: TestCompany;
  let target: number;
  let depot: number;
  beforeAll(async () => {
    co = await createCompany();
    other = await createCompany();
    target = await insertAddress(co.id, { lng: 13.45, lat: 52.51, postalcode: "10243", contactcompany: "Kiez Café" });
    depot = (await co.api("GET", "/company")).body.objects[0].location_id;
  });

  it("creates a delivery with defaults, UTC times and address geometry", async () => {
    const res = await co.api("POST", "/delivery", {
      body: { deliverylocation_id: target, pdt_from: "2026-11-23T09:00:00+01:00", pdt_to: "2026-11-23T11:00:00", els: 5, load: 3, custom_id: "A-1" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      deliverylocation_id: target,
      supplierlocation_id: depot,
      pdt_from: "2026-11-23T08:00:00Z",
      pdt_to: "2026-11-23T11:00:00Z",
      status: 0,
      route_id: null,
      els: 5,
      load: 3,
      notify_customer: false,
      custom_id: "A-1",
    });
    expect(res.body.address).toMatchObject({ id: target, contactcompany: "Kiez Café", postalcode: "10243" });
    expect(res.body.delivery_address).toEqual({ type: "Point", coordinates: [13.45, 52.51] });
    expect(res.body.supplier_address).toEqual({ type: "Point", coordinates: [13.3849, 52.5317] });
    expect(res.body.creationtime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(res.body).not.toHaveProperty("company_id");
    const read = await co.api("GET", `/delivery/${res.body.id}`);
    expect(read.body).toEqual(res.body);
  });

  it.each([
    [{ pdt_from: "2026-11-23T12:00:00Z", pdt_to: "2026-11-23T11:00:00Z" }, "pdt_from,pdt_to"],
    [{ pdt_from: "tomorrow morning" }, "pdt_from"],
    [{ pdt_from: "2026-02-30T10:00:00Z" }, "pdt_from"],
    [{ els: -5 }, "els"],
    [{ load: "heavy" }, "load"],
  ])("rejects %j with 422 naming %s, storing nothing", async (extra, fields) => {
    const before = (await co.api("GET", "/delivery")).body.num_results;
    const res = await co.api("POST", "/delivery", { body: { deliverylocation_id: target, ...extra } });
    expect(res.status).toBe(422);
    expect(res.body.fields).toBe(fields);
    expect((await co.api("GET", "/delivery")).body.num_results).toBe(before);
  });

  it("requires a destination that belongs to the company", async () => {
    expect((await co.api("POST", "/delivery", { body: {} })).body.fields).toBe("deliverylocation_id");
    const foreign = await insertAddress(other.id, { lng: 13.4, lat: 52.5 });
    const res = await co.api("POST", "/delivery", { body: { deliverylocation_id: foreign } });
    expect(res.status).toBe(422);
    expect(res.body.fields).toBe("deliverylocation_id");
    const supplier = await co.api("POST", "/delivery", { body: { deliverylocation_id: target, supplierlocation_id: foreign } });
    expect(supplier.body.fields).toBe("supplierlocation_id");
    const pickup = await co.api("POST", "/delivery", { body: { deliverylocation_id: target, pickup_ref_id: 999999 } });
    expect(pickup.body.fields).toBe("pickup_ref_id");
  });

  it("patches by id in the body and keeps the window ordered", async () => {
    const created = (await co.api("POST", "/delivery", { body: { deliverylocation_id: target, pdt_from: "2026-11-23T08:00:00Z", pdt_to: "2026-11-23T10:00:00Z" } })).body;
    const res = await co.api("PATCH", "/delivery", { body: { id: created.id, notes: "ring twice", pdt_to: "2026-11-23T12:00:00Z" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, notes: "ring twice", pdt_from: "2026-11-23T08:00:00Z", pdt_to: "2026-11-23T12:00:00Z" });
    const inverted = await co.api("PATCH", "/delivery", { body: { id: created.id, pdt_to: "2026-11-23T07:00:00Z" } });
    expect(inverted.status).toBe(422);
    expect((await co.api("PATCH", "/delivery", { body: { id: 987654, notes: "x" } })).status).toBe(404);
    const cancelled = await co.api("PATCH", "/delivery", { body: { id: created.id, status: 4 } });
    expect(cancelled.body.status).toBe(4);
    expect((await co.api("PATCH", "/delivery", { body: { id: created.id, status: 2 } })).status).toBe(422);
    // Nothing to change (the current status sent again, or only the id): the stored delivery, no 500.
    for (const body of [{ id: created.id, status: 4 }, { id: created.id }]) {
      const same = await co.api("PATCH", "/delivery", { body });
      expect(same.status, same.text).toBe(200);
      expect(same.body).toMatchObject({ id: created.id, status: 4, notes: "ring twice" });
    }
  });

  it("refuses to edit or delete a delivery on a route that is on the way", async () => {
    const created = (await co.api("POST", "/delivery", { body: { deliverylocation_id: target, custom_id: "on-the-way" } })).body;
    const route = await env.DB.prepare("INSERT INTO routes (company_id, status) VALUES (?, 3) RETURNING id").bind(co.id).first<{ id: number }>();
    await env.DB.prepare("UPDATE deliveries SET route_id = ?, status = 1 WHERE id = ?").bind(route!.id, created.id).run();
    const patch = await co.api("PATCH", "/delivery", { body: { id: created.id, notes: "late change" } });
    expect(patch.status).toBe(409);
    const del = await co.api("DELETE", `/delivery?${q({ filters: [{ name: "custom_id", op: "==", val: "on-the-way" }] })}`);
    expect(del.status).toBe(409);
    expect((await co.api("GET", `/delivery/${created.id}`)).body.notes).toBeNull();
  });

  it("cancels only a delivery still open: a routing run that takes it between the check and the write wins (compare-and-set)", async () => {
    const open = (await co.api("POST", "/delivery", { body: { deliverylocation_id: target } })).body;
    const route = await env.DB.prepare("insert into routes (company_id, status) values (?, 1) returning id").bind(co.id).first<{ id: number }>();
    // A routing run writes its tours in one D1 batch; here it lands right before the PATCH's own batch
    // (the request's queries run in its D1 session, so the session's batch is the one to intercept).
    const withSession = env.DB.withSession.bind(env.DB);
    let intercepted = 0;
    const spy = vi.spyOn(env.DB, "withSession").mockImplementation((constraint) => {
      const session = withSession(constraint);
      const batch = session.batch.bind(session);
      session.batch = async (statements) => {
        if (intercepted++ === 0) await env.DB.prepare("update deliveries set route_id = ?, status = 1 where id = ?").bind(route!.id, open.id).run();
        return batch(statements);
      };
      return session;
    });
    const res = await co.api("PATCH", "/delivery", { body: { id: open.id, status: 4 } });
    spy.mockRestore();
    expect(intercepted).toBe(1);
    expect(res.status).toBe(409);
    expect(res.body.fields).toBe("status");
    expect((await co.api("GET", `/delivery/${open.id}`)).body).toMatchObject({ status: 1, route_id: route!.id });
  });

  it("deletes by filter only, answering the count", async () => {
    for (const id of ["D-1", "D-2", "D-3"]) await co.api("POST", "/delivery", { body: { deliverylocation_id: target, custom_id: id, custom_tour: "to-delete" } });
    expect((await co.api("DELETE", "/delivery")).status).toBe(422);
    const res = await co.api("DELETE", `/delivery?${q({ filters: [{ name: "custom_tour", op: "==", val: "to-delete" }, { name: "custom_id", op: "in", val: ["D-1", "D-2"] }] })}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ num_deleted: 2 });
    const left = await co.api("GET", `/delivery?${q({ filters: [{ name: "custom_tour", op: "==", val: "to-delete" }] })}`);
    expect(left.body.objects.map((d: { custom_id: string }) => d.custom_id)).toEqual(["D-3"]);
  });

  it("filters by time window and status", async () => {
    await co.api("POST", "/delivery", { body: { deliverylocation_id: target, custom_id: "W-early", pdt_from: "2026-12-01T06:00:00Z", pdt_to: "2026-12-01T07:00:00Z" } });
    await co.api("POST", "/delivery", { body: { deliverylocation_id: target, custom_id: "W-late", pdt_from: "2026-12-01T15:00:00Z", pdt_to: "2026-12-01T16:00:00Z" } });
    const res = await co.api("GET", `/delivery?${q({ filters: [{ name: "pdt_from", op: ">=", val: "2026-12-01T12:00:00+01:00" }, { name: "status", op: "==", val: 0 }] })}`);
    expect(res.body.objects.map((d: { custom_id: string }) => d.custom_id)).toEqual(["W-late"]);
  });

  it("serves the lookup lists", async () => {
    const status = await co.api("GET", "/deliverystatus");
    expect(status.body.objects).toEqual([
      { id: 0, name: "none" }, { id: 1, name: "routed" }, { id: 2, name: "delivered" }, { id: 3, name: "undelivered" }, { id: 4, name: "cancelled" },
    ]);
    expect((await co.api("GET", "/deliverytype")).body.objects[0]).toEqual({ id: 1, name: "delivery" });
    expect((await co.api("GET", "/deliverycode")).body.num_results).toBeGreaterThan(3);
  });

  it("keeps companies apart", async () => {
    const mine = (await co.api("POST", "/delivery", { body: { deliverylocation_id: target } })).body;
    expect((await other.api("GET", `/delivery/${mine.id}`)).status).toBe(404);
    expect((await other.api("PATCH", "/delivery", { body: { id: mine.id, notes: "x" } })).status).toBe(404);
    const del = await other.api("DELETE", `/delivery?${q({ filters: [{ name: "id", op: "==", val: mine.id }] })}`);
    expect(del.body).toEqual({ num_deleted: 0 });
    expect((await co.api("GET", `/delivery/${mine.id}`)).status).toBe(200);
  });

  it("answers a full page of 100 deliveries with 101 distinct addresses (more than D1's 100 bound parameters)", async () => {
    const big = await createCompany();
    for (let i = 0; i < 100; i++) {
      const address = await insertAddress(big.id, { lng: 13.3 + i * 0.001, lat: 52.5 });
      expect((await big.api("POST", "/delivery", { body: { deliverylocation_id: address } })).status).toBe(201);
    }
    const page = await big.api("GET", "/delivery?results_per_page=100");
    expect(page.status, page.text).toBe(200);
    expect(page.body.objects).toHaveLength(100);
    expect(new Set(page.body.objects.map((d: { address: { id: number } }) => d.address.id)).size).toBe(100);
  });
});
