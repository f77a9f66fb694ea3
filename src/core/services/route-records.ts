/**
 * Route records as the API shows them (dispatch-api.md "Route"):
 * - the full record (`/route`): delivery objects in driving order, the
 *   routebase address, durations in MINUTES (rounded);
 * - the reduced record (`/routemetadata`, `/updateableroutes`): delivery ids,
 *   routebase address id, durations in SECONDS, line string only on request.
 * Durations are stored in seconds (schema.ts). Every loader takes the whole
 * page of routes and loads every related table in one round trip (a D1 batch),
 * never one query per route.
 */
import { type SQL, and, asc, eq, getTableColumns, inArray, sql } from "drizzle-orm";
import { companyRow } from "../db/company-row";
import { DeliveryStatus } from "../../shared/contract/states";
import type { AddressOut } from "../../shared/contract/address";
import { type ListParams, type ListSpec, listObjects } from "../db/list";
import { addresses, deliveries, routes } from "../db/schema";
import { UNFINISHED_ROUTE_STATUSES } from "../domain/states";
import type { Db } from "../context";
import { notFound } from "../errors";
import type { FieldMap } from "../lib/filters";
import type { LineString } from "../../shared/contract/geo";
import { type AddressRow, addressLookup, presentAddress } from "./addresses";
import { type DeliveryOut, type DeliveryRow, deliveryAddressesQuery, deliveryFields, deliveryJson, presentDeliveriesWith } from "./deliveries";
import { columnRef, embedded } from "../db/json";
import { inList } from "../db/sql";

export type RouteRow = typeof routes.$inferSelect;

/** The columns a full record shows: all but the line string (served by `/routemetadata?routestring=true`), which can be the largest value of the row. */
export const { routestring: _routestring, ...routeRecordColumns } = getTableColumns(routes);
export type RouteRecordRow = Omit<RouteRow, "routestring">;

/** The fields both records show, as `common` presents them from the row. */
type RouteFields = ReturnType<typeof common>;

/** The full record (`/route`): delivery objects in driving order, the base address, durations in minutes. */
export type RouteOut = RouteFields & { gross_duration: number; net_duration: number; deliveries: DeliveryOut[]; routebase_address: AddressOut | null };

/** The reduced record (`/routemetadata`): delivery ids, durations in seconds, the line string on request. */
export type RouteMetadataOut = RouteFields & { gross_duration: number; net_duration: number; deliveries: number[]; routestring?: LineString | null };

/** Filterable fields of `q` on routes; `deliveries` filters by the route's deliveries (`any`). */
export const routeFields: FieldMap = {
  ...Object.fromEntries(
    Object.entries({
      id: "integer", creationtime: "datetime", ast: "datetime", tst_from: "datetime", tst_to: "datetime", pst: "integer",
      distance: "integer", driver_id: "integer", status: "integer", custom_id: "text", replaces: "integer", replaced_by: "integer",
      routebase_address_id: "integer", vehicle: "text", vehicle_id: "integer", areatext: "text", htmlcolor: "text", previous_drivers: "json_array", previous_deliveries: "json_array",
    } as const).map(([name, type]) => [name, { column: routes[name as keyof RouteRow], type }]),
  ),
  deliveries: {
    relation: "many",
    fields: deliveryFields,
    exists: (condition) =>
      sql`exists (select 1 from ${deliveries} where ${deliveries.route_id} = ${routes.id} and ${deliveries.company_id} = ${routes.company_id} and ${condition})`,
  },
};

/** The tenant scope of every route query. */
export const routeScope = (companyId: number): SQL => eq(routes.company_id, companyId);

/** The company's route with this id, or 404. */
export const loadRoute = (db: Db, companyId: number, id: number): Promise<RouteRow> => companyRow(db, routes, companyId, id, "Route");

/** Driving order: `orderindex` (unset last), then id. */
const drivingOrder = [sql`${deliveries.orderindex} is null`, asc(deliveries.orderindex), asc(deliveries.id)];

const minutes = (seconds: number) => Math.round(seconds / 60);

function common(r: RouteRecordRow, deliveryIds: number[]) {
  return {
    id: r.id,
    creationtime: r.creationtime,
    ast: r.ast,
    tst_from: r.tst_from,
    tst_to: r.tst_to,
    pst: r.pst,
    distance: r.distance,
    driver_id: r.driver_id,
    status: r.status,
    custom_id: r.custom_id,
    previous_deliveries: r.previous_deliveries ?? [],
    previous_drivers: r.previous_drivers ?? [],
    replaces: r.replaces,
    replaced_by: r.replaced_by,
    routebase_address_id: r.routebase_address_id,
    vehicle: r.vehicle,
    vehicle_id: r.vehicle_id,
    breaks: r.breaks,
    sorted_deliveries: deliveryIds,
    areatext: r.areatext,
    htmlcolor: r.htmlcolor,
  };
}

const groupByRoute = <T extends { route_id: number | null }>(rows: T[]) => {
  const byRoute = new Map<number, T[]>();
  for (const row of rows) {
    if (row.route_id === null) continue;
    const list = byRoute.get(row.route_id);
    if (list) list.push(row);
    else byRoute.set(row.route_id, [row]);
  }
  return byRoute;
};

/** The deliveries of the given routes in driving order (one query, awaitable or batched). */
export function loadRouteDeliveries(db: Db, companyId: number, routeIds: number[]) {
  return db.select().from(deliveries).where(routeDeliveriesFilter(companyId, routeIds)).orderBy(...drivingOrder);
}

const routeDeliveriesFilter = (companyId: number, routeIds: number[]) => and(eq(deliveries.company_id, companyId), inList(deliveries.route_id, routeIds))!;

/** Every address a full record shows: the deliveries' targets and suppliers and the route bases (one query). */
const routeAddresses = (db: Db, companyId: number, routeIds: number[]) =>
  deliveryAddressesQuery(db, companyId, routeDeliveriesFilter(companyId, routeIds), sql`select ${routes.routebase_address_id} from ${routes} where ${and(routeScope(companyId), inList(routes.id, routeIds))}`);

/** A full record's own fields (without its deliveries and base address), as both presenters give them. */
const recordFields = (r: RouteRecordRow, deliveryIds: number[]) => ({
  ...common(r, deliveryIds),
  gross_duration: minutes(r.gross_duration),
  net_duration: minutes(r.net_duration),
});

function fullRecords(rows: RouteRecordRow[], deliveryRows: DeliveryRow[], addressRows: AddressRow[]): RouteOut[] {
  const byRoute = groupByRoute(presentDeliveriesWith(deliveryRows, addressRows));
  const bases = new Map(addressRows.map((a) => [a.id, a]));
  return rows.map((r) => {
    const list = byRoute.get(r.id) ?? [];
    const base = r.routebase_address_id === null ? undefined : bases.get(r.routebase_address_id);
    return {
      ...recordFields(r, list.map((d) => d.id)),
      deliveries: list,
      routebase_address: base ? presentAddress(base) : null,
    };
  });
}

/** Full route records: deliveries and every address they show loaded for the whole page in one round trip. */
export async function presentRoutes(db: Db, companyId: number, rows: RouteRecordRow[]): Promise<RouteOut[]> {
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  const [deliveryRows, addressRows] = await db.batch([loadRouteDeliveries(db, companyId, ids), routeAddresses(db, companyId, ids)]);
  return fullRecords(rows, deliveryRows, addressRows);
}

/**
 * The statements of one full route record (one batch): the route with its base
 * address's JSON (`addressJson`), and its deliveries in driving order, each as
 * the JSON `GET /delivery` shows (`deliveryJson`: its addresses looked up in the same statement).
 */
export const routeRecordStatements = (db: Db, companyId: number, id: number) =>
  [
    db
      .select({
        ...routeRecordColumns,
        routebase_address: sql.raw(embedded(addressLookup(columnRef(routes, routes.routebase_address_id), columnRef(routes, routes.company_id), "record"))).mapWith(String),
      })
      .from(routes)
      .where(and(routeScope(companyId), eq(routes.id, id))),
    db
      .select({ id: deliveries.id, json: deliveryJson })
      .from(deliveries)
      .where(routeDeliveriesFilter(companyId, [id]))
      .orderBy(...drivingOrder),
  ] as const;

/**
 * The full record of the company's route with this id as JSON text (one round
 * trip), or 404: the route's own fields from its row, the deliveries and the
 * base address as SQLite built them. The same record as `presentRoutes`
 * (test/json-answers.test.ts).
 */
export async function loadRouteRecordJson(db: Db, companyId: number, id: number): Promise<string> {
  const [[row], deliveryRows] = await db.batch(routeRecordStatements(db, companyId, id));
  if (!row) throw notFound("Route");
  const { routebase_address: base, ...route } = row;
  const head = JSON.stringify(recordFields(route, deliveryRows.map((d) => d.id)));
  return `${head.slice(0, -1)},"deliveries":[${deliveryRows.map((d) => d.json).join(",")}],"routebase_address":${base ?? "null"}}`;
}

export interface MetadataOptions {
  /** Include the GeoJSON line string. */
  routestring?: boolean;
}

/** Reduced route records: delivery ids (one query for the page), durations in seconds. */
export async function presentRouteMetadata(db: Db, companyId: number, rows: (RouteRecordRow & Partial<Pick<RouteRow, "routestring">>)[], options: MetadataOptions = {}): Promise<RouteMetadataOut[]> {
  if (!rows.length) return [];
  const links = await db
    .select({ id: deliveries.id, route_id: deliveries.route_id })
    .from(deliveries)
    .where(and(eq(deliveries.company_id, companyId), inList(deliveries.route_id, rows.map((r) => r.id))))
    .orderBy(...drivingOrder);
  const byRoute = groupByRoute(links);
  return rows.map((r) => {
    const deliveryIds = (byRoute.get(r.id) ?? []).map((d) => d.id);
    const record: RouteMetadataOut = {
      ...common(r, deliveryIds),
      gross_duration: r.gross_duration,
      net_duration: r.net_duration,
      deliveries: deliveryIds,
    };
    if (options.routestring) record.routestring = r.routestring ?? null;
    return record;
  });
}

/** Routes an update may change: unfinished, with a delivery still routed. */
export const updateableScope = (companyId: number) =>
  and(
    routeScope(companyId),
    inArray(routes.status, [...UNFINISHED_ROUTE_STATUSES]),
    // `+status`: the route's deliveries by (company_id, route_id), not every routed delivery of the company by (company_id, status, …)
    // for each route (`npm run bench:queries -- --rows`: 20,000 rows read for a page of 100 routes, 300 with it).
    sql`exists (select 1 from ${deliveries} where ${deliveries.route_id} = ${routes.id} and ${deliveries.company_id} = ${routes.company_id} and +${deliveries.status} = ${DeliveryStatus.routed})`,
  )!;

const routeList = <Out>(scope: SQL, columns: typeof routeRecordColumns | undefined, present: (rows: RouteRecordRow[]) => Promise<Out[]>): ListSpec<RouteRecordRow, Out> => ({
  table: routes,
  scope,
  fields: routeFields,
  idColumn: routes.id,
  columns,
  present,
});

/** A page of the company's full route records (`/route`). */
export const listRouteRecords = (db: Db, companyId: number, params: ListParams) =>
  listObjects(db, routeList(routeScope(companyId), routeRecordColumns, (rows) => presentRoutes(db, companyId, rows)), params);

/** A page of reduced records (`/routemetadata`); the line strings only when asked for. */
export const listRouteMetadataRecords = (db: Db, companyId: number, params: ListParams, options: MetadataOptions) =>
  listObjects(db, routeList(routeScope(companyId), options.routestring ? undefined : routeRecordColumns, (rows) => presentRouteMetadata(db, companyId, rows, options)), params);

/** A page of the routes an update may change, as reduced records (`/updateableroutes`). */
export const listUpdateableRoutes = (db: Db, companyId: number, params: ListParams) =>
  listObjects(db, routeList(updateableScope(companyId), routeRecordColumns, (rows) => presentRouteMetadata(db, companyId, rows)), params);

/**
 * `with chain(id, replaces, depth)`: a route and the routes it replaced, one after the other (depth 0 the route itself), for
 * a query that reads what the driver did on the whole tour.
 */
export const replacedChain = (companyId: number, routeId: number) => sql`
  with recursive chain(id, replaces, depth) as (
    select ${routes.id}, ${routes.replaces}, 0 from ${routes} where ${routes.company_id} = ${companyId} and ${routes.id} = ${routeId}
    union all
    select r.id, r.replaces, chain.depth + 1 from ${routes} r join chain on r.id = chain.replaces where r.company_id = ${companyId}
  )`;

/**
 * The last stop the driver reported (delivered or undelivered) on a route or the routes it replaced (an update's
 * route continues them): where it is and when it was reported (`atd`), or undefined before the first report.
 */
export async function lastReportedStop(db: Db, companyId: number, routeId: number): Promise<{ lng: number; lat: number; at: string | null } | undefined> {
  const [stop] = await db.all<{ lng: number; lat: number; at: string | null }>(sql`
    ${replacedChain(companyId, routeId)}
    select a.lng as lng, a.lat as lat, coalesce(d.atd, d.ata) as at from ${deliveries} d join ${addresses} a on a.id = d.deliverylocation_id
    where d.company_id = ${companyId} and d.route_id in (select id from chain)
      and d.status in (${DeliveryStatus.delivered}, ${DeliveryStatus.undelivered}) and a.lng is not null and a.lat is not null
    order by coalesce(d.atd, d.ata, '') desc, d.orderindex desc limit 1`);
  return stop;
}

