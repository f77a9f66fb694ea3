/** Tours on the way along a line through the depot, for the re-planning tests (insertion, fleet re-plan). */
import { expect } from "vitest";
import { type TestCompany, insertAddress, routeAndStart } from "./helpers";

/** Longitude of the k-th point on a line through the depot (13.3849, 52.5317), about 1.4 km apart; west is negative. */
export const lngOf = (k: number) => 13.3849 + 0.02 * k;
/** A window open from an hour ago for ten hours. */
export const openNow = () => ({ pdt_from: new Date(Date.now() - 3_600_000).toISOString(), pdt_to: new Date(Date.now() + 10 * 3_600_000).toISOString() });

/** A delivery at the k-th point of the line (open now, 5 min of service); its id. */
export async function deliveryAt(co: TestCompany, k: number, window: Record<string, string> = openNow()) {
  const address = await insertAddress(co.id, { lng: lngOf(k), lat: 52.5317 });
  const created = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, ...window, els: 5 } });
  expect(created.status, created.text).toBe(201);
  return created.body.id as number;
}

/** Two tours on the way: one west of the depot, its driver at its far end, one east likewise. */
export async function twoRunningTours(co: TestCompany) {
  const west = await routeAndStart(co, [await deliveryAt(co, -1), await deliveryAt(co, -2), await deliveryAt(co, -3)]);
  const east = await routeAndStart(co, [await deliveryAt(co, 1), await deliveryAt(co, 2), await deliveryAt(co, 3)]);
  for (const [{ driver }, k] of [[west, -2.5], [east, 2.5]] as const) {
    const position = { type: "Point", coordinates: [lngOf(k), 52.5317] };
    expect((await co.api("POST", "/drivertracking", { token: driver.token, body: { driver_id: driver.id, position } })).status).toBe(200);
  }
  return { west, east };
}
