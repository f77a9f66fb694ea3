/** Vehicles and vehicle types (the route optimiser's vehicle classes). */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { VehicleSchema, VehicleTypeSchema, vehicleInputShape } from "../schemas/vehicles";
import { notFound } from "../../core/errors";
import { listObjects, pageOf } from "../../core/db/list";
import { and, eq } from "drizzle-orm";
import { vehicles } from "../../core/db/schema";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { IdParam, ListQuery, apiRoute, envelope, jsonBody, jsonResponse } from "../openapi";
import { type VehicleRow, prepareVehicle, presentVehicle, vehicleFields, vehicleTypes } from "../../core/services/vehicle-records";

const listVehicleTypes = apiRoute({
  method: "get",
  path: "/vehicletype",
  tags: ["Vehicles"],
  summary: "Vehicle types",
  description: "The vehicle classes of the route optimiser, with average speed and restrictions. `vehicle_class` of a vehicle is one of their ids.",
  request: { query: ListQuery.omit({ q: true }) },
  responses: { 200: jsonResponse(envelope(VehicleTypeSchema, "VehicleTypeList"), "All vehicle types") },
});

const listVehicles = apiRoute({
  method: "get",
  path: "/vehicle",
  tags: ["Vehicles"],
  summary: "Vehicles",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([envelope(VehicleSchema, "VehicleList"), VehicleSchema]), "Vehicles (or one with q.single)") },
});

const getVehicle = apiRoute({
  method: "get",
  path: "/vehicle/{vehicle_id}",
  tags: ["Vehicles"],
  summary: "One vehicle",
  request: { params: IdParam("vehicle_id") },
  responses: { 200: jsonResponse(VehicleSchema, "The vehicle") },
});

const NewVehicle = z
  .object({ ...vehicleInputShape, id: z.number().int().optional().openapi({ description: "Ignored (assigned by the service)" }) })
  .openapi("NewVehicle");

const VehiclePatch = z
  .object({ ...vehicleInputShape, name: vehicleInputShape.name.optional(), id: z.number().int().positive() })
  .openapi("VehiclePatch");

const RULES =
  "`name` is unique within the company (409). `vehicle_class` must be one of GET /vehicletype (422). `depot_location_id` and " +
  "`driver_id` must be an address and a driver of the company (422 naming the field). Times of day accept `hh:mm:ss+hh:mm` or " +
  "`hh:mm:ss` (the company's wall clock: 08:00:00 is 08:00 on every planning day, summer or winter time) and are answered as stored.";

const postVehicle = apiRoute({
  method: "post",
  path: "/vehicle",
  tags: ["Vehicles"],
  summary: "Create a vehicle",
  description: `Defaults: \`vehicle_class\` \`car\`, \`active\` true. ${RULES}`,
  request: { body: jsonBody(NewVehicle) },
  responses: { 200: jsonResponse(VehicleSchema, "The stored vehicle") },
});

const patchVehicle = apiRoute({
  method: "patch",
  path: "/vehicle",
  tags: ["Vehicles"],
  summary: "Change a vehicle (identified by `id` in the body)",
  description: `Fields not sent stay unchanged; \`null\` clears an optional field. ${RULES}`,
  request: { body: jsonBody(VehiclePatch) },
  responses: { 200: jsonResponse(VehicleSchema, "The updated vehicle") },
});

export const vehicleRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(listVehicleTypes, (c) => {
    return c.json(pageOf(vehicleTypes(), c.req.valid("query")), 200);
  })
  .openapi(listVehicles, async (c) => {
    const result = await listObjects(
      c.get("db"),
      { table: vehicles, scope: eq(vehicles.company_id, c.get("company").id), fields: vehicleFields, idColumn: vehicles.id, present: (rows: VehicleRow[]) => rows.map(presentVehicle) },
      c.req.valid("query"),
    );
    return c.json(result, 200);
  })
  .openapi(getVehicle, async (c) => {
    const [row] = await c
      .get("db")
      .select()
      .from(vehicles)
      .where(and(eq(vehicles.id, c.req.valid("param").vehicle_id), eq(vehicles.company_id, c.get("company").id)));
    if (!row) throw notFound("Vehicle");
    return c.json(presentVehicle(row), 200);
  })
  .openapi(postVehicle, async (c) => {
    const db = c.get("db");
    const company = c.get("company");
    const { id: _id, ...input } = c.req.valid("json");
    const values = await prepareVehicle(db, company.id, input);
    const [row] = await db
      .insert(vehicles)
      .values({ ...values, name: input.name, company_id: company.id })
      .returning();
    return c.json(presentVehicle(row), 200);
  })
  .openapi(patchVehicle, async (c) => {
    const db = c.get("db");
    const company = c.get("company");
    const { id, ...input } = c.req.valid("json");
    const where = and(eq(vehicles.id, id), eq(vehicles.company_id, company.id));
    const [existing] = await db.select().from(vehicles).where(where);
    if (!existing) throw notFound("Vehicle");
    const values = await prepareVehicle(db, company.id, input);
    if (Object.keys(values).length === 0) return c.json(presentVehicle(existing), 200);
    const [row] = await db.update(vehicles).set(values).where(where).returning();
    if (!row) throw notFound("Vehicle");
    return c.json(presentVehicle(row), 200);
  });
