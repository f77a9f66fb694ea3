/**
 * The day report view: `GET /report/day` for the console's day (or a range,
 * use-day-report.ts), the totals, three SVG charts (on-time share per route,
 * planned against actual km per driver, a lateness histogram), each with a
 * sortable table of its figures behind it (report-charts.tsx), and the
 * CSV/XLSX downloads. Colours are the map's Okabe–Ito palette, and no chart
 * says anything by colour alone: every bar carries its value as text,
 * planned and actual differ by fill pattern too.
 */
import type { Figures } from "../../shared/contract/day-report";
import type { Api } from "../shared/api";
import { KmChart, LatenessChart, OnTimeChart, Reasons } from "./report-charts";
import { hours, num, percent } from "./report-format";
import { useDayReport } from "./use-day-report";

export function DayReportView({ api, day }: { api: Api; day: string }) {
  const { from, setFrom, to, setTo, report, error, busy, load, download } = useDayReport(api, day);
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
          <button type="button" class="secondary" onClick={() => void download({ format: "csv", table: "routes" })}>
            CSV per route
          </button>
          <button type="button" class="secondary" onClick={() => void download({ format: "csv", table: "drivers" })}>
            CSV per driver
          </button>
          <button type="button" class="secondary" onClick={() => void download({ format: "xlsx" })}>
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
      {report && (
        <>
          <p class="muted report-zone">
            Finished routes {report.from === report.to ? `of ${report.from}` : `from ${report.from} to ${report.to}`}, times in {report.timezone}.
          </p>
          <Totals t={report.totals} />
          {report.routes.length === 0 ? (
            <p class="muted">No finished route on these days.</p>
          ) : (
            <div class="report-charts">
              <OnTimeChart routes={report.routes} />
              <KmChart drivers={report.drivers} />
              <LatenessChart buckets={report.lateness_histogram} />
              <Reasons reasons={report.totals.reasons} routes={report.routes} />
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

function Totals({ t }: { t: Figures }) {
  return (
    <dl class="report-totals" data-testid="report-totals">
      <Total label="Routes" value={String(t.routes)} />
      <Total label="Delivered" value={`${t.delivered} of ${t.stops}`} detail={t.not_delivered ? `${t.not_delivered} not delivered` : undefined} />
      <Total label="On time" value={percent(t.on_time_share)} detail={`${t.on_time} of ${t.with_window} with a window`} />
      <Total label="Kilometres" value={`${num(t.actual_km)} / ${num(t.planned_km)}`} detail={`actual (${t.routes_tracked} tracked) / planned`} />
      <Total label="Hours" value={`${hours(t.actual_minutes)} / ${hours(t.planned_minutes)}`} detail="actual / planned" />
      <Total label="Stops per hour" value={num(t.stops_per_hour)} />
      <Total label="Minutes late" value={String(t.late_minutes)} detail={`${t.late} stops late, ${t.early} early`} />
      <Total label="Waiting" value={`${t.waiting_minutes_actual} min`} detail={`planned ${t.waiting_minutes_planned} min`} />
      <Total label="Breaks" value={`${t.break_minutes_planned} min`} detail="planned" />
      <Total label="CO₂e (estimate)" value={`${num(t.co2e_kg, 2)} kg`} />
    </dl>
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
