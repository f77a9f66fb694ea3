/**
 * Estimated arrivals along the rest of a tour, from where the vehicle is now.
 * Pure: the road engine's leg times when the caller has them, else the
 * embedded travel model of the solver (great circle x circuity at the class's
 * speed), slowed by the traffic profile, read on the company's wall clock
 * (rush hour is local), and a customer-facing ETA window.
 */
import { DEFAULT_SPEED_FACTORS, greatCircleProvider, type VehicleClassId } from "../../solver";
import { wallClockAt } from "../../shared/wall-clock";
import type { RouteBreak } from "../../shared/contract/breaks";

export interface EtaStop {
  lng: number;
  lat: number;
  /** Epoch seconds the window opens (the vehicle waits until then), if any. */
  windowStart: number | null;
  /** Seconds of service. */
  service: number;
  /** Seconds of planned breaks still to take before driving to it. */
  pauseBefore?: number;
}

export interface EtaResult {
  /** Epoch seconds of arrival. */
  arrival: number;
  /** Epoch seconds service starts (after any waiting). */
  serviceStart: number;
  /** The customer's ETA window (epoch seconds): from service start, widened by {@link etaSpread}. */
  etaFrom: number;
  etaTo: number;
}

/**
 * Width of the ETA window: 10 minutes plus 5 % of the time the vehicle has
 * been under way (driving and serving, not waiting for a window to open)
 * since it left, at most 60 minutes, so a customer is never told "sometime
 * in the next weeks" however far ahead the stop lies.
 */
export const ETA_WINDOW = { baseSeconds: 600, growth: 0.05, maxSeconds: 3600 } as const;

export const etaSpread = (underWaySeconds: number) => Math.min(ETA_WINDOW.baseSeconds + Math.round(underWaySeconds * ETA_WINDOW.growth), ETA_WINDOW.maxSeconds);

/** Speed factor of the traffic profile at an epoch second, by weekday and hour of the wall clock in `timeZone`. */
export function trafficFactorAt(epochSeconds: number, timeZone: string): number {
  const { weekday, hour } = wallClockAt(epochSeconds * 1000, timeZone);
  return DEFAULT_SPEED_FACTORS[weekday][hour];
}

export function estimateArrivals(
  from: { lng: number; lat: number },
  now: number,
  stops: EtaStop[],
  options: { timeZone: string; vehicleClass?: VehicleClassId; legSeconds?: readonly number[] | null },
): EtaResult[] {
  const points = [{ lat: from.lat, lon: from.lng }, ...stops.map((s) => ({ lat: s.lat, lon: s.lng }))];
  const legs = options.legSeconds ?? embeddedLegs(points, options.vehicleClass ?? "car");
  const results: EtaResult[] = [];
  let t = now;
  let underWay = 0;
  for (let i = 0; i < stops.length; i++) {
    t += stops[i].pauseBefore ?? 0;
    const drive = legs[i] / trafficFactorAt(t, options.timeZone);
    const arrival = t + drive;
    const serviceStart = Math.max(arrival, stops[i].windowStart ?? -Infinity);
    underWay += drive;
    const etaFrom = Math.round(serviceStart);
    results.push({ arrival: Math.round(arrival), serviceStart: etaFrom, etaFrom, etaTo: etaFrom + etaSpread(underWay) });
    t = serviceStart + stops[i].service;
    underWay += stops[i].service;
  }
  return results;
}

/** Seconds of each leg through the points in order, by the embedded model. */
function embeddedLegs(points: { lat: number; lon: number }[], vehicleClass: VehicleClassId): number[] {
  const matrix = greatCircleProvider.matrix(points, vehicleClass) as { size: number; durations: ArrayLike<number> };
  return points.slice(1).map((_, i) => matrix.durations[i * matrix.size + i + 1]);
}

/**
 * Seconds of a route's planned breaks still to take before each of its open stops (given by `orderindex`, in
 * driving order): a break not over yet at `now` goes before the first open stop planned after it, with what is left
 * of it; one after the last open stop moves no ETA. The driver app does not report breaks, so a break is assumed
 * taken as planned, however early or late the driver runs.
 */
export function pausesBefore(breaks: readonly RouteBreak[], openStops: readonly number[], now: number): number[] {
  const pauses = openStops.map(() => 0);
  for (const b of breaks) {
    const left = Math.min(b.minutes * 60, Date.parse(b.end) / 1000 - now);
    const next = openStops.findIndex((orderindex) => orderindex > b.after_orderindex);
    if (left > 0 && next >= 0) pauses[next] += left;
  }
  return pauses;
}
