/**
 * Every list query the API offers, as SQL, for `EXPLAIN QUERY PLAN`: per list
 * endpoint its default page, one filter per `q` field, one sort per sortable
 * field, and the consoles' hot requests; plus the statements of the hot reads
 * that are not lists (`GET /route/<id>`). The SQL is what the worker sends:
 * built by `listStatements` from the endpoints' own specs and field maps.
 * Used by test/query-plans.test.ts (asserts) and scripts/query-plans.ts (prints).
 */
import { and, eq, getTableName, is } from "drizzle-orm";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import { type JsonListSpec, type ListSpec, listStatements } from "../src/core/db/list";
import * as schema from "../src/core/db/schema";
import { addresses, driverAvailabilities, driverTracking, outbox, postalAreas, routes, tourAreas, users, vehicles } from "../src/core/db/schema";
import type { Db } from "../src/core/context";
import type { FieldMap, FieldSpec, RelationSpec } from "../src/core/lib/filters";
import { userFields } from "../src/core/services/company-records";
import { outboxFields } from "../src/core/services/company-admin";
import { addressFields, addressScope } from "../src/core/services/address-records";
import { deliveryList } from "../src/core/services/deliveries";
import { availabilityFields } from "../src/core/services/driver-availability";
import { driverFields, driverScope, positionList } from "../src/core/services/drivers";
import { routeFields, routeRecordStatements, routeScope, updateableScope } from "../src/core/services/route-records";
import { plzAreaFields, tourAreaFields } from "../src/core/services/tour-areas";
import { trackingFields } from "../src/core/services/tracking-positions";
import { vehicleFields } from "../src/core/services/vehicle-records";

export interface CatalogueQuery {
  /** e.g. `GET /delivery  filter status ==`. */
  label: string;
  /** A request the consoles, the driver app or the benchmark make all the time: it may not read every row of the company. */
  hot: boolean;
  /** The request filters (`q.filters`), or is a count, or a page in id order: which reads of the company's rows are fair (planProblems). */
  kind: "page" | "filtered" | "count";
  sql: string;
  params: unknown[];
}

type AnySpec = ListSpec<any, any, any> | JsonListSpec;

interface ListEndpoint {
  path: string;
  spec: (db: Db, companyId: number) => AnySpec;
  /** `q` values the clients send all the time. */
  hot?: Record<string, unknown>[];
  /** The default page (order by id) is not hot: few rows per company (vehicles) or an operator's rare look (outbox). */
  quiet?: boolean;
}

const plain = (table: SQLiteTable, scope: AnySpec["scope"], fields: FieldMap, idColumn: AnySpec["idColumn"]): AnySpec => ({ table, scope, fields, idColumn, present: () => [] });

/** A time in the company's day, as clients filter by it. */
const AT = "2026-11-27T08:00:00Z";

export const LIST_ENDPOINTS: ListEndpoint[] = [
  {
    path: "/delivery",
    spec: (_db, cid) => deliveryList(cid),
    hot: [
      // The console's open deliveries and the benchmark's filter: a status and a window, by window start.
      { filters: [{ name: "status", op: "==", val: 1 }, { name: "pdt_from", op: ">=", val: AT }], order_by: [{ field: "pdt_from", direction: "asc" }] },
      { filters: [{ name: "status", op: "==", val: 0 }] },
      { filters: [{ name: "route_id", op: "==", val: 1 }] },
    ],
  },
  { path: "/route", spec: (_db, cid) => plain(routes, routeScope(cid), routeFields, routes.id), hot: [{ filters: [{ name: "status", op: "in", val: [0, 1, 2, 3] }] }] },
  { path: "/routemetadata", spec: (_db, cid) => plain(routes, routeScope(cid), routeFields, routes.id), hot: [{ filters: [{ name: "driver_id", op: "==", val: 1 }] }] },
  { path: "/updateableroutes", spec: (_db, cid) => plain(routes, updateableScope(cid), routeFields, routes.id) },
  { path: "/driver", spec: (_db, cid) => plain(users, driverScope(cid), driverFields, users.id) },
  { path: "/driverposition", spec: (_db, cid) => positionList(cid) },
  { path: "/dispatcher", spec: (_db, cid) => plain(users, and(eq(users.company_id, cid), eq(users.usertype, "dispatcher")), userFields, users.id) },
  { path: "/driveravailability", spec: (_db, cid) => plain(driverAvailabilities, eq(driverAvailabilities.company_id, cid), availabilityFields, driverAvailabilities.id), quiet: true },
  {
    path: "/drivertracking",
    spec: (_db, cid) => plain(driverTracking, eq(driverTracking.company_id, cid), trackingFields, driverTracking.id),
    // The driver app's and the console's trace: one driver since a time.
    hot: [{ filters: [{ name: "driver_id", op: "==", val: 1 }, { name: "timestamp", op: ">=", val: AT }], order_by: [{ field: "timestamp" }] }],
  },
  { path: "/vehicle", spec: (_db, cid) => plain(vehicles, eq(vehicles.company_id, cid), vehicleFields, vehicles.id), quiet: true },
  { path: "/address", spec: (_db, cid) => plain(addresses, addressScope(cid), addressFields, addresses.id) },
  { path: "/tourarea", spec: (_db, cid) => plain(tourAreas, eq(tourAreas.company_id, cid), tourAreaFields(), tourAreas.id) },
  { path: "/plzarea", spec: (_db, cid) => ({ ...plain(postalAreas, undefined, plzAreaFields(cid), postalAreas.gid), maxPerPage: 10 }) },
  { path: "/_operator/companies/<slug>/outbox", spec: (_db, cid) => plain(outbox, eq(outbox.company_id, cid), outboxFields, outbox.id), quiet: true },
];

const isRelation = (spec: FieldSpec | RelationSpec): spec is RelationSpec => "relation" in spec;

/** A value of the field's type to filter with. */
function sample(spec: FieldSpec): unknown {
  switch (spec.type) {
    case "integer":
      return 1;
    case "number":
      return 1.5;
    case "boolean":
      return true;
    case "datetime":
      return AT;
    default:
      return "x";
  }
}

/** One filter on the field: `==` a sample, `any`/`has` for lists and relations (filtering the related id). */
function filterOn(name: string, spec: FieldSpec | RelationSpec): Record<string, unknown> {
  if (!isRelation(spec)) return spec.type === "json_array" ? { name, op: "any", val: 1 } : { name, op: "==", val: sample(spec) };
  const [inner, innerSpec] = Object.entries(spec.fields).find(([, s]) => !isRelation(s)) as [string, FieldSpec];
  return { name, op: spec.relation === "many" ? "any" : "has", val: { name: inner, op: "==", val: sample(innerSpec) } };
}

/** The statements of one list request, each with its label. */
function statementsOf(db: Db, label: string, spec: AnySpec, q: Record<string, unknown> | undefined, hot: boolean): CatalogueQuery[] {
  const list = listStatements(db, spec, { q: q && JSON.stringify(q), page: 1, results_per_page: spec.maxPerPage ?? 100 });
  const parts: [string, { toSQL(): { sql: string; params: unknown[] } } | undefined][] = [
    ["page", list.rows as never],
    ["count", list.total as never],
    ["related", list.related as never],
  ];
  const filtered = Array.isArray(q?.filters) && q.filters.length > 0;
  return parts
    .filter(([, s]) => s)
    .map(([part, s]) => ({ label: `${label} (${part})`, hot, kind: part === "count" ? "count" : filtered ? "filtered" : "page", ...s!.toSQL() }));
}

/** Every catalogued statement for the company `companyId`. */
export function catalogue(db: Db, companyId: number): CatalogueQuery[] {
  const out: CatalogueQuery[] = [];
  for (const endpoint of LIST_ENDPOINTS) {
    const spec = endpoint.spec(db, companyId);
    const name = `GET ${endpoint.path}`;
    out.push(...statementsOf(db, `${name} default`, spec, undefined, !endpoint.quiet));
    for (const q of endpoint.hot ?? []) out.push(...statementsOf(db, `${name} q=${JSON.stringify(q)}`, spec, q, true));
    for (const [field, fieldSpec] of Object.entries(spec.fields)) {
      out.push(...statementsOf(db, `${name} filter ${field}`, spec, { filters: [filterOn(field, fieldSpec)] }, false).filter((s) => !s.label.endsWith("(related)")));
      if (!isRelation(fieldSpec) && fieldSpec.type !== "json_array")
        out.push(...statementsOf(db, `${name} sort ${field}`, spec, { order_by: [{ field, direction: "desc" }] }, false).filter((s) => s.label.endsWith("(page)")));
    }
  }
  // A route's record sorts its own deliveries (driving order: unset orderindex last): a route's rows, found by index, not the company's.
  routeRecordStatements(db, companyId, 1).forEach((s, i) => out.push({ label: `GET /route/<id> (${["route", "deliveries"][i]})`, hot: true, kind: "filtered", ...s.toSQL() }));
  return out;
}

/** Tables that hold rows of many companies (a `company_id` column in schema.ts): never scanned whole. */
export const TENANT_TABLES: ReadonlySet<string> = new Set(
  (Object.values(schema) as unknown[]).flatMap((t) => (is(t, SQLiteTable) && "company_id" in t ? [getTableName(t)] : [])),
);

export interface PlanRow {
  id: number;
  parent: number;
  detail: string;
}

/**
 * What is wrong with a plan:
 * - any query: a full scan of a tenant table (`SCAN t`, with or without an
 *   index: every company's rows);
 * - a hot query: reading every row of the company, i.e. a search constrained
 *   by `company_id` alone, except to count the matches (the count reads them
 *   whatever the plan) and the walk of an unfiltered page in id order along
 *   the one-column `..._company` index (it stops after the page); and a sort
 *   (`USE TEMP B-TREE`) unless the request filters (then it sorts the matches
 *   an index found).
 */
export function planProblems(plan: PlanRow[], tenantTables: ReadonlySet<string>, query: { hot: boolean; kind: CatalogueQuery["kind"] }): string[] {
  const problems: string[] = [];
  for (const { detail } of plan) {
    const access = /^(SCAN|SEARCH) (\w+)/.exec(detail);
    const tenant = !!access && tenantTables.has(access[2]);
    if (tenant && access[1] === "SCAN") problems.push(`full scan: ${detail}`);
    if (!query.hot) continue;
    const companyOnly = tenant && access[1] === "SEARCH" && detail.endsWith("(company_id=?)");
    const pageWalk = query.kind === "page" && /INDEX \w+_company \(company_id=\?\)$/.test(detail);
    if (companyOnly && query.kind !== "count" && !pageWalk) problems.push(`reads every row of the company: ${detail}`);
    if (/USE TEMP B-TREE/.test(detail) && query.kind !== "filtered") problems.push(`sort: ${detail}`);
  }
  return problems;
}

/** The plan as an indented tree. */
export function formatPlan(plan: PlanRow[]): string {
  const depth = new Map<number, number>([[0, 0]]);
  return plan
    .map((r) => {
      const d = (depth.get(r.parent) ?? 0) + 1;
      depth.set(r.id, d);
      return `${"  ".repeat(d)}${r.detail}`;
    })
    .join("\n");
}
