/**
 * `GET /routedeliverydistances/<route_id>`: per delivery of a route, in
 * driving order, the road distance in metres from its predecessor.
 *
 * The embedded estimate is the one the solver plans with: great-circle
 * (haversine) distance x CIRCUITY_FACTOR (1.3), rounded to whole metres.
 * The deprecated delivery field `distances` is not used.
 */
import { and, eq } from "drizzle-orm";
import { CIRCUITY_FACTOR } from "../../solver/matrix";
import { addresses } from "../db/schema";
import type { Db } from "../context";
import { haversineMeters } from "../geo/distance";
import type { DeliveryRow } from "./deliveries";
import { type RouteRow, loadRouteDeliveries } from "./route-records";
import { inList } from "../db/sql";

export interface RouteDeliveryDistance {
  delivery_id: number;
  orderindex: number | null;
  /** Metres from the preceding stop (the route base for the first delivery); null when a coordinate is unknown. */
  distance: number | null;
}

interface Coord {
  lng: number;
  lat: number;
}

/** Estimated road metres between two points: great circle x circuity, rounded. */
export const roadMetres = (a: Coord, b: Coord) => Math.round(haversineMeters(a.lng, a.lat, b.lng, b.lat) * CIRCUITY_FACTOR);

/**
 * Legs of a tour: the start is the route's base address, else the first
 * delivery's pickup location, else the company depot. A delivery without a
 * coordinate gets `null`, and the next leg starts from the last known point.
 */
export function legDistances(start: Coord | null, stops: { delivery_id: number; orderindex: number | null; at: Coord | null }[]): RouteDeliveryDistance[] {
  let from = start;
  return stops.map((s) => {
    const distance = from && s.at ? roadMetres(from, s.at) : null;
    if (s.at) from = s.at;
    return { delivery_id: s.delivery_id, orderindex: s.orderindex, distance };
  });
}

export async function routeDeliveryDistances(db: Db, companyId: number, route: RouteRow, companyDepotId: number | null): Promise<RouteDeliveryDistance[]> {
  const rows: DeliveryRow[] = await loadRouteDeliveries(db, companyId, [route.id]);
  const startId = route.routebase_address_id ?? rows[0]?.supplierlocation_id ?? companyDepotId;
  const addressIds = [...new Set([startId, ...rows.map((r) => r.deliverylocation_id)].filter((id): id is number => id !== null))];
  const found = addressIds.length
    ? await db
        .select({ id: addresses.id, lng: addresses.lng, lat: addresses.lat })
        .from(addresses)
        .where(and(eq(addresses.company_id, companyId), inList(addresses.id, addressIds)))
    : [];
  const coords = new Map<number, Coord>();
  for (const a of found) if (a.lng !== null && a.lat !== null) coords.set(a.id, { lng: a.lng, lat: a.lat });
  const at = (id: number | null) => (id === null ? null : (coords.get(id) ?? null));
  return legDistances(
    at(startId),
    rows.map((r) => ({ delivery_id: r.id, orderindex: r.orderindex, at: at(r.deliverylocation_id) })),
  );
}
