/**
 * The day report: GET /report/day, one day (`date`) or a range (`from`/`to`),
 * as JSON, CSV or XLSX. Dispatchers and watchers (a driver's day is the
 * company's business, not another driver's).
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { unprocessable } from "../../core/errors";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { BooleanQuery, apiRoute } from "../openapi";
import { addDays } from "../../shared/wall-clock";
import { LATENESS_BUCKETS, MAX_PLAUSIBLE_KMH } from "../../core/domain/day-report";
import { MAX_RANGE_DAYS, MISSING_PER_READ, dayReport } from "../../core/services/day-report";
import { reportCsv, reportXlsx } from "../../core/services/day-report-files";

const Day = z.string().max(10).openapi({ example: "2026-11-26", description: "`YYYY-MM-DD`, a day of the company's wall clock (`timezone`)" });

const Reason = z.object({ reason: z.string(), count: z.number().int() });

const figureShape = {
  routes: z.number().int().openapi({ description: "Finished routes" }),
  planned_km: z.number().openapi({ description: "Planned distance (the plan's `distance`), km, 1 decimal" }),
  actual_km: z.number().nullable().openapi({ description: "Driven distance from tracked positions, km, over the routes with a track (`routes_tracked`); null when none has one" }),
  routes_tracked: z.number().int(),
  planned_minutes: z.number().int().openapi({ description: "Planned gross duration" }),
  actual_minutes: z.number().int().nullable().openapi({ description: "Start (`ast`) to the last report" }),
  stops: z.number().int().openapi({ description: "Deliveries on the routes (delivered, not delivered)" }),
  delivered: z.number().int(),
  not_delivered: z.number().int(),
  with_window: z.number().int().openapi({ description: "Reported stops with a time window and an arrival: the denominator of `on_time_share`" }),
  on_time: z.number().int().openapi({ description: "Arrival (`ata`) inside [`pdt_from`, `pdt_to`]" }),
  on_time_share: z.number().nullable().openapi({ description: "on_time / with_window, 0..1; null without windows" }),
  early: z.number().int().openapi({ description: "Arrived before the window opened" }),
  late: z.number().int().openapi({ description: "Arrived after the window closed" }),
  late_minutes: z.number().int().openapi({ description: "Minutes after the windows closed, summed (begun minutes count)" }),
  stops_per_hour: z.number().nullable().openapi({ description: "Reported stops per hour of actual duration" }),
  waiting_minutes_planned: z.number().int().openapi({ description: "The plan's waiting before windows opened" }),
  break_minutes_planned: z.number().int().openapi({ description: "Minutes of the breaks the plans placed: working-time rules and fixed breaks (beyond the interface)" }),
  waiting_minutes_actual: z.number().int().openapi({ description: "Early arrivals: arrival to window opening" }),
  co2e_kg: z.number().openapi({ description: "Estimated kg CO₂e: km (tracked, else planned) × the vehicle's factor" }),
  reasons: z.array(Reason).openapi({ description: "Stops not delivered by reason (the delivery `code`'s name, else `no reason given`)" }),
};
const Figures = z.object(figureShape).openapi("ReportFigures");

const StopLine = z
  .object({
    delivery_id: z.number().int(),
    outcome: z.enum(["delivered", "not_delivered"]),
    ata: z.string().nullable().openapi({ description: "Arrival" }),
    window_from: z.string().nullable(),
    window_to: z.string().nullable(),
    on_time: z.boolean().nullable().openapi({ description: "null: no window or no arrival" }),
    late_minutes: z.number().int(),
    early_minutes: z.number().int(),
    waited_s: z.number().int().openapi({ description: "Seconds from an early arrival to the window's opening" }),
    reason: z.string().nullable().openapi({ description: "Not delivered: the code's name, else `no reason given`" }),
    drivernotes: z.string().nullable(),
  })
  .openapi("ReportStop");

const RouteLine = z
  .object({
    route_id: z.number().int(),
    name: z.string().nullable().openapi({ description: "The route's `custom_id`" }),
    day: Day,
    driver_id: z.number().int().nullable(),
    driver_name: z.string().nullable(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    vehicle_class: z.string(),
    co2e_factor: z.number().openapi({ description: "g CO₂e per km used" }),
    co2e_basis: z.enum(["tracked", "planned"]),
    ...figureShape,
    stop_details: z.array(StopLine).optional().openapi({ description: "Every reported stop (with `stops=true`)" }),
  })
  .openapi("ReportRoute");

const DriverLine = z.object({ driver_id: z.number().int().nullable(), driver_name: z.string().nullable(), ...figureShape }).openapi("ReportDriver");

const DayReport = z
  .object({
    from: Day,
    to: Day,
    timezone: z.string(),
    incomplete: z.boolean().openapi({ description: `More than ${MISSING_PER_READ} finished routes of the range had no stored figures; ${MISSING_PER_READ} were computed, ask again for the rest` }),
    routes: z.array(RouteLine),
    drivers: z.array(DriverLine),
    totals: Figures,
    lateness_histogram: z.array(z.object({ label: z.string(), from: z.number(), to: z.number().nullable(), count: z.number().int() })).openapi({
      description: `Stops with a window by minutes late: ${LATENESS_BUCKETS.map((b) => b.label).join(", ")}`,
    }),
    emission_factors: z.array(z.object({ vehicle_class: z.string(), g_per_km: z.number(), basis: z.string() })).openapi({ description: "Default factors per vehicle class (a vehicle's `co2e_g_per_km` overrides)" }),
  })
  .openapi("DayReport");

const ReportQuery = z.object({
  date: Day.optional().openapi({ description: "One day (or give `from` and `to`)" }),
  from: Day.optional().openapi({ description: "First day of a range" }),
  to: Day.optional().openapi({ description: `Last day of a range, at most ${MAX_RANGE_DAYS} days from \`from\`` }),
  format: z.enum(["json", "csv", "xlsx"]).default("json").openapi({ description: "`csv`: one table (`table`); `xlsx`: sheets Routes, Drivers, Stops, Lateness, Reasons" }),
  table: z.enum(["routes", "drivers", "stops"]).default("routes").openapi({ description: "The CSV's table: one line per route or per driver (then a total line), or per reported stop (outcome, arrival, window, lateness, reason, the driver's notes)" }),
  stops: BooleanQuery.optional().openapi({ description: "JSON: every route with its reported stops (`stop_details`); default false" }),
});

const XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

const getDayReport = apiRoute({
  method: "get",
  path: "/report/day",
  operationId: "getDayReport",
  tags: ["Reports"],
  summary: "Day report: planned against actual per route, per driver and in total",
  description:
    "Finished routes of one day (`date`) or a range (`from`..`to`, both included, at most " +
    `${MAX_RANGE_DAYS} days), by the company's local day of their start (\`ast\`). Each route's figures are computed once, when it finishes, ` +
    "and stored; a finished route without them (finished before this report existed) is computed on the first read of its day " +
    `(at most ${MISSING_PER_READ} per request: \`incomplete\` says to ask again). Actual km are the driver's tracked positions from the start to the last report ` +
    `(steps faster than ${MAX_PLAUSIBLE_KMH} km/h are GPS jumps and not counted; archived positions included). On time: arrival inside the delivery's window. ` +
    "CO₂e is an estimate (docs/features/day-report.md). `format=csv` / `format=xlsx` download the same figures (text neutralised against formulas). " +
    "422: no day or an invalid one, `to` before `from`, or a range longer than allowed.",
  roles: ["dispatcher", "watcher"],
  request: { query: ReportQuery },
  responses: {
    200: {
      description: "The report",
      content: {
        "application/json": { schema: DayReport },
        "text/csv": { schema: z.string().openapi({ description: "Comma-separated, UTF-8 with a byte order mark, header line first, a total line last" }) },
        [XLSX_TYPE]: { schema: z.string().openapi({ format: "binary" }) },
      },
    },
  },
});

const isDay = (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s) && addDays(s, 0) === s;

/** The days asked for, or 422 naming the fields. */
function rangeOf(q: { date?: string; from?: string; to?: string }): { from: string; to: string } {
  if (q.date !== undefined && (q.from !== undefined || q.to !== undefined)) throw unprocessable("Give either date or from and to", ["date", "from", "to"]);
  if (q.date !== undefined) {
    if (!isDay(q.date)) throw unprocessable("date must be a day YYYY-MM-DD", "date");
    return { from: q.date, to: q.date };
  }
  const bad = (["from", "to"] as const).filter((k) => q[k] === undefined || !isDay(q[k]!));
  if (bad.length) throw unprocessable(q.from === undefined && q.to === undefined ? "Give date, or from and to (YYYY-MM-DD)" : "from and to must be days YYYY-MM-DD", bad);
  if (q.to! < q.from!) throw unprocessable("to lies before from", "to");
  if (addDays(q.from!, MAX_RANGE_DAYS - 1) < q.to!) throw unprocessable(`A range covers at most ${MAX_RANGE_DAYS} days`, "to");
  return { from: q.from!, to: q.to! };
}

export const reportRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook }).openapi(getDayReport, async (c) => {
  const query = c.req.valid("query");
  const { from, to } = rangeOf(query);
  const company = c.get("company");
  const report = await dayReport(c.env, c.get("db"), company, from, to);
  const name = `day-report-${company.slug}-${from}${to === from ? "" : `_${to}`}`;
  if (query.format === "csv")
    return c.body(reportCsv(report, query.table), 200, { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="${name}-${query.table}.csv"` });
  if (query.format === "xlsx") return c.body(reportXlsx(report).buffer as ArrayBuffer, 200, { "content-type": XLSX_TYPE, "content-disposition": `attachment; filename="${name}.xlsx"` });
  return c.json(query.stops ? report : { ...report, routes: report.routes.map(({ stop_details: _, ...r }) => r) }, 200);
});
