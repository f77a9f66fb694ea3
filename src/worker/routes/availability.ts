/** Driver availability windows: CRUD and merge. Drivers may read all windows and change only their own. */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { AvailabilitySchema, DateTimeInput } from "../schemas/availability";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { IdParam, ListQuery, apiRoute, envelope, jsonBody, jsonResponse } from "../openapi";
import { createWindow, deleteWindow, getWindow, listWindows, mergeWindow, updateWindow } from "../../core/services/availability-windows";

const SELF_OR_DISPATCHER = ["dispatcher", "driver"] as const;

const WindowBody = z
  .object({
    id: z.number().int().optional().openapi({ description: "Ignored on creation (assigned by the service)" }),
    fromtime: DateTimeInput,
    totime: DateTimeInput,
    driver_id: z.number().int().positive().optional().openapi({ description: "Required for dispatchers; drivers may omit it (themselves)" }),
  })
  .openapi("DriverAvailabilityInput");

const PatchBody = z
  .object({
    id: z.number().int().positive(),
    fromtime: DateTimeInput.optional(),
    totime: DateTimeInput.optional(),
    driver_id: z.number().int().positive().optional(),
  })
  .openapi("DriverAvailabilityPatch");

const getWindows = apiRoute({
  method: "get",
  path: "/driveravailability",
  operationId: "listDriverAvailabilities",
  tags: ["Driver availability"],
  summary: "Availability windows",
  description: "`q` filters on `id`, `fromtime`, `totime`, `driver_id`.",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([envelope(AvailabilitySchema, "DriverAvailabilityList"), AvailabilitySchema]), "Windows (or one with q.single)") },
});

const getWindowRoute = apiRoute({
  method: "get",
  path: "/driveravailability/{driveravailability_id}",
  operationId: "getDriverAvailability",
  tags: ["Driver availability"],
  summary: "One availability window",
  request: { params: IdParam("driveravailability_id") },
  responses: { 200: jsonResponse(AvailabilitySchema, "The window") },
});

const postWindow = apiRoute({
  method: "post",
  path: "/driveravailability",
  operationId: "createDriverAvailability",
  tags: ["Driver availability"],
  summary: "Add an availability window",
  description:
    "Adds the window as given, without merging or overlap check (see `/mergedriveravailability`). `fromtime` must be before `totime` (422). " +
    "Drivers may add windows only for themselves (another `driver_id` -> 403); an unknown driver -> 422.",
  roles: SELF_OR_DISPATCHER,
  request: { body: jsonBody(WindowBody) },
  responses: { 200: jsonResponse(AvailabilitySchema, "The stored window") },
});

const patchWindow = apiRoute({
  method: "patch",
  path: "/driveravailability",
  operationId: "updateDriverAvailability",
  tags: ["Driver availability"],
  summary: "Change an availability window (identified by `id` in the body)",
  description: "Drivers may change only their own windows and may not hand them to another driver (403).",
  roles: SELF_OR_DISPATCHER,
  request: { body: jsonBody(PatchBody) },
  responses: { 200: jsonResponse(AvailabilitySchema, "The updated window") },
});

const deleteWindowRoute = apiRoute({
  method: "delete",
  path: "/driveravailability/{driveravailability_id}",
  operationId: "deleteDriverAvailability",
  tags: ["Driver availability"],
  summary: "Delete an availability window",
  description: "Answers the deleted window. Drivers may delete only their own (403).",
  roles: SELF_OR_DISPATCHER,
  request: { params: IdParam("driveravailability_id") },
  responses: { 200: jsonResponse(AvailabilitySchema, "The deleted window") },
});

const MergedSchema = AvailabilitySchema.extend({
  merged: z.boolean(),
  merged_ids: z.array(z.number().int()).optional().openapi({ description: "When merged: ids of the existing windows combined (including `id`)" }),
}).openapi("DriverAvailabilityMerge");

const postMerge = apiRoute({
  method: "post",
  path: "/mergedriveravailability",
  operationId: "mergeDriverAvailabilities",
  tags: ["Driver availability"],
  summary: "Add an availability window, merging it with overlapping ones",
  description:
    "Existing windows of the same driver that overlap or touch the posted window (at its beginning, its end, or both) are merged " +
    "with it into one window, the union of all of them. The earliest of the existing windows keeps its id and takes the union's " +
    "bounds; the other merged windows are deleted. All of this happens atomically.\n\n" +
    "- merged: **200** `{merged: true, merged_ids: [...], id, fromtime, totime, driver_id}`, `merged_ids` listing the existing windows " +
    "combined (the surviving `id` included).\n" +
    "- no overlap: the window is created, **201** `{merged: false, id, fromtime, totime, driver_id}`.\n\n" +
    "`fromtime` must be before `totime` (422). Drivers may merge only their own windows (403).",
  roles: SELF_OR_DISPATCHER,
  request: { body: jsonBody(WindowBody) },
  responses: {
    200: jsonResponse(MergedSchema, "Merged with existing windows"),
    201: jsonResponse(MergedSchema, "No overlap: created"),
  },
});

export const availabilityRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(getWindows, async (c) => c.json(await listWindows(c.get("db"), c.get("company").id, c.req.valid("query")), 200))
  .openapi(getWindowRoute, async (c) => c.json(await getWindow(c.get("db"), c.get("company").id, c.req.valid("param").driveravailability_id), 200))
  .openapi(postWindow, async (c) => c.json(await createWindow(c.get("db"), c.get("company").id, c.get("user"), c.req.valid("json")), 200))
  .openapi(patchWindow, async (c) => {
    const { id, ...patch } = c.req.valid("json");
    return c.json(await updateWindow(c.get("db"), c.get("company").id, c.get("user"), id, patch), 200);
  })
  .openapi(deleteWindowRoute, async (c) => c.json(await deleteWindow(c.get("db"), c.get("company").id, c.get("user"), c.req.valid("param").driveravailability_id), 200))
  .openapi(postMerge, async (c) => {
    const { merged, mergedIds, window } = await mergeWindow(c.env.DB, c.get("db"), c.get("company").id, c.get("user"), c.req.valid("json"));
    if (merged) return c.json({ merged: true, merged_ids: mergedIds, ...window }, 200);
    return c.json({ merged: false, ...window }, 201);
  });
