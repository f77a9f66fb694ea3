/** Deliveries and the lookup lists of delivery states, types and codes. */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { DeliverySchema, DeliveryWritable } from "../schemas/deliveries";
import { DeliveryStatus, RouteStatus } from "../../shared/contract/states";
import { conflict, notFound, unprocessable } from "../../core/errors";
import { allOnOnePage, listJson } from "../../core/db/list";
import { and, eq, isNull, sql } from "drizzle-orm";
import { deliveries, routes } from "../../core/db/schema";
import { DELIVERY_CODES, DELIVERY_STATUSES, DELIVERY_TYPES } from "../../core/domain/states";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { compileQuery } from "../../core/lib/filters";
import { IdParam, ListQuery, apiRoute, envelope, jsonBody, jsonResponse, jsonText } from "../openapi";
import { type DeliveryRow, assertNotOnTheWay, deliveryFields, deliveryList, prepareDeliveryWrite, presentDeliveries } from "../../core/services/deliveries";
import { eventInsert, loggedEvents } from "../../core/services/events";
import { publishAll } from "../../core/services/live";
import { deleteProofsOf } from "../../core/services/proofs";
import { inList } from "../../core/db/sql";

const DeliveryList = envelope(DeliverySchema, "DeliveryList");
const Lookup = z.object({ id: z.number().int(), name: z.string() }).openapi("LookupValue");
const LookupList = envelope(Lookup, "LookupList");

const listDeliveries = apiRoute({
  method: "get",
  path: "/delivery",
  tags: ["Deliveries"],
  summary: "Deliveries",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.union([DeliveryList, DeliverySchema]), "Deliveries (or one with q.single)") },
});

const getDelivery = apiRoute({
  method: "get",
  path: "/delivery/{delivery_id}",
  tags: ["Deliveries"],
  summary: "One delivery",
  request: { params: IdParam("delivery_id") },
  responses: { 200: jsonResponse(DeliverySchema, "The delivery") },
});

const createDelivery = apiRoute({
  method: "post",
  path: "/delivery",
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
  tags: ["Deliveries"],
  summary: "Change a delivery (identified by id in the body)",
  description:
    "Any writable field. `status` may only toggle between 0 `none` and 4 `cancelled` for a delivery on no route; other state changes go through routing and `deliverydone`. " +
    "The toggle is a compare-and-set: when the delivery's status or route changed between the check and the write (e.g. a routing run put it on a route), nothing is stored and the answer is 409 naming `status`. " +
    "A delivery on a route that is on the way cannot be edited (409). Every stored change sends a `delivery` event (websocket, `delivery.updated` webhooks).",
  request: { body: jsonBody(DeliveryWritable.extend({ id: z.number().int().positive(), status: z.union([z.literal(0), z.literal(4)]).optional() })) },
  responses: { 200: jsonResponse(DeliverySchema, "The updated delivery") },
});

const deleteDeliveries = apiRoute({
  method: "delete",
  path: "/delivery",
  tags: ["Deliveries"],
  summary: "Delete the deliveries matching q",
  description:
    "`q` is required (deleting everything needs an explicit filter, e.g. `{\"filters\":[{\"name\":\"id\",\"op\":\"is_not_null\"}]}`); only its filters count. " +
    "When a matched delivery is on a route that is on the way, nothing is deleted (409). Proofs of delivery of the deleted deliveries (records, photos, signatures) are deleted with them.",
  request: { query: ListQuery },
  responses: { 200: jsonResponse(z.object({ num_deleted: z.number().int() }), "Number of deleted deliveries") },
});

const lookupRoute = (path: string, summary: string) =>
  apiRoute({ method: "get", path, tags: ["Deliveries"], summary, responses: { 200: jsonResponse(LookupList, summary) } });
const deliveryStatus = lookupRoute("/deliverystatus", "Delivery status values");
const deliveryType = lookupRoute("/deliverytype", "Delivery type values (deliverytype_id)");
const deliveryCode = lookupRoute("/deliverycode", "Delivery code values (code)");


async function loadDelivery(c: { get: (k: "db") => AppEnv["Variables"]["db"] }, companyId: number, id: number): Promise<DeliveryRow> {
  const [row] = await c.get("db").select().from(deliveries).where(and(eq(deliveries.company_id, companyId), eq(deliveries.id, id)));
  if (!row) throw notFound("Delivery");
  return row;
}

export const deliveryRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(listDeliveries, async (c) => {
    return jsonText(c, await listJson(c.get("db"), deliveryList(c.get("company").id), c.req.valid("query")), 200);
  })
  .openapi(getDelivery, async (c) => {
    const company = c.get("company");
    const row = await loadDelivery(c, company.id, c.req.valid("param").delivery_id);
    return c.json((await presentDeliveries(c.get("db"), company.id, [row]))[0], 200);
  })
  .openapi(createDelivery, async (c) => {
    const db = c.get("db");
    const company = c.get("company");
    const values = await prepareDeliveryWrite(db, company, c.req.valid("json"));
    // Consoles show the new delivery among the open ones without a reload; its event is logged with the insert (its id read back in the same transaction).
    const [[row], answer] = await db.batch([
      db
        .insert(deliveries)
        .values({ ...(values as typeof deliveries.$inferInsert), company_id: company.id })
        .returning(),
      eventInsert(db, company.id, { event: { type: "delivery", id: 0, status: DeliveryStatus.none, route_id: null }, driverId: null, fill: { id: sql`last_insert_rowid()` } }),
    ]);
    c.executionCtx.waitUntil(publishAll(c.env, company.id, loggedEvents([answer])));
    return c.json((await presentDeliveries(db, company.id, [row]))[0], 201);
  })
  .openapi(patchDelivery, async (c) => {
    const db = c.get("db");
    const company = c.get("company");
    const { id, status, ...input } = c.req.valid("json");
    const existing = await loadDelivery(c, company.id, id);
    await assertNotOnTheWay(db, company.id, [existing.route_id]);
    const values = await prepareDeliveryWrite(db, company, input, existing);
    if (status !== undefined && status !== existing.status) {
      const toggles = (existing.status === 0 && status === 4) || (existing.status === 4 && status === 0);
      if (!toggles || existing.route_id !== null) throw conflict(`Delivery status ${existing.status} cannot change to ${status} here`, "status");
      values.status = status;
    }
    // Nothing to write (e.g. only the current status sent back): the stored delivery, unchanged.
    if (!Object.keys(values).length) return c.json((await presentDeliveries(db, company.id, [existing]))[0], 200);
    // The route guard is repeated in the statement, so a route starting meanwhile still blocks the edit.
    // The status toggle is a compare-and-set on what was checked: a routing run that took the delivery meanwhile wins.
    const editable = and(
      eq(deliveries.company_id, company.id),
      eq(deliveries.id, id),
      sql`not exists (select 1 from ${routes} where ${routes.id} = ${deliveries.route_id} and ${routes.status} = ${RouteStatus.ontheway})`,
      ...(values.status === undefined ? [] : [eq(deliveries.status, existing.status), isNull(deliveries.route_id)]),
    );
    const update = db.update(deliveries).set(values as Partial<typeof deliveries.$inferInsert>).where(editable).returning();
    // Any edit (window, address, notes, not only the status) is news for the consoles showing it: logged with the write, only when the write applies.
    const event = { type: "delivery" as const, id, status: (values.status as number | undefined) ?? existing.status, route_id: existing.route_id };
    const [answer, [row]] = await db.batch([eventInsert(db, company.id, { event, driverId: null, when: sql`exists (select 1 from ${deliveries} where ${editable})` }), update]);
    if (!row) {
      const now = await loadDelivery(c, company.id, id);
      if (values.status !== undefined && (now.status !== existing.status || now.route_id !== null)) {
        throw conflict(`Delivery changed meanwhile (now status ${now.status}, route ${now.route_id ?? "none"}): its status cannot change to ${status}`, "status");
      }
      throw conflict("Delivery is on a route that is on the way", "route_id");
    }
    c.executionCtx.waitUntil(publishAll(c.env, company.id, loggedEvents([answer])));
    return c.json((await presentDeliveries(db, company.id, [row]))[0], 200);
  })
  .openapi(deleteDeliveries, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const { q } = c.req.valid("query");
    if (!q) throw unprocessable("q is required: deleting needs an explicit filter", "q");
    const { where } = compileQuery(q, deliveryFields);
    const matched = and(eq(deliveries.company_id, cid), where);
    const onTheWay = sql`exists (select 1 from ${routes} where ${routes.id} = ${deliveries.route_id} and ${routes.status} = ${RouteStatus.ontheway})`;
    const [blocked] = await db.select({ id: deliveries.id }).from(deliveries).where(and(matched, onTheWay)).limit(1);
    if (blocked) throw conflict(`Delivery ${blocked.id} is on a route that is on the way; nothing deleted`, "q");
    const deleted = await db.delete(deliveries).where(and(matched, sql`not ${onTheWay}`)).returning({ id: deliveries.id });
    // Deliveries referring to a deleted pickup lose the reference rather than pointing nowhere.
    if (deleted.length) await db.update(deliveries).set({ pickup_ref_id: null }).where(and(eq(deliveries.company_id, cid), inList(deliveries.pickup_ref_id, deleted.map((d) => d.id))));
    // Their proofs of delivery (records and images) go with them.
    if (deleted.length) await deleteProofsOf(c.env, db, cid, deleted.map((d) => d.id));
    return c.json({ num_deleted: deleted.length }, 200);
  })
  .openapi(deliveryStatus, (c) => c.json(allOnOnePage(DELIVERY_STATUSES), 200))
  .openapi(deliveryType, (c) => c.json(allOnOnePage(DELIVERY_TYPES), 200))
  .openapi(deliveryCode, (c) => c.json(allOnOnePage(DELIVERY_CODES), 200));
