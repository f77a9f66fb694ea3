/** Vehicles and vehicle types (the route optimiser's vehicle classes). */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { VehicleSchema, VehicleTypeSchema, vehicleInputShape } from "../schemas/vehicles";
import { pageOf } from "../../core/db/list";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { IdParam, ListQuery, apiRoute, envelope, jsonBody, jsonResponse } from "../openapi";
import { createVehicle, getVehicle, listVehicles, updateVehicle, vehicleTypes } from "../../core/services/vehicle-records";

const listVehicleTypes = apiRoute({
  method: "get",
  path: "/vehicletype",
  operationId: "listVehicleTypes",
  tags: ["Vehicles"],
  summary: "Vehicle types",
  description: "The vehicle classes of the route optimiser, with average speed and restrictions. `vehicle_class` of a vehicle is one of their ids.",
  request: { query: ListQuery.omit({ q: true }) },
  responses: { 200: jsonResponse(envelope(VehicleTypeSchema, "VehicleTypeList"), "All vehicle types") },
});

const getVehicles = apiRoute({
  method: "get",
  path: "/vehicle",
  operationId: "listVehicles",
  tags: ["Vehicles"],
  summary: "Vehicles",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([envelope(VehicleSchema, "VehicleList"), VehicleSchema]), "Vehicles (or one with q.single)") },
});

const getVehicleRoute = apiRoute({
  method: "get",
  path: "/vehicle/{vehicle_id}",
  operationId: "getVehicle",
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
  operationId: "createVehicle",
  tags: ["Vehicles"],
  summary: "Create a vehicle",
  description: `Defaults: \`vehicle_class\` \`car\`, \`active\` true. ${RULES}`,
  request: { body: jsonBody(NewVehicle) },
  responses: { 200: jsonResponse(VehicleSchema, "The stored vehicle") },
});

const patchVehicle = apiRoute({
  method: "patch",
  path: "/vehicle",
  operationId: "updateVehicle",
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
  .openapi(getVehicles, async (c) => c.json(await listVehicles(c.get("db"), c.get("company").id, c.req.valid("query")), 200))
  .openapi(getVehicleRoute, async (c) => c.json(await getVehicle(c.get("db"), c.get("company").id, c.req.valid("param").vehicle_id), 200))
  .openapi(postVehicle, async (c) => {
    const { id: _id, ...input } = c.req.valid("json");
    return c.json(await createVehicle(c.get("db"), c.get("company").id, input), 200);
  })
  .openapi(patchVehicle, async (c) => {
    const { id, ...input } = c.req.valid("json");
    return c.json(await updateVehicle(c.get("db"), c.get("company").id, id, input), 200);
  });
