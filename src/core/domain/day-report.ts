/**
 * The day report's arithmetic, pure: one finished route's figures from its
 * stored records (`routeFigures`, stored once per route in `route_reports`),
 * and the sums per route, per driver and in total over a day or a range
 * (`aggregate`, on every read). No I/O: services/day-report.ts reads the rows.
 *
 * Definitions (docs/features/day-report.md repeats them for users):
 * - actual km: the driver's tracked positions from the route's start (`ast`)
 *   to its last report, great-circle metres between consecutive positions; a
 *   step implying more than MAX_PLAUSIBLE_KMH is a GPS jump and not counted.
 *   No position: null (unknown, never 0).
 * - actual duration: start (`ast`) to the last report (`atd`).
 * - on time: the arrival (`ata`) lies inside the delivery's window
 *   [`pdt_from`, `pdt_to`]; stops without a window or without an arrival do not
 *   count either way (`with_window` is the denominator). Early: before the
 *   window opens (not on time, not late; the minutes until it opens are the
 *   actual waiting time). Late: after it closes, by `late_minutes`.
 * - stops per hour: reported stops (delivered + not delivered) per hour of
 *   actual duration.
 * - CO₂e: km × the vehicle's factor (g CO₂e per km, well-to-wheel): the
 *   vehicle's own `co2e_g_per_km`, else its class's default (EMISSION_FACTORS).
 *   Tracked km when there are any, else planned km (`co2e_basis`).
 */
import { type RouteBreak, breakMinutes } from "../../shared/contract/breaks";
import { haversineMeters } from "../geo/distance";
import type { Figures, StopFigure } from "../../shared/contract/day-report";
import { DELIVERY_CODES } from "./states";
import { heldWindow } from "../../shared/contract/delivery-window";

/** Steps between two positions faster than this are GPS jumps, not driving. */
export const MAX_PLAUSIBLE_KMH = 200;

/**
 * Default emission factors, g CO₂e per vehicle-km, well-to-wheel. Estimates in the spirit of the GLEC Framework v3 /
 * ISO 14083 default-factor approach: an assumed consumption times the energy's WTW factor (docs/features/day-report.md, "CO2e is an estimate", cites them).
 */
export const EMISSION_FACTORS: Record<string, { g_per_km: number; basis: string }> = {
  car: { g_per_km: 292, basis: "diesel van ≤ 3.5 t, 9 l/100 km × 3.24 kg CO₂e/l (diesel WTW, EN 16258 / GLEC)" },
  truck: { g_per_km: 648, basis: "rigid diesel truck 7.5–12 t, 20 l/100 km × 3.24 kg CO₂e/l (diesel WTW, EN 16258 / GLEC)" },
  bicycle: { g_per_km: 8, basis: "electric cargo bicycle, 2 kWh/100 km × 0.4 kg CO₂e/kWh (German electricity mix, UBA: about 380 g/kWh in 2023)" },
};

/** Lateness histogram buckets, whole minutes after the window closed (begun minutes count): (from, to]; the first holds the stops not late. */
export const LATENESS_BUCKETS: readonly { label: string; from: number; to: number | null }[] = [
  { label: "on time or early", from: 0, to: 0 },
  { label: "1–5 min", from: 0, to: 5 },
  { label: "5–15 min", from: 5, to: 15 },
  { label: "15–30 min", from: 15, to: 30 },
  { label: "30–60 min", from: 30, to: 60 },
  { label: "60+ min", from: 60, to: null },
];

export interface StopInput {
  id: number;
  /** 2 delivered, 3 not delivered; anything else: not reported. */
  status: number;
  ata: string | null;
  atd: string | null;
  pdt_from: string | null;
  pdt_to: string | null;
  /** The window of its several the plan chose (HeldWindowFields). */
  window_from?: string | null;
  window_to?: string | null;
  /** Planned waiting before the window opens, seconds (the plan's). */
  waiting_time: number | null;
  code: number | null;
  drivernotes: string | null;
}

export interface RouteInput {
  route_id: number;
  driver_id: number | null;
  /** Started (on the way), ISO UTC. */
  ast: string | null;
  tst_from: string | null;
  planned_distance_m: number;
  planned_duration_s: number;
  /** The breaks the plan placed. */
  planned_breaks: readonly RouteBreak[];
  stops: StopInput[];
  /** The driver's positions, any order; only those from `ast` to the last report count. */
  positions: { timestamp: string; lng: number; lat: number }[];
  vehicle_class: string;
  /** The vehicle's own factor (g CO₂e/km), overriding its class's. */
  co2e_factor: number | null;
}

/** One finished route's figures: what `route_reports` stores. */
export interface RouteFigures {
  route_id: number;
  driver_id: number | null;
  started_at: string | null;
  finished_at: string | null;
  planned_distance_m: number;
  actual_distance_m: number | null;
  positions: number;
  planned_duration_s: number;
  actual_duration_s: number | null;
  stops: number;
  delivered: number;
  not_delivered: number;
  with_window: number;
  on_time: number;
  early: number;
  late: number;
  late_minutes: number;
  waiting_planned_s: number;
  waiting_actual_s: number;
  /** Absent in figures stored before breaks were planned. */
  break_planned_s?: number;
  vehicle_class: string;
  co2e_factor: number;
  co2e_basis: "tracked" | "planned";
  co2e_g: number;
  stop_figures: StopFigure[];
}

const ms = (iso: string | null) => (iso ? Date.parse(iso) : NaN);
/** Metres driven along positions in time order, GPS jumps left out; null without two positions. */
export function trackedMeters(positions: { timestamp: string; lng: number; lat: number }[]): number | null {
  if (positions.length < 2) return null;
  const sorted = [...positions].sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
  let meters = 0;
  for (let i = 1; i < sorted.length; i++) {
    const step = haversineMeters(sorted[i - 1].lng, sorted[i - 1].lat, sorted[i].lng, sorted[i].lat);
    const seconds = (ms(sorted[i].timestamp) - ms(sorted[i - 1].timestamp)) / 1000;
    if (seconds > 0 ? (step / seconds) * 3.6 <= MAX_PLAUSIBLE_KMH : step < 50) meters += step;
  }
  return Math.round(meters);
}

const codeName = (code: number | null) => DELIVERY_CODES.find((c) => c.id === code)?.name;

export function factorFor(vehicleClass: string, own: number | null): number {
  return own ?? EMISSION_FACTORS[vehicleClass]?.g_per_km ?? EMISSION_FACTORS.car.g_per_km;
}

/** The figures of one finished route from its records. */
export function routeFigures(input: RouteInput): RouteFigures {
  const reported = input.stops.filter((s) => s.status === 2 || s.status === 3);
  const stopFigures: StopFigure[] = reported.map((s) => {
    const arrival = ms(s.ata);
    const held = heldWindow(s);
    const from = ms(held.from);
    const to = ms(held.to);
    const hasWindow = !Number.isNaN(from) || !Number.isNaN(to);
    const known = hasWindow && !Number.isNaN(arrival);
    const early = known && !Number.isNaN(from) && arrival < from;
    const late = known && !Number.isNaN(to) && arrival > to;
    return {
      delivery_id: s.id,
      outcome: s.status === 2 ? "delivered" : "not_delivered",
      ata: s.ata,
      window_from: held.from,
      window_to: held.to,
      on_time: known ? !early && !late : null,
      late_minutes: late ? Math.ceil((arrival - to) / 60_000) : 0,
      early_minutes: early ? Math.ceil((from - arrival) / 60_000) : 0,
      waited_s: early ? Math.round((from - arrival) / 1000) : 0,
      reason: s.status === 3 ? (s.code !== null && s.code !== 0 ? (codeName(s.code) ?? `code ${s.code}`) : "no reason given") : null,
      drivernotes: s.drivernotes,
    };
  });
  const finishedMs = Math.max(...reported.map((s) => ms(s.atd ?? s.ata)).filter((t) => !Number.isNaN(t)));
  const finishedAt = Number.isFinite(finishedMs) ? new Date(finishedMs).toISOString().replace(".000Z", "Z") : null;
  const startMs = ms(input.ast);
  const onRoute = input.positions.filter((p) => {
    const t = ms(p.timestamp);
    return !Number.isNaN(startMs) && t >= startMs && (finishedAt === null || t <= finishedMs);
  });
  const actual = trackedMeters(onRoute);
  const factor = factorFor(input.vehicle_class, input.co2e_factor);
  const km = (actual ?? input.planned_distance_m) / 1000;
  const withWindow = stopFigures.filter((s) => s.on_time !== null);
  return {
    route_id: input.route_id,
    driver_id: input.driver_id,
    started_at: input.ast,
    finished_at: finishedAt,
    planned_distance_m: input.planned_distance_m,
    actual_distance_m: actual,
    positions: onRoute.length,
    planned_duration_s: input.planned_duration_s,
    actual_duration_s: finishedAt !== null && !Number.isNaN(startMs) ? Math.max(0, Math.round((finishedMs - startMs) / 1000)) : null,
    stops: input.stops.length,
    delivered: stopFigures.filter((s) => s.outcome === "delivered").length,
    not_delivered: stopFigures.filter((s) => s.outcome === "not_delivered").length,
    with_window: withWindow.length,
    on_time: withWindow.filter((s) => s.on_time).length,
    early: stopFigures.filter((s) => s.early_minutes > 0).length,
    late: stopFigures.filter((s) => s.late_minutes > 0).length,
    late_minutes: stopFigures.reduce((sum, s) => sum + s.late_minutes, 0),
    waiting_planned_s: input.stops.reduce((sum, s) => sum + (s.waiting_time ?? 0), 0),
    waiting_actual_s: stopFigures.reduce((sum, s) => sum + s.waited_s, 0),
    break_planned_s: breakMinutes(input.planned_breaks) * 60,
    vehicle_class: input.vehicle_class,
    co2e_factor: factor,
    co2e_basis: actual === null ? "planned" : "tracked",
    co2e_g: Math.round(km * factor),
    stop_figures: stopFigures,
  };
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

export function sumFigures(rows: RouteFigures[]): Figures {
  const tracked = rows.filter((r) => r.actual_distance_m !== null);
  const timed = rows.filter((r) => r.actual_duration_s !== null);
  const sum = (f: (r: RouteFigures) => number, of = rows) => of.reduce((s, r) => s + f(r), 0);
  const withWindow = sum((r) => r.with_window);
  const onTime = sum((r) => r.on_time);
  const hours = sum((r) => r.actual_duration_s ?? 0, timed) / 3600;
  const reasons = new Map<string, number>();
  for (const r of rows) for (const s of r.stop_figures) if (s.reason) reasons.set(s.reason, (reasons.get(s.reason) ?? 0) + 1);
  return {
    routes: rows.length,
    planned_km: round(sum((r) => r.planned_distance_m) / 1000, 1),
    actual_km: tracked.length ? round(sum((r) => r.actual_distance_m ?? 0, tracked) / 1000, 1) : null,
    routes_tracked: tracked.length,
    planned_minutes: Math.round(sum((r) => r.planned_duration_s) / 60),
    actual_minutes: timed.length ? Math.round((hours * 60)) : null,
    stops: sum((r) => r.stops),
    delivered: sum((r) => r.delivered),
    not_delivered: sum((r) => r.not_delivered),
    with_window: withWindow,
    on_time: onTime,
    on_time_share: withWindow ? round(onTime / withWindow, 4) : null,
    early: sum((r) => r.early),
    late: sum((r) => r.late),
    late_minutes: sum((r) => r.late_minutes),
    stops_per_hour: hours > 0 ? round(sum((r) => r.delivered + r.not_delivered, timed) / hours, 2) : null,
    waiting_minutes_planned: Math.round(sum((r) => r.waiting_planned_s) / 60),
    waiting_minutes_actual: Math.round(sum((r) => r.waiting_actual_s) / 60),
    break_minutes_planned: Math.round(sum((r) => r.break_planned_s ?? 0) / 60),
    co2e_kg: round(sum((r) => r.co2e_g) / 1000, 2),
    reasons: [...reasons].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
  };
}

/** How many late stops fall in each bucket (the first: stops with a window on time or early). */
export function latenessHistogram(rows: RouteFigures[]): { label: string; from: number; to: number | null; count: number }[] {
  const stops = rows.flatMap((r) => r.stop_figures).filter((s) => s.on_time !== null);
  return LATENESS_BUCKETS.map((b, i) => ({
    ...b,
    count: i === 0 ? stops.filter((s) => s.late_minutes === 0).length : stops.filter((s) => s.late_minutes > b.from && (b.to === null || s.late_minutes <= b.to)).length,
  }));
}
