import { beforeAll, describe, expect, it } from "vitest";
import { type TestCompany, createCompany } from "./helpers";

type Window = { id: number; fromtime: string; totime: string; driver_id: number };

describe("driver availability", () => {
  let co: TestCompany;
  let driver: { id: number; token: string };
  let otherDriver: { id: number; token: string };
  let watcher: { token: string };
  beforeAll(async () => {
    co = await createCompany();
    driver = await co.user("driver");
    otherDriver = await co.user("driver");
    watcher = await co.user("watcher");
  });

  const add = async (fromtime: string, totime: string, driver_id = driver.id) => {
    const res = await co.api("POST", "/driveravailability", { body: { fromtime, totime, driver_id } });
    expect(res.status).toBe(200);
    return res.body as Window;
  };
  const windowsOf = async (driverId: number) => {
    const q = JSON.stringify({ filters: [{ name: "driver_id", op: "==", val: driverId }], order_by: [{ field: "fromtime" }] });
    const res = await co.api("GET", `/driveravailability?results_per_page=100&q=${encodeURIComponent(q)}`);
    expect(res.status).toBe(200);
    return res.body.objects as Window[];
  };

  it("POST stores the window as given (UTC), without merging", async () => {
    const a = await co.api("POST", "/driveravailability", {
      body: { id: 12345, fromtime: "2026-12-01T08:00:00+01:00", totime: "2026-12-01T12:00:00", driver_id: driver.id },
    });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ id: expect.any(Number), fromtime: "2026-12-01T07:00:00Z", totime: "2026-12-01T12:00:00Z", driver_id: driver.id });
    expect(a.body.id).not.toBe(12345);
    const overlapping = await add("2026-12-01T10:00:00Z", "2026-12-01T14:00:00Z");
    expect(overlapping.id).not.toBe(a.body.id);
    const got = await co.api("GET", `/driveravailability/${a.body.id}`, { token: watcher.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(a.body);
  });

  it("validates times, order and the driver", async () => {
    const reversed = await co.api("POST", "/driveravailability", { body: { fromtime: "2026-12-02T12:00:00Z", totime: "2026-12-02T08:00:00Z", driver_id: driver.id } });
    expect(reversed.status).toBe(422);
    expect(reversed.body.fields).toBe("fromtime,totime");
    const garbage = await co.api("POST", "/driveravailability", { body: { fromtime: "tomorrow", totime: "2026-12-02T08:00:00Z", driver_id: driver.id } });
    expect(garbage.status).toBe(422);
    expect(garbage.body.fields).toBe("fromtime");
    const noDriver = await co.api("POST", "/driveravailability", { body: { fromtime: "2026-12-02T08:00:00Z", totime: "2026-12-02T12:00:00Z" } });
    expect(noDriver.status).toBe(422);
    expect(noDriver.body.fields).toBe("driver_id");
    const unknown = await co.api("POST", "/driveravailability", { body: { fromtime: "2026-12-02T08:00:00Z", totime: "2026-12-02T12:00:00Z", driver_id: 999999 } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.fields).toBe("driver_id");
    const merge = await co.api("POST", "/mergedriveravailability", { body: { fromtime: "2026-12-02T12:00:00Z", totime: "2026-12-02T12:00:00Z", driver_id: driver.id } });
    expect(merge.status).toBe(422);
    expect(merge.body.fields).toBe("fromtime,totime");
  });

  it("PATCH identifies the window by id in the body; DELETE answers the deleted window", async () => {
    const w = await add("2026-12-03T08:00:00Z", "2026-12-03T12:00:00Z");
    const patched = await co.api("PATCH", "/driveravailability", { body: { id: w.id, totime: "2026-12-03T16:00:00Z" } });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ ...w, totime: "2026-12-03T16:00:00Z" });
    const bad = await co.api("PATCH", "/driveravailability", { body: { id: w.id, fromtime: "2026-12-03T17:00:00Z" } });
    expect(bad.status).toBe(422);
    expect(bad.body.fields).toBe("fromtime,totime");
    const moved = await co.api("PATCH", "/driveravailability", { body: { id: w.id, driver_id: otherDriver.id } });
    expect(moved.body.driver_id).toBe(otherDriver.id);
    expect((await co.api("PATCH", "/driveravailability", { body: { id: w.id, driver_id: 999999 } })).status).toBe(422);
    expect((await co.api("PATCH", "/driveravailability", { body: { totime: "2026-12-03T16:00:00Z" } })).body.fields).toBe("id");
    expect((await co.api("PATCH", "/driveravailability", { body: { id: 999999, totime: "2026-12-03T16:00:00Z" } })).status).toBe(404);

    const deleted = await co.api("DELETE", `/driveravailability/${w.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ ...w, totime: "2026-12-03T16:00:00Z", driver_id: otherDriver.id });
    expect((await co.api("GET", `/driveravailability/${w.id}`)).status).toBe(404);
    expect((await co.api("DELETE", `/driveravailability/${w.id}`)).status).toBe(404);
  });

  it("drivers read all windows and change only their own", async () => {
    const mine = await co.api("POST", "/driveravailability", { token: driver.token, body: { fromtime: "2026-12-04T08:00:00Z", totime: "2026-12-04T12:00:00Z" } });
    expect(mine.status).toBe(200);
    expect(mine.body.driver_id).toBe(driver.id);
    const theirs = await add("2026-12-04T08:00:00Z", "2026-12-04T12:00:00Z", otherDriver.id);

    expect((await co.api("GET", `/driveravailability/${theirs.id}`, { token: driver.token })).status).toBe(200);
    expect((await co.api("POST", "/driveravailability", { token: driver.token, body: { fromtime: "2026-12-04T08:00:00Z", totime: "2026-12-04T12:00:00Z", driver_id: otherDriver.id } })).status).toBe(403);
    expect((await co.api("PATCH", "/driveravailability", { token: driver.token, body: { id: theirs.id, totime: "2026-12-04T13:00:00Z" } })).status).toBe(403);
    expect((await co.api("PATCH", "/driveravailability", { token: driver.token, body: { id: mine.body.id, driver_id: otherDriver.id } })).status).toBe(403);
    expect((await co.api("DELETE", `/driveravailability/${theirs.id}`, { token: driver.token })).status).toBe(403);
    expect((await co.api("POST", "/mergedriveravailability", { token: driver.token, body: { fromtime: "2026-12-04T08:00:00Z", totime: "2026-12-04T12:00:00Z", driver_id: otherDriver.id } })).status).toBe(403);
    // Unchanged by the refused calls.
    expect((await co.api("GET", `/driveravailability/${theirs.id}`)).body).toEqual(theirs);

    const own = await co.api("PATCH", "/driveravailability", { token: driver.token, body: { id: mine.body.id, totime: "2026-12-04T13:00:00Z" } });
    expect(own.status).toBe(200);
    expect(own.body.totime).toBe("2026-12-04T13:00:00Z");
    expect((await co.api("DELETE", `/driveravailability/${mine.body.id}`, { token: driver.token })).status).toBe(200);
  });

  it("watchers get 403 on every mutation", async () => {
    const w = await add("2026-12-05T08:00:00Z", "2026-12-05T12:00:00Z");
    const token = watcher.token;
    const body = { fromtime: "2026-12-05T08:00:00Z", totime: "2026-12-05T12:00:00Z", driver_id: driver.id };
    expect((await co.api("POST", "/driveravailability", { token, body })).status).toBe(403);
    expect((await co.api("PATCH", "/driveravailability", { token, body: { ...body, id: w.id } })).status).toBe(403);
    expect((await co.api("DELETE", `/driveravailability/${w.id}`, { token })).status).toBe(403);
    expect((await co.api("POST", "/mergedriveravailability", { token, body })).status).toBe(403);
    expect((await co.api("GET", `/driveravailability/${w.id}`)).status).toBe(200);
  });

  describe("merge", () => {
    let d: { id: number; token: string };
    beforeAll(async () => {
      d = await co.user("driver");
    });
    const merge = (fromtime: string, totime: string, token?: string) =>
      co.api("POST", "/mergedriveravailability", token ? { token, body: { fromtime, totime } } : { body: { fromtime, totime, driver_id: d.id } });

    it("no overlap: created, 201", async () => {
      const res = await merge("2026-12-10T08:00:00Z", "2026-12-10T10:00:00Z");
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ merged: false, id: expect.any(Number), fromtime: "2026-12-10T08:00:00Z", totime: "2026-12-10T10:00:00Z", driver_id: d.id });
      expect(await windowsOf(d.id)).toEqual([{ id: res.body.id, fromtime: "2026-12-10T08:00:00Z", totime: "2026-12-10T10:00:00Z", driver_id: d.id }]);
    });

    it("overlap at the end of an existing window (the new one's beginning): merged", async () => {
      const [existing] = await windowsOf(d.id);
      const res = await merge("2026-12-10T09:00:00Z", "2026-12-10T12:00:00Z");
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ merged: true, merged_ids: [existing.id], id: existing.id, fromtime: "2026-12-10T08:00:00Z", totime: "2026-12-10T12:00:00Z", driver_id: d.id });
      expect(await windowsOf(d.id)).toEqual([{ id: existing.id, fromtime: "2026-12-10T08:00:00Z", totime: "2026-12-10T12:00:00Z", driver_id: d.id }]);
    });

    it("overlap at the beginning of an existing window (the new one's end): merged", async () => {
      const [existing] = await windowsOf(d.id);
      const res = await merge("2026-12-10T06:00:00Z", "2026-12-10T08:30:00Z");
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ merged: true, merged_ids: [existing.id], id: existing.id, fromtime: "2026-12-10T06:00:00Z", totime: "2026-12-10T12:00:00Z" });
      expect((await windowsOf(d.id)).length).toBe(1);
    });

    it("overlap with two windows (beginning and end): one window, the other deleted", async () => {
      const [first] = await windowsOf(d.id); // 06:00-12:00
      const second = await add("2026-12-10T14:00:00Z", "2026-12-10T18:00:00Z", d.id);
      const unrelated = await add("2026-12-11T08:00:00Z", "2026-12-11T10:00:00Z", d.id);
      const foreign = await add("2026-12-10T11:00:00Z", "2026-12-10T15:00:00Z", otherDriver.id);
      const res = await merge("2026-12-10T11:00:00Z", "2026-12-10T15:00:00Z");
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ merged: true, merged_ids: [first.id, second.id], id: first.id, fromtime: "2026-12-10T06:00:00Z", totime: "2026-12-10T18:00:00Z", driver_id: d.id });
      expect(await windowsOf(d.id)).toEqual([
        { id: first.id, fromtime: "2026-12-10T06:00:00Z", totime: "2026-12-10T18:00:00Z", driver_id: d.id },
        unrelated,
      ]);
      expect((await co.api("GET", `/driveravailability/${second.id}`)).status).toBe(404);
      // Other drivers' windows are never merged.
      expect((await co.api("GET", `/driveravailability/${foreign.id}`)).body).toEqual(foreign);
    });

    it("a window inside an existing one merges into it unchanged; touching windows merge", async () => {
      const [first] = await windowsOf(d.id);
      const inside = await merge("2026-12-10T07:00:00Z", "2026-12-10T09:00:00Z");
      expect(inside.status).toBe(200);
      expect(inside.body).toMatchObject({ merged: true, id: first.id, fromtime: "2026-12-10T06:00:00Z", totime: "2026-12-10T18:00:00Z" });
      const touching = await merge("2026-12-10T18:00:00Z", "2026-12-10T19:00:00Z");
      expect(touching.status).toBe(200);
      expect(touching.body).toMatchObject({ merged: true, id: first.id, totime: "2026-12-10T19:00:00Z" });
    });

    it("a driver merges its own windows without naming itself", async () => {
      const res = await merge("2026-12-11T09:00:00Z", "2026-12-11T11:00:00Z", d.token);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ merged: true, fromtime: "2026-12-11T08:00:00Z", totime: "2026-12-11T11:00:00Z", driver_id: d.id });
    });

    it("concurrent merges of overlapping windows end in one window", async () => {
      const e = await co.user("driver");
      const body = (from: string, to: string) => ({ body: { fromtime: from, totime: to, driver_id: e.id } });
      const results = await Promise.all([
        co.api("POST", "/mergedriveravailability", body("2026-12-20T08:00:00Z", "2026-12-20T10:00:00Z")),
        co.api("POST", "/mergedriveravailability", body("2026-12-20T09:00:00Z", "2026-12-20T11:00:00Z")),
        co.api("POST", "/mergedriveravailability", body("2026-12-20T10:30:00Z", "2026-12-20T12:00:00Z")),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 200, 201]);
      const windows = await windowsOf(e.id);
      expect(windows).toEqual([{ id: expect.any(Number), fromtime: "2026-12-20T08:00:00Z", totime: "2026-12-20T12:00:00Z", driver_id: e.id }]);
    });
  });

  it("list filters and tenancy", async () => {
    const b = await createCompany();
    const w = await add("2026-12-06T08:00:00Z", "2026-12-06T12:00:00Z");
    expect((await b.api("GET", `/driveravailability/${w.id}`)).status).toBe(404);
    expect((await b.api("DELETE", `/driveravailability/${w.id}`)).status).toBe(404);
    expect((await b.api("PATCH", "/driveravailability", { body: { id: w.id, totime: "2026-12-06T13:00:00Z" } })).status).toBe(404);
    expect((await b.api("GET", "/driveravailability")).body.num_results).toBe(0);
    // Company A's driver is unknown to company B.
    const foreign = await b.api("POST", "/driveravailability", { body: { fromtime: "2026-12-06T08:00:00Z", totime: "2026-12-06T12:00:00Z", driver_id: driver.id } });
    expect(foreign.status).toBe(422);
    expect((await co.api("GET", `/driveravailability/${w.id}`)).body).toEqual(w);

    const q = JSON.stringify({ filters: [{ name: "fromtime", op: ">=", val: "2026-12-06T00:00:00Z" }, { name: "fromtime", op: "<", val: "2026-12-07T00:00:00+00:00" }] });
    const res = await co.api("GET", `/driveravailability?q=${encodeURIComponent(q)}`);
    expect(res.body.objects).toEqual([w]);
    expect((await co.api("GET", `/driveravailability?q=${encodeURIComponent(JSON.stringify({ filters: [{ name: "nope", op: "==", val: 1 }] }))}`)).body.fields).toBe("nope");
  });
});
