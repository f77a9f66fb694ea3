import { z } from "@hono/zod-openapi";
import type { addresses } from "../db/schema";
import { Point } from "../openapi";

export type AddressRow = typeof addresses.$inferSelect;

export const AddressSchema = z
  .object({
    id: z.number().int(),
    contactcompany: z.string().nullable(),
    customernr: z.string().nullable(),
    contactfirstname: z.string().nullable(),
    contactlastname: z.string().nullable(),
    street: z.string().nullable(),
    housenumber: z.string().nullable(),
    postalcode: z.string().nullable(),
    city: z.string().nullable(),
    district: z.string().nullable(),
    country: z.string().nullable().openapi({ description: "ISO 3166-1 alpha-2" }),
    email: z.string().nullable(),
    phonenr: z.string().nullable(),
    location: Point.nullable(),
    addresstype: z.string().nullable(),
  })
  .openapi("Address");

export const pointOf = (lng: number | null, lat: number | null) =>
  lng === null || lat === null ? null : { type: "Point" as const, coordinates: [lng, lat] as [number, number] };

export const presentAddress = (a: AddressRow): z.infer<typeof AddressSchema> => ({
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
});
