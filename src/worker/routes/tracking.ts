/** Driver tracking: positions posted by driver apps, latest positions, traces, live `driverposition` events. */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ZodError } from "zod";
import { addDays } from "../../shared/wall-clock";
import type { PublishedEvent } from "../../core/coordinator/live";
import { listJson } from "../../core/db/list";
import { unprocessable } from "../../core/errors";
import { deleteTrackingEntry, driverPosition, driverTrace, getTrackingEntry, listTrackingEntries, reportPositions } from "../../core/services/driver-tracking";
import { positionList } from "../../core/services/drivers";
import { publishAll } from "../../core/services/live";
import type { AppEnv } from "../app-env";
import { validationHook, zodFields, zodMessage } from "../errors";
import { IdParam, ListQuery, apiRoute, envelope, jsonBody, jsonResponse, jsonText } from "../openapi";
import { PositionRecordSchema, TrackingPoint, TrackingSchema } from "../schemas/tracking";

/** Entries per POST (driver apps send what they buffered while offline). */
export const MAX_TRACKING_BATCH = 500;

const TrackingInput = z
  .object({
    id: z.number().int().optional().openapi({ description: "Ignored (assigned by the service)" }),
    timestamp: z.string().max(40).optional().openapi({ format: "date-time", description: "ISO 8601 (no zone = UTC); at most 5 minutes in the future; default now" }),
    position: TrackingPoint,
    driver_id: z.number().int().positive().optional().openapi({ description: "Required for dispatchers; drivers may omit it (themselves)" }),
  })
  .openapi("DriverTrackingInput");

const TrackingBatch = z.array(TrackingInput).min(1).max(MAX_TRACKING_BATCH);

const listTracking = apiRoute({
  method: "get",
  path: "/drivertracking",
  operationId: "listDriverTracking",
  tags: ["Driver tracking"],
  summary: "Tracking entries",
  description: "`q` filters on `id`, `driver_id`, `timestamp`, `lng`, `lat`.",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([envelope(TrackingSchema, "DriverTrackingList"), TrackingSchema]), "Entries (or one with q.single)") },
});

const getTracking = apiRoute({
  method: "get",
  path: "/drivertracking/{drivertracking_id}",
  operationId: "getDriverTracking",
  tags: ["Driver tracking"],
  summary: "One tracking entry",
  request: { params: IdParam("drivertracking_id") },
  responses: { 200: jsonResponse(TrackingSchema, "The entry") },
});

const postTracking = apiRoute({
  method: "post",
  path: "/drivertracking",
  operationId: "createDriverTracking",
  tags: ["Driver tracking"],
  summary: "Report positions",
  description:
    `One entry, or an array of up to ${MAX_TRACKING_BATCH} entries (positions buffered by the app while offline). ` +
    "Answers the stored entry, or the array of stored entries in input order. Drivers report only for themselves " +
    "(another `driver_id` -> 403); dispatchers for any driver of the company (unknown driver -> 422). " +
    "The newest position of each driver in the request is pushed to the company's websocket as a `driverposition` event.",
  roles: ["dispatcher", "driver"],
  request: { body: jsonBody(z.union([TrackingInput, TrackingBatch])) },
  responses: { 200: jsonResponse(z.union([TrackingSchema, z.array(TrackingSchema)]), "The stored entry or entries") },
});

const deleteTracking = apiRoute({
  method: "delete",
  path: "/drivertracking/{drivertracking_id}",
  operationId: "deleteDriverTracking",
  tags: ["Driver tracking"],
  summary: "Delete a tracking entry",
  description: "Answers the deleted entry.",
  request: { params: IdParam("drivertracking_id") },
  responses: { 200: jsonResponse(TrackingSchema, "The deleted entry") },
});

const listPositions = apiRoute({
  method: "get",
  path: "/driverposition",
  operationId: "listDriverPositions",
  tags: ["Driver tracking"],
  summary: "Latest position of every driver",
  description: "One record per driver that has reported a position: its newest tracking entry with the driver's name and colour. `q` filters on `driver_id`, `firstname`, `lastname`, `htmlcolor`; ordered by driver id.",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([envelope(PositionRecordSchema, "DriverPositionList"), PositionRecordSchema]), "Positions") },
});

const getPosition = apiRoute({
  method: "get",
  path: "/driverposition/{driver_id}",
  operationId: "getDriverPosition",
  tags: ["Driver tracking"],
  summary: "Latest position of a driver",
  description: "404 when the driver is unknown or has not reported a position.",
  request: { params: IdParam("driver_id") },
  responses: { 200: jsonResponse(PositionRecordSchema, "The newest position record") },
});

const LineString = z
  .object({ type: z.literal("LineString"), coordinates: z.array(z.tuple([z.number(), z.number()])) })
  .openapi("LineString", { description: "GeoJSON line string, points `[longitude, latitude]`" });

const getTrace = apiRoute({
  method: "get",
  path: "/drivertrace/{driver_id}",
  operationId: "getDriverTrace",
  tags: ["Driver tracking"],
  summary: "Driven trace of a driver",
  description:
    "The positions of the driver in time order: since the `ast` of its route on the way (status 3), or, when no route is on the way, " +
    "since midnight today on the company's wall clock (its \`timezone\`; a daylight-saving changeover day is 23 or 25 hours long). " +
    "With `date`: the whole of that day on the company's wall clock, also when its positions have moved to the archive (older than the company's `position_retention_days`). " +
    "At most 20000 points (the newest). An empty `coordinates` array when there are none.",
  request: {
    params: IdParam("driver_id"),
    query: z.object({
      date: z
        .string()
        .max(10)
        .regex(/^\d{4}-\d{2}-\d{2}$/, "a date YYYY-MM-DD")
        // zod runs every check: only a string of the date's form is read as a date.
        .refine((d) => !/^\d{4}-\d{2}-\d{2}$/.test(d) || addDays(d, 0) === d, "a date YYYY-MM-DD that exists")
        .optional()
        .openapi({ example: "2026-11-23", description: "A day on the company's wall clock (YYYY-MM-DD): that day's trace instead of today's" }),
    }),
  },
  responses: { 200: jsonResponse(LineString, "The trace") },
});

/** Pushes the newest position of each driver to the company channel, after the response. */
function pushPositions(c: Context<AppEnv>, companyId: number, events: PublishedEvent[]) {
  const done = publishAll(c.env, companyId, events);
  try {
    c.executionCtx.waitUntil(done);
  } catch {
    // No execution context (e.g. app.request in a unit test): the promise still runs.
  }
}

export const trackingRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(listTracking, async (c) => c.json(await listTrackingEntries(c.get("db"), c.get("company").id, c.req.valid("query")), 200))
  .openapi(getTracking, async (c) => c.json(await getTrackingEntry(c.get("db"), c.get("company").id, c.req.valid("param").drivertracking_id), 200))
  .openapi(
    postTracking,
    async (c) => {
      const cid = c.get("company").id;
      const body = c.req.valid("json");
      const many = Array.isArray(body);
      const { entries, events } = await reportPositions(c.get("db"), cid, c.get("user"), many ? body : [body], many);
      pushPositions(c, cid, events);
      return c.json(many ? entries : entries[0], 200);
    },
    (result): undefined => {
      // The body is one entry or an array of entries: report the errors of the shape that was sent.
      if (result.success) return undefined;
      const union = result.error.issues.find((i) => i.code === "invalid_union") as { errors?: z.core.$ZodIssue[][] } | undefined;
      let error = result.error;
      if (union?.errors?.length === 2) {
        const [asEntry, asArray] = union.errors;
        const sentArray = !asArray.some((i) => i.path.length === 0 && i.code === "invalid_type");
        error = new ZodError(sentArray ? asArray : asEntry);
      }
      throw unprocessable(`Invalid json: ${zodMessage(error)}`, zodFields(error) || "json");
    },
  )
  .openapi(deleteTracking, async (c) => c.json(await deleteTrackingEntry(c.get("db"), c.get("company").id, c.req.valid("param").drivertracking_id), 200))
  .openapi(listPositions, async (c) => {
    return jsonText(c, await listJson(c.get("db"), positionList(c.get("company").id), c.req.valid("query")), 200);
  })
  .openapi(getPosition, async (c) => c.json((await driverPosition(c.get("db"), c.get("company").id, c.req.valid("param").driver_id)) as z.infer<typeof PositionRecordSchema>, 200))
  .openapi(getTrace, async (c) => c.json(await driverTrace(c.env, c.get("db"), c.get("company"), c.req.valid("param").driver_id, c.req.valid("query").date), 200));
