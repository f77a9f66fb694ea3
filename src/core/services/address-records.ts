/**
 * Stored addresses of a company: load, create, change (with re-geocoding),
 * and the nearest one to a point (reverse lookup before the gazetteer).
 */
import { and, eq, gte, lte, sql } from "drizzle-orm";
import { companyRow } from "../db/company-row";
import type { Db } from "../context";
import { type ListParams, listObjects } from "../db/list";
import { addresses } from "../db/schema";
import type { Env } from "../env";
import { notFound, unprocessable } from "../errors";
import { createGeocoder, haversineMeters, toCountryCode } from "../geo";
import type { FieldMap } from "../lib/filters";
import { type AddressInputType, resolveAddressInput } from "./address-input";
import { upsertByExternalId } from "./external-ids";
import { type AddressRow, presentAddressDetails } from "./addresses";

/** Filterable / sortable fields of `GET /address` (`q`). */
export const addressFields: FieldMap = {
  id: { column: addresses.id, type: "integer" },
  contactcompany: { column: addresses.contactcompany, type: "text" },
  customernr: { column: addresses.customernr, type: "text" },
  contactfirstname: { column: addresses.contactfirstname, type: "text" },
  contactlastname: { column: addresses.contactlastname, type: "text" },
  street: { column: addresses.street, type: "text" },
  housenumber: { column: addresses.housenumber, type: "text" },
  postalcode: { column: addresses.postalcode, type: "text" },
  city: { column: addresses.city, type: "text" },
  district: { column: addresses.district, type: "text" },
  country: { column: addresses.country, type: "text" },
  email: { column: addresses.email, type: "text" },
  phonenr: { column: addresses.phonenr, type: "text" },
  addresstype: { column: addresses.addresstype, type: "text" },
  external_id: { column: addresses.external_id, type: "text" },
  lat: { column: addresses.lat, type: "number" },
  lng: { column: addresses.lng, type: "number" },
  created_at: { column: addresses.created_at, type: "datetime" },
};

export const addressScope = (companyId: number) => eq(addresses.company_id, companyId);

export const loadAddress = (db: Db, companyId: number, id: number): Promise<AddressRow> => companyRow(db, addresses, companyId, id, "Address");

/** What the address endpoints write: the address, and the sending system's id of it. */
export type AddressWrite = AddressInputType & { external_id?: string | null };

/** Geocodes when no coordinate is given (422 when nothing is found: nothing is stored). */
export async function createAddress(env: Env, db: Db, companyId: number, input: AddressWrite): Promise<AddressRow> {
  const { external_id, ...address } = input;
  const resolved = await resolveAddressInput(env, companyId, address);
  const [row] = await db
    .insert(addresses)
    .values({ ...resolved, external_id, company_id: companyId })
    .returning();
  return row;
}

/** `PUT /address/by-external-id/<id>`: the company's address with that external id changed, or created (services/external-ids.ts). */
export async function upsertAddress(env: Env, db: Db, companyId: number, externalId: string, input: AddressInputType): Promise<{ written: AddressRow; created: boolean }> {
  const find = async () => (await db.select({ id: addresses.id }).from(addresses).where(and(addressScope(companyId), eq(addresses.external_id, externalId))).get())?.id;
  return upsertByExternalId(
    find,
    () => createAddress(env, db, companyId, { ...input, external_id: externalId }),
    (id) => updateAddress(env, db, companyId, id, input),
  );
}

/** Textual fields the coordinate is derived from: changing one (without a new location) re-geocodes. */
const LOCATING_FIELDS = ["street", "housenumber", "postalcode", "city", "country"] as const;
const TEXT_FIELDS = [
  "contactcompany",
  "customernr",
  "contactfirstname",
  "contactlastname",
  "street",
  "housenumber",
  "postalcode",
  "city",
  "district",
  "country",
  "email",
  "phonenr",
  "addresstype",
] as const;

const blank = (v: string | null | undefined) => (v === undefined || v === null || v.trim() === "" ? null : v.trim());

/**
 * Applies a PATCH: fields absent from `changes` stay, `null` clears. A new
 * `location` / `lat`+`lng` is kept as given; otherwise, when a locating field
 * (street, housenumber, postalcode, city, country) changes, the address is
 * geocoded again from the merged fields (422 when nothing is found, nothing changed).
 */
export async function updateAddress(env: Env, db: Db, companyId: number, id: number, write: AddressWrite): Promise<AddressRow> {
  const { external_id, ...changes } = write;
  const row = await loadAddress(db, companyId, id);
  const merged: AddressInputType = {};
  for (const f of TEXT_FIELDS) merged[f] = changes[f] !== undefined ? changes[f] : row[f];

  const givesLocation = changes.location !== undefined || changes.lat !== undefined || changes.lng !== undefined;
  const relocated = LOCATING_FIELDS.some((f) => {
    if (changes[f] === undefined) return false;
    if (f === "country") return (blank(changes.country) === null ? null : toCountryCode(changes.country)) !== row.country;
    return blank(changes[f]) !== blank(row[f]);
  });

  let values: Partial<AddressRow>;
  if (givesLocation || relocated || row.lng === null || row.lat === null) {
    const located = givesLocation ? { ...merged, location: changes.location, lat: changes.lat, lng: changes.lng } : merged;
    values = await resolveAddressInput(env, companyId, located);
  } else {
    let country: string | null = null;
    if (merged.country) {
      country = toCountryCode(merged.country);
      if (!country) throw unprocessable(`Unknown country: ${merged.country}`, "country");
    }
    values = { ...merged, country };
  }
  const [updated] = await db
    .update(addresses)
    .set(external_id === undefined ? values : { ...values, external_id })
    .where(and(eq(addresses.id, id), addressScope(companyId)))
    .returning();
  if (!updated) throw notFound("Address");
  return updated;
}

/** A stored address within this distance of the query point wins over the gazetteer. */
export const NEAREST_ADDRESS_METERS = 150;
const METERS_PER_DEGREE_LAT = 111_320;

/**
 * The company's stored address nearest to the point within `maxMeters`:
 * a bounding box on the (company_id, lat) index, then exact haversine.
 * Ties go to the lower id.
 */
export async function nearestAddress(
  db: Db,
  companyId: number,
  lng: number,
  lat: number,
  maxMeters = NEAREST_ADDRESS_METERS,
): Promise<{ row: AddressRow; distance: number } | null> {
  const dLat = maxMeters / METERS_PER_DEGREE_LAT;
  const dLng = dLat / Math.max(0.01, Math.cos((lat * Math.PI) / 180));
  const conditions = [addressScope(companyId), gte(addresses.lat, lat - dLat), lte(addresses.lat, lat + dLat)];
  // Near the antimeridian the longitude window would wrap: leave it to the haversine check.
  if (lng - dLng >= -180 && lng + dLng <= 180) conditions.push(sql`${addresses.lng} BETWEEN ${lng - dLng} AND ${lng + dLng}`);
  const rows = await db
    .select()
    .from(addresses)
    .where(and(...conditions));
  let best: { row: AddressRow; distance: number } | null = null;
  for (const row of rows) {
    if (row.lng === null || row.lat === null) continue;
    const distance = haversineMeters(lng, lat, row.lng, row.lat);
    if (distance > maxMeters) continue;
    if (!best || distance < best.distance || (distance === best.distance && row.id < best.row.id)) best = { row, distance };
  }
  return best;
}

/** Reverse geocoding with the company's geocoder (gazetteer, or provider with gazetteer fallback). */
export const reverseGeocode = (env: Env, companyId: number, lng: number, lat: number) => createGeocoder(env, env.DB, companyId).reverse(lng, lat);

/** A page of the company's addresses, each with the deliveries that reference it. */
export const listAddresses = (db: Db, companyId: number, params: ListParams) =>
  listObjects(db, { table: addresses, scope: addressScope(companyId), fields: addressFields, idColumn: addresses.id, present: (rows: AddressRow[]) => presentAddressDetails(db, companyId, rows) }, params);

/**
 * The company's address nearest to a point (within NEAREST_ADDRESS_METERS),
 * else the nearest place the reverse geocoder knows, as an address record
 * without an id; `distance` in metres. 422 when there is neither.
 */
export async function addressAt(env: Env, db: Db, companyId: number, lon: number, lat: number) {
  const near = await nearestAddress(db, companyId, lon, lat);
  if (near) {
    const [address] = await presentAddressDetails(db, companyId, [near.row]);
    return { ...address, distance: Math.round(near.distance) };
  }
  const place = await reverseGeocode(env, companyId, lon, lat);
  if (!place) throw unprocessable("No address or place near this location", "lon,lat");
  return {
    id: null,
    contactcompany: null,
    customernr: null,
    contactfirstname: null,
    contactlastname: null,
    street: null,
    housenumber: null,
    postalcode: place.postalcode,
    city: place.city,
    district: null,
    country: place.country,
    email: null,
    phonenr: null,
    external_id: null,
    location: { type: "Point" as const, coordinates: [place.lng, place.lat] as [number, number] },
    addresstype: "gazetteer",
    deliverylocations: [],
    source_for_deliveries: [],
    distance: Math.round(place.distance),
  };
}
