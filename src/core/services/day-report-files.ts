/**
 * The day report as files: CSV (one table) and XLSX (a sheet per table). The
 * same columns as the console's tables; cells go through the one CSV cell
 * writer (formula text neutralised) and the XLSX writer.
 */
import { wallClockAt } from "../../shared/wall-clock";
import { type Figures, type DayReport, type DriverLine, type RouteLine } from "../../shared/contract/day-report";
import { csvCell } from "../lib/csv";
import { type Cell, writeXlsx } from "../lib/xlsx-writer";

const FIGURE_COLUMNS: [string, (f: Figures) => Cell][] = [
  ["planned_km", (f) => f.planned_km],
  ["actual_km", (f) => f.actual_km],
  ["planned_minutes", (f) => f.planned_minutes],
  ["actual_minutes", (f) => f.actual_minutes],
  ["stops", (f) => f.stops],
  ["delivered", (f) => f.delivered],
  ["not_delivered", (f) => f.not_delivered],
  ["with_window", (f) => f.with_window],
  ["on_time", (f) => f.on_time],
  ["on_time_percent", (f) => (f.on_time_share === null ? null : Math.round(f.on_time_share * 1000) / 10)],
  ["early", (f) => f.early],
  ["late", (f) => f.late],
  ["late_minutes", (f) => f.late_minutes],
  ["stops_per_hour", (f) => f.stops_per_hour],
  ["waiting_minutes_planned", (f) => f.waiting_minutes_planned],
  ["waiting_minutes_actual", (f) => f.waiting_minutes_actual],
  ["break_minutes_planned", (f) => f.break_minutes_planned],
  ["co2e_kg", (f) => f.co2e_kg],
  ["reasons_not_delivered", (f) => f.reasons.map((r) => `${r.reason}: ${r.count}`).join(", ")],
];

const pad = (n: number) => String(n).padStart(2, "0");
/** An instant as the company's wall clock shows it, `YYYY-MM-DD HH:MM` (files have no zone; the header names it). */
export function localTime(iso: string | null, timeZone: string): string | null {
  if (!iso) return null;
  const c = wallClockAt(Date.parse(iso), timeZone);
  return `${c.year}-${pad(c.month)}-${pad(c.day)} ${pad(c.hour)}:${pad(c.minute)}`;
}

function routeTable(report: DayReport): Cell[][] {
  const zone = report.timezone;
  const head = ["day", "route_id", "route", "driver", "vehicle_class", `started (${zone})`, `finished (${zone})`, ...FIGURE_COLUMNS.map(([n]) => n)];
  const line = (r: RouteLine): Cell[] => [r.day, r.route_id, r.name, r.driver_name, r.vehicle_class, localTime(r.started_at, zone), localTime(r.finished_at, zone), ...FIGURE_COLUMNS.map(([, f]) => f(r))];
  const total: Cell[] = [`${report.from}..${report.to}`, null, "total", null, null, null, null, ...FIGURE_COLUMNS.map(([, f]) => f(report.totals))];
  return [head, ...report.routes.map(line), total];
}

function driverTable(report: DayReport): Cell[][] {
  const head = ["driver_id", "driver", "routes", ...FIGURE_COLUMNS.map(([n]) => n)];
  const line = (d: DriverLine): Cell[] => [d.driver_id, d.driver_name, d.routes, ...FIGURE_COLUMNS.map(([, f]) => f(d))];
  const total: Cell[] = [null, "total", report.totals.routes, ...FIGURE_COLUMNS.map(([, f]) => f(report.totals))];
  return [head, ...report.drivers.map(line), total];
}

/** One line per reported stop: where the reasons and the driver's notes are. */
function stopTable(report: DayReport): Cell[][] {
  const zone = report.timezone;
  const head = ["day", "route_id", "route", "driver", "delivery_id", "outcome", `arrival (${zone})`, `window_from (${zone})`, `window_to (${zone})`, "on_time", "minutes_late", "minutes_early", "reason", "driver_notes"];
  return [
    head,
    ...report.routes.flatMap((r) =>
      r.stop_details.map((s): Cell[] => [
        r.day, r.route_id, r.name, r.driver_name, s.delivery_id, s.outcome.replace("_", " "), localTime(s.ata, zone), localTime(s.window_from, zone), localTime(s.window_to, zone),
        s.on_time === null ? null : s.on_time ? "yes" : "no", s.late_minutes, s.early_minutes, s.reason, s.drivernotes,
      ]),
    ),
  ];
}

export function reportCsv(report: DayReport, table: "routes" | "drivers" | "stops"): string {
  const rows = table === "routes" ? routeTable(report) : table === "drivers" ? driverTable(report) : stopTable(report);
  // A byte order mark: spreadsheet programs then read the UTF-8 (names, CO₂e) as such.
  return "\uFEFF" + rows.map((row) => row.map(csvCell).join(",")).join("\r\n") + "\r\n";
}

export function reportXlsx(report: DayReport): Uint8Array {
  return writeXlsx([
    { name: "Routes", rows: routeTable(report) },
    { name: "Drivers", rows: driverTable(report) },
    { name: "Stops", rows: stopTable(report) },
    { name: "Lateness", rows: [["minutes_late", "stops"], ...report.lateness_histogram.map((b): Cell[] => [b.label, b.count])] },
    { name: "Reasons", rows: [["reason_not_delivered", "stops"], ...report.totals.reasons.map((r): Cell[] => [r.reason, r.count])] },
  ]);
}
