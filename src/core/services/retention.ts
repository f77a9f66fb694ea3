/**
 * Retention: what no one needs any longer leaves D1, by the cron trigger
 * (`scheduled` in index.ts), so the database stops growing with it.
 *
 * - outbox rows after OUTBOX_DAYS (a message is sent or failed within minutes:
 *   the notification queue's retries and dead-letter queue end it long before);
 * - webhook delivery logs after WEBHOOK_DELIVERY_DAYS;
 * - the event log behind every enabled webhook endpoint's cursor and older
 *   than EVENT_REPLAY_DAYS (what a replay or a resuming client may still ask
 *   for). A disabled endpoint holds nothing back: enabled again, it goes on
 *   with what is left;
 * - cancelled and replaced routes ROUTE_DAYS after their creation, unless a
 *   delivery still names them (a reported delivery keeps its route: that is
 *   its record); the route that replaced one forgets it (`replaces` null) in
 *   the same batch, so no id points at a route that is gone;
 * - driver positions after the company's `position_retention_days`, archived
 *   to R2 first (services/position-archive.ts);
 * - idempotency keys and their answers after IDEMPOTENCY_HOURS;
 * - proofs of delivery (record, photo and signature in R2) after the company's
 *   `proof_retention_days` (services/proofs.ts `pruneProofs`).
 *
 * Every step deletes at most BATCH rows in one statement, the oldest first
 * (ids grow with time), and a run does at most MAX_BATCHES per table, so a
 * run stays far inside D1's statement and the Worker's CPU limits; what is
 * left goes at the next run. A batch is one idempotent DELETE: a run cut off
 * anywhere loses nothing and the next one simply goes on.
 */
import { type SQL, and, eq, inArray, lt, lte, min, notExists, sql } from "drizzle-orm";
import type { Db } from "../context";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Env } from "../env";
import { companies, deliveries, events, idempotencyKeys, outbox, routes, webhookDeliveries, webhooks } from "../db/schema";
import { RouteStatus } from "../../shared/contract/states";
import { log } from "../lib/log";
import { formatDateTime } from "../lib/time";
import { IDEMPOTENCY_HOURS } from "./idempotency";
import { archiveOldPositions } from "./position-archive";
import { pruneProofs } from "./proofs";

export const OUTBOX_DAYS = 30;
export const WEBHOOK_DELIVERY_DAYS = 30;
export const EVENT_REPLAY_DAYS = 7;
/** Cancelled and replaced routes: a quarter, for "what was planned and changed" questions long after the day. */
export const ROUTE_DAYS = 90;
export const BATCH = 500;
export const MAX_BATCHES = 40;

const DAY_MS = 86_400_000;

interface Prunable {
  table: SQLiteTable;
  id: SQLiteColumn;
  createdAt: SQLiteColumn;
}

/**
 * Deletes, batch by batch, rows among the oldest BATCH (by id, within `scope`)
 * that are older than `before` and pass `also`; stops at the first batch that
 * deletes less than a full batch (what follows is younger) or after MAX_BATCHES.
 */
async function pruneOldest(db: Db, what: Prunable, before: string, scope: SQL | undefined, also: SQL | undefined): Promise<{ deleted: number; done: boolean }> {
  let deleted = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const oldest = db.select({ id: what.id }).from(what.table).where(scope).orderBy(what.id).limit(BATCH);
    const gone = await db
      .delete(what.table)
      .where(and(inArray(what.id, oldest), lt(what.createdAt, before), also))
      .returning({ id: what.id });
    deleted += gone.length;
    if (gone.length < BATCH) return { deleted, done: true };
  }
  return { deleted, done: false };
}

function report(table: string, company: string | null, result: { deleted: number; done: boolean }, startedMs: number) {
  if (result.deleted > 0 || !result.done) log("info", "retention", { table, company_slug: company, deleted: result.deleted, done: result.done, duration_ms: Date.now() - startedMs });
}

/** One retention run: each table in turn (events and routes per company), progress on the structured log (one line per table and company that lost rows), then the position archive. */
export async function runRetention(env: Env, db: Db): Promise<void> {
  const now = Date.now();
  let started = Date.now();
  report("outbox", null, await pruneOldest(db, { table: outbox, id: outbox.id, createdAt: outbox.created_at }, formatDateTime(now - OUTBOX_DAYS * DAY_MS), undefined, undefined), started);

  started = Date.now();
  const deliveryLogs = { table: webhookDeliveries, id: webhookDeliveries.id, createdAt: webhookDeliveries.created_at };
  report("webhook_deliveries", null, await pruneOldest(db, deliveryLogs, formatDateTime(now - WEBHOOK_DELIVERY_DAYS * DAY_MS), undefined, undefined), started);

  started = Date.now();
  // Keyed by (company, user, key): the age column is their order (indexed), as an id is elsewhere.
  const keys = { table: idempotencyKeys, id: idempotencyKeys.created_at, createdAt: idempotencyKeys.created_at };
  report("idempotency_keys", null, await pruneOldest(db, keys, formatDateTime(now - IDEMPOTENCY_HOURS * 3_600_000), undefined, undefined), started);

  // The event log per company: its endpoints' cursors are per company, and (company_id, id) is indexed.
  const floors = await db
    .select({ id: companies.id, slug: companies.slug, cursor: min(webhooks.cursor) })
    .from(companies)
    .leftJoin(webhooks, and(eq(webhooks.company_id, companies.id), eq(webhooks.enabled, true)))
    .groupBy(companies.id);
  const eventsBefore = formatDateTime(now - EVENT_REPLAY_DAYS * DAY_MS);
  for (const company of floors) {
    started = Date.now();
    const behindEveryCursor = company.cursor === null ? undefined : lte(events.id, company.cursor);
    const result = await pruneOldest(db, { table: events, id: events.id, createdAt: events.created_at }, eventsBefore, eq(events.company_id, company.id), behindEveryCursor);
    report("events", company.slug, result, started);
    started = Date.now();
    report("routes", company.slug, await pruneEndedRoutes(db, company.id, formatDateTime(now - ROUTE_DAYS * DAY_MS)), started);
  }
  await archiveOldPositions(env, db);
  await pruneProofs(env, db, now);
}

/**
 * Cancelled and replaced routes of one company created before `before` that
 * no delivery names (through `routes_company_status`), BATCH at a time: one
 * D1 batch (a transaction) clears the successors' `replaces` and deletes.
 */
async function pruneEndedRoutes(db: Db, companyId: number, before: string): Promise<{ deleted: number; done: boolean }> {
  const unreferenced = notExists(db.select({ one: sql`1` }).from(deliveries).where(and(eq(deliveries.company_id, companyId), eq(deliveries.route_id, routes.id))));
  const prunable = and(eq(routes.company_id, companyId), inArray(routes.status, [RouteStatus.cancelled, RouteStatus.route_replaced]), lt(routes.creationtime, before), unreferenced);
  let deleted = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const found = await db.select({ id: routes.id, replacedBy: routes.replaced_by }).from(routes).where(prunable).orderBy(routes.id).limit(BATCH);
    if (!found.length) return { deleted, done: true };
    const ids = found.map((r) => r.id);
    const successors = found.flatMap((r) => (r.replacedBy === null ? [] : [r.replacedBy]));
    const [, gone] = await db.batch([
      db.update(routes).set({ replaces: null }).where(and(eq(routes.company_id, companyId), inArray(routes.id, successors.length ? successors : [0]), inArray(routes.replaces, ids))),
      db.delete(routes).where(and(inArray(routes.id, ids), prunable)).returning({ id: routes.id }),
    ]);
    deleted += gone.length;
    if (found.length < BATCH) return { deleted, done: true };
  }
  return { deleted, done: false };
}
