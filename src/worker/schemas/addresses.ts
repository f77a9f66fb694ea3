/** Addresses on the wire: the record, the record with its deliveries, and the input the address and routing endpoints take. */
import { z } from "@hono/zod-openapi";
import { Point } from "../openapi";

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
    external_id: z.string().nullable().openapi({ description: "The sending system's own id of the address (e.g. its customer number), unique within the company; `PUT /address/by-external-id/{external_id}` creates or changes the address by it (beyond the interface)" }),
  })
  .openapi("Address");

/** An address as the address endpoints answer it: with the deliveries that reference it. */
export const AddressDetailSchema = AddressSchema.extend({
  deliverylocations: z.array(z.number().int()).openapi({ description: "Ids of the deliveries delivering to this address (`deliverylocation_id`), ascending" }),
  source_for_deliveries: z
    .array(z.number().int())
    .openapi({ description: "Ids of the deliveries picking up at this address (`supplierlocation_id`), ascending" }),
}).openapi("AddressDetail");

const text = (max: number) => z.string().trim().max(max).nullable().optional();

export const AddressFields = {
  contactcompany: text(200),
  customernr: text(100),
  contactfirstname: text(100),
  contactlastname: text(100),
  street: text(200),
  housenumber: text(20),
  postalcode: text(20),
  city: text(100),
  district: text(100),
  country: text(60).openapi({ description: "Two-letter code or a country name (e.g. `Deutschland`); answered as a two-letter code" }),
  email: text(200),
  phonenr: text(50),
  addresstype: text(50),
};

export const AddressInput = z
  .object({
    ...AddressFields,
    location: Point.optional().openapi({ description: "Kept as given; omitted -> geocoded from the textual fields" }),
    lat: z.number().min(-90).max(90).optional(),
    lng: z.number().min(-180).max(180).optional(),
  })
  .openapi("AddressInput");

/** The external id of an order or address: the sending system's key, unique within the company. */
export const ExternalId = z.string().trim().min(1).max(100).regex(/^[^\x00-\x1f\x7f]+$/, "must be 1 to 100 characters without control characters");

/** The path parameter of the upserts by external id. */
export const ExternalIdParam = (of: string, example: string) =>
  z.object({ external_id: ExternalId.openapi({ param: { name: "external_id", in: "path" }, description: `The sending system's own id of the ${of} (URL-encoded)`, example }) });

/** The address endpoints' input: an address and its external id (routing's `deliverydata` items take the delivery's). */
export const AddressWritable = AddressInput.extend({
  external_id: ExternalId.nullable().optional().openapi({ description: "The sending system's own id of the address, unique within the company (409 when another address has it)" }),
}).openapi("AddressWritable");
