/**
 * The day report view: `GET /report/day` for the console's day (or a range),
 * the totals, three SVG charts (on-time share per route, planned against
 * actual km per driver, a lateness histogram), each with a sortable table of
 * its figures behind it, and the CSV/XLSX downloads. Colours are the map's
 * Okabe–Ito palette, and no chart says anything by colour alone: every bar
 * carries its value as text, planned and actual differ by fill pattern too.
 */
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import { type Api, errorText } from "../shared/api";
import { time } from "../shared/format";
import { slug } from "../shared/session";
import { OKABE_ITO } from "./palette";

interface Figures {
  routes: number;
  planned_km: number;
  actual_km: number | null;
  routes_tracked: number;
  planned_minutes: number;
  actual_minutes: number | null;
  stops: number;
  delivered: number;
  not_delivered: number;
  with_window: number;
  on_time: number;
  on_time_share: number | null;
  early: number;
  late: number;
  late_minutes: number;
  stops_per_hour: number | null;
  waiting_minutes_planned: number;
  waiting_minutes_actual: number;
  co2e_kg: number;
  reasons: { reason: string; count: number }[];
}
interface StopLine {
  delivery_id: number;
  outcome: "delivered" | "not_delivered";
  ata: string | null;
  reason: string | null;
  drivernotes: string | null;
}
interface RouteLine extends Figures {
  stop_details: StopLine[];
  route_id: number;
  name: string | null;
  day: string;
  driver_id: number | null;
  driver_name: string | null;
  started_at: string | null;
  finished_at: string | null;
  vehicle_class: string;
  co2e_basis: "tracked" | "planned";
}
interface DriverLine extends Figures {
  driver_id: number | null;
  driver_name: string | null;
}
interface DayReport {
  from: string;
  to: string;
  timezone: string;
  incomplete: boolean;
  routes: RouteLine[];
  drivers: DriverLine[];
  totals: Figures;
  lateness_histogram: { label: string; count: number }[];
  emission_factors: { vehicle_class: string; g_per_km: number; basis: string }[];
}

const percent = (share: number | null) => (share === null ? "–" : `${Math.round(share * 1000) / 10} %`);
const num = (n: number | null, digits = 1) => (n === null ? "–" : n.toLocaleString("en-GB", { maximumFractionDigits: digits, minimumFractionDigits: 0 }));
const routeName = (r: RouteLine) => r.name ?? `Route ${r.route_id}`;
const driverLabel = (d: { driver_name: string | null }) => d.driver_name ?? "no driver";

export function DayReportView({ api, day }: { api: Api; day: string }) {
  const [from, setFrom] = useState(day);
  const [to, setTo] = useState(day);
  const [report, setReport] = useState<DayReport | null>(null);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  // The console's day picker moves the report's day along.
  useEffect(() => {
    setFrom(day);
    setTo(day);
  }, [day]);

  const query = useMemo((): Record<string, string> => (from === to ? { date: from } : { from, to }), [from, to]);
  const load = useCallback(async () => {
    setBusy(true);
    try {
      setReport(await api.get<DayReport>("/report/day", { ...query, stops: true }));
      setError("");
    } catch (err) {
      setError(errorText(err));
      setReport(null);
    } finally {
      setBusy(false);
    }
  }, [api, query]);
  useEffect(() => void load(), [load]);

  const download = async (format: "csv" | "xlsx", table?: "routes" | "drivers") => {
    try {
      const params = new URLSearchParams({ ...query, format, ...(table ? { table } : {}) });
      const res = await fetch(`/${slug}/api/report/day?${params}`, { headers: { authorization: `JWT ${api.token}` } });
      if (!res.ok) throw new Error(((await res.json().catch(() => null)) as { message?: string } | null)?.message ?? `${res.status} ${res.statusText}`);
      const name = /filename="([^"]+)"/.exec(res.headers.get("content-disposition") ?? "")?.[1] ?? `day-report.${format}`;
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement("a");
      a.href = url;
      a.download = name;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      setError(errorText(err));
    }
  };

  const t = report?.totals;
  return (
    <section class="report" aria-labelledby="report-title" aria-busy={busy}>
      <div class="report-bar">
        <h2 id="report-title">Day report</h2>
        <label class="inline">
          From <input type="date" name="report_from" value={from} max={to} onInput={(e) => setFrom(e.currentTarget.value)} />
        </label>
        <label class="inline">
          to <input type="date" name="report_to" value={to} min={from} onInput={(e) => setTo(e.currentTarget.value)} />
        </label>
        <div class="report-downloads" role="group" aria-label="Download">
          <button type="button" class="secondary" onClick={() => void download("csv", "routes")}>
            CSV per route
          </button>
          <button type="button" class="secondary" onClick={() => void download("csv", "drivers")}>
            CSV per driver
          </button>
          <button type="button" class="secondary" onClick={() => void download("xlsx")}>
            XLSX
          </button>
        </div>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {report?.incomplete && (
        <p role="status" class="report-note">
          Some finished routes of these days are still being computed.{" "}
          <button type="button" class="link" onClick={() => void load()}>
            Load the rest
          </button>
        </p>
      )}
      {report && t && (
        <>
          <p class="muted report-zone">
            Finished routes {report.from === report.to ? `of ${report.from}` : `from ${report.from} to ${report.to}`}, times in {report.timezone}.
          </p>
          <dl class="report-totals" data-testid="report-totals">
            <Total label="Routes" value={String(t.routes)} />
            <Total label="Delivered" value={`${t.delivered} of ${t.stops}`} detail={t.not_delivered ? `${t.not_delivered} not delivered` : undefined} />
            <Total label="On time" value={percent(t.on_time_share)} detail={`${t.on_time} of ${t.with_window} with a window`} />
            <Total label="Kilometres" value={`${num(t.actual_km)} / ${num(t.planned_km)}`} detail={`actual (${t.routes_tracked} tracked) / planned`} />
            <Total label="Hours" value={`${num(t.actual_minutes === null ? null : t.actual_minutes / 60)} / ${num(t.planned_minutes / 60)}`} detail="actual / planned" />
            <Total label="Stops per hour" value={num(t.stops_per_hour)} />
            <Total label="Minutes late" value={String(t.late_minutes)} detail={`${t.late} stops late, ${t.early} early`} />
            <Total label="Waiting" value={`${t.waiting_minutes_actual} min`} detail={`planned ${t.waiting_minutes_planned} min`} />
            <Total label="CO₂e (estimate)" value={`${num(t.co2e_kg, 2)} kg`} />
          </dl>
          {report.routes.length === 0 ? (
            <p class="muted">No finished route on these days.</p>
          ) : (
            <div class="report-charts">
              <OnTimeChart routes={report.routes} />
              <KmChart drivers={report.drivers} />
              <LatenessChart buckets={report.lateness_histogram} />
              <Reasons reasons={t.reasons} routes={report.routes} />
            </div>
          )}
          <p class="muted report-note">
            On time: arrival inside the delivery's window. Actual km: the driver's tracked positions from the start to the last report. CO₂e: km × a factor per
            vehicle ({report.emission_factors.map((f) => `${f.vehicle_class} ${f.g_per_km} g/km`).join(", ")} unless the vehicle has its own), an estimate.
          </p>
        </>
      )}
    </section>
  );
}

function Total({ label, value, detail }: { label: string; value: string; detail?: string }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>
        <strong>{value}</strong>
        {detail && <span class="muted">{detail}</span>}
      </dd>
    </div>
  );
}

/** A chart, its caption, and its figures as a table (sortable) in a disclosure. */
function Chart({ id, title, children, table }: { id: string; title: string; children: ComponentChildren; table: ComponentChildren }) {
  return (
    <figure class="report-chart" aria-labelledby={`${id}-title`} data-testid={id}>
      <figcaption id={`${id}-title`}>{title}</figcaption>
      {children}
      <details>
        <summary>Table: {title.toLowerCase()}</summary>
        {table}
      </details>
    </figure>
  );
}

const BAR_H = 22;
const GAP = 8;
const LABEL_W = 150;
const PLOT_W = 300;
const VALUE_W = 70;

/** Text that fits a label column (the full text in the table and the tooltip). */
const clip = (s: string, n = 20) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

function OnTimeChart({ routes }: { routes: RouteLine[] }) {
  const height = routes.length * (BAR_H + GAP) + 24;
  return (
    <Chart
      id="chart-ontime"
      title="On-time share per route"
      table={
        <SortableTable
          caption="Routes"
          rows={routes}
          rowKey={(r) => r.route_id}
          columns={[
            { label: "Route", value: routeName },
            { label: "Day", value: (r) => r.day },
            { label: "Driver", value: driverLabel },
            { label: "Start", value: (r) => r.started_at ?? "", show: (r) => time(r.started_at) },
            { label: "Finish", value: (r) => r.finished_at ?? "", show: (r) => time(r.finished_at) },
            { label: "On time", value: (r) => r.on_time_share ?? -1, show: (r) => `${percent(r.on_time_share)} (${r.on_time}/${r.with_window})` },
            { label: "Delivered", value: (r) => r.delivered, show: (r) => `${r.delivered}/${r.stops}` },
            { label: "Not delivered", value: (r) => r.not_delivered },
            { label: "Min late", value: (r) => r.late_minutes },
            { label: "Planned km", value: (r) => r.planned_km, show: (r) => num(r.planned_km) },
            { label: "Actual km", value: (r) => r.actual_km ?? -1, show: (r) => num(r.actual_km) },
            { label: "Planned h", value: (r) => r.planned_minutes, show: (r) => num(r.planned_minutes / 60) },
            { label: "Actual h", value: (r) => r.actual_minutes ?? -1, show: (r) => num(r.actual_minutes === null ? null : r.actual_minutes / 60) },
            { label: "Stops/h", value: (r) => r.stops_per_hour ?? -1, show: (r) => num(r.stops_per_hour) },
            { label: "Waiting min", value: (r) => r.waiting_minutes_actual },
            { label: "CO₂e kg", value: (r) => r.co2e_kg, show: (r) => `${num(r.co2e_kg)}${r.co2e_basis === "planned" ? " (planned km)" : ""}` },
          ]}
        />
      }
    >
      <svg role="img" aria-labelledby="chart-ontime-title" viewBox={`0 0 ${LABEL_W + PLOT_W + VALUE_W} ${height}`} width="100%" class="report-svg">
        <Axis x0={LABEL_W} width={PLOT_W} y={height - 20} ticks={[0, 0.5, 1]} label={(v) => `${v * 100} %`} />
        {routes.map((r, i) => {
          const y = i * (BAR_H + GAP);
          const w = (r.on_time_share ?? 0) * PLOT_W;
          return (
            <g key={r.route_id}>
              <title>{`${routeName(r)} (${driverLabel(r)}): ${percent(r.on_time_share)} on time`}</title>
              <text x={LABEL_W - 6} y={y + BAR_H / 2} text-anchor="end" dominant-baseline="middle" class="chart-label">
                {clip(routeName(r))}
              </text>
              <rect x={LABEL_W} y={y} width={PLOT_W} height={BAR_H} class="chart-track" />
              <rect x={LABEL_W} y={y} width={w} height={BAR_H} fill={OKABE_ITO.blue} />
              <text x={LABEL_W + PLOT_W + 6} y={y + BAR_H / 2} dominant-baseline="middle" class="chart-value">
                {percent(r.on_time_share)}
              </text>
            </g>
          );
        })}
      </svg>
    </Chart>
  );
}

function KmChart({ drivers }: { drivers: DriverLine[] }) {
  const max = Math.max(1, ...drivers.flatMap((d) => [d.planned_km, d.actual_km ?? 0]));
  const group = 2 * BAR_H + GAP * 2;
  const height = drivers.length * group + 24 + 28;
  const ticks = niceTicks(max);
  const scale = PLOT_W / ticks[ticks.length - 1];
  return (
    <Chart
      id="chart-km"
      title="Planned and actual km per driver"
      table={
        <SortableTable
          caption="Drivers"
          rows={drivers}
          rowKey={(d) => d.driver_id ?? 0}
          columns={[
            { label: "Driver", value: driverLabel },
            { label: "Routes", value: (d) => d.routes },
            { label: "Planned km", value: (d) => d.planned_km, show: (d) => num(d.planned_km) },
            { label: "Actual km", value: (d) => d.actual_km ?? -1, show: (d) => num(d.actual_km) },
            { label: "Planned h", value: (d) => d.planned_minutes, show: (d) => num(d.planned_minutes / 60) },
            { label: "Actual h", value: (d) => d.actual_minutes ?? -1, show: (d) => num(d.actual_minutes === null ? null : d.actual_minutes / 60) },
            { label: "On time", value: (d) => d.on_time_share ?? -1, show: (d) => percent(d.on_time_share) },
            { label: "Delivered", value: (d) => d.delivered, show: (d) => `${d.delivered}/${d.stops}` },
            { label: "Stops/h", value: (d) => d.stops_per_hour ?? -1, show: (d) => num(d.stops_per_hour) },
            { label: "Min late", value: (d) => d.late_minutes },
            { label: "CO₂e kg", value: (d) => d.co2e_kg, show: (d) => num(d.co2e_kg) },
          ]}
        />
      }
    >
      <svg role="img" aria-labelledby="chart-km-title" viewBox={`0 0 ${LABEL_W + PLOT_W + VALUE_W} ${height}`} width="100%" class="report-svg">
        <defs>
          <pattern id="planned-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
            <rect width="6" height="6" fill="#fff" />
            <rect width="3" height="6" fill={OKABE_ITO.orange} />
          </pattern>
        </defs>
        <g class="chart-legend">
          <rect x={LABEL_W} y={0} width={14} height={14} fill="url(#planned-hatch)" stroke={OKABE_ITO.orange} />
          <text x={LABEL_W + 20} y={7} dominant-baseline="middle">planned</text>
          <rect x={LABEL_W + 90} y={0} width={14} height={14} fill={OKABE_ITO.blue} />
          <text x={LABEL_W + 110} y={7} dominant-baseline="middle">actual (tracked)</text>
        </g>
        <Axis x0={LABEL_W} width={PLOT_W} y={height - 20} ticks={ticks} label={(v) => `${v} km`} scale={scale} />
        {drivers.map((d, i) => {
          const y = 28 + i * group;
          return (
            <g key={d.driver_id ?? 0}>
              <title>{`${driverLabel(d)}: planned ${num(d.planned_km)} km, actual ${num(d.actual_km)} km`}</title>
              <text x={LABEL_W - 6} y={y + BAR_H} text-anchor="end" dominant-baseline="middle" class="chart-label">
                {clip(driverLabel(d))}
              </text>
              <rect x={LABEL_W} y={y} width={d.planned_km * scale} height={BAR_H} fill="url(#planned-hatch)" stroke={OKABE_ITO.orange} />
              <text x={LABEL_W + d.planned_km * scale + 4} y={y + BAR_H / 2} dominant-baseline="middle" class="chart-value">
                {num(d.planned_km)}
              </text>
              <rect x={LABEL_W} y={y + BAR_H + 2} width={(d.actual_km ?? 0) * scale} height={BAR_H} fill={OKABE_ITO.blue} />
              <text x={LABEL_W + (d.actual_km ?? 0) * scale + 4} y={y + BAR_H * 1.5 + 2} dominant-baseline="middle" class="chart-value">
                {d.actual_km === null ? "no track" : num(d.actual_km)}
              </text>
            </g>
          );
        })}
      </svg>
    </Chart>
  );
}

function LatenessChart({ buckets }: { buckets: { label: string; count: number }[] }) {
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const width = LABEL_W + PLOT_W + VALUE_W;
  const plotH = 160;
  const colW = (width - 40) / buckets.length;
  return (
    <Chart
      id="chart-lateness"
      title="Stops by minutes late"
      table={
        <SortableTable
          caption="Lateness"
          rows={buckets.map((b, i) => ({ ...b, i }))}
          rowKey={(b) => b.i}
          columns={[
            { label: "Minutes late", value: (b) => b.i, show: (b) => b.label },
            { label: "Stops", value: (b) => b.count },
          ]}
        />
      }
    >
      <svg role="img" aria-labelledby="chart-lateness-title" viewBox={`0 0 ${width} ${plotH + 44}`} width="100%" class="report-svg">
        <line x1={20} x2={width - 20} y1={plotH + 16} y2={plotH + 16} class="chart-axis" />
        {buckets.map((b, i) => {
          const h = (b.count / max) * plotH;
          const x = 20 + i * colW + 6;
          return (
            <g key={b.label}>
              <title>{`${b.label}: ${b.count} stops`}</title>
              <rect x={x} y={plotH + 16 - h} width={colW - 12} height={h} fill={i === 0 ? OKABE_ITO.green : OKABE_ITO.vermillion} />
              <text x={x + (colW - 12) / 2} y={plotH + 12 - h} text-anchor="middle" class="chart-value">
                {b.count}
              </text>
              <text x={x + (colW - 12) / 2} y={plotH + 32} text-anchor="middle" class="chart-label">
                {b.label}
              </text>
            </g>
          );
        })}
      </svg>
    </Chart>
  );
}

function Reasons({ reasons, routes }: { reasons: { reason: string; count: number }[]; routes: RouteLine[] }) {
  const missed = routes.flatMap((r) => r.stop_details.filter((s) => s.outcome === "not_delivered").map((s) => ({ ...s, route: r })));
  return (
    <section class="report-chart" aria-labelledby="reasons-title">
      <h3 id="reasons-title">Not delivered: reasons</h3>
      {reasons.length === 0 ? (
        <p class="muted">Every stop was delivered.</p>
      ) : (
        <>
          <SortableTable caption="Reasons" rows={reasons} rowKey={(r) => r.reason} columns={[{ label: "Reason", value: (r) => r.reason.replace(/_/g, " ") }, { label: "Stops", value: (r) => r.count }]} />
          <SortableTable
            caption="Stops not delivered"
            rows={missed}
            rowKey={(s) => s.delivery_id}
            columns={[
              { label: "Route", value: (s) => routeName(s.route) },
              { label: "Delivery", value: (s) => s.delivery_id },
              { label: "At", value: (s) => s.ata ?? "", show: (s) => time(s.ata) },
              { label: "Reason", value: (s) => (s.reason ?? "").replace(/_/g, " ") },
              { label: "Driver's notes", value: (s) => s.drivernotes ?? "" },
            ]}
          />
        </>
      )}
    </section>
  );
}

/** Round axis steps up to `max`: 1, 2 or 5 times a power of ten, four or five ticks. */
function niceTicks(max: number): number[] {
  const raw = max / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw)!;
  return Array.from({ length: Math.ceil(max / step) + 1 }, (_, i) => i * step);
}

function Axis({ x0, width, y, ticks, label, scale }: { x0: number; width: number; y: number; ticks: number[]; label: (v: number) => string; scale?: number }) {
  const at = (v: number) => x0 + v * (scale ?? width / ticks[ticks.length - 1]);
  return (
    <g class="chart-axis-group" aria-hidden="true">
      <line x1={x0} x2={x0 + width} y1={y} y2={y} class="chart-axis" />
      {ticks.map((v) => (
        <g key={v}>
          <line x1={at(v)} x2={at(v)} y1={0} y2={y} class="chart-grid" />
          <text x={at(v)} y={y + 14} text-anchor="middle" class="chart-tick">
            {label(v)}
          </text>
        </g>
      ))}
    </g>
  );
}

interface Column<T> {
  label: string;
  /** What the column sorts by (and shows, unless `show`). */
  value: (row: T) => string | number;
  show?: (row: T) => string;
}

/** A table whose column headers sort it (again: the other way); `aria-sort` tells screen readers. */
function SortableTable<T>({ caption, rows, columns, rowKey }: { caption: string; rows: T[]; columns: Column<T>[]; rowKey: (row: T) => string | number }) {
  const [sort, setSort] = useState<{ col: number; dir: 1 | -1 } | null>(null);
  const sorted = useMemo(() => {
    if (!sort) return rows;
    const { col, dir } = sort;
    const value = columns[col].value;
    return [...rows].sort((a, b) => {
      const x = value(a), y = value(b);
      return (typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y))) * dir;
    });
  }, [rows, columns, sort]);
  return (
    <div class="table-scroll">
      <table class="report-table">
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th scope="col" aria-sort={sort?.col === i ? (sort.dir === 1 ? "ascending" : "descending") : "none"}>
                <button type="button" class="link" onClick={() => setSort((s) => ({ col: i, dir: s?.col === i && s.dir === 1 ? -1 : 1 }))}>
                  {c.label}
                  <span aria-hidden="true">{sort?.col === i ? (sort.dir === 1 ? " ▲" : " ▼") : ""}</span>
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {sorted.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((c, i) => {
                const text = c.show ? c.show(row) : String(c.value(row));
                return i === 0 ? <th scope="row">{text}</th> : <td>{text}</td>;
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
