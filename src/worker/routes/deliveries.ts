/** Deliveries and the lookup lists of delivery states, types and codes. */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { allOnOnePage, listJson } from "../../core/db/list";
import { DELIVERY_CODES, DELIVERY_STATUSES, DELIVERY_TYPES } from "../../core/domain/states";
import { deliveryList, presentDeliveries } from "../../core/services/deliveries";
import { createDelivery, deleteDeliveries, loadDelivery, updateDelivery, upsertDelivery } from "../../core/services/delivery-writes";
import { publishAll } from "../../core/services/live";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { IdParam, ListQuery, apiRoute, envelope, jsonBody, jsonResponse, jsonText } from "../openapi";
import { ExternalIdParam } from "../schemas/addresses";
import { DeliveryData, DeliverySchema, DeliveryWritable } from "../schemas/deliveries";
import { MAX_BULK_ITEMS, takeBulk } from "../../core/services/bulk-intake";
import { apiBase } from "./company";

const DeliveryList = envelope(DeliverySchema, "DeliveryList");
const Lookup = z.object({ id: z.number().int(), name: z.string() }).openapi("LookupValue");
const LookupList = envelope(Lookup, "LookupList");

const listDeliveries = apiRoute({
  method: "get",
  path: "/delivery",
  operationId: "listDeliveries",
  tags: ["Deliveries"],
  summary: "Deliveries",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([DeliveryList, DeliverySchema]), "Deliveries (or one with q.single)") },
});

const getDelivery = apiRoute({
  method: "get",
  path: "/delivery/{delivery_id}",
  operationId: "getDelivery",
  tags: ["Deliveries"],
  summary: "One delivery",
  request: { params: IdParam("delivery_id") },
  responses: { 200: jsonResponse(DeliverySchema, "The delivery") },
});

const postDelivery = apiRoute({
  method: "post",
  path: "/delivery",
  operationId: "createDelivery",
  tags: ["Deliveries"],
  summary: "Create a delivery",
  description:
    "`deliverylocation_id` is required; `supplierlocation_id` defaults to the company depot; both must be addresses of the company. " +
    "Time windows `pdt_from` <= `pdt_to` (ISO 8601, no designator = UTC) are needed for time-window routing. Schedule and state fields are set by routing and reporting. " +
    "The company's websocket (and `delivery.updated` webhooks) get a `delivery` event.",
  request: { body: jsonBody(DeliveryWritable) },
  responses: { 201: jsonResponse(DeliverySchema, "The stored delivery") },
});

const patchDelivery = apiRoute({
  method: "patch",
  path: "/delivery",
  operationId: "updateDelivery",
  tags: ["Deliveries"],
  summary: "Change a delivery (identified by id in the body)",
  description:
    "Any writable field. `status` may only toggle between 0 `none` and 4 `cancelled` for a delivery on no route; other state changes go through routing and `deliverydone`. " +
    "The toggle is a compare-and-set: when the delivery's status or route changed between the check and the write (e.g. a routing run put it on a route), nothing is stored and the answer is 409 naming `status`. " +
    "A delivery on a route that is on the way cannot be edited (409). Every stored change sends a `delivery` event (websocket, `delivery.updated` webhooks).",
  request: { body: jsonBody(DeliveryWritable.extend({ id: z.number().int().positive(), status: z.union([z.literal(0), z.literal(4)]).optional() })) },
  responses: { 200: jsonResponse(DeliverySchema, "The updated delivery") },
});

const upsertByExternalId = apiRoute({
  method: "put",
  path: "/delivery/by-external-id/{external_id}",
  operationId: "upsertDelivery",
  tags: ["Deliveries"],
  summary: "Create or change the delivery with the sending system's id",
  description:
    "The company's delivery with this `external_id`: changed with the fields given, as `PATCH /delivery` changes it (fields left out stay; " +
    "refused as that refuses: 409 when it is on a route that is on the way), and answered 200; or, when there is none, created as " +
    "`POST /delivery` creates it (`deliverylocation_id` required) and answered 201. Never a second delivery with one external id, also when " +
    "two imports send the same order at once (the one that comes second changes what the first created). Beyond the interface.",
  request: { params: ExternalIdParam("order", "SHOP-2026-4711"), body: jsonBody(DeliveryWritable.omit({ external_id: true })) },
  responses: { 200: jsonResponse(DeliverySchema, "The changed delivery"), 201: jsonResponse(DeliverySchema, "The created delivery") },
});

const BulkResult = z
  .union([
    z.object({ index: z.number().int(), status: z.enum(["created", "updated"]), id: z.number().int() }),
    z.object({ index: z.number().int(), status: z.literal("refused"), message: z.string(), fields: z.string() }),
  ])
  .openapi("BulkItemResult");
const BulkWritten = z
  .object({ num_created: z.number().int(), num_updated: z.number().int(), num_refused: z.number().int(), results: z.array(BulkResult).openapi({ description: "One per item, in the items' order" }) })
  .openapi("BulkWritten");

const bulkDeliveries = apiRoute({
  method: "post",
  path: "/delivery/bulk",
  operationId: "createDeliveriesInBulk",
  tags: ["Deliveries"],
  summary: `Create (or change by external_id) up to ${MAX_BULK_ITEMS} deliveries with their addresses`,
  description:
    "Every item is a `deliverydata` item of the routing requests (address fields, window, loads, …) with an optional `external_id`: an item whose " +
    "`external_id` the company has changes that delivery. All or nothing by default: the first unusable item (a bad date, an address nothing is found " +
    "for, a window that ends before it starts, an order on a route on the way) is refused naming it (`items.3.pdt_from`) and nothing is stored. " +
    "With `partial: true` the usable items are written and each item gets its result. When every item has a coordinate the answer is 200 with the " +
    "results; otherwise 202 with a process id: the items are geocoded and written in the background, and `GET /process/status/{process_id}` shows the " +
    "results in `import_deliveries.meta` once `final` is finished (failed, with the reason, when all or nothing refused). One request for the rate limit. Beyond the interface.",
  request: {
    body: jsonBody(
      z.object({
        items: z.array(DeliveryData.extend({ external_id: DeliveryWritable.shape.external_id })).min(1).max(MAX_BULK_ITEMS),
        partial: z.boolean().optional().openapi({ description: "Write the usable items and answer a result per item (default: all or nothing)" }),
      }),
    ),
  },
  responses: { 200: jsonResponse(BulkWritten, "The items written"), 202: jsonResponse(z.object({ message: z.string(), process_id: z.string() }).openapi("BulkStarted"), "Geocoding and writing in the background") },
});

const deleteMatching = apiRoute({
  method: "delete",
  path: "/delivery",
  operationId: "deleteDelivery",
  tags: ["Deliveries"],
  summary: "Delete the deliveries matching q",
  description:
    "`q` is required (deleting everything needs an explicit filter, e.g. `{\"filters\":[{\"name\":\"id\",\"op\":\"is_not_null\"}]}`); only its filters count. " +
    "When a matched delivery is on a route that is on the way, nothing is deleted (409). Proofs of delivery of the deleted deliveries (records, photos, signatures) are deleted with them.",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.object({ num_deleted: z.number().int() }), "Number of deleted deliveries") },
});

const lookupRoute = (path: string, operationId: string, summary: string) =>
  apiRoute({ method: "get", path, operationId, tags: ["Deliveries"], summary, responses: { 200: jsonResponse(LookupList, summary) } });
const deliveryStatus = lookupRoute("/deliverystatus", "listDeliveryStatuses", "Delivery status values");
const deliveryType = lookupRoute("/deliverytype", "listDeliveryTypes", "Delivery type values (deliverytype_id)");
const deliveryCode = lookupRoute("/deliverycode", "listDeliveryCodes", "Delivery code values (code)");


export const deliveryRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(listDeliveries, async (c) => {
    return jsonText(c, await listJson(c.get("db"), deliveryList(c.get("company").id), c.req.valid("query")), 200);
  })
  .openapi(getDelivery, async (c) => {
    const { id: companyId } = c.get("company");
    const row = await loadDelivery(c.get("db"), companyId, c.req.valid("param").delivery_id);
    return c.json((await presentDeliveries(c.get("db"), companyId, [row]))[0], 200);
  })
  .openapi(postDelivery, async (c) => {
    const { delivery, events } = await createDelivery(c.get("db"), c.get("company"), c.req.valid("json"));
    c.executionCtx.waitUntil(publishAll(c.env, c.get("company").id, events));
    return c.json(delivery, 201);
  })
  .openapi(patchDelivery, async (c) => {
    const { id, ...patch } = c.req.valid("json");
    const { delivery, events } = await updateDelivery(c.get("db"), c.get("company"), id, patch);
    c.executionCtx.waitUntil(publishAll(c.env, c.get("company").id, events));
    return c.json(delivery, 200);
  })
  .openapi(upsertByExternalId, async (c) => {
    const { delivery, events, created } = await upsertDelivery(c.get("db"), c.get("company"), c.req.valid("param").external_id, c.req.valid("json"));
    c.executionCtx.waitUntil(publishAll(c.env, c.get("company").id, events));
    return created ? c.json(delivery, 201) : c.json(delivery, 200);
  })
  .openapi(bulkDeliveries, async (c) => {
    const { items, partial } = c.req.valid("json");
    const taken = await takeBulk(c.env, c.get("db"), c.get("company"), c.get("user").id, items, partial ?? false, apiBase(c));
    if ("processId" in taken) return c.json({ message: "Some items have no coordinate: they are geocoded and written in the background", process_id: taken.processId }, 202);
    return c.json(taken.written, 200);
  })
  .openapi(deleteMatching, async (c) => {
    const deleted = await deleteDeliveries(c.env, c.get("db"), c.get("company").id, c.req.valid("query").q);
    return c.json({ num_deleted: deleted }, 200);
  })
  .openapi(deliveryStatus, (c) => c.json(allOnOnePage(DELIVERY_STATUSES), 200))
  .openapi(deliveryType, (c) => c.json(allOnOnePage(DELIVERY_TYPES), 200))
  .openapi(deliveryCode, (c) => c.json(allOnOnePage(DELIVERY_CODES), 200));
