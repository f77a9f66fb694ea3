import { beforeAll, describe, expect, it } from "vitest";
import { instantOf } from "../src/shared/wall-clock";
import { type TestCompany, call, createCompany, insertAddress } from "./helpers";

/** The next day on the company's wall clock (Europe/Berlin) at hh:mm, as UTC ISO. */
const day = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
const at = (hhmm: string) => new Date(instantOf(day, hhmm, "Europe/Berlin")).toISOString().replace(".000Z", "Z");

describe("several time windows per delivery", () => {
  let co: TestCompany;
  let address: number;
  beforeAll(async () => {
    co = await createCompany();
    address = await insertAddress(co.id, { lng: 13.41, lat: 52.52 });
  });

  it("are stored sorted in UTC, and make the outer window when it is not given", async () => {
    const res = await co.api("POST", "/delivery", {
      body: { deliverylocation_id: address, time_windows: [{ from: at("14:00"), to: at("18:00") }, { from: at("08:00").replace("Z", "+00:00"), to: at("12:00") }] },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.time_windows).toEqual([
      { from: at("08:00"), to: at("12:00") },
      { from: at("14:00"), to: at("18:00") },
    ]);
    expect(res.body).toMatchObject({ pdt_from: at("08:00"), pdt_to: at("18:00"), window_from: null, window_to: null });
    const plain = await co.api("POST", "/delivery", { body: { deliverylocation_id: address } });
    expect(plain.body.time_windows).toEqual([]);
  });

  it("refuses overlapping windows, windows outside pdt_from..pdt_to, and an outer window shrunk past them: 422, nothing stored", async () => {
    const before = (await co.api("GET", "/delivery")).body.num_results;
    const overlapping = await co.api("POST", "/delivery", {
      body: { deliverylocation_id: address, time_windows: [{ from: at("08:00"), to: at("12:00") }, { from: at("11:00"), to: at("15:00") }] },
    });
    expect(overlapping.status).toBe(422);
    expect(overlapping.body).toMatchObject({ fields: "time_windows", message: expect.stringMatching(/overlap/) });
    const outside = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: at("09:00"), pdt_to: at("17:00"), time_windows: [{ from: at("08:00"), to: at("10:00") }] } });
    expect(outside.status).toBe(422);
    const inverted = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, time_windows: [{ from: at("10:00"), to: at("08:00") }] } });
    expect(inverted.status).toBe(422);
    expect((await co.api("GET", "/delivery")).body.num_results).toBe(before);

    const stored = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, time_windows: [{ from: at("08:00"), to: at("10:00") }, { from: at("14:00"), to: at("16:00") }] } });
    const shrunk = await co.api("PATCH", "/delivery", { body: { id: stored.body.id, pdt_to: at("15:00") } });
    expect(shrunk.status).toBe(422);
    expect((await co.api("GET", `/delivery/${stored.body.id}`)).body.pdt_to).toBe(at("16:00"));
  });

  it("routing serves a delivery in the window a vehicle can reach and keeps that window for ETAs and the tracking page", async () => {
    const res = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, els: 10, time_windows: [{ from: at("08:00"), to: at("10:00") }, { from: at("14:00"), to: at("16:00") }] } });
    // The vehicle leaves at noon: the morning window is gone.
    const routed = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { body: { deliveryids: [res.body.id], start_time: at("12:00") } });
    expect(routed.status, routed.text).toBe(200);
    const stop = routed.body.objects[0].deliveries[0];
    expect(stop).toMatchObject({ window_from: at("14:00"), window_to: at("16:00"), tdt_from: at("14:00") });
    const link = (await co.api("POST", `/delivery/${res.body.id}/trackinglink`)).body.link as string;
    const tracking = await call("GET", new URL(link).pathname.replace("/t/", "/track/"));
    expect(tracking.body.window).toEqual({ from: at("14:00"), to: at("16:00") });

    // Leaving early, the morning window is used.
    const early = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, time_windows: [{ from: at("08:00"), to: at("10:00") }, { from: at("14:00"), to: at("16:00") }] } });
    const morning = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { body: { deliveryids: [early.body.id], start_time: at("07:30") } });
    expect(morning.body.objects[0].deliveries[0]).toMatchObject({ window_from: at("08:00"), window_to: at("10:00") });
  });

  it("every window closed before the vehicle can come: 422 naming the windows, nothing routed", async () => {
    const res = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, time_windows: [{ from: at("08:00"), to: at("09:00") }, { from: at("10:00"), to: at("11:00") }] } });
    const routed = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { body: { deliveryids: [res.body.id], start_time: at("12:00") } });
    expect(routed.status).toBe(422);
    expect(routed.body.message).toMatch(/every window/);
    expect((await co.api("GET", `/delivery/${res.body.id}`)).body.status).toBe(0);
  });

  it("deliverydata items take time_windows as well", async () => {
    const routed = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", {
      body: { deliverydata: [{ lat: 52.5, lng: 13.4, city: "Berlin", time_windows: [{ from: at("09:00"), to: at("10:00") }, { from: at("15:00"), to: at("16:00") }] }], start_time: at("11:00") },
    });
    expect(routed.status, routed.text).toBe(200);
    expect(routed.body.objects[0].deliveries[0]).toMatchObject({ pdt_from: at("09:00"), pdt_to: at("16:00"), window_from: at("15:00") });
    const bad = await co.api("POST", "/calcroute/optimized/timewindow?async=false", { body: { deliverydata: [{ lat: 52.5, lng: 13.4, city: "Berlin", time_windows: [{ from: "soon", to: at("10:00") }] }] } });
    expect(bad.status).toBe(422);
    expect(bad.body.fields).toBe("deliverydata.0.time_windows");
  });
});
