/** Driver availability windows: CRUD and merge. Drivers may read all windows and change only their own. */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { AvailabilitySchema, DateTimeInput } from "../schemas/availability";
import type { AppEnv } from "../app-env";
import { forbidden, notFound, unprocessable } from "../../core/errors";
import { listObjects } from "../../core/db/list";
import { and, eq } from "drizzle-orm";
import { driverAvailabilities } from "../../core/db/schema";
import type { AuthUser, Db } from "../../core/context";
import { validationHook } from "../errors";
import { IdParam, ListQuery, apiRoute, envelope, jsonBody, jsonResponse } from "../openapi";
import { type AvailabilityRow, assertWindow, availabilityFields, mergeAvailability, presentAvailability } from "../../core/services/driver-availability";
import { assertCompanyDrivers } from "../../core/services/drivers";

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

const listWindows = apiRoute({
  method: "get",
  path: "/driveravailability",
  tags: ["Driver availability"],
  summary: "Availability windows",
  description: "`q` filters on `id`, `fromtime`, `totime`, `driver_id`.",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([envelope(AvailabilitySchema, "DriverAvailabilityList"), AvailabilitySchema]), "Windows (or one with q.single)") },
});

const getWindow = apiRoute({
  method: "get",
  path: "/driveravailability/{driveravailability_id}",
  tags: ["Driver availability"],
  summary: "One availability window",
  request: { params: IdParam("driveravailability_id") },
  responses: { 200: jsonResponse(AvailabilitySchema, "The window") },
});

const postWindow = apiRoute({
  method: "post",
  path: "/driveravailability",
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
  tags: ["Driver availability"],
  summary: "Change an availability window (identified by `id` in the body)",
  description: "Drivers may change only their own windows and may not hand them to another driver (403).",
  roles: SELF_OR_DISPATCHER,
  request: { body: jsonBody(PatchBody) },
  responses: { 200: jsonResponse(AvailabilitySchema, "The updated window") },
});

const deleteWindow = apiRoute({
  method: "delete",
  path: "/driveravailability/{driveravailability_id}",
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

const mergeWindow = apiRoute({
  method: "post",
  path: "/mergedriveravailability",
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

/** The driver a write is for: drivers act only for themselves, dispatchers name one of the company's drivers. */
async function targetDriver(db: Db, companyId: number, user: AuthUser, driverId: number | undefined): Promise<number> {
  if (user.role === "driver") {
    if (driverId !== undefined && driverId !== user.id) throw forbidden("Drivers may only manage their own availability");
    return user.id;
  }
  if (driverId === undefined) throw unprocessable("driver_id is required", "driver_id");
  await assertCompanyDrivers(db, companyId, [driverId]);
  return driverId;
}

async function loadWindow(db: Db, companyId: number, id: number): Promise<AvailabilityRow> {
  const [row] = await db
    .select()
    .from(driverAvailabilities)
    .where(and(eq(driverAvailabilities.id, id), eq(driverAvailabilities.company_id, companyId)));
  if (!row) throw notFound("Driver availability");
  return row;
}

function assertOwn(user: AuthUser, row: AvailabilityRow) {
  if (user.role === "driver" && row.driver_id !== user.id) throw forbidden("Drivers may only manage their own availability");
}

export const availabilityRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(listWindows, async (c) => {
    const t = driverAvailabilities;
    const result = await listObjects(
      c.get("db"),
      { table: t, scope: eq(t.company_id, c.get("company").id), fields: availabilityFields, idColumn: t.id, present: (rows: AvailabilityRow[]) => rows.map(presentAvailability) },
      c.req.valid("query"),
    );
    return c.json(result, 200);
  })
  .openapi(getWindow, async (c) => {
    const row = await loadWindow(c.get("db"), c.get("company").id, c.req.valid("param").driveravailability_id);
    return c.json(presentAvailability(row), 200);
  })
  .openapi(postWindow, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const body = c.req.valid("json");
    assertWindow(body.fromtime, body.totime);
    const driverId = await targetDriver(db, cid, c.get("user"), body.driver_id);
    const [row] = await db
      .insert(driverAvailabilities)
      .values({ company_id: cid, driver_id: driverId, fromtime: body.fromtime, totime: body.totime })
      .returning();
    return c.json(presentAvailability(row), 200);
  })
  .openapi(patchWindow, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const user = c.get("user");
    const body = c.req.valid("json");
    const row = await loadWindow(db, cid, body.id);
    assertOwn(user, row);
    const driverId = body.driver_id === undefined || body.driver_id === row.driver_id ? row.driver_id : await targetDriver(db, cid, user, body.driver_id);
    const fromtime = body.fromtime ?? row.fromtime;
    const totime = body.totime ?? row.totime;
    assertWindow(fromtime, totime);
    const [updated] = await db
      .update(driverAvailabilities)
      .set({ fromtime, totime, driver_id: driverId })
      .where(and(eq(driverAvailabilities.id, row.id), eq(driverAvailabilities.company_id, cid)))
      .returning();
    if (!updated) throw notFound("Driver availability");
    return c.json(presentAvailability(updated), 200);
  })
  .openapi(deleteWindow, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const row = await loadWindow(db, cid, c.req.valid("param").driveravailability_id);
    assertOwn(c.get("user"), row);
    const [deleted] = await db
      .delete(driverAvailabilities)
      .where(and(eq(driverAvailabilities.id, row.id), eq(driverAvailabilities.company_id, cid)))
      .returning();
    if (!deleted) throw notFound("Driver availability");
    return c.json(presentAvailability(deleted), 200);
  })
  .openapi(mergeWindow, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const body = c.req.valid("json");
    assertWindow(body.fromtime, body.totime);
    const driverId = await targetDriver(db, cid, c.get("user"), body.driver_id);
    const result = await mergeAvailability(c.env.DB, cid, driverId, body.fromtime, body.totime);
    const window = presentAvailability(result.window);
    if (result.merged) return c.json({ merged: true, merged_ids: result.mergedIds, ...window }, 200);
    return c.json({ merged: false, ...window }, 201);
  });
