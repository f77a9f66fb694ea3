/**
 * Route reads: full records, reduced records (metadata), per-delivery leg
 * distances, the route status list and the routes an update may change.
 * Units (contract.md §7): `gross_duration`/`net_duration` are minutes in
 * `/route` and seconds in `/routemetadata` and `/updateableroutes`.
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { RouteMetadataSchema, RouteSchema, RouteDeliveryDistanceSchema } from "../schemas/routes";
import { allOnOnePage } from "../../core/db/list";
import { ROUTE_STATUSES } from "../../core/domain/states";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { BooleanQuery, IdParam, ListQuery, apiRoute, envelope, jsonResponse, jsonText } from "../openapi";
import { listRouteMetadataRecords, listRouteRecords, listUpdateableRoutes, loadRoute, loadRouteRecordJson, presentRouteMetadata } from "../../core/services/route-records";
import { routeDeliveryDistances } from "../../core/services/route-view-distances";

const RouteList = envelope(RouteSchema, "RouteList");
const RouteMetadataList = envelope(RouteMetadataSchema, "RouteMetadataList");
const RouteDeliveryDistanceList = envelope(RouteDeliveryDistanceSchema, "RouteDeliveryDistanceList");
const RouteStatusList = envelope(z.object({ id: z.number().int(), name: z.string() }), "RouteStatusList");

const QDOC =
  "`q` filters on `id`, `status`, `driver_id`, `custom_id`, `creationtime`, `ast`, `tst_from`, `tst_to`, `pst`, `distance`, `replaces`, `replaced_by`, " +
  "`routebase_address_id`, `htmlcolor`, `areatext`; `previous_drivers` and `previous_deliveries` with `any` and a value " +
  '(`{"name":"previous_drivers","op":"any","val":7}`); `deliveries` with `any` and a filter on delivery fields ' +
  '(`{"name":"deliveries","op":"any","val":{"name":"status","op":"==","val":2}}`). Default order: id.';

const RouteStringQuery = z.object({
  routestring: BooleanQuery.optional().openapi({ description: "Include the GeoJSON line string (`routestring`); default false" }),
});

const listRoutes = apiRoute({
  method: "get",
  path: "/route",
  operationId: "listRoutes",
  tags: ["Routes"],
  summary: "Routes (full records)",
  description: `Full route records: delivery objects in driving order, the routebase address, durations in minutes (rounded). ${QDOC}`,
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([RouteList, RouteSchema]), "Routes (or one with q.single)") },
});

const getRoute = apiRoute({
  method: "get",
  path: "/route/{route_id}",
  operationId: "getRoute",
  tags: ["Routes"],
  summary: "One route (full record)",
  request: { params: IdParam("route_id") },
  responses: { 200: jsonResponse(RouteSchema, "The route") },
});

const listRouteMetadata = apiRoute({
  method: "get",
  path: "/routemetadata",
  operationId: "listRouteMetadata",
  tags: ["Routes"],
  summary: "Routes (reduced records)",
  description: `Reduced route records: delivery ids in driving order, routebase address id only, durations in seconds; the line string only with \`routestring=true\`. ${QDOC}`,
  request: { query: ListQuery.merge(RouteStringQuery) },
  responses: { 200: jsonResponse(z.union([RouteMetadataList, RouteMetadataSchema]), "Reduced routes (or one with q.single)") },
});

const getRouteMetadata = apiRoute({
  method: "get",
  path: "/routemetadata/{route_id}",
  operationId: "getRouteMetadata",
  tags: ["Routes"],
  summary: "One route (reduced record)",
  request: { params: IdParam("route_id"), query: RouteStringQuery },
  responses: { 200: jsonResponse(RouteMetadataSchema, "The reduced route") },
});

const routeDistances = apiRoute({
  method: "get",
  path: "/routedeliverydistances/{route_id}",
  operationId: "getRouteDeliveryDistances",
  tags: ["Routes"],
  summary: "Distance of each delivery from its predecessor",
  description:
    "One entry per delivery of the route in driving order (`orderindex`): `distance` = metres from the preceding stop; the first delivery is measured " +
    "from the route base (`routebase_address_id`; else the first delivery's pickup location; else the company depot). " +
    "Metres are estimated as great-circle distance x 1.3 circuity (the embedded routing model), rounded. A stop without coordinates gets null " +
    "and the next leg starts from the last known point. All entries on one page. The deprecated delivery field `distances` is not used.",
  request: { params: IdParam("route_id") },
  responses: { 200: jsonResponse(RouteDeliveryDistanceList, "Leg distances in driving order") },
});

const routeStatus = apiRoute({
  method: "get",
  path: "/routestatus",
  operationId: "listRouteStatuses",
  tags: ["Routes"],
  summary: "Route status values",
  responses: { 200: jsonResponse(RouteStatusList, "Route status values") },
});

const updateableRoutes = apiRoute({
  method: "get",
  path: "/updateableroutes",
  operationId: "listUpdateableRoutes",
  tags: ["Routes"],
  summary: "Routes an update may change",
  description:
    "Reduced records (as `/routemetadata`, durations in seconds) of the routes that `PATCH /calcroute/update/timewindow/{route_id}` may recompute: " +
    "status 0 `new`, 1 `assigned`, 2 `accepted` or 3 `ontheway`, with at least one delivery still `routed` (1). `q` narrows further; paged like every list.",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([RouteMetadataList, RouteMetadataSchema]), "Updateable routes") },
});


export const routeRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(listRoutes, async (c) => c.json(await listRouteRecords(c.get("db"), c.get("company").id, c.req.valid("query")), 200))
  .openapi(getRoute, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    return jsonText(c, await loadRouteRecordJson(db, cid, c.req.valid("param").route_id), 200);
  })
  .openapi(listRouteMetadata, async (c) => {
    const { routestring, ...params } = c.req.valid("query");
    return c.json(await listRouteMetadataRecords(c.get("db"), c.get("company").id, params, { routestring }), 200);
  })
  .openapi(getRouteMetadata, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const row = await loadRoute(db, cid, c.req.valid("param").route_id);
    return c.json((await presentRouteMetadata(db, cid, [row], { routestring: c.req.valid("query").routestring }))[0], 200);
  })
  .openapi(routeDistances, async (c) => {
    const db = c.get("db");
    const company = c.get("company");
    const row = await loadRoute(db, company.id, c.req.valid("param").route_id);
    return c.json(allOnOnePage(await routeDeliveryDistances(db, company.id, row, company.location_id)), 200);
  })
  .openapi(routeStatus, (c) => c.json(allOnOnePage(ROUTE_STATUSES), 200))
  .openapi(updateableRoutes, async (c) => c.json(await listUpdateableRoutes(c.get("db"), c.get("company").id, c.req.valid("query")), 200));
