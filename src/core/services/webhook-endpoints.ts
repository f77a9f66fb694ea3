/**
 * A company's webhook endpoints as dispatchers manage them: register, list,
 * change, remove, inspect their delivery attempts, replay. Every change tells
 * the company's coordinator, which caches the enabled endpoints.
 */
import { desc, eq, sql } from "drizzle-orm";
import { companyRow } from "../db/company-row";
import type { Db } from "../context";
import type { Envelope } from "../db/list";
import { webhookDeliveries, webhooks } from "../db/schema";
import type { Env } from "../env";
import { unprocessable } from "../errors";
import { normaliseDateTime } from "../lib/time";
import { companyStub } from "./live";
import { type WebhookRow, newSecret, rewindWebhook, webhookUrlProblem } from "./webhooks";

/** An endpoint as the API shows it (never its secret, but right after registering). */
export const presentWebhook = (w: WebhookRow) => ({
  id: w.id,
  url: w.url,
  event_types: w.event_types,
  description: w.description,
  enabled: w.enabled,
  disabled_reason: w.disabled_reason,
  failures: w.failures,
  last_event_id: w.cursor,
  created_at: w.created_at,
});

export type Webhook = ReturnType<typeof presentWebhook>;

export interface WebhookInput {
  url: string;
  event_types: string[];
  description?: string | null;
  enabled?: boolean;
}

function assertUrl(env: Env, url: string) {
  const problem = webhookUrlProblem(url, env);
  if (problem) throw unprocessable(`url ${problem}`, "url");
}

export const loadWebhook = (db: Db, companyId: number, id: number): Promise<WebhookRow> => companyRow(db, webhooks, companyId, id, "Webhook");

/** Registers an endpoint; it starts at the current end of the log (it gets what happens from now on; replay reaches back). */
export async function createWebhook(env: Env, db: Db, companyId: number, input: WebhookInput): Promise<Webhook & { secret: string }> {
  assertUrl(env, input.url);
  const [row] = await db
    .insert(webhooks)
    .values({ company_id: companyId, url: input.url, event_types: input.event_types, description: input.description ?? null, enabled: input.enabled ?? true, secret: newSecret(), cursor: sql`coalesce((select max(id) from events where company_id = ${companyId}), 0)` })
    .returning();
  await companyStub(env, companyId).webhooksChanged();
  return { ...presentWebhook(row), secret: row.secret };
}

export async function listWebhooks(db: Db, companyId: number): Promise<Webhook[]> {
  const rows = await db.select().from(webhooks).where(eq(webhooks.company_id, companyId)).orderBy(webhooks.id);
  return rows.map(presentWebhook);
}

/** Changes an endpoint; enabling it again clears its failures and starts a delivery run. */
export async function updateWebhook(env: Env, db: Db, companyId: number, id: number, patch: Partial<WebhookInput>): Promise<Webhook> {
  const hook = await loadWebhook(db, companyId, id);
  if (patch.url !== undefined) assertUrl(env, patch.url);
  const enabling = patch.enabled === true && !hook.enabled;
  const [row] = await db
    .update(webhooks)
    .set({ ...patch, ...(enabling ? { failures: 0, retry_at: null, disabled_reason: null } : {}), ...(patch.enabled === false ? { disabled_reason: null } : {}) })
    .where(eq(webhooks.id, hook.id))
    .returning();
  await companyStub(env, companyId).webhooksChanged();
  if (enabling) await env.WEBHOOK_QUEUE.send({ webhookId: hook.id, companyId });
  return presentWebhook(row);
}

/** Removes an endpoint with its delivery log. */
export async function deleteWebhook(env: Env, db: Db, companyId: number, id: number): Promise<void> {
  const hook = await loadWebhook(db, companyId, id);
  await db.batch([db.delete(webhookDeliveries).where(eq(webhookDeliveries.webhook_id, hook.id)), db.delete(webhooks).where(eq(webhooks.id, hook.id))]);
  await companyStub(env, companyId).webhooksChanged();
}

/** A page of an endpoint's delivery attempts, newest first. */
export async function webhookAttempts(db: Db, companyId: number, id: number, page: number, resultsPerPage?: number) {
  const hook = await loadWebhook(db, companyId, id);
  const perPage = Math.min(resultsPerPage ?? 10, 100);
  const [rows, [{ count }]] = await Promise.all([
    db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhook_id, hook.id)).orderBy(desc(webhookDeliveries.id)).limit(perPage).offset((page - 1) * perPage),
    db.select({ count: sql<number>`count(*)` }).from(webhookDeliveries).where(eq(webhookDeliveries.webhook_id, hook.id)),
  ]);
  const objects = rows.map(({ company_id: _c, webhook_id: _w, ...d }) => d);
  return { num_results: count, objects, page, total_pages: Math.ceil(count / perPage) } satisfies Envelope<unknown>;
}

/** Delivers again from an event (`after_event_id`) or a time (`since`), exactly one of them; answers the new cursor. */
export async function replayWebhook(env: Env, db: Db, companyId: number, id: number, from: { after_event_id?: number; since?: string }): Promise<number> {
  const hook = await loadWebhook(db, companyId, id);
  if ((from.after_event_id === undefined) === (from.since === undefined)) throw unprocessable("Give exactly one of after_event_id or since", "after_event_id,since");
  const since = from.since === undefined ? undefined : normaliseDateTime(from.since);
  if (since === null) throw unprocessable("since must be an ISO 8601 date-time", "since");
  const cursor = await rewindWebhook(db, hook, { afterEventId: from.after_event_id, since });
  await env.WEBHOOK_QUEUE.send({ webhookId: hook.id, companyId });
  return cursor;
}
