/**
 * The outbox: every outgoing message is written in the same D1 batch as the
 * change that causes it, then handed to the notifications queue, whose
 * consumer renders it (message-templates.ts) and sends it through the
 * configured provider (notify-providers.ts). Rows go `queued` -> `sent`, or
 * `failed` with the reason once the attempts are used up; nothing is dropped.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../context";
import { parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js/min";
import { companies, outbox } from "../db/schema";
import { log } from "../lib/log";
import { nowIso } from "../lib/time";
import type { Env } from "../env";
import type { Language } from "./company-settings";
import { renderMessage } from "./message-templates";
import { emailProvider, smsProvider } from "./notify-providers";

export interface OutgoingMessage {
  channel: "email" | "sms";
  /** Email address, or a phone number as entered (normalised to E.164 here). */
  to: string;
  /** Message kind: the template that words it (message-templates.ts). */
  template: string;
  data?: Record<string, unknown>;
  /** Wording of a kind without a template. */
  subject?: string;
  body?: string;
  /** ISO country of a phone number written without its country code (default DE). */
  country?: string | null;
}

/**
 * Tries of one message before it is `failed`: the first delivery and the
 * queue's retries (`max_retries = 5` of the notifications consumer in wrangler.toml).
 */
export const OUTBOX_MAX_ATTEMPTS = 6;

/** An SMS recipient in E.164, or why it cannot be one. */
export function normalisePhone(raw: string, country?: string | null): { e164: string } | { error: string } {
  const region = (country ?? "DE").toUpperCase() as CountryCode;
  const parsed = parsePhoneNumberFromString(raw.trim(), region);
  if (!parsed || !parsed.isValid()) return { error: `"${raw}" is not a valid phone number${raw.trim().startsWith("+") ? "" : ` in ${region}`}` };
  return { e164: parsed.number };
}

/**
 * The insert for a batch: outgoing messages are written with the change that
 * causes them, atomically. An SMS to a number that cannot be dialled is
 * recorded as `failed` with the reason at once.
 */
export const outboxInsert = (db: Db, companyId: number, messages: OutgoingMessage[]) =>
  db
    .insert(outbox)
    .values(
      messages.map(({ country, ...m }) => {
        if (m.channel !== "sms") return { company_id: companyId, ...m };
        const phone = normalisePhone(m.to, country);
        return "e164" in phone ? { company_id: companyId, ...m, to: phone.e164 } : { company_id: companyId, ...m, status: "failed" as const, last_error: phone.error };
      }),
    )
    .returning({ id: outbox.id, status: outbox.status });

/** After the batch committed: hand the new queued messages to the notifications queue. */
export async function dispatchOutbox(env: Env, companyId: number, rows: { id: number; status?: string }[]) {
  const queued = rows.filter((r) => r.status === undefined || r.status === "queued");
  if (queued.length === 0) return;
  await env.NOTIFY_QUEUE.sendBatch(queued.map(({ id }) => ({ body: { outboxId: id, companyId } })));
}

/**
 * Renders and sends one outbox message and records the outcome. A failure is
 * recorded (attempts, last error) and thrown so the queue retries with
 * backoff, until the last attempt marks the row `failed`. Sent and failed
 * rows are left alone, so a redelivered message is harmless.
 */
export async function deliverOutboxMessage(env: Env, db: Db, outboxId: number): Promise<void> {
  const [row] = await db
    .select({ message: outbox, companyname: companies.companyname, timezone: companies.timezone, language: companies.language })
    .from(outbox)
    .innerJoin(companies, eq(companies.id, outbox.company_id))
    .where(eq(outbox.id, outboxId));
  if (!row || row.message.status !== "queued") return;
  const { message } = row;
  const rendered = renderMessage(message.template, message.data ?? {}, { companyname: row.companyname, timezone: row.timezone, language: row.language as Language }) ?? {
    subject: message.subject ?? message.template,
    text: message.body ?? "",
    html: `<pre>${(message.body ?? "").replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!)}</pre>`,
  };
  const content = { subject: rendered.subject, body: rendered.text, html: rendered.html };
  const attempts = message.attempts + 1;
  try {
    const provider = message.channel === "sms" ? smsProvider(env) : emailProvider(env);
    const { messageId } = await provider.send({ to: message.to, fromName: row.companyname, ...rendered, idempotencyKey: `outbox-${message.id}` });
    await db.update(outbox).set({ ...content, status: "sent", sent_at: nowIso(), attempts, last_error: null, provider_message_id: messageId || null }).where(eq(outbox.id, outboxId));
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    const final = attempts >= OUTBOX_MAX_ATTEMPTS;
    await db.update(outbox).set({ ...content, attempts, last_error: error, status: final ? "failed" : "queued" }).where(eq(outbox.id, outboxId));
    if (!final) throw err;
    log("error", "outbox message failed for good", { outbox_id: outboxId, attempts, error });
  }
}

/**
 * The message's job went to the dead-letter queue (an error outside the
 * send, e.g. D1, on its last retry): a still `queued` row becomes `failed`
 * with the reason and its last error. Sent and failed rows stay as they are.
 */
export async function failOutboxMessage(db: Db, outboxId: number, reason: string): Promise<void> {
  await db
    .update(outbox)
    .set({ status: "failed", last_error: sql`${reason} || coalesce('; last error: ' || ${outbox.last_error}, '')` })
    .where(and(eq(outbox.id, outboxId), eq(outbox.status, "queued")));
}
