/** Addresses: list, one, create (geocoding), change (re-geocoding), reverse lookup, full-text search. */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { AddressDetailSchema, AddressInput, AddressWritable, ExternalIdParam } from "../schemas/addresses";
import { allOnOnePage } from "../../core/db/list";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { BooleanQuery, IdParam, ListQuery, apiRoute, envelope, PointQuery, jsonBody, jsonResponse, pointOfQuery } from "../openapi";
import { NEAREST_ADDRESS_METERS, addressAt, createAddress, listAddresses, loadAddress, updateAddress, upsertAddress } from "../../core/services/address-records";
import { SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, searchAddresses } from "../../core/services/address-search";
import { presentAddressDetails } from "../../core/services/addresses";

const DETAIL_NOTE =
  "Every address carries `deliverylocations` (ids of the deliveries delivering to it) and `source_for_deliveries` " +
  "(ids of the deliveries picking up there); `location` is a GeoJSON point `[lng, lat]`; `country` a two-letter code.";

const AddressList = envelope(AddressDetailSchema, "AddressList");

const getAddresses = apiRoute({
  method: "get",
  path: "/address",
  operationId: "listAddresses",
  tags: ["Addresses"],
  summary: "Addresses",
  description:
    `${DETAIL_NOTE} \`q\` filters and orders on every address field: \`id\`, \`contactcompany\`, \`customernr\`, ` +
    "`contactfirstname`, `contactlastname`, `street`, `housenumber`, `postalcode`, `city`, `district`, `country`, `email`, " +
    "`phonenr`, `addresstype`, `created_at`, and the coordinate as `lat` / `lng`. Default order: `id` ascending.",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([AddressList, AddressDetailSchema]), "Addresses (or one with q.single)") },
});

const getAddress = apiRoute({
  method: "get",
  path: "/address/{address_id}",
  operationId: "getAddress",
  tags: ["Addresses"],
  summary: "One address",
  description: `${DETAIL_NOTE} 404 for unknown ids and for addresses of other companies.`,
  request: { params: IdParam("address_id") },
  responses: { 200: jsonResponse(AddressDetailSchema, "The address") },
});

const postAddress = apiRoute({
  method: "post",
  path: "/address",
  operationId: "createAddress",
  tags: ["Addresses"],
  summary: "Create an address",
  description:
    "A given `location` (or `lat` + `lng`) is stored as given. Without one, the address is geocoded from its postal code, city, " +
    "street and country (offline gazetteer, or the configured provider); when nothing is found the answer is 422 naming " +
    "`postalcode,city` and nothing is stored. Empty `postalcode`/`city` are filled from the geocoding result. `country` accepts a " +
    "two-letter code or a name (`Deutschland`, `Germany`) and is stored and answered as the two-letter code (unknown name -> 422). " +
    `Answers 201 with the stored address. ${DETAIL_NOTE}`,
  request: { body: jsonBody(AddressWritable) },
  responses: { 201: jsonResponse(AddressDetailSchema, "The new address") },
});

const upsertAddressByExternalId = apiRoute({
  method: "put",
  path: "/address/by-external-id/{external_id}",
  operationId: "upsertAddress",
  tags: ["Addresses"],
  summary: "Create or change the address with the sending system's id",
  description:
    "The company's address with this `external_id` (e.g. the shop's customer number): changed with the fields given, as `PATCH /address` " +
    "changes it (geocoded again when its location fields change), and answered 200; or, when there is none, created as `POST /address` " +
    "creates it and answered 201. Never a second address with one external id, also when two imports send it at once. Beyond the interface.",
  request: { params: ExternalIdParam("address", "CUST-1042"), body: jsonBody(AddressInput) },
  responses: { 200: jsonResponse(AddressDetailSchema, "The changed address"), 201: jsonResponse(AddressDetailSchema, "The created address") },
});

const AddressPatch = AddressWritable.extend({
  id: z.number().int().positive().openapi({ description: "The address to change" }),
}).openapi("AddressPatch");

const patchAddress = apiRoute({
  method: "patch",
  path: "/address",
  operationId: "updateAddress",
  tags: ["Addresses"],
  summary: "Change an address",
  description:
    "The address is identified by `id` in the body (404 when unknown or of another company). Fields left out stay as they are; " +
    "`null` clears a text field. A new `location` (or `lat` + `lng`) is stored as given. Otherwise, when `street`, `housenumber`, " +
    "`postalcode`, `city` or `country` change, the address is geocoded again from the resulting fields (422 naming " +
    "`postalcode,city` when nothing is found; nothing is changed then). Answers the updated address.",
  request: { body: jsonBody(AddressPatch) },
  responses: { 200: jsonResponse(AddressDetailSchema, "The updated address") },
});

const ReverseAddressSchema = AddressDetailSchema.extend({
  id: z.number().int().nullable().openapi({ description: "The stored address's id; null for a gazetteer place" }),
  distance: z.number().int().openapi({ description: "Metres from the query point to the address or place found" }),
}).openapi("ReverseAddress");

const addressForLocation = apiRoute({
  method: "get",
  path: "/addressforlocation",
  operationId: "getAddressForLocation",
  tags: ["Addresses"],
  summary: "Reverse geocoding: the address at a point",
  description:
    `The company's stored address nearest to the point, when one lies within ${NEAREST_ADDRESS_METERS} m (ties: lower id); ` +
    "else the nearest gazetteer place (postal code and place name; or the configured provider's answer) as an address object " +
    'with `id: null`, `postalcode`, `city`, `country`, `location` (the place\'s coordinate) and `addresstype: "gazetteer"` ' +
    "(every other text field null, no deliveries). `distance` gives the metres from the query point. 422 when nothing is near " +
    "(no place within 30 km, e.g. at sea), and when `lon` (or its alias `lng`, one of the two) or `lat` is missing, not a number or out of range (named in `fields`).",
  request: {
    query: PointQuery,
  },
  responses: { 200: jsonResponse(ReverseAddressSchema, "The stored address or gazetteer place") },
});

const searchAddress = apiRoute({
  method: "get",
  path: "/searchaddress",
  operationId: "searchAddresses",
  tags: ["Addresses"],
  summary: "Full-text address search",
  description:
    "Searches the company's addresses by company name (`contactcompany`), last name and first name; with `citocode=true` also " +
    "by postal code and city. Query language: words separated by spaces must all match (implicit AND); `AND`, `OR`, `NOT` " +
    "(upper case; lower-case words are search words) combine them, NOT binding tightest, then AND, then OR (`a NOT b` excludes b); " +
    '`"exact phrase"` matches consecutive words; `abc*` matches words starting with `abc`. Case, umlauts and accents are ' +
    "ignored (`Muller` finds `Müller`). Other characters (parentheses, `:`, `{}`, `^`, stray quotes and stars) are treated as " +
    "word separators, never as syntax; a query with no letters or digits left is a 422 naming `query`. Results are ranked by " +
    `relevance (bm25; ties by id) and answered as a list envelope with page 1 holding at most \`limit\` addresses (default ` +
    `${SEARCH_LIMIT_DEFAULT}, at most ${SEARCH_LIMIT_MAX}; larger values are capped); \`num_results\` counts the addresses returned. ${DETAIL_NOTE}`,
  request: {
    query: z.object({
      query: z.string().max(500).openapi({ description: "Search expression (see description)", example: 'Müller OR "Bäckerei Schmidt"' }),
      limit: z.coerce.number().int().min(1).optional().openapi({ description: `Most results; default ${SEARCH_LIMIT_DEFAULT}, at most ${SEARCH_LIMIT_MAX}` }),
      citocode: BooleanQuery.optional().openapi({
        description: "Also search postal code and city (default false: company, last name and first name only)",
      }),
    }),
  },
  responses: { 200: jsonResponse(AddressList, "Matching addresses, best first") },
});

export const addressRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(getAddresses, async (c) => c.json(await listAddresses(c.get("db"), c.get("company").id, c.req.valid("query")), 200))
  .openapi(getAddress, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const row = await loadAddress(db, cid, c.req.valid("param").address_id);
    const [address] = await presentAddressDetails(db, cid, [row]);
    return c.json(address, 200);
  })
  .openapi(postAddress, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const row = await createAddress(c.env, db, cid, c.req.valid("json"));
    const [address] = await presentAddressDetails(db, cid, [row]);
    return c.json(address, 201);
  })
  .openapi(upsertAddressByExternalId, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const { written, created } = await upsertAddress(c.env, db, cid, c.req.valid("param").external_id, c.req.valid("json"));
    const [address] = await presentAddressDetails(db, cid, [written]);
    return created ? c.json(address, 201) : c.json(address, 200);
  })
  .openapi(patchAddress, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const { id, ...changes } = c.req.valid("json");
    const row = await updateAddress(c.env, db, cid, id, changes);
    const [address] = await presentAddressDetails(db, cid, [row]);
    return c.json(address, 200);
  })
  .openapi(addressForLocation, async (c) => {
    const { lon, lat } = pointOfQuery(c.req.valid("query"));
    return c.json(await addressAt(c.env, c.get("db"), c.get("company").id, lon, lat), 200);
  })
  .openapi(searchAddress, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const { query, limit, citocode } = c.req.valid("query");
    const rows = await searchAddresses(c.env.DB, cid, { query, limit, citocode });
    const objects = await presentAddressDetails(db, cid, rows);
    return c.json(allOnOnePage(objects), 200);
  });
