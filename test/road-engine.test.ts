import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/worker/index";
import { roadEngine, withRoadMatrices } from "../src/core/services/road-engine";
import { createCompany, insertAddress, routeAndStart } from "./helpers";

/** A fake OSRM: duration = 10 x |i - j| over global point indices, distance = 100 x that. */
function fakeOsrm(points: { lon: number; lat: number }[], calls: string[]) {
  const index = (lon: string, lat: string) => points.findIndex((p) => p.lon.toFixed(6) === lon && p.lat.toFixed(6) === lat);
  return (async (input: RequestInfo | URL) => {
    const url = new URL(String(input));
    calls.push(url.pathname);
    const coords = url.pathname.split("/").pop()!.split(";").map((c) => c.split(","));
    if (url.pathname.includes("/route/")) return Response.json({ code: "Ok", routes: [{ geometry: { type: "LineString", coordinates: [[1, 1], [2, 2], [3, 3]] } }] });
    const sources = url.searchParams.get("sources")!.split(";").map(Number);
    const targets = url.searchParams.get("destinations")!.split(";").map(Number);
    const global = coords.map(([lon, lat]) => index(lon, lat));
    const durations = sources.map((s) => targets.map((t) => 10 * Math.abs(global[s] - global[t])));
    return Response.json({ code: "Ok", durations, distances: durations.map((row) => row.map((d) => d * 100)) });
  }) as typeof fetch;
}

describe("road engine (OSRM-compatible)", () => {
  const points = [{ lon: 13.4, lat: 52.5 }, { lon: 13.41, lat: 52.51 }, { lon: 13.42, lat: 52.52 }];

  it("is off without ROAD_ENGINE_URL", () => {
    expect(roadEngine({})).toBeNull();
  });

  it("fills the matrix in blocks of the engine's table size", async () => {
    const calls: string[] = [];
    const engine = roadEngine({ ROAD_ENGINE_URL: "http://osrm.test/", ROAD_ENGINE_MAX_TABLE: "2" }, fakeOsrm(points, calls))!;
    const matrix = await engine.matrices.matrix(points, "bicycle");
    expect(calls).toHaveLength(4);
    expect(calls.every((c) => c.startsWith("/table/v1/cycling/"))).toBe(true);
    expect(Array.from(matrix.durations)).toEqual([0, 10, 20, 10, 0, 10, 20, 10, 0]);
    expect(Array.from(matrix.distances)).toEqual([0, 1000, 2000, 1000, 0, 1000, 2000, 1000, 0]);
    expect(await engine.geometry([[13.4, 52.5], [13.42, 52.52]])).toEqual([[1, 1], [2, 2], [3, 3]]);
  });

  it("falls back to the embedded model when the engine fails", async () => {
    const failing = roadEngine({ ROAD_ENGINE_URL: "http://osrm.test" }, (async () => new Response("down", { status: 503 })) as typeof fetch)!;
    const problem = { depot: { lat: 52.5, lon: 13.4 }, jobs: [{ id: "a", location: { lat: 52.51, lon: 13.41 } }] };
    expect(await withRoadMatrices(failing, problem)).toBe(problem);
    expect(await failing.geometry([[13.4, 52.5], [13.41, 52.51]])).toBeNull();
    const working = roadEngine({ ROAD_ENGINE_URL: "http://osrm.test" }, fakeOsrm([{ lon: 13.4, lat: 52.5 }, { lon: 13.41, lat: 52.51 }], []))!;
    expect((await withRoadMatrices(working, problem)).matrices?.car?.size).toBe(2);
  });

  it("routing still answers when the configured engine is unreachable", async () => {
    const co = await createCompany();
    const address = await insertAddress(co.id, { lng: 13.45, lat: 52.5 });
    const delivery = (await co.api("POST", "/delivery", { body: { deliverylocation_id: address } })).body;
    const request = new Request(`http://dispatch.test/${co.slug}/api/calcroute/optimized/timewindow?async=false`, {
      method: "POST",
      headers: { Authorization: `JWT ${co.dispatcher.token}`, "content-type": "application/json" },
      body: JSON.stringify({ deliveryids: [delivery.id] }),
    });
    const res = await worker.fetch(request, { ...env, ROAD_ENGINE_URL: "http://127.0.0.1:9" } as never, createExecutionContext());
    expect(res.status).toBe(200);
    const body = (await res.json()) as { objects: { routestring: unknown; deliveries: unknown[] }[] };
    expect(body.objects[0].deliveries).toHaveLength(1);
  });

  it("ETAs on the way follow the engine's drive through the stops, and the embedded model when it fails", async () => {
    const co = await createCompany();
    const openNow = { pdt_from: new Date(Date.now() - 3_600_000).toISOString(), pdt_to: new Date(Date.now() + 20 * 3_600_000).toISOString() };
    const ids: number[] = [];
    for (const lng of [13.4049, 13.4249]) ids.push((await co.api("POST", "/delivery", { body: { deliverylocation_id: await insertAddress(co.id, { lng, lat: 52.5317 }), ...openNow } })).body.id);
    const { driver, routeId } = await routeAndStart(co, ids);
    // The driver has moved off (so the ETAs are estimated, not the plan's): 2 km west of the depot.
    const position = { type: "Point", coordinates: [13.3549, 52.5317] };
    expect((await co.api("POST", "/drivertracking", { token: driver.token, body: { driver_id: driver.id, position } })).status).toBe(200);
    const etas = async (engineUrl: string) => {
      const request = new Request(`http://dispatch.test/${co.slug}/api/updateetas/timewindow/${routeId}`, { headers: { Authorization: `JWT ${co.dispatcher.token}` } });
      const res = await worker.fetch(request, { ...env, ROAD_ENGINE_URL: engineUrl } as never, createExecutionContext());
      expect(res.status).toBe(200);
      const body = (await res.json()) as { etas: { delivery_id: number; eta_from: string }[] };
      return body.etas.map((e) => (Date.parse(e.eta_from) - Date.now()) / 60_000);
    };
    // A congested road network: two hours per leg, where the embedded model drives 2-4 km in minutes.
    const real = globalThis.fetch;
    const legs: string[] = [];
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(String(input));
      if (url.host !== "osrm.test") return real(input, init);
      legs.push(url.pathname);
      const points = url.pathname.split("/").pop()!.split(";").length;
      return Response.json({ code: "Ok", routes: [{ legs: Array.from({ length: points - 1 }, () => ({ duration: 7200 })) }] });
    }) as typeof fetch;
    try {
      const [first, second] = await etas("http://osrm.test");
      expect(legs).toHaveLength(1);
      expect(legs[0]).toMatch(/^\/route\/v1\/driving\//);
      // Two hours slowed further by the hour's traffic factor (at most 1.6 times longer), then two more after 5 minutes' service.
      expect(first).toBeGreaterThan(115);
      expect(second - first).toBeGreaterThan(115);
    } finally {
      globalThis.fetch = real;
    }
    const [fallback] = await etas("http://127.0.0.1:9");
    expect(fallback).toBeLessThan(30);
  });
});
