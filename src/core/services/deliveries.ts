import { type SQL, and, eq, sql } from "drizzle-orm";
import type { AddressOut } from "../../shared/contract/address";
import { addresses, deliveries, routes } from "../db/schema";
import type { Company, Db } from "../context";
import { conflict, unprocessable } from "../errors";
import type { FieldMap } from "../lib/filters";
import { normaliseDateTime } from "../lib/time";
import type { Point } from "../../shared/contract/geo";
import { RouteStatus } from "../../shared/contract/states";
import { type AddressRow, addressLookup, pointOf, presentAddress } from "./addresses";
import type { JsonListSpec } from "../db/list";
import { columnEntries, columnRef, embedded, jsonObject } from "../db/json";
import { inList } from "../db/sql";
import { type DateTimeWindow, checkTimeWindows } from "../domain/time-windows";

export type DeliveryRow = typeof deliveries.$inferSelect;

/** A delivery as the API answers it: its row (but the company) with its address record and both points. */
export type DeliveryOut = Omit<DeliveryRow, "company_id"> & {
  /** The delivery location record. */
  address: AddressOut | null;
  delivery_address: Point | null;
  supplier_address: Point | null;
};

/** Fields a client may write; schedule and state fields are set by routing and reporting. Date-times as given (ISO 8601, no zone = UTC). */
export interface DeliveryInput {
  deliveryissuename?: string | null;
  pdt_from?: string | null;
  pdt_to?: string | null;
  time_windows?: DateTimeWindow[];
  ddt_from?: string | null;
  ddt_to?: string | null;
  /** Minutes. */
  els?: number | null;
  deliverprio?: number | null;
  load?: number | null;
  load_2?: number | null;
  load_3?: number | null;
  required_skills?: string[];
  notes?: string | null;
  custom_id?: string | null;
  external_id?: string | null;
  custom_tour?: string | null;
  final?: boolean | null;
  vehicle?: string | null;
  scancode?: string | null;
  notify_customer?: boolean;
  notify_customer_email?: boolean | null;
  notify_customer_sms?: boolean | null;
  deliverylocation_id?: number;
  supplierlocation_id?: number;
  deliverytype_id?: number | null;
  code?: number | null;
  pickup_ref_id?: number | null;
}

export const deliveryFields: FieldMap = Object.fromEntries(
  Object.entries({
    id: "integer", deliveryissuename: "text", pdt_from: "datetime", pdt_to: "datetime", eta_from: "datetime", eta_to: "datetime",
    tdt_from: "datetime", tdt_to: "datetime", ddt_from: "datetime", ddt_to: "datetime", ata: "datetime", atd: "datetime",
    els: "integer", als: "number", tfp: "integer", creationtime: "datetime", deliverprio: "integer", orderindex: "integer",
    load: "integer", load_2: "integer", load_3: "integer", notes: "text", custom_id: "text", external_id: "text", custom_tour: "text", drivernotes: "text", final: "boolean",
    vehicle: "text", scancode: "text", notify_customer: "boolean", notify_customer_email: "boolean", notify_customer_sms: "boolean", deliverylocation_id: "integer", supplierlocation_id: "integer",
    route_id: "integer", status: "integer", code: "integer", deliverytype_id: "integer", waiting_time: "integer", pickup_ref_id: "integer",
  } as const).map(([name, type]) => [name, { column: deliveries[name as keyof DeliveryRow], type }]),
);

/**
 * The addresses shown with the deliveries that match `deliveryFilter` (a
 * condition on `deliveries`, e.g. a route's), and those named by `moreIds`
 * (a subquery of address ids): one query, to batch with the deliveries' own.
 */
export function deliveryAddressesQuery(db: Db, companyId: number, deliveryFilter: SQL, moreIds?: SQL) {
  const d = deliveries;
  // UNION ALL: `in` needs no distinct list, and a UNION's merge made SQLite read the deliveries along an address index
  // (sorted by address) instead of the filter's index (test/query-plans.test.ts).
  const ids = sql`select ${d.deliverylocation_id} from ${d} where ${deliveryFilter} union all select ${d.supplierlocation_id} from ${d} where ${deliveryFilter}`;
  return db
    .select()
    .from(addresses)
    .where(and(eq(addresses.company_id, companyId), sql`${addresses.id} in (${ids}${moreIds ? sql` union all ${moreIds}` : sql``})`));
}

/** Deliveries with their address records, from address rows loaded with them (a superset does no harm). */
export function presentDeliveriesWith(rows: DeliveryRow[], addressRows: AddressRow[]): DeliveryOut[] {
  const byId = new Map<number, AddressRow>(addressRows.map((a) => [a.id, a]));
  return rows.map((r) => {
    const { company_id: _company, ...fields } = r;
    const target = r.deliverylocation_id === null ? undefined : byId.get(r.deliverylocation_id);
    const supplier = r.supplierlocation_id === null ? undefined : byId.get(r.supplierlocation_id);
    return {
      ...fields,
      address: target ? presentAddress(target) : null,
      delivery_address: target ? pointOf(target.lng, target.lat) : null,
      supplier_address: supplier ? pointOf(supplier.lng, supplier.lat) : null,
    };
  });
}

/** SQL: the `deliveries` row in the statement is on a route that is on the way (it cannot be edited). */
export const onTheWay = sql`exists (select 1 from ${routes} where ${routes.id} = ${deliveries.route_id} and ${routes.status} = ${RouteStatus.ontheway})`;

/**
 * `presentDeliveriesWith` as SQL: the JSON of the `deliveries` row in the FROM
 * clause, every column but `company_id` as the schema has it, then its address
 * record and the two points, each looked up by id within the company
 * (db/json.ts; test/json-answers.test.ts compares the two).
 */
export const deliveryJson = (() => {
  const target = columnRef(deliveries, deliveries.deliverylocation_id);
  const supplier = columnRef(deliveries, deliveries.supplierlocation_id);
  const company = columnRef(deliveries, deliveries.company_id);
  return sql.raw(
    jsonObject([
      ...columnEntries(deliveries, ["company_id"]),
      ["address", embedded(addressLookup(target, company, "record"))],
      ["delivery_address", embedded(addressLookup(target, company, "point"))],
      ["supplier_address", embedded(addressLookup(supplier, company, "point"))],
    ]),
  );
})();

/** `GET /delivery`: a page of deliveries with their addresses, built as JSON by SQLite in the page's statement. */
export const deliveryList = (companyId: number): JsonListSpec => ({
  table: deliveries,
  scope: eq(deliveries.company_id, companyId),
  fields: deliveryFields,
  idColumn: deliveries.id,
  json: deliveryJson,
});

/** Deliveries with their address records, loaded for the whole page in one query. */
export async function presentDeliveries(db: Db, companyId: number, rows: DeliveryRow[]): Promise<DeliveryOut[]> {
  const ids = [...new Set(rows.flatMap((r) => [r.deliverylocation_id, r.supplierlocation_id]).filter((id): id is number => id !== null))];
  const found = ids.length ? await db.select().from(addresses).where(and(eq(addresses.company_id, companyId), inList(addresses.id, ids))) : [];
  return presentDeliveriesWith(rows, found);
}

const TIME_FIELDS = ["pdt_from", "pdt_to", "ddt_from", "ddt_to"] as const;

/**
 * Checks and normalises a delivery write against the company's data:
 * times to UTC, windows ordered, referenced addresses and pickups belong to
 * the company. `existing` is the stored row for PATCH.
 */
export async function prepareDeliveryWrite(db: Db, company: Company, input: DeliveryInput, existing?: DeliveryRow) {
  const values: Record<string, unknown> = { ...input };
  const bad: string[] = [];
  for (const field of TIME_FIELDS) {
    const v = input[field];
    if (v === undefined || v === null) continue;
    const normalised = normaliseDateTime(v);
    if (normalised === null) bad.push(field);
    else values[field] = normalised;
  }
  if (bad.length) throw unprocessable("Date-times must be ISO 8601", bad);
  for (const [from, to] of [["pdt_from", "pdt_to"], ["ddt_from", "ddt_to"]] as const) {
    const a = (values[from] ?? existing?.[from]) as string | null | undefined;
    const b = (values[to] ?? existing?.[to]) as string | null | undefined;
    if (a && b && a > b) throw unprocessable(`${from} must not be after ${to}`, [from, to]);
  }
  // Several windows: checked against the outer window as it will be (given or stored), which they imply when absent.
  const windows = input.time_windows ?? existing?.time_windows ?? [];
  if (windows.length && (input.time_windows !== undefined || input.pdt_from !== undefined || input.pdt_to !== undefined)) {
    const outerFrom = (input.pdt_from !== undefined ? values.pdt_from : existing?.pdt_from) as string | null | undefined;
    const outerTo = (input.pdt_to !== undefined ? values.pdt_to : existing?.pdt_to) as string | null | undefined;
    const checked = checkTimeWindows(windows, { from: outerFrom ?? null, to: outerTo ?? null });
    if ("problem" in checked) throw unprocessable(checked.problem, ["time_windows"]);
    values.time_windows = checked.windows;
    values.pdt_from = checked.from;
    values.pdt_to = checked.to;
  }

  if (!existing && input.deliverylocation_id === undefined) throw unprocessable("deliverylocation_id is required", "deliverylocation_id");
  if (!existing && input.supplierlocation_id === undefined) {
    if (company.location_id === null) throw unprocessable("The company has no depot: give supplierlocation_id", "supplierlocation_id");
    values.supplierlocation_id = company.location_id;
  }
  const refs = (["deliverylocation_id", "supplierlocation_id"] as const).filter((f) => input[f] !== undefined);
  const refIds = refs.map((f) => input[f]!);
  const checks = await Promise.all([
    refIds.length ? db.select({ id: addresses.id }).from(addresses).where(and(eq(addresses.company_id, company.id), inList(addresses.id, refIds))) : [],
    input.pickup_ref_id ? db.select({ id: deliveries.id }).from(deliveries).where(and(eq(deliveries.company_id, company.id), eq(deliveries.id, input.pickup_ref_id))) : [],
  ]);
  const known = new Set(checks[0].map((a) => a.id));
  const missing = refs.filter((f) => !known.has(input[f]!));
  if (missing.length) throw unprocessable("Referenced address does not exist in this company", missing);
  if (input.pickup_ref_id && (checks[1].length === 0 || input.pickup_ref_id === existing?.id)) throw unprocessable("pickup_ref_id must be another delivery of this company", "pickup_ref_id");
  return values;
}

/** Deliveries on a route that is on the way may not be edited or deleted (409). */
export async function assertNotOnTheWay(db: Db, companyId: number, routeIds: (number | null)[]) {
  const ids = routeIds.filter((id): id is number => id !== null);
  if (!ids.length) return;
  const [onTheWay] = await db
    .select({ id: routes.id })
    .from(routes)
    .where(and(eq(routes.company_id, companyId), inList(routes.id, ids), eq(routes.status, RouteStatus.ontheway)))
    .limit(1);
  if (onTheWay) throw conflict(`Delivery is on route ${onTheWay.id}, which is on the way`, "route_id");
}
