/**
 * Webhooks: events of the log POSTed to a company's endpoints, in log order
 * per endpoint, at least once, signed per the Standard Webhooks
 * specification (`webhook-id`, `webhook-timestamp`, `webhook-signature`:
 * `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the base64 key of
 * `whsec_…`). A delivery run holds a lease on its endpoint, sends what lies
 * after the endpoint's cursor and moves the cursor on each success; a failure
 * ends the run and the queue retries with backoff. After `WEBHOOK_MAX_FAILURES`
 * failures in a row the endpoint is disabled and the dispatchers are emailed.
 * Nothing is lost when a queue send fails: the log is the source, and the
 * periodic sweep starts a run for every endpoint behind the log.
 */
import { and, asc, desc, eq, gt, isNull, lt, lte, or, sql } from "drizzle-orm";
import type { Db } from "../context";
import { events, users, webhookDeliveries, webhooks } from "../db/schema";
import type { Env } from "../env";
import { nowIso } from "../lib/time";
import { wants } from "./events";
import { dispatchOutbox, outboxInsert } from "./outbox";
import type { WebhookJob } from "../queues";

export type WebhookRow = typeof webhooks.$inferSelect;

const DEFAULT_MAX_FAILURES = 30;
/** Events sent per run before the run hands over to a fresh queue message. */
const RUN_LIMIT = 50;
const LEASE_SECONDS = 60;
const TIMEOUT_MS = 10_000;

export const maxFailures = (env: Env) => {
  const configured = Number(env.WEBHOOK_MAX_FAILURES);
  return Number.isInteger(configured) && configured > 0 ? configured : DEFAULT_MAX_FAILURES;
};

/** Retry delay after the n-th failure in a row: 10 s doubling, at most an hour (30 failures ≈ a day). */
export const retryDelaySeconds = (failures: number) => Math.min(10 * 2 ** Math.max(failures - 1, 0), 3600);

const base64 = (bytes: ArrayBuffer | Uint8Array) => btoa(String.fromCharCode(...new Uint8Array(bytes)));

export function newSecret(): string {
  return `whsec_${base64(crypto.getRandomValues(new Uint8Array(24)))}`;
}

/** The `webhook-signature` value of a message (Standard Webhooks, v1). */
export async function signWebhook(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const raw = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return `v1,${base64(mac)}`;
}

/**
 * Why a URL may not receive webhooks, or null. Deployed, only https to
 * public hosts (no loopback, private, link-local or carrier-grade NAT
 * addresses, no `localhost` / `.local` / `.internal` names): a webhook must not
 * reach into the network it is sent from. `WEBHOOK_ALLOW_PRIVATE=true`
 * (local development only) lifts this.
 */
export function webhookUrlProblem(url: string, env: Env): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "not a URL";
  }
  if (parsed.username || parsed.password) return "credentials in the URL are not allowed";
  if (env.WEBHOOK_ALLOW_PRIVATE === "true") return parsed.protocol === "https:" || parsed.protocol === "http:" ? null : "must be http(s)";
  if (parsed.protocol !== "https:") return "must be https";
  const host = parsed.hostname.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  if (host === "localhost" || /\.(localhost|local|internal|home\.arpa)$/.test(host) || !host.includes(".") && !host.includes(":")) return "must be a public host";
  if (isPrivateAddress(host)) return "must not be a private, loopback or link-local address";
  return null;
}

function isPrivateAddress(host: string): boolean {
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return a === 0 || a === 10 || a === 127 || a >= 224 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127);
  }
  if (!host.includes(":")) return false;
  // IPv6 (the URL parser has normalised it): loopback, unspecified, unique local, link-local, and IPv4-mapped private.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host) ?? /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped) {
    const dotted = mapped.length === 2 ? mapped[1] : [parseInt(mapped[1], 16) >> 8, parseInt(mapped[1], 16) & 255, parseInt(mapped[2], 16) >> 8, parseInt(mapped[2], 16) & 255].join(".");
    return isPrivateAddress(dotted);
  }
  return host === "::1" || host === "::" || /^f[cd][0-9a-f]{2}:/.test(host) || /^fe[89ab][0-9a-f]:/.test(host);
}

/** The body POSTed for an event (Standard Webhooks' recommended shape). */
export const webhookBody = (event: typeof events.$inferSelect) => JSON.stringify({ type: event.type, timestamp: event.created_at, event_id: event.id, data: event.payload });

/** Starts a delivery run of each enabled endpoint of the company that wants this event type. */
export async function kickWebhooks(env: Env, endpoints: { id: number; event_types: string[] }[], companyId: number, type: string): Promise<void> {
  const wanted = endpoints.filter((w) => wants(w.event_types, type));
  if (wanted.length) await env.WEBHOOK_QUEUE.sendBatch(wanted.map((w) => ({ body: { webhookId: w.id, companyId } satisfies WebhookJob })));
}

/** Enabled endpoints of a company with their subscriptions (the coordinator caches them). */
export const enabledWebhooks = (db: Db, companyId: number) =>
  db.select({ id: webhooks.id, event_types: webhooks.event_types }).from(webhooks).where(and(eq(webhooks.company_id, companyId), eq(webhooks.enabled, true)));

/**
 * One delivery run of an endpoint. Answers `done`, `more` (the run limit was
 * reached: go on in a fresh run) or `later` with a delay (this run failed and
 * backs off, an earlier failure's backoff still holds, or another run holds
 * the lease).
 */
export async function deliverWebhook(env: Env, db: Db, job: WebhookJob): Promise<{ outcome: "done" | "more" } | { outcome: "later"; delaySeconds: number }> {
  const now = Math.floor(Date.now() / 1000);
  const [hook] = await db
    .update(webhooks)
    .set({ lease_until: now + LEASE_SECONDS })
    .where(
      and(
        eq(webhooks.id, job.webhookId),
        eq(webhooks.company_id, job.companyId),
        or(isNull(webhooks.lease_until), lt(webhooks.lease_until, now)),
        or(isNull(webhooks.retry_at), lte(webhooks.retry_at, now)),
      ),
    )
    .returning();
  if (!hook) {
    const [other] = await db.select({ retry_at: webhooks.retry_at }).from(webhooks).where(eq(webhooks.id, job.webhookId));
    if (!other) return { outcome: "done" };
    // Backing off after a failure, or another run holds the lease: come back when it may be this one's turn.
    return { outcome: "later", delaySeconds: other.retry_at !== null && other.retry_at > now ? other.retry_at - now + 1 : 5 };
  }
  try {
    if (!hook.enabled) return { outcome: "done" };
    const pending = await db
      .select()
      .from(events)
      .where(and(eq(events.company_id, hook.company_id), gt(events.id, hook.cursor)))
      .orderBy(asc(events.id))
      .limit(RUN_LIMIT);
    let cursor = hook.cursor;
    for (const event of pending) {
      if (wants(hook.event_types, event.type)) {
        const result = await postEvent(env, db, hook, event);
        if (!result.ok) {
          await db.update(webhooks).set({ cursor }).where(eq(webhooks.id, hook.id));
          return await recordFailure(env, db, hook, now);
        }
      }
      cursor = event.id;
    }
    await db.update(webhooks).set({ cursor, failures: 0, retry_at: null }).where(eq(webhooks.id, hook.id));
    return { outcome: pending.length === RUN_LIMIT ? "more" : "done" };
  } finally {
    await db.update(webhooks).set({ lease_until: null }).where(eq(webhooks.id, hook.id));
  }
}

async function postEvent(env: Env, db: Db, hook: WebhookRow, event: typeof events.$inferSelect): Promise<{ ok: boolean }> {
  const [previous] = await db
    .select({ attempt: webhookDeliveries.attempt })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.webhook_id, hook.id), eq(webhookDeliveries.event_id, event.id)))
    .orderBy(desc(webhookDeliveries.id))
    .limit(1);
  const attempt = (previous?.attempt ?? 0) + 1;
  const started = Date.now();
  let statusCode: number | null = null;
  let error: string | null = webhookUrlProblem(hook.url, env);
  if (!error) {
    const id = `evt_${event.id}`;
    const timestamp = Math.floor(started / 1000);
    const body = webhookBody(event);
    try {
      const response = await fetch(hook.url, {
        method: "POST",
        // A redirect could lead anywhere, including inside: it counts as a failure.
        redirect: "manual",
        headers: { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": await signWebhook(hook.secret, id, timestamp, body) },
        body,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      statusCode = response.status;
      await response.body?.cancel();
      if (response.status < 200 || response.status > 299) error = `answered ${response.status}`;
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
  }
  await db.insert(webhookDeliveries).values({
    company_id: hook.company_id,
    webhook_id: hook.id,
    event_id: event.id,
    event_type: event.type,
    attempt,
    status_code: statusCode,
    latency_ms: Date.now() - started,
    error,
    succeeded: error === null,
  });
  return { ok: error === null };
}

/** Counts a failure; at the limit the endpoint is disabled and the company's dispatchers get an email. */
async function recordFailure(env: Env, db: Db, hook: WebhookRow, now: number): Promise<{ outcome: "later"; delaySeconds: number } | { outcome: "done" }> {
  const failures = hook.failures + 1;
  if (failures < maxFailures(env)) {
    const delaySeconds = retryDelaySeconds(failures);
    await db.update(webhooks).set({ failures, retry_at: now + delaySeconds }).where(eq(webhooks.id, hook.id));
    return { outcome: "later", delaySeconds };
  }
  const reason = `disabled after ${failures} failed deliveries in a row (${nowIso()})`;
  const dispatchers = await db
    .select({ email: users.email })
    .from(users)
    .where(and(eq(users.company_id, hook.company_id), eq(users.usertype, "dispatcher")));
  const messages = dispatchers.map(({ email }) => ({ channel: "email" as const, to: email, template: "webhook_disabled", data: { webhook_id: hook.id, url: hook.url, failures } }));
  const [, queued] = await db.batch([
    db.update(webhooks).set({ failures, enabled: false, disabled_reason: reason }).where(eq(webhooks.id, hook.id)),
    messages.length ? outboxInsert(db, hook.company_id, messages) : db.select({ id: webhooks.id }).from(webhooks).where(sql`0`),
  ] as const);
  await dispatchOutbox(env, hook.company_id, queued);
  return { outcome: "done" };
}

/** Endpoints behind the log (an event after their cursor), for the periodic sweep. */
export async function webhooksBehind(db: Db): Promise<WebhookJob[]> {
  const rows = await db
    .select({ webhookId: webhooks.id, companyId: webhooks.company_id })
    .from(webhooks)
    .where(and(eq(webhooks.enabled, true), sql`exists (select 1 from ${events} where ${events.company_id} = ${webhooks.company_id} and ${events.id} > ${webhooks.cursor})`));
  return rows;
}

/** Moves an endpoint's cursor back so delivery starts again after `afterEventId` (or at the first event at/after `since`). */
export async function rewindWebhook(db: Db, hook: WebhookRow, from: { afterEventId?: number; since?: string }): Promise<number> {
  let cursor = from.afterEventId ?? 0;
  if (from.since !== undefined) {
    const [last] = await db
      .select({ id: events.id })
      .from(events)
      .where(and(eq(events.company_id, hook.company_id), lt(events.created_at, from.since)))
      .orderBy(desc(events.id))
      .limit(1);
    cursor = last?.id ?? 0;
  }
  await db.update(webhooks).set({ cursor, failures: 0, retry_at: null }).where(eq(webhooks.id, hook.id));
  return cursor;
}
