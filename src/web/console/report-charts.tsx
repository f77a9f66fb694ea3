/**
 * The day report's charts, each with the sortable table of its figures: the
 * on-time share per route, planned against actual km per driver (planned
 * hatched, actual solid), the stops by minutes late, and the reasons for
 * what was not delivered (tables only).
 */
import type { DayReport, DriverLine, Figures, RouteLine } from "../../shared/contract/day-report";
import { time } from "../shared/format";
import { Axis, BAR_H, Bar, BarValue, Chart, ChartSvg, GAP, Hatch, Histogram, LABEL_W, PLOT_W, RowLabel, niceTicks } from "./chart-kit";
import { OKABE_ITO } from "./palette";
import { driverLabel, hours, num, percent, routeName } from "./report-format";
import { type Column, SortableTable } from "./sortable-table";

/** The columns of figures both the route and the driver table show (a missing figure sorts first). */
const FIGURE: Record<"delivered" | "lateMinutes" | "plannedKm" | "actualKm" | "plannedHours" | "actualHours" | "stopsPerHour", Column<Figures>> = {
  delivered: { label: "Delivered", value: (f) => f.delivered, show: (f) => `${f.delivered}/${f.stops}` },
  lateMinutes: { label: "Min late", value: (f) => f.late_minutes },
  plannedKm: { label: "Planned km", value: (f) => f.planned_km, show: (f) => num(f.planned_km) },
  actualKm: { label: "Actual km", value: (f) => f.actual_km ?? -1, show: (f) => num(f.actual_km) },
  plannedHours: { label: "Planned h", value: (f) => f.planned_minutes, show: (f) => hours(f.planned_minutes) },
  actualHours: { label: "Actual h", value: (f) => f.actual_minutes ?? -1, show: (f) => hours(f.actual_minutes) },
  stopsPerHour: { label: "Stops/h", value: (f) => f.stops_per_hour ?? -1, show: (f) => num(f.stops_per_hour) },
};

const ROUTE_COLUMNS: Column<RouteLine>[] = [
  { label: "Route", value: routeName },
  { label: "Day", value: (r) => r.day },
  { label: "Driver", value: driverLabel },
  { label: "Start", value: (r) => r.started_at ?? "", show: (r) => time(r.started_at) },
  { label: "Finish", value: (r) => r.finished_at ?? "", show: (r) => time(r.finished_at) },
  { label: "On time", value: (r) => r.on_time_share ?? -1, show: (r) => `${percent(r.on_time_share)} (${r.on_time}/${r.with_window})` },
  FIGURE.delivered,
  { label: "Not delivered", value: (r) => r.not_delivered },
  FIGURE.lateMinutes,
  FIGURE.plannedKm,
  FIGURE.actualKm,
  FIGURE.plannedHours,
  FIGURE.actualHours,
  FIGURE.stopsPerHour,
  { label: "Waiting min", value: (r) => r.waiting_minutes_actual },
  { label: "CO₂e kg", value: (r) => r.co2e_kg, show: (r) => `${num(r.co2e_kg)}${r.co2e_basis === "planned" ? " (planned km)" : ""}` },
];

export function OnTimeChart({ routes }: { routes: RouteLine[] }) {
  const id = "chart-ontime";
  const height = routes.length * (BAR_H + GAP) + 24;
  return (
    <Chart id={id} title="On-time share per route" table={<SortableTable caption="Routes" rows={routes} rowKey={(r) => r.route_id} columns={ROUTE_COLUMNS} />}>
      <ChartSvg id={id} height={height}>
        <Axis x0={LABEL_W} width={PLOT_W} y={height - 20} ticks={[0, 0.5, 1]} label={(v) => `${v * 100} %`} />
        {routes.map((r, i) => {
          const y = i * (BAR_H + GAP);
          return (
            <g key={r.route_id}>
              <title>{`${routeName(r)} (${driverLabel(r)}): ${percent(r.on_time_share)} on time`}</title>
              <RowLabel y={y + BAR_H / 2}>{routeName(r)}</RowLabel>
              <Bar y={y} width={PLOT_W} track />
              <Bar y={y} width={(r.on_time_share ?? 0) * PLOT_W} fill={OKABE_ITO.blue} />
              <BarValue x={LABEL_W + PLOT_W + 6} y={y + BAR_H / 2}>
                {percent(r.on_time_share)}
              </BarValue>
            </g>
          );
        })}
      </ChartSvg>
    </Chart>
  );
}

const DRIVER_COLUMNS: Column<DriverLine>[] = [
  { label: "Driver", value: driverLabel },
  { label: "Routes", value: (d) => d.routes },
  FIGURE.plannedKm,
  FIGURE.actualKm,
  FIGURE.plannedHours,
  FIGURE.actualHours,
  { label: "On time", value: (d) => d.on_time_share ?? -1, show: (d) => percent(d.on_time_share) },
  FIGURE.delivered,
  FIGURE.stopsPerHour,
  FIGURE.lateMinutes,
  { label: "CO₂e kg", value: (d) => d.co2e_kg, show: (d) => num(d.co2e_kg) },
];

export function KmChart({ drivers }: { drivers: DriverLine[] }) {
  const id = "chart-km";
  const max = Math.max(1, ...drivers.flatMap((d) => [d.planned_km, d.actual_km ?? 0]));
  const group = 2 * BAR_H + GAP * 2;
  const height = drivers.length * group + 24 + 28;
  const ticks = niceTicks(max);
  const scale = PLOT_W / ticks[ticks.length - 1];
  return (
    <Chart id={id} title="Planned and actual km per driver" table={<SortableTable caption="Drivers" rows={drivers} rowKey={(d) => d.driver_id ?? 0} columns={DRIVER_COLUMNS} />}>
      <ChartSvg id={id} height={height}>
        <Hatch id="planned-hatch" colour={OKABE_ITO.orange} />
        <g class="chart-legend">
          <rect x={LABEL_W} y={0} width={14} height={14} fill="url(#planned-hatch)" stroke={OKABE_ITO.orange} />
          <text x={LABEL_W + 20} y={7} dominant-baseline="middle">planned</text>
          <rect x={LABEL_W + 90} y={0} width={14} height={14} fill={OKABE_ITO.blue} />
          <text x={LABEL_W + 110} y={7} dominant-baseline="middle">actual (tracked)</text>
        </g>
        <Axis x0={LABEL_W} width={PLOT_W} y={height - 20} ticks={ticks} label={(v) => `${v} km`} scale={scale} />
        {drivers.map((d, i) => {
          const y = 28 + i * group;
          const actual = (d.actual_km ?? 0) * scale;
          return (
            <g key={d.driver_id ?? 0}>
              <title>{`${driverLabel(d)}: planned ${num(d.planned_km)} km, actual ${num(d.actual_km)} km`}</title>
              <RowLabel y={y + BAR_H}>{driverLabel(d)}</RowLabel>
              <Bar y={y} width={d.planned_km * scale} fill="url(#planned-hatch)" stroke={OKABE_ITO.orange} />
              <BarValue x={LABEL_W + d.planned_km * scale + 4} y={y + BAR_H / 2}>
                {num(d.planned_km)}
              </BarValue>
              <Bar y={y + BAR_H + 2} width={actual} fill={OKABE_ITO.blue} />
              <BarValue x={LABEL_W + actual + 4} y={y + BAR_H * 1.5 + 2}>
                {d.actual_km === null ? "no track" : num(d.actual_km)}
              </BarValue>
            </g>
          );
        })}
      </ChartSvg>
    </Chart>
  );
}

type Bucket = DayReport["lateness_histogram"][number];
const LATENESS_COLUMNS: Column<Bucket & { i: number }>[] = [
  { label: "Minutes late", value: (b) => b.i, show: (b) => b.label },
  { label: "Stops", value: (b) => b.count },
];

export function LatenessChart({ buckets }: { buckets: Bucket[] }) {
  const id = "chart-lateness";
  return (
    <Chart id={id} title="Stops by minutes late" table={<SortableTable caption="Lateness" rows={buckets.map((b, i) => ({ ...b, i }))} rowKey={(b) => b.i} columns={LATENESS_COLUMNS} />}>
      {/* The first bucket is "on time or early". */}
      <Histogram id={id} buckets={buckets} unit="stops" fill={(i) => (i === 0 ? OKABE_ITO.green : OKABE_ITO.vermillion)} />
    </Chart>
  );
}

type Missed = RouteLine["stop_details"][number] & { route: RouteLine };
const MISSED_COLUMNS: Column<Missed>[] = [
  { label: "Route", value: (s) => routeName(s.route) },
  { label: "Delivery", value: (s) => s.delivery_id },
  { label: "At", value: (s) => s.ata ?? "", show: (s) => time(s.ata) },
  { label: "Reason", value: (s) => (s.reason ?? "").replace(/_/g, " ") },
  { label: "Driver's notes", value: (s) => s.drivernotes ?? "" },
];
const REASON_COLUMNS: Column<Figures["reasons"][number]>[] = [
  { label: "Reason", value: (r) => r.reason.replace(/_/g, " ") },
  { label: "Stops", value: (r) => r.count },
];

export function Reasons({ reasons, routes }: { reasons: Figures["reasons"]; routes: RouteLine[] }) {
  const missed: Missed[] = routes.flatMap((r) => r.stop_details.filter((s) => s.outcome === "not_delivered").map((s) => ({ ...s, route: r })));
  return (
    <section class="report-chart" aria-labelledby="reasons-title">
      <h3 id="reasons-title">Not delivered: reasons</h3>
      {reasons.length === 0 ? (
        <p class="muted">Every stop was delivered.</p>
      ) : (
        <>
          <SortableTable caption="Reasons" rows={reasons} rowKey={(r) => r.reason} columns={REASON_COLUMNS} />
          <SortableTable caption="Stops not delivered" rows={missed} rowKey={(s) => s.delivery_id} columns={MISSED_COLUMNS} />
        </>
      )}
    </section>
  );
}
