import { and, asc, eq, or, sql } from "drizzle-orm";
import { columnRef, jsonObject, jsonValue, pointJson, tableRef } from "../db/json";
import { addresses, deliveries } from "../db/schema";
import type { Db } from "../context";
import type { AddressOut } from "../../shared/contract/address";
import type { Point } from "../../shared/contract/geo";

export type AddressRow = typeof addresses.$inferSelect;

/** An address as the address endpoints answer it: with the deliveries that reference it. */
export interface AddressDetail extends AddressOut {
  /** Ids of the deliveries delivering to this address (`deliverylocation_id`), ascending. */
  deliverylocations: number[];
  /** Ids of the deliveries picking up at this address (`supplierlocation_id`), ascending. */
  source_for_deliveries: number[];
}

export const pointOf = (lng: number | null, lat: number | null): Point | null => (lng === null || lat === null ? null : { type: "Point", coordinates: [lng, lat] });

export const presentAddress = (a: AddressRow): AddressOut => ({
  id: a.id,
  contactcompany: a.contactcompany,
  customernr: a.customernr,
  contactfirstname: a.contactfirstname,
  contactlastname: a.contactlastname,
  street: a.street,
  housenumber: a.housenumber,
  postalcode: a.postalcode,
  city: a.city,
  district: a.district,
  country: a.country,
  email: a.email,
  phonenr: a.phonenr,
  location: pointOf(a.lng, a.lat),
  addresstype: a.addresstype,
  external_id: a.external_id,
});

/** The columns `presentAddress` shows as stored, in its order; `location` (from lng, lat), `addresstype` and `external_id` follow. */
const SHOWN_AS_STORED = ["id", "contactcompany", "customernr", "contactfirstname", "contactlastname", "street", "housenumber", "postalcode", "city", "district", "country", "email", "phonenr"] as const;

/** `presentAddress` as SQL: the JSON of the `addresses` row in the FROM clause (db/json.ts; test/json-answers.test.ts compares the two). */
export const addressJson = jsonObject([
  ...SHOWN_AS_STORED.map((key) => [key, jsonValue(addresses, addresses[key])] as const),
  ["location", pointJson(addresses, addresses.lng, addresses.lat)],
  ["addresstype", jsonValue(addresses, addresses.addresstype)],
  ["external_id", jsonValue(addresses, addresses.external_id)],
]);

/**
 * A scalar subquery: the JSON (`addressJson`, or `point` for the GeoJSON point
 * alone) of the address `idRef` names, looked up by id within the company
 * `companyRef` names (SQL column references of the outer row).
 */
export const addressLookup = (idRef: string, companyRef: string, what: "record" | "point") =>
  `select ${what === "record" ? addressJson : pointJson(addresses, addresses.lng, addresses.lat)} from ${tableRef(addresses)} where ${columnRef(addresses, addresses.id)} = ${idRef} and ${columnRef(addresses, addresses.company_id)} = ${companyRef}`;

/**
 * Presents address rows with `deliverylocations` and `source_for_deliveries`:
 * one query for the delivery ids of all rows (the ids go in as one JSON
 * parameter, so a page of 100 stays within D1's bound-parameter limit).
 */
export async function presentAddressDetails(db: Db, companyId: number, rows: AddressRow[]): Promise<AddressDetail[]> {
  if (rows.length === 0) return [];
  const ids = JSON.stringify(rows.map((r) => r.id));
  const refs = await db
    .select({ id: deliveries.id, to: deliveries.deliverylocation_id, from: deliveries.supplierlocation_id })
    .from(deliveries)
    .where(
      and(
        eq(deliveries.company_id, companyId),
        or(
          sql`${deliveries.deliverylocation_id} IN (SELECT value FROM json_each(${ids}))`,
          sql`${deliveries.supplierlocation_id} IN (SELECT value FROM json_each(${ids}))`,
        ),
      ),
    )
    .orderBy(asc(deliveries.id));
  const to = new Map<number, number[]>();
  const from = new Map<number, number[]>();
  const push = (m: Map<number, number[]>, key: number | null, id: number) => {
    if (key === null) return;
    const list = m.get(key);
    if (list) list.push(id);
    else m.set(key, [id]);
  };
  for (const r of refs) {
    push(to, r.to, r.id);
    push(from, r.from, r.id);
  }
  return rows.map((row) => ({ ...presentAddress(row), deliverylocations: to.get(row.id) ?? [], source_for_deliveries: from.get(row.id) ?? [] }));
}
