import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ProcessState } from "../src/core/coordinator/processes";
import { ORIGIN, type TestCompany, createCompany, insertAddress } from "./helpers";

const record = (status: ProcessState["final"]["status"]) => ({ status, link: "", vague_addresses: [], meta: JSON.stringify({ progress: 0 }) });
const fresh = (): ProcessState => ({ import_deliveries: record("skipped"), cluster_deliveries: record("skipped"), routing: record("waiting"), final: record("waiting") });

/** A dispatcher's websocket and the events it received. */
async function listen(co: TestCompany) {
  const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/ws?access_token=${co.dispatcher.token}`, { headers: { Upgrade: "websocket" } }));
  const ws = res.webSocket!;
  ws.accept();
  const messages: Record<string, unknown>[] = [];
  ws.addEventListener("message", (e) => messages.push(JSON.parse(e.data as string)));
  return { ws, messages };
}

describe("company coordinator (Durable Object)", () => {
  it("keeps process status across eviction", async () => {
    const stub = env.COMPANY.getByName("company:test-eviction");
    await stub.createProcess("p-1", fresh());
    await stub.updateProcess("p-1", "routing", { status: "running", meta: { progress: 0.4 } });
    await evictDurableObject(stub);
    const state = await stub.getProcess("p-1");
    expect(state?.routing.status).toBe("running");
    expect(JSON.parse(state!.routing.meta)).toEqual({ progress: 0.4 });
    expect(await stub.getProcess("unknown")).toBeNull();
  });

  it("serialises concurrent updates of one process without losing any", async () => {
    const stub = env.COMPANY.getByName("company:test-concurrency");
    await stub.createProcess("p-2", fresh());
    await Promise.all(Array.from({ length: 20 }, (_, i) => stub.updateProcess("p-2", "routing", { meta: { [`k${i}`]: i } })));
    const meta = JSON.parse((await stub.getProcess("p-2"))!.routing.meta);
    for (let i = 0; i < 20; i++) expect(meta[`k${i}`]).toBe(i);
  });

  it("lets one consumer claim a routing process; a finished one is never claimed again", async () => {
    const stub = env.COMPANY.getByName("company:test-claim");
    await stub.createProcess("p-3", fresh());
    expect(await stub.claimRouting("p-3", "attempt-a")).toBe(true);
    expect(await stub.claimRouting("p-3", "attempt-b")).toBe(false);
    expect(await stub.claimRouting("p-3", "attempt-a")).toBe(true);
    await stub.updateProcess("p-3", "final", { status: "finished" });
    expect(await stub.claimRouting("p-3", "attempt-a")).toBe(false);
    expect(await stub.claimRouting("unknown", "attempt-a")).toBe(false);
  });

  it("a routing process survives eviction mid-way and finishes", async () => {
    const co = await createCompany();
    const address = await insertAddress(co.id, { lng: 13.42, lat: 52.5 });
    const delivery = (await co.api("POST", "/delivery", { body: { deliverylocation_id: address } })).body;
    const started = await co.api("POST", "/calcroute/optimized/timewindow", { body: { deliveryids: [delivery.id] } });
    expect(started.status).toBe(202);
    const stub = env.COMPANY.getByName(`company:${co.id}`);
    await evictDurableObject(stub).catch(() => undefined); // not running yet is fine too
    let final;
    for (let i = 0; i < 100; i++) {
      final = (await co.api("GET", `/process/status/${started.body.process_id}/final`)).body;
      if (final.status === "finished" || final.status === "failed") break;
      await evictDurableObject(stub).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(final.status).toBe("finished");
    expect((await co.api("GET", `/delivery/${delivery.id}`)).body.status).toBe(1);
  });

  it("keeps hibernated websockets across eviction: ping still answers", async () => {
    const co = await createCompany();
    const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/ws?access_token=${co.dispatcher.token}`, { headers: { Upgrade: "websocket" } }));
    const ws = res.webSocket!;
    ws.accept();
    const messages: string[] = [];
    ws.addEventListener("message", (e) => messages.push(e.data as string));
    const stub = env.COMPANY.getByName(`company:${co.id}`);
    await evictDurableObject(stub);
    ws.send(JSON.stringify({ type: "ping" }));
    for (let i = 0; i < 50 && !messages.length; i++) await new Promise((r) => setTimeout(r, 20));
    expect(messages).toContain(JSON.stringify({ type: "pong" }));
    expect(await stub.connections()).toEqual({ staff: 1, drivers: 0 });
    await runInDurableObject(stub, async (_instance, state) => {
      expect(state.getWebSockets("staff")).toHaveLength(1);
    });
    ws.close(1000);
  });

  it("rejects a websocket upgrade without a valid token", async () => {
    const co = await createCompany();
    const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/ws?access_token=garbage`, { headers: { Upgrade: "websocket" } }));
    expect(res.status).toBe(403);
    const noUpgrade = await co.api("GET", "/ws");
    expect(noUpgrade.status).toBe(422);
  });

  it("drivers receive only their own events", async () => {
    const co = await createCompany();
    const me = await co.user("driver");
    const other = await co.user("driver");
    const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/ws?access_token=${me.token}`, { headers: { Upgrade: "websocket" } }));
    const ws = res.webSocket!;
    ws.accept();
    const messages: { type: string; driver_id?: number }[] = [];
    ws.addEventListener("message", (e) => messages.push(JSON.parse(e.data as string)));
    const position = { type: "Point", coordinates: [13.4, 52.5] };
    expect((await co.api("POST", "/drivertracking", { token: other.token, body: { driver_id: other.id, position } })).status).toBe(200);
    expect((await co.api("POST", "/drivertracking", { token: me.token, body: { driver_id: me.id, position } })).status).toBe(200);
    const stub = env.COMPANY.getByName(`company:${co.id}`);
    await stub.broadcast({ event: { type: "process", process_id: "x", action: "final", status: "finished", meta: "{}", link: "" }, driverId: null });
    for (let i = 0; i < 50 && !messages.length; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100));
    expect(messages.map((m) => [m.type, m.driver_id])).toEqual([["driverposition", me.id]]);
    ws.close(1000);
  });

  it("dispatchers see delivery changes and cancelled routes", async () => {
    const co = await createCompany();
    const { ws, messages } = await listen(co);
    const address = await insertAddress(co.id, { lng: 13.42, lat: 52.5 });
    const [a, b] = [(await co.api("POST", "/delivery", { body: { deliverylocation_id: address } })).body, (await co.api("POST", "/delivery", { body: { deliverylocation_id: address } })).body];
    await co.api("PATCH", "/delivery", { body: { id: a.id, status: 4 } });
    const routed = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliveryids: [b.id] } });
    const routeId = routed.body.objects[0].id;
    await co.api("POST", "/calcroute/optimized/timewindow?async=false&cancelroutes=true", { body: { deliveryids: [b.id] } });
    await new Promise((r) => setTimeout(r, 150));
    expect(messages).toContainEqual(expect.objectContaining({ type: "delivery", id: a.id, status: 4, route_id: null }));
    expect(messages).toContainEqual(expect.objectContaining({ type: "route", id: routeId, status: 0, driver_id: null }));
    expect(messages).toContainEqual(expect.objectContaining({ type: "route", id: routeId, status: 5, driver_id: null }));
    ws.close(1000);
  });

  it("dispatchers hear of a delivery created or edited, status unchanged, and of no refused edit", async () => {
    const co = await createCompany();
    const { ws, messages } = await listen(co);
    const address = await insertAddress(co.id, { lng: 13.42, lat: 52.5 });
    const created = (await co.api("POST", "/delivery", { body: { deliverylocation_id: address } })).body;
    for (let i = 0; i < 50 && !messages.length; i++) await new Promise((r) => setTimeout(r, 20));
    expect(messages).toEqual([expect.objectContaining({ type: "delivery", id: created.id, status: 0, route_id: null })]);
    expect((await co.api("PATCH", "/delivery", { body: { id: created.id, notes: "Hintereingang" } })).status).toBe(200);
    for (let i = 0; i < 50 && messages.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(messages[1]).toMatchObject({ type: "delivery", id: created.id, status: 0 });
    expect((await co.api("PATCH", "/delivery", { body: { id: created.id, pdt_from: "not a time" } })).status).toBe(422);
    expect((await co.api("POST", "/delivery", { body: { deliverylocation_id: 999_999 } })).status).toBe(422);
    await new Promise((r) => setTimeout(r, 150));
    expect(messages).toHaveLength(2);
    ws.close(1000);
  });
});
