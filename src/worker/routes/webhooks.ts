/**
 * Webhook endpoints of a company (beyond the interface documents): register,
 * list, change, remove, inspect deliveries, replay. Dispatchers only.
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { notFound, unprocessable } from "../../core/errors";
import { and, desc, eq, sql } from "drizzle-orm";
import { pageOf } from "../../core/db/list";
import { webhookDeliveries, webhooks } from "../../core/db/schema";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { normaliseDateTime } from "../../core/lib/time";
import { IdParam, ListQuery, apiRoute, envelope, jsonBody, jsonResponse } from "../openapi";
import { EVENT_PATTERN, EVENT_TYPES } from "../../core/services/events";
import { companyStub } from "../../core/services/live";
import { type WebhookRow, newSecret, rewindWebhook, webhookUrlProblem } from "../../core/services/webhooks";

const DISPATCHER = ["dispatcher"] as const;

const EventTypes = z
  .array(z.string().regex(EVENT_PATTERN, `one of ${EVENT_TYPES.join(", ")}, a group such as route.*, or *`))
  .min(1)
  .max(20)
  .openapi({ example: ["route.*", "delivery.updated"], description: `Event types (${EVENT_TYPES.join(", ")}), groups such as \`route.*\`, or \`*\`` });

const WebhookSchema = z
  .object({
    id: z.number().int(),
    url: z.string(),
    event_types: z.array(z.string()),
    description: z.string().nullable(),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable().openapi({ description: "Why the service disabled it (a run of failed deliveries)" }),
    failures: z.number().int().openapi({ description: "Failed deliveries in a row" }),
    last_event_id: z.number().int().openapi({ description: "The last event delivered (delivery goes on after it)" }),
    created_at: z.string(),
  })
  .openapi("Webhook");

const present = (w: WebhookRow) => ({
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

const Url = z.string().max(2000).openapi({ example: "https://erp.example.com/hooks/dispatch", description: "https only (http and private addresses only with WEBHOOK_ALLOW_PRIVATE in local development)" });

const createWebhook = apiRoute({
  method: "post",
  path: "/webhook",
  tags: ["Webhooks"],
  summary: "Register a webhook endpoint",
  description:
    "Events go to the URL as signed POSTs (Standard Webhooks: `webhook-id` = `evt_<event id>`, `webhook-timestamp`, `webhook-signature` = `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the base64 key after `whsec_`); " +
    "the body is `{type, timestamp, event_id, data}` with `data` the websocket message. Delivery is at least once, in event order per endpoint, retried with exponential backoff " +
    "(10 s doubling, at most an hour); after a run of failures (`WEBHOOK_MAX_FAILURES`, default 30 ≈ a day) the endpoint is disabled and the dispatchers are emailed. " +
    "The answer carries the `secret`: it is shown only here. New endpoints start at the current end of the event log.",
  roles: DISPATCHER,
  request: { body: jsonBody(z.object({ url: Url, event_types: EventTypes, description: z.string().max(500).optional(), enabled: z.boolean().optional() }).strict()) },
  responses: { 201: jsonResponse(WebhookSchema.extend({ secret: z.string() }), "The endpoint with its secret") },
});

const listWebhooks = apiRoute({
  method: "get",
  path: "/webhook",
  tags: ["Webhooks"],
  summary: "Webhook endpoints",
  roles: DISPATCHER,
  request: { query: ListQuery.pick({ page: true, results_per_page: true }) },
  responses: { 200: jsonResponse(envelope(WebhookSchema, "WebhookList"), "Endpoints, oldest first") },
});

const getWebhook = apiRoute({
  method: "get",
  path: "/webhook/{webhook_id}",
  tags: ["Webhooks"],
  summary: "One webhook endpoint",
  roles: DISPATCHER,
  request: { params: IdParam("webhook_id") },
  responses: { 200: jsonResponse(WebhookSchema, "The endpoint") },
});

const updateWebhook = apiRoute({
  method: "patch",
  path: "/webhook/{webhook_id}",
  tags: ["Webhooks"],
  summary: "Change a webhook endpoint",
  description: "Enabling it again clears the failure count; delivery goes on after `last_event_id` (see replay).",
  roles: DISPATCHER,
  request: {
    params: IdParam("webhook_id"),
    body: jsonBody(z.object({ url: Url.optional(), event_types: EventTypes.optional(), description: z.string().max(500).nullable().optional(), enabled: z.boolean().optional() }).strict()),
  },
  responses: { 200: jsonResponse(WebhookSchema, "The endpoint") },
});

const deleteWebhook = apiRoute({
  method: "delete",
  path: "/webhook/{webhook_id}",
  tags: ["Webhooks"],
  summary: "Remove a webhook endpoint and its delivery log",
  roles: DISPATCHER,
  request: { params: IdParam("webhook_id") },
  responses: { 204: { description: "Removed" } },
});

const DeliverySchema = z
  .object({
    id: z.number().int(),
    event_id: z.number().int(),
    event_type: z.string(),
    attempt: z.number().int(),
    status_code: z.number().int().nullable(),
    latency_ms: z.number().int(),
    error: z.string().nullable(),
    succeeded: z.boolean(),
    created_at: z.string(),
  })
  .openapi("WebhookDelivery");

const listDeliveries = apiRoute({
  method: "get",
  path: "/webhook/{webhook_id}/deliveries",
  tags: ["Webhooks"],
  summary: "Delivery attempts of an endpoint, newest first",
  description: "Attempts are kept 30 days.",
  roles: DISPATCHER,
  request: { params: IdParam("webhook_id"), query: ListQuery.pick({ page: true, results_per_page: true }) },
  responses: { 200: jsonResponse(envelope(DeliverySchema, "WebhookDeliveryList"), "Attempts") },
});

const replayWebhook = apiRoute({
  method: "post",
  path: "/webhook/{webhook_id}/replay",
  tags: ["Webhooks"],
  summary: "Deliver again from an event or a time",
  description: "Exactly one of `after_event_id` (deliver the events after it) or `since` (the events logged at or after this time). Events are sent again with their original `webhook-id`, so receivers can recognise repeats. " +
    "The event log keeps 7 days of events (and everything after the cursor of every enabled endpoint): a replay from further back starts at the oldest event kept.",
  roles: DISPATCHER,
  request: {
    params: IdParam("webhook_id"),
    body: jsonBody(z.object({ after_event_id: z.number().int().min(0).optional(), since: z.string().max(40).optional() }).strict()),
  },
  responses: { 202: jsonResponse(z.object({ last_event_id: z.number().int() }), "Delivery restarts after `last_event_id`") },
});

async function loadWebhook(db: AppEnv["Variables"]["db"], companyId: number, id: number): Promise<WebhookRow> {
  const [row] = await db.select().from(webhooks).where(and(eq(webhooks.company_id, companyId), eq(webhooks.id, id)));
  if (!row) throw notFound("Webhook");
  return row;
}

export const webhookRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(createWebhook, async (c) => {
    const company = c.get("company");
    const body = c.req.valid("json");
    const problem = webhookUrlProblem(body.url, c.env);
    if (problem) throw unprocessable(`url ${problem}`, "url");
    const db = c.get("db");
    // Starts at the current end of the log: an endpoint gets what happens from now on (replay reaches back).
    const [row] = await db
      .insert(webhooks)
      .values({ company_id: company.id, url: body.url, event_types: body.event_types, description: body.description ?? null, enabled: body.enabled ?? true, secret: newSecret(), cursor: sql`coalesce((select max(id) from events where company_id = ${company.id}), 0)` })
      .returning();
    await companyStub(c.env, company.id).webhooksChanged();
    return c.json({ ...present(row), secret: row.secret }, 201);
  })
  .openapi(listWebhooks, async (c) => {
    const rows = await c.get("db").select().from(webhooks).where(eq(webhooks.company_id, c.get("company").id)).orderBy(webhooks.id);
    return c.json(pageOf(rows.map(present), c.req.valid("query")), 200);
  })
  .openapi(getWebhook, async (c) => c.json(present(await loadWebhook(c.get("db"), c.get("company").id, c.req.valid("param").webhook_id)), 200))
  .openapi(updateWebhook, async (c) => {
    const company = c.get("company");
    const db = c.get("db");
    const hook = await loadWebhook(db, company.id, c.req.valid("param").webhook_id);
    const body = c.req.valid("json");
    if (body.url !== undefined) {
      const problem = webhookUrlProblem(body.url, c.env);
      if (problem) throw unprocessable(`url ${problem}`, "url");
    }
    const enabling = body.enabled === true && !hook.enabled;
    const [row] = await db
      .update(webhooks)
      .set({ ...body, ...(enabling ? { failures: 0, retry_at: null, disabled_reason: null } : {}), ...(body.enabled === false ? { disabled_reason: null } : {}) })
      .where(eq(webhooks.id, hook.id))
      .returning();
    await companyStub(c.env, company.id).webhooksChanged();
    if (enabling) await c.env.WEBHOOK_QUEUE.send({ webhookId: hook.id, companyId: company.id });
    return c.json(present(row), 200);
  })
  .openapi(deleteWebhook, async (c) => {
    const company = c.get("company");
    const db = c.get("db");
    const hook = await loadWebhook(db, company.id, c.req.valid("param").webhook_id);
    await db.batch([db.delete(webhookDeliveries).where(eq(webhookDeliveries.webhook_id, hook.id)), db.delete(webhooks).where(eq(webhooks.id, hook.id))]);
    await companyStub(c.env, company.id).webhooksChanged();
    return c.body(null, 204);
  })
  .openapi(listDeliveries, async (c) => {
    const db = c.get("db");
    const hook = await loadWebhook(db, c.get("company").id, c.req.valid("param").webhook_id);
    const { page, results_per_page } = c.req.valid("query");
    const perPage = Math.min(results_per_page ?? 10, 100);
    const [rows, [{ count }]] = await Promise.all([
      db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhook_id, hook.id)).orderBy(desc(webhookDeliveries.id)).limit(perPage).offset((page - 1) * perPage),
      db.select({ count: sql<number>`count(*)` }).from(webhookDeliveries).where(eq(webhookDeliveries.webhook_id, hook.id)),
    ]);
    const objects = rows.map(({ company_id: _c, webhook_id: _w, ...d }) => d);
    return c.json({ num_results: count, objects, page, total_pages: Math.ceil(count / perPage) }, 200);
  })
  .openapi(replayWebhook, async (c) => {
    const company = c.get("company");
    const db = c.get("db");
    const hook = await loadWebhook(db, company.id, c.req.valid("param").webhook_id);
    const body = c.req.valid("json");
    if ((body.after_event_id === undefined) === (body.since === undefined)) throw unprocessable("Give exactly one of after_event_id or since", "after_event_id,since");
    const since = body.since === undefined ? undefined : normaliseDateTime(body.since);
    if (since === null) throw unprocessable("since must be an ISO 8601 date-time", "since");
    const cursor = await rewindWebhook(db, hook, { afterEventId: body.after_event_id, since });
    await c.env.WEBHOOK_QUEUE.send({ webhookId: hook.id, companyId: company.id });
    return c.json({ last_event_id: cursor }, 202);
  });
