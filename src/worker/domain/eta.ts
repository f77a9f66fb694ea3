/**
 * Estimated arrivals along the rest of a tour, from where the vehicle is now.
 * Pure: the embedded travel model of the solver (great circle x circuity at
 * the class's speed) slowed by the hour-of-day traffic profile.
 */
import { DEFAULT_SPEED_FACTORS, greatCircleProvider, type VehicleClassId } from "../../solver";

export interface EtaStop {
  lng: number;
  lat: number;
  /** Epoch seconds the window opens (the vehicle waits until then), if any. */
  windowStart: number | null;
  /** Seconds of service. */
  service: number;
}

export interface EtaResult {
  /** Epoch seconds of arrival. */
  arrival: number;
  /** Epoch seconds service starts (after any waiting). */
  serviceStart: number;
}

/** Speed factor of the traffic profile at an epoch second (profile days run Monday..Sunday, UTC). */
export function trafficFactorAt(epochSeconds: number): number {
  const date = new Date(epochSeconds * 1000);
  return DEFAULT_SPEED_FACTORS[(date.getUTCDay() + 6) % 7][date.getUTCHours()];
}

export function estimateArrivals(from: { lng: number; lat: number }, now: number, stops: EtaStop[], vehicleClass: VehicleClassId = "car"): EtaResult[] {
  const points = [{ lat: from.lat, lon: from.lng }, ...stops.map((s) => ({ lat: s.lat, lon: s.lng }))];
  const matrix = greatCircleProvider.matrix(points, vehicleClass) as { size: number; durations: ArrayLike<number> };
  const results: EtaResult[] = [];
  let t = now;
  for (let i = 0; i < stops.length; i++) {
    const freeFlow = matrix.durations[i * matrix.size + i + 1];
    const arrival = t + freeFlow / trafficFactorAt(t);
    const serviceStart = Math.max(arrival, stops[i].windowStart ?? -Infinity);
    results.push({ arrival: Math.round(arrival), serviceStart: Math.round(serviceStart) });
    t = serviceStart + stops[i].service;
  }
  return results;
}
