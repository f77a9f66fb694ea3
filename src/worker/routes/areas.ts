/** Postal-code areas, the point lookup, and the company's tour areas (dispatch-api.md "Addresses and areas"). */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { IdParam, ListQuery, apiRoute, envelope, PointQuery, jsonBody, jsonResponse, pointOfQuery } from "../openapi";
import { AreaGeometrySchema, PlzAreaIndexSchema, PlzAreaSchema, TourAreaPatchSchema, TourAreaSchema } from "../schemas/areas";
import {
  type AreaCtx,
  createTourAreaFromPlz,
  deleteTourArea,
  getTourArea,
  listPlzAreas,
  listTourAreas,
  plzAreaIndex,
  postalAreaAt,
  updateTourArea,
} from "../../core/services/tour-areas";

/** Page size cap of the postal-code area list (dispatch-api.md: at most 10 per page). */
const areaCtx = (c: Context<AppEnv>): AreaCtx => ({ db: c.get("db"), d1: c.env.DB, companyId: c.get("company").id });

const getPlzAreas = apiRoute({
  method: "get",
  path: "/plzarea",
  operationId: "listPostalAreas",
  tags: ["Areas"],
  summary: "Postal-code areas",
  description:
    "Postal-code areas (reference data shared by all companies) with `area_id`, the id of this company's tour area containing the area (null when none). " +
    "At most 10 per page (`results_per_page` above 10 is capped). Filter fields: `gid`, `plz`, `note`, `area_id`, `source` (`derived` | `imported`); " +
    "filtering is advised, e.g. `q={\"filters\":[{\"name\":\"plz\",\"op\":\"like\",\"val\":\"803%\"}]}`.",
  request: {
    query: ListQuery.extend({
      results_per_page: z.coerce.number().int().min(1).optional().openapi({ description: "Page size; default 10, at most 10 (larger values are capped)" }),
    }),
  },
  responses: { 200: jsonResponse(z.union([envelope(PlzAreaSchema, "PlzAreaList"), PlzAreaSchema]), "Postal-code areas (or one with q.single)") },
});

const listPlzAreaIndex = apiRoute({
  method: "get",
  path: "/plzareas",
  operationId: "getPostalAreasGeometry",
  tags: ["Areas"],
  summary: "All postal codes with this company's tour area ids",
  description:
    "The interface document leaves this endpoint without a described behaviour; this service answers the unpaginated list of every postal-code area " +
    "`[{plz, gid, area_id}]`, ordered by `plz`, where `area_id` is this company's tour area containing it (null when none). " +
    "No geometries, so the answer stays small; use `GET /plzarea` for geometries.",
  responses: { 200: jsonResponse(z.array(PlzAreaIndexSchema), "Every postal code with its area id") },
});

const PointLookupSchema = z
  .object({
    success: z.boolean().openapi({ description: "Whether a postal-code area contains the point" }),
    plzarea_id: z.number().int().nullable().openapi({ description: "`gid` of the postal-code area, null when none" }),
    plz: z.string().nullable(),
    geom: AreaGeometrySchema.nullable(),
    area_id: z.number().int().nullable().openapi({ description: "This company's tour area containing the postal-code area, null when none (extension)" }),
  })
  .openapi("PlzAreaForPoint");

const areaForPoint = apiRoute({
  method: "get",
  path: "/areaforpoint",
  operationId: "getAreaForPoint",
  tags: ["Areas"],
  summary: "Postal-code area containing a point",
  description:
    "`lat` and `lon` (or its alias `lng`) are required query parameters (dispatch-api.md lists them as body parameters; a GET carries them in the query). " +
    "When no postal-code area contains the point the answer is still 200: `{success: false, plzarea_id: null, plz: null, geom: null, area_id: null}`. " +
    "Missing or out-of-range coordinates: 422.",
  request: { query: PointQuery },
  responses: { 200: jsonResponse(PointLookupSchema, "The area, or success false") },
});

const AreaFromPlzBody = z
  .object({
    plz_list: z.array(z.string().trim().min(1).max(20)).min(1).max(10_000).openapi({ example: ["80331", "80333"] }),
    areaname: z.string().trim().min(1).max(200).openapi({ example: "Munich centre" }),
  })
  .openapi("AreaFromPlz");

const areaFromPlz = apiRoute({
  method: "post",
  path: "/areafromplz",
  operationId: "createTourAreaFromPostalCodes",
  tags: ["Areas"],
  summary: "Create a tour area from postal codes",
  description:
    "Creates a tour area whose `geom` is the union of the postal-code areas (MultiPolygon) and makes them its members. " +
    "Unknown postal codes: 422 naming `plz_list` and listing them. A postal code already in another tour area of this company: 409. " +
    "Answers 200 with the tour area (only driver, address and delivery creations answer 201).",
  request: { body: jsonBody(AreaFromPlzBody) },
  responses: { 200: jsonResponse(TourAreaSchema, "The created tour area") },
});

const getTourAreas = apiRoute({
  method: "get",
  path: "/tourarea",
  operationId: "listTourAreas",
  tags: ["Areas"],
  summary: "Tour areas",
  description:
    "Filter fields: `id`, `areaname`, `driver_id`, `created_at`, and `plzareas` (to-many: `any` with `gid`, `plz`, `note`), " +
    "e.g. `{\"name\":\"plzareas\",\"op\":\"any\",\"val\":{\"name\":\"plz\",\"op\":\"==\",\"val\":\"80331\"}}`. " +
    "`plzareas` of each tour area lists its postal-code areas without geometries.",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([envelope(TourAreaSchema, "TourAreaList"), TourAreaSchema]), "Tour areas (or one with q.single)") },
});

const getTourAreaRoute = apiRoute({
  method: "get",
  path: "/tourarea/{tourarea_id}",
  operationId: "getTourArea",
  tags: ["Areas"],
  summary: "One tour area",
  request: { params: IdParam("tourarea_id") },
  responses: { 200: jsonResponse(TourAreaSchema, "The tour area") },
});

const patchTourArea = apiRoute({
  method: "patch",
  path: "/tourarea/{tourarea_id}",
  operationId: "updateTourArea",
  tags: ["Areas"],
  summary: "Change a tour area",
  description:
    "`areaname`; `driver_id` (a driver of this company, active or not, else 422; null unbinds); the membership as `plz_list` or `plzareas` " +
    "(replaces it and recomputes `geom`; a postal code in another tour area: 409); `geom` directly. Answers the updated tour area.",
  request: { params: IdParam("tourarea_id"), body: jsonBody(TourAreaPatchSchema) },
  responses: { 200: jsonResponse(TourAreaSchema, "The updated tour area") },
});

const deleteTourAreaRoute = apiRoute({
  method: "delete",
  path: "/deletetourarea/{tourarea_id}",
  operationId: "deleteTourArea",
  tags: ["Areas"],
  summary: "Delete a tour area",
  description: "Removes the tour area and its membership (its postal codes become free); answers the deleted tour area.",
  request: { params: IdParam("tourarea_id") },
  responses: { 200: jsonResponse(TourAreaSchema, "The deleted tour area") },
});

export const areaRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(getPlzAreas, async (c) => c.json(await listPlzAreas(areaCtx(c), c.req.valid("query")), 200))
  .openapi(listPlzAreaIndex, async (c) => c.json(await plzAreaIndex(areaCtx(c)), 200))
  .openapi(areaForPoint, async (c) => {
    const { lat, lon } = pointOfQuery(c.req.valid("query"));
    return c.json(await postalAreaAt(areaCtx(c), lon, lat), 200);
  })
  .openapi(areaFromPlz, async (c) => c.json(await createTourAreaFromPlz(areaCtx(c), c.req.valid("json")), 200))
  .openapi(getTourAreas, async (c) => c.json(await listTourAreas(areaCtx(c), c.req.valid("query")), 200))
  .openapi(getTourAreaRoute, async (c) => c.json(await getTourArea(areaCtx(c), c.req.valid("param").tourarea_id), 200))
  .openapi(patchTourArea, async (c) => c.json(await updateTourArea(areaCtx(c), c.req.valid("param").tourarea_id, c.req.valid("json")), 200))
  .openapi(deleteTourAreaRoute, async (c) => c.json(await deleteTourArea(areaCtx(c), c.req.valid("param").tourarea_id), 200));
