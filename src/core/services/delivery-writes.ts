/**
 * Creating, changing and deleting deliveries (POST, PATCH, DELETE /delivery).
 * Each write logs its `delivery` event in its own batch; the caller publishes
 * the events it answers (after the answer, so the client does not wait).
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import { companyRow } from "../db/company-row";
import { DeliveryStatus } from "../../shared/contract/states";
import type { Company, Db } from "../context";
import type { PublishedEvent } from "../coordinator/live";
import { deliveries } from "../db/schema";
import { inList } from "../db/sql";
import type { Env } from "../env";
import { conflict, unprocessable } from "../errors";
import { compileQuery } from "../lib/filters";
import { type DeliveryInput, type DeliveryOut, type DeliveryRow, assertNotOnTheWay, deliveryFields, onTheWay, prepareDeliveryWrite, presentDeliveries } from "./deliveries";
import { eventInsert, loggedEvents } from "./events";
import { upsertByExternalId } from "./external-ids";
import { deleteProofsOf } from "./proofs";

/** A stored delivery and the events its write logged. */
export interface DeliveryWrite {
  delivery: DeliveryOut;
  events: PublishedEvent[];
}

/** The company's delivery with this id, or 404. */
export const loadDelivery = (db: Db, companyId: number, id: number): Promise<DeliveryRow> => companyRow(db, deliveries, companyId, id, "Delivery");

const present = async (db: Db, companyId: number, row: DeliveryRow) => (await presentDeliveries(db, companyId, [row]))[0];

/** A route that is on the way holds its deliveries: no edit, no delete. */

/** POST /delivery. Consoles show the new delivery among the open ones without a reload: its event is logged with the insert (its id read back in the same transaction). */
export async function createDelivery(db: Db, company: Company, input: DeliveryInput): Promise<DeliveryWrite> {
  const values = await prepareDeliveryWrite(db, company, input);
  const [[row], answer] = await db.batch([
    db
      .insert(deliveries)
      .values({ ...(values as typeof deliveries.$inferInsert), company_id: company.id })
      .returning(),
    eventInsert(db, company.id, { event: { type: "delivery", id: 0, status: DeliveryStatus.none, route_id: null }, driverId: null, fill: { id: sql`last_insert_rowid()` } }),
  ]);
  return { delivery: await present(db, company.id, row), events: loggedEvents([answer]) };
}

/**
 * `PUT /delivery/by-external-id/<id>`: the company's delivery with that
 * external id changed as PATCH /delivery changes it (refused as that refuses,
 * e.g. on a route on the way), or created as POST /delivery creates it.
 */
export async function upsertDelivery(db: Db, company: Company, externalId: string, input: DeliveryInput): Promise<DeliveryWrite & { created: boolean }> {
  const find = async () => (await db.select({ id: deliveries.id }).from(deliveries).where(and(eq(deliveries.company_id, company.id), eq(deliveries.external_id, externalId))).get())?.id;
  const { written, created } = await upsertByExternalId(
    find,
    () => createDelivery(db, company, { ...input, external_id: externalId }),
    (id) => updateDelivery(db, company, id, input),
  );
  return { ...written, created };
}

/**
 * PATCH /delivery: any writable field, and `status` toggling between 0 and 4
 * for a delivery on no route. The route guard is repeated in the statement,
 * so a route starting meanwhile still blocks the edit; the toggle is a
 * compare-and-set on what was checked, so a routing run that took the
 * delivery meanwhile wins (409).
 */
export async function updateDelivery(db: Db, company: Company, id: number, patch: DeliveryInput & { status?: number }): Promise<DeliveryWrite> {
  const { status, ...input } = patch;
  const existing = await loadDelivery(db, company.id, id);
  await assertNotOnTheWay(db, company.id, [existing.route_id]);
  const values = await prepareDeliveryWrite(db, company, input, existing);
  if (status !== undefined && status !== existing.status) {
    const toggles = (existing.status === 0 && status === 4) || (existing.status === 4 && status === 0);
    if (!toggles || existing.route_id !== null) throw conflict(`Delivery status ${existing.status} cannot change to ${status} here`, "status");
    values.status = status;
  }
  // Nothing to write (e.g. only the current status sent back): the stored delivery, unchanged.
  if (!Object.keys(values).length) return { delivery: await present(db, company.id, existing), events: [] };
  const editable = and(
    eq(deliveries.company_id, company.id),
    eq(deliveries.id, id),
    sql`not ${onTheWay}`,
    ...(values.status === undefined ? [] : [eq(deliveries.status, existing.status), isNull(deliveries.route_id)]),
  );
  const update = db.update(deliveries).set(values as Partial<typeof deliveries.$inferInsert>).where(editable).returning();
  // Any edit (window, address, notes, not only the status) is news for the consoles showing it: logged with the write, only when the write applies.
  const event = { type: "delivery" as const, id, status: (values.status as number | undefined) ?? existing.status, route_id: existing.route_id };
  const [answer, [row]] = await db.batch([eventInsert(db, company.id, { event, driverId: null, when: sql`exists (select 1 from ${deliveries} where ${editable})` }), update]);
  if (!row) {
    const now = await loadDelivery(db, company.id, id);
    if (values.status !== undefined && (now.status !== existing.status || now.route_id !== null)) {
      throw conflict(`Delivery changed meanwhile (now status ${now.status}, route ${now.route_id ?? "none"}): its status cannot change to ${status}`, "status");
    }
    throw conflict("Delivery is on a route that is on the way", "route_id");
  }
  return { delivery: await present(db, company.id, row), events: loggedEvents([answer]) };
}

/**
 * DELETE /delivery: the deliveries `q`'s filters match, none when one of them
 * is on a route on the way (409). Deliveries referring to a deleted pickup
 * lose the reference; the deleted ones' proofs (records and images) go too.
 */
export async function deleteDeliveries(env: Env, db: Db, companyId: number, q: string | undefined): Promise<number> {
  if (!q) throw unprocessable("q is required: deleting needs an explicit filter", "q");
  const { where } = compileQuery(q, deliveryFields);
  const matched = and(eq(deliveries.company_id, companyId), where);
  const [blocked] = await db.select({ id: deliveries.id }).from(deliveries).where(and(matched, onTheWay)).limit(1);
  if (blocked) throw conflict(`Delivery ${blocked.id} is on a route that is on the way; nothing deleted`, "q");
  const deleted = await db.delete(deliveries).where(and(matched, sql`not ${onTheWay}`)).returning({ id: deliveries.id });
  if (!deleted.length) return 0;
  const ids = deleted.map((d) => d.id);
  await db.update(deliveries).set({ pickup_ref_id: null }).where(and(eq(deliveries.company_id, companyId), inList(deliveries.pickup_ref_id, ids)));
  await deleteProofsOf(env, db, companyId, ids);
  return deleted.length;
}
