import { describe, expect, it } from "vitest";
import { dayAt } from "../src/shared/wall-clock";
import { createCompany, insertAddress, routeAndStart } from "./helpers";

const openNow = () => ({ pdt_from: new Date(Date.now() - 3_600_000).toISOString(), pdt_to: new Date(Date.now() + 10 * 3_600_000).toISOString() });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("arrival from positions", () => {
  it("a stop's ata is the first position within 100 m of it since the last report, when the driver reports later; the day report reads it", async () => {
    const co = await createCompany();
    const places = [13.4049, 13.4249];
    const ids: number[] = [];
    for (const lng of places) {
      const address = await insertAddress(co.id, { lng, lat: 52.5317 });
      ids.push((await co.api("POST", "/delivery", { body: { deliverylocation_id: address, ...openNow(), els: 5 } })).body.id);
    }
    const { driver } = await routeAndStart(co, ids);
    const post = (lng: number) => co.api("POST", "/drivertracking", { token: driver.token, body: { driver_id: driver.id, position: { type: "Point", coordinates: [lng, 52.5317] } } });
    // At the first stop (about 30 m off), then 200 m short of the second: that one does not count as arrived.
    await sleep(1100);
    const atFirst = await post(places[0] + 0.0004);
    expect(atFirst.status).toBe(200);
    await sleep(1100);
    expect((await post(places[1] - 0.003)).status).toBe(200);
    await sleep(1100);
    // The driver reports both only now, the first late.
    for (const id of ids) expect((await co.api("POST", `/deliverydone/${id}`, { token: driver.token, body: { status: "delivered" } })).status).toBe(200);
    const [first, second] = await Promise.all(ids.map(async (id) => (await co.api("GET", `/delivery/${id}`)).body));
    expect(first.ata).toBe(atFirst.body.timestamp);
    expect(Date.parse(first.atd) - Date.parse(first.ata)).toBeGreaterThanOrEqual(2000);
    expect(second.ata).toBe(second.atd);
    const report = await co.api("GET", `/report/day?date=${dayAt(Date.now(), "Europe/Berlin")}&stops=true`);
    expect(report.status, report.text).toBe(200);
    const stops = report.body.routes[0].stop_details as { delivery_id: number; ata: string }[];
    expect(stops.find((s) => s.delivery_id === ids[0])!.ata).toBe(first.ata);
  });
});
