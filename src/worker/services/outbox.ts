import { and, eq, sql } from "drizzle-orm";
import { outbox } from "../db/schema";
import { nowIso } from "../lib/time";
import type { Db, Env } from "../env";

export interface OutgoingMessage {
  channel: "email" | "sms";
  to: string;
  subject?: string;
  body: string;
  template: string;
  data?: Record<string, unknown>;
}

/** The insert for a batch: outgoing messages are written with the change that causes them, atomically. */
export const outboxInsert = (db: Db, companyId: number, messages: OutgoingMessage[]) =>
  db
    .insert(outbox)
    .values(messages.map((m) => ({ company_id: companyId, ...m })))
    .returning({ id: outbox.id });

/** After the batch committed: hand the new messages to the notifications queue. */
export async function dispatchOutbox(env: Env, companyId: number, ids: { id: number }[]) {
  if (ids.length === 0) return;
  await env.NOTIFY_QUEUE.sendBatch(ids.map(({ id }) => ({ body: { outboxId: id, companyId } })));
}

/** Sends one outbox message through the configured provider and records the outcome. */
export async function deliverOutboxMessage(env: Env, db: Db, outboxId: number): Promise<void> {
  const [message] = await db.select().from(outbox).where(eq(outbox.id, outboxId));
  if (!message || message.status === "sent") return; // idempotent on redelivery
  const mailer = createMailer(env);
  await mailer.send(message);
  await db
    .update(outbox)
    .set({ status: "sent", sent_at: nowIso() })
    .where(eq(outbox.id, outboxId));
}

/** A delivery attempt failed and will be retried: the row keeps the error, still `pending`. */
export async function noteOutboxError(db: Db, outboxId: number, error: string): Promise<void> {
  await db.update(outbox).set({ error }).where(and(eq(outbox.id, outboxId), eq(outbox.status, "pending")));
}

/** The message failed its last retry: `failed`, with the reason and the last error. A sent message stays sent. */
export async function failOutboxMessage(db: Db, outboxId: number, reason: string): Promise<void> {
  await db
    .update(outbox)
    .set({ status: "failed", error: sql`${reason} || coalesce('; last error: ' || ${outbox.error}, '')` })
    .where(and(eq(outbox.id, outboxId), eq(outbox.status, "pending")));
}

interface Mailer {
  send(message: typeof outbox.$inferSelect): Promise<void>;
}

/**
 * `log` (embedded default, no network): the outbox row is the record and the
 * message is only logged. `http`: POSTs the message as JSON to MAIL_HTTP_URL
 * (an email/SMS relay of the deployment), with MAIL_HTTP_KEY as bearer token.
 */
function createMailer(env: Env): Mailer {
  if (env.MAIL_PROVIDER === "http" && env.MAIL_HTTP_URL) {
    return {
      async send(message) {
        const response = await fetch(env.MAIL_HTTP_URL!, {
          method: "POST",
          headers: { "content-type": "application/json", ...(env.MAIL_HTTP_KEY ? { authorization: `Bearer ${env.MAIL_HTTP_KEY}` } : {}) },
          body: JSON.stringify(message),
          signal: AbortSignal.timeout(10_000),
        });
        if (!response.ok) throw new Error(`mail relay answered ${response.status}`);
      },
    };
  }
  return {
    async send(message) {
      console.log(`[outbox] ${message.channel} to ${message.to}: ${message.subject ?? message.template}`);
    },
  };
}
