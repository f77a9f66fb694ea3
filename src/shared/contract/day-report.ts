/** The day report on the wire (`GET /report/day`): figures per route, per driver and in total, and per stop. */

/** The figures a report shows for any group of routes (one route, a driver's, all). */
export interface Figures {
  routes: number;
  planned_km: number;
  /** Sum over the routes with a track; `routes_tracked` says how many. */
  actual_km: number | null;
  routes_tracked: number;
  planned_minutes: number;
  actual_minutes: number | null;
  stops: number;
  delivered: number;
  not_delivered: number;
  with_window: number;
  on_time: number;
  /** on_time / with_window, 0..1; null when no stop had a window. */
  on_time_share: number | null;
  early: number;
  late: number;
  late_minutes: number;
  /** Reported stops per hour of actual duration. */
  stops_per_hour: number | null;
  waiting_minutes_planned: number;
  waiting_minutes_actual: number;
  /** Minutes of the breaks the plans placed (working-time rules and fixed breaks). */
  break_minutes_planned: number;
  co2e_kg: number;
  /** Not delivered, by reason. */
  reasons: { reason: string; count: number }[];
}

export interface StopFigure {
  delivery_id: number;
  outcome: "delivered" | "not_delivered";
  ata: string | null;
  window_from: string | null;
  window_to: string | null;
  /** null: no window or no arrival. */
  on_time: boolean | null;
  late_minutes: number;
  early_minutes: number;
  /** Seconds at the door before the window opened (early arrivals). */
  waited_s: number;
  /** Not delivered: the reason (delivery code name, else "no reason given"). */
  reason: string | null;
  drivernotes: string | null;
}

export interface RouteLine extends Figures {
  route_id: number;
  name: string | null;
  day: string;
  driver_id: number | null;
  driver_name: string | null;
  started_at: string | null;
  finished_at: string | null;
  vehicle_class: string;
  co2e_factor: number;
  co2e_basis: "tracked" | "planned";
  /** Every reported stop: outcome, arrival, window, lateness, reason and the driver's notes. */
  stop_details: StopFigure[];
}

export interface DriverLine extends Figures {
  driver_id: number | null;
  driver_name: string | null;
}

export interface DayReport {
  from: string;
  to: string;
  timezone: string;
  /** Some finished routes of the range have no figures yet: ask again. */
  incomplete: boolean;
  routes: RouteLine[];
  drivers: DriverLine[];
  totals: Figures;
  lateness_histogram: { label: string; from: number; to: number | null; count: number }[];
  emission_factors: { vehicle_class: string; g_per_km: number; basis: string }[];
}
