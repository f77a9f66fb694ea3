/**
 * Webhook endpoints of a company (beyond the interface documents): register,
 * list, change, remove, inspect deliveries, replay. Dispatchers only.
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { pageOf } from "../../core/db/list";
import { EVENT_PATTERN, EVENT_TYPES } from "../../core/services/events";
import { createWebhook, deleteWebhook, listWebhooks, loadWebhook, presentWebhook, replayWebhook, updateWebhook, webhookAttempts } from "../../core/services/webhook-endpoints";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { IdParam, ListQuery, apiRoute, envelope, jsonBody, jsonResponse } from "../openapi";

const DISPATCHER = ["dispatcher"] as const;

const EventTypes = z
  .array(z.string().max(40).regex(EVENT_PATTERN, `one of ${EVENT_TYPES.join(", ")}, a group such as route.*, or *`))
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

const Url = z.string().max(2000).openapi({ example: "https://erp.example.com/hooks/dispatch", description: "https only (http and private addresses only with WEBHOOK_ALLOW_PRIVATE in local development)" });

const postWebhook = apiRoute({
  method: "post",
  path: "/webhook",
  operationId: "createWebhook",
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

const getWebhooks = apiRoute({
  method: "get",
  path: "/webhook",
  operationId: "listWebhooks",
  tags: ["Webhooks"],
  summary: "Webhook endpoints",
  roles: DISPATCHER,
  request: { query: ListQuery.pick({ page: true, results_per_page: true }) },
  responses: { 200: jsonResponse(envelope(WebhookSchema, "WebhookList"), "Endpoints, oldest first") },
});

const getWebhookRoute = apiRoute({
  method: "get",
  path: "/webhook/{webhook_id}",
  operationId: "getWebhook",
  tags: ["Webhooks"],
  summary: "One webhook endpoint",
  roles: DISPATCHER,
  request: { params: IdParam("webhook_id") },
  responses: { 200: jsonResponse(WebhookSchema, "The endpoint") },
});

const patchWebhook = apiRoute({
  method: "patch",
  path: "/webhook/{webhook_id}",
  operationId: "updateWebhook",
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

const deleteWebhookRoute = apiRoute({
  method: "delete",
  path: "/webhook/{webhook_id}",
  operationId: "deleteWebhook",
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

const getAttempts = apiRoute({
  method: "get",
  path: "/webhook/{webhook_id}/deliveries",
  operationId: "listWebhookDeliveries",
  tags: ["Webhooks"],
  summary: "Delivery attempts of an endpoint, newest first",
  description: "Attempts are kept 30 days.",
  roles: DISPATCHER,
  request: { params: IdParam("webhook_id"), query: ListQuery.pick({ page: true, results_per_page: true }) },
  responses: { 200: jsonResponse(envelope(DeliverySchema, "WebhookDeliveryList"), "Attempts") },
});

const postReplay = apiRoute({
  method: "post",
  path: "/webhook/{webhook_id}/replay",
  operationId: "replayWebhookDelivery",
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

export const webhookRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(postWebhook, async (c) => c.json(await createWebhook(c.env, c.get("db"), c.get("company").id, c.req.valid("json")), 201))
  .openapi(getWebhooks, async (c) => c.json(pageOf(await listWebhooks(c.get("db"), c.get("company").id), c.req.valid("query")), 200))
  .openapi(getWebhookRoute, async (c) => c.json(presentWebhook(await loadWebhook(c.get("db"), c.get("company").id, c.req.valid("param").webhook_id)), 200))
  .openapi(patchWebhook, async (c) => c.json(await updateWebhook(c.env, c.get("db"), c.get("company").id, c.req.valid("param").webhook_id, c.req.valid("json")), 200))
  .openapi(deleteWebhookRoute, async (c) => {
    await deleteWebhook(c.env, c.get("db"), c.get("company").id, c.req.valid("param").webhook_id);
    return c.body(null, 204);
  })
  .openapi(getAttempts, async (c) => {
    const { page, results_per_page } = c.req.valid("query");
    return c.json(await webhookAttempts(c.get("db"), c.get("company").id, c.req.valid("param").webhook_id, page, results_per_page), 200);
  })
  .openapi(postReplay, async (c) => c.json({ last_event_id: await replayWebhook(c.env, c.get("db"), c.get("company").id, c.req.valid("param").webhook_id, c.req.valid("json")) }, 202));
