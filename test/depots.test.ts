import { beforeAll, describe, expect, it } from "vitest";
import { instantOf } from "../src/shared/wall-clock";
import { type TestCompany, createCompany, insertAddress } from "./helpers";

const day = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
const at = (hhmm: string) => new Date(instantOf(day, hhmm, "Europe/Berlin")).toISOString();

describe("several depots in one run", () => {
  let co: TestCompany;
  let potsdam: number;
  const make = async (lng: number, lat: number, extra: Record<string, unknown> = {}) =>
    (await co.api("POST", "/delivery", { body: { deliverylocation_id: await insertAddress(co.id, { lng, lat }), ...extra } })).body.id as number;
  beforeAll(async () => {
    co = await createCompany();
    potsdam = await insertAddress(co.id, { lng: 13.06, lat: 52.39, city: "Potsdam" });
  });

  it("each vehicle starts from its own depot, and the optimiser lets each hub serve its streets", async () => {
    const mitte = [await make(13.39, 52.53), await make(13.41, 52.535)];
    const west = [await make(13.07, 52.4), await make(13.05, 52.385)];
    // With the default objective one van would drive all four (fewest tours first); the cheapest plan uses both hubs.
    const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false&objective=cost", {
      body: { deliveryids: [...mitte, ...west], vehicles: [{ name: "Mitte van" }, { name: "Potsdam van", depot_location_id: potsdam }] },
    });
    expect(res.status, res.text).toBe(200);
    const start = (await co.api("GET", "/company")).body.objects[0].location_id;
    const byVehicle = Object.fromEntries(res.body.objects.map((r: { vehicle: string }) => [r.vehicle, r]));
    expect(byVehicle["Potsdam van"]).toMatchObject({ routebase_address_id: potsdam });
    expect(byVehicle["Potsdam van"].deliveries.map((d: { id: number }) => d.id).sort()).toEqual([...west].sort());
    expect(byVehicle["Mitte van"]).toMatchObject({ routebase_address_id: start });
    expect(byVehicle["Mitte van"].deliveries.map((d: { id: number }) => d.id).sort()).toEqual([...mitte].sort());
    // The line starts and ends at the tour's own depot.
    const line = (await co.api("GET", `/routemetadata/${byVehicle["Potsdam van"].id}?routestring=true`)).body.routestring.coordinates;
    expect(line[0]).toEqual([13.06, 52.39]);
    expect(line[line.length - 1]).toEqual([13.06, 52.39]);
  });

  it("a delivery loaded at a hub (its supplierlocation_id) goes from that hub, though the other is nearer", async () => {
    const fromPotsdam = await make(13.4, 52.53, { supplierlocation_id: potsdam });
    const res = await co.api("POST", "/calcroute/optimized/timewindow?async=false", {
      body: { deliveryids: [fromPotsdam], vehicles: [{ name: "Mitte van" }, { name: "Potsdam van", depot_location_id: potsdam }] },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.objects).toHaveLength(1);
    expect(res.body.objects[0]).toMatchObject({ vehicle: "Potsdam van", routebase_address_id: potsdam });
  });
});

describe("objective=cost", () => {
  it("plans the cheapest tours within the fleet instead of the fewest", async () => {
    const co = await createCompany();
    const make = async (lng: number, from: string, to: string) =>
      (await co.api("POST", "/delivery", { body: { deliverylocation_id: await insertAddress(co.id, { lng, lat: 52.5317 }), pdt_from: at(from), pdt_to: at(to) } })).body.id as number;
    // East early and late, west in between: one van can drive all three, zig-zagging; two drive less.
    const ids = [await make(13.46, "08:00", "08:10"), await make(13.463, "12:00", "12:10"), await make(13.31, "10:00", "10:10")];
    const fleet = [{ name: "A", km_rate: 1 }, { name: "B", km_rate: 1 }];
    const fewest = await co.api("POST", "/calcroute/optimized/timewindow?async=false&cancelroutes=true", { body: { deliveryids: ids, vehicles: fleet, start_time: at("07:00") } });
    expect(fewest.status, fewest.text).toBe(200);
    const cheapest = await co.api("POST", "/calcroute/optimized/timewindow?async=false&cancelroutes=true&objective=cost", { body: { deliveryids: ids, vehicles: fleet, start_time: at("07:00") } });
    expect(cheapest.status, cheapest.text).toBe(200);
    const km = (routes: { distance: number }[]) => routes.reduce((s, r) => s + r.distance, 0);
    expect(fewest.body.objects).toHaveLength(1);
    expect(cheapest.body.objects).toHaveLength(2);
    expect(km(cheapest.body.objects)).toBeLessThan(km(fewest.body.objects) * 0.8);
    expect((await co.api("POST", "/calcroute/optimized/timewindow?async=false&objective=cheapest", { body: { deliveryids: ids } })).status).toBe(422);
  });
});
