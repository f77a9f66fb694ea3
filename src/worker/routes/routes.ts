/**
 * Route reads: full records, reduced records (metadata), per-delivery leg
 * distances, the route status list and the routes an update may change.
 * Units (contract.md §7): `gross_duration`/`net_duration` are minutes in
 * `/route` and seconds in `/routemetadata` and `/updateableroutes`.
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { RouteMetadataSchema, RouteSchema, RouteDeliveryDistanceSchema } from "../schemas/routes";
import { DeliveryStatus } from "../../shared/contract/states";
import { allOnOnePage, listObjects } from "../../core/db/list";
import { and, inArray, sql } from "drizzle-orm";
import { deliveries, routes } from "../../core/db/schema";
import { ROUTE_STATUSES, UNFINISHED_ROUTE_STATUSES } from "../../core/domain/states";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { BooleanQuery, IdParam, ListQuery, apiRoute, envelope, jsonResponse, jsonText } from "../openapi";
import { type RouteRecordRow, loadRoute, loadRouteRecordJson, presentRouteMetadata, presentRoutes, routeFields, routeRecordColumns, routeScope } from "../../core/services/route-records";
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
  tags: ["Routes"],
  summary: "Routes (full records)",
  description: `Full route records: delivery objects in driving order, the routebase address, durations in minutes (rounded). ${QDOC}`,
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([RouteList, RouteSchema]), "Routes (or one with q.single)") },
});

const getRoute = apiRoute({
  method: "get",
  path: "/route/{route_id}",
  tags: ["Routes"],
  summary: "One route (full record)",
  request: { params: IdParam("route_id") },
  responses: { 200: jsonResponse(RouteSchema, "The route") },
});

const listRouteMetadata = apiRoute({
  method: "get",
  path: "/routemetadata",
  tags: ["Routes"],
  summary: "Routes (reduced records)",
  description: `Reduced route records: delivery ids in driving order, routebase address id only, durations in seconds; the line string only with \`routestring=true\`. ${QDOC}`,
  request: { query: ListQuery.merge(RouteStringQuery) },
  responses: { 200: jsonResponse(z.union([RouteMetadataList, RouteMetadataSchema]), "Reduced routes (or one with q.single)") },
});

const getRouteMetadata = apiRoute({
  method: "get",
  path: "/routemetadata/{route_id}",
  tags: ["Routes"],
  summary: "One route (reduced record)",
  request: { params: IdParam("route_id"), query: RouteStringQuery },
  responses: { 200: jsonResponse(RouteMetadataSchema, "The reduced route") },
});

const routeDistances = apiRoute({
  method: "get",
  path: "/routedeliverydistances/{route_id}",
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
  tags: ["Routes"],
  summary: "Route status values",
  responses: { 200: jsonResponse(RouteStatusList, "Route status values") },
});

const updateableRoutes = apiRoute({
  method: "get",
  path: "/updateableroutes",
  tags: ["Routes"],
  summary: "Routes an update may change",
  description:
    "Reduced records (as `/routemetadata`, durations in seconds) of the routes that `PATCH /calcroute/update/timewindow/{route_id}` may recompute: " +
    "status 0 `new`, 1 `assigned`, 2 `accepted` or 3 `ontheway`, with at least one delivery still `routed` (1). `q` narrows further; paged like every list.",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([RouteMetadataList, RouteMetadataSchema]), "Updateable routes") },
});


/** Routes an update may change: unfinished, with a delivery still routed. */
export const updateableScope = (companyId: number) =>
  and(
    routeScope(companyId),
    inArray(routes.status, [...UNFINISHED_ROUTE_STATUSES]),
    // `+status`: the route's deliveries by (company_id, route_id), not every routed delivery of the company by (company_id, status, …)
    // for each route (`npm run bench:queries -- --rows`: 20,000 rows read for a page of 100 routes, 300 with it).
    sql`exists (select 1 from ${deliveries} where ${deliveries.route_id} = ${routes.id} and ${deliveries.company_id} = ${routes.company_id} and +${deliveries.status} = ${DeliveryStatus.routed})`,
  );

export const routeRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(listRoutes, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const result = await listObjects(
      db,
      {
        table: routes,
        scope: routeScope(cid),
        fields: routeFields,
        idColumn: routes.id,
        columns: routeRecordColumns,
        present: (rows: RouteRecordRow[]) => presentRoutes(db, cid, rows),
      },
      c.req.valid("query"),
    );
    return c.json(result, 200);
  })
  .openapi(getRoute, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    return jsonText(c, await loadRouteRecordJson(db, cid, c.req.valid("param").route_id), 200);
  })
  .openapi(listRouteMetadata, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const { routestring, ...params } = c.req.valid("query");
    const result = await listObjects(
      db,
      {
        table: routes,
        scope: routeScope(cid),
        fields: routeFields,
        idColumn: routes.id,
        columns: routestring ? undefined : routeRecordColumns,
        present: (rows: RouteRecordRow[]) => presentRouteMetadata(db, cid, rows, { routestring }),
      },
      params,
    );
    return c.json(result, 200);
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
  .openapi(updateableRoutes, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const result = await listObjects(
      db,
      {
        table: routes,
        scope: updateableScope(cid),
        fields: routeFields,
        idColumn: routes.id,
        columns: routeRecordColumns,
        present: (rows: RouteRecordRow[]) => presentRouteMetadata(db, cid, rows),
      },
      c.req.valid("query"),
    );
    return c.json(result, 200);
  });
