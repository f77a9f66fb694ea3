/** Worker entry: HTTP through Hono, queue consumers, and the Durable Object class. */
import type { NotificationJob, RoutingMessage, WebhookJob } from "../core/queues";
import type { Db } from "../core/context";
import { createApp } from "./app";
import type { Env } from "../core/env";
import { createDb } from "../core/db/client";
import { envForShard, placementOf, shardCount, shardsInMoves } from "../core/db/shards";
import { log, withQueueMessageContext } from "../core/lib/log";
import { deliverOutboxMessage, failOutboxMessage } from "../core/services/outbox";
import { companyStub } from "../core/services/live";
import { runRouting } from "../core/services/routing/run";
import { givePartUp, runRoutingPart } from "../core/services/routing/fan-out";
import { companySlug } from "../core/services/company-lookup";
import { runRetention } from "../core/services/retention";
import { runOneStepUpload } from "../core/services/uploads";
import { runBulkIntake } from "../core/services/bulk-intake";
import { deliverWebhook, webhooksBehind } from "../core/services/webhooks";

export { CompanyCoordinator } from "../durable/company";

const app = createApp();

export const QUEUES = { notifications: "dispatch-notifications", routing: "dispatch-routing", webhooks: "dispatch-webhooks" } as const;
/** Suffix of the dead-letter queues: what failed its last retry arrives there. */
const DEAD_LETTER = "-dlq";

interface Consumer {
  /** Does the job; a throw means the message is retried with backoff, `retryAfterSeconds` with that delay. */
  run(env: Env, db: Db, body: unknown, messageId: string): Promise<void | { retryAfterSeconds: number }>;
  /** After a failed attempt that will be retried: keeps the error where people see it (the outbox records its own). */
  noteError?(env: Env, db: Db, body: unknown, error: string): Promise<void>;
  /** The job failed its last retry (dead-letter queue): recorded as failed, never dropped. */
  giveUp(env: Env, db: Db, body: unknown): Promise<void>;
}

/** Delay of a queue message whose company is moving between shards (docs/operations/shards.md, the runbook). */
const MOVING_RETRY_SECONDS = 120;

const GAVE_UP = "The job failed on every retry and went to the dead-letter queue";

const consumers: Record<keyof typeof QUEUES, Consumer> = {
  notifications: {
    run: (env, db, body) => deliverOutboxMessage(env, db, (body as NotificationJob).outboxId),
    giveUp: (_env, db, body) => failOutboxMessage(db, (body as NotificationJob).outboxId, GAVE_UP),
  },
  routing: {
    async run(env, db, body, messageId) {
      const job = body as RoutingMessage;
      // The message id is the same on redelivery: a retry of this message may resume its own claim.
      if (job.kind === "upload") await runOneStepUpload(env, db, job, messageId);
      else if (job.kind === "bulk") await runBulkIntake(env, db, job, messageId);
      else if (job.kind === "routing-part") await runRoutingPart(env, job);
      else if (job.kind === "routing-merge") await runRouting(env, db, job.companyId, job.processId, job.attempt, job.apiBase, "merge");
      else await runRouting(env, db, job.companyId, job.processId, messageId, job.apiBase, "fan-out");
    },
    noteError: (env, _db, body, error) => companyStub(env, (body as RoutingMessage).companyId).noteFailedAttempt((body as RoutingMessage).processId, error),
    async giveUp(env, _db, body) {
      const job = body as RoutingMessage;
      // A part that failed every retry keeps its initial tours; the plan still finishes.
      if (job.kind === "routing-part") await givePartUp(env, job);
      else await companyStub(env, job.companyId).failProcess(job.processId, GAVE_UP);
    },
  },
  webhooks: {
    async run(env, db, body) {
      const run = await deliverWebhook(env, db, body as WebhookJob);
      // Order per endpoint: a failed event is retried before anything after it is sent.
      if (run.outcome === "later") return { retryAfterSeconds: run.delaySeconds };
      if (run.outcome === "more") await env.WEBHOOK_QUEUE.send(body as WebhookJob);
    },
    // No dead-letter queue: the cron sweep restarts any endpoint left behind the event log.
    giveUp: async () => undefined,
  },
};

/** The consumer of a queue, and whether it is that queue's dead-letter queue (`dispatch-routing-dlq` also starts with `dispatch-routing`). */
function consumerOf(queue: string): { consumer: Consumer; dead: boolean } {
  const dead = queue.endsWith(DEAD_LETTER);
  const base = dead ? queue.slice(0, -DEAD_LETTER.length) : queue;
  const name = (Object.keys(QUEUES) as (keyof typeof QUEUES)[]).find((k) => base.startsWith(QUEUES[k]));
  if (!name) throw new Error(`No consumer for queue ${queue}`);
  return { consumer: consumers[name], dead };
}

/** Runs one message and settles it: acked when done, retried (with backoff, or when the job asks) when it failed. */
async function consume(env: Env, db: Db, consumer: Consumer, dead: boolean, message: Message<unknown>): Promise<"done" | "retry"> {
  try {
    const later = dead ? await consumer.giveUp(env, db, message.body) : await consumer.run(env, db, message.body, message.id);
    if (later) {
      message.retry({ delaySeconds: later.retryAfterSeconds });
      return "retry";
    }
    message.ack();
    return "done";
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    log("error", "queue message failed", { attempts: message.attempts, error: err });
    if (!dead) await consumer.noteError?.(env, db, message.body, error).catch((e: unknown) => log("error", "could not record the error", { error: e }));
    // At-least-once delivery with backoff; the dead-letter queue keeps what finally fails.
    message.retry({ delaySeconds: Math.min(2 ** message.attempts, 300) });
    return "retry";
  }
}

export default {
  fetch: app.fetch,

  /** Each message with its log context (company, process id), ending with one line per message as a request ends with its access line. */
  async queue(batch: MessageBatch<unknown>, env: Env): Promise<void> {
    const { consumer, dead } = consumerOf(batch.queue);
    for (const message of batch.messages) {
      const job = (message.body ?? {}) as { companyId?: unknown; processId?: unknown };
      const processId = typeof job.processId === "string" ? job.processId : null;
      const started = Date.now();
      // Every message works on its company's shard; a company moving between shards gets its messages later.
      const placement = typeof job.companyId === "number" ? await placementOf(env, job.companyId) : { shard: 0, readOnly: false };
      const shardEnv = envForShard(env, placement.shard);
      const db = createDb(shardEnv.DB);
      await withQueueMessageContext(await companySlug(db, job.companyId), { queue: batch.queue, message_id: message.id, process_id: processId }, async () => {
        if (placement.readOnly) {
          message.retry({ delaySeconds: MOVING_RETRY_SECONDS });
          log("info", "queue message", { outcome: "moving", attempts: message.attempts, dead_letter: dead, shard: placement.shard });
          return;
        }
        const outcome = await consume(shardEnv, db, consumer, dead, message);
        log("info", "queue message", { outcome, attempts: message.attempts, dead_letter: dead, duration_ms: Date.now() - started });
      });
    }
  },

  /**
   * Every few minutes, on every shard: a delivery run for every webhook endpoint behind the event log (a lost queue message
   * loses nothing), then a bounded retention run (services/retention.ts) after the webhooks have moved their cursors on.
   * A shard a company is moving from or to skips its retention (it would change rows being copied and verified).
   */
  async scheduled(_controller: ScheduledController, env: Env): Promise<void> {
    const moving = await shardsInMoves(env);
    for (let shard = 0; shard < shardCount(env); shard++) {
      const shardEnv = envForShard(env, shard);
      const db = createDb(shardEnv.DB);
      // Rows of a company copied here by a move that has not switched yet belong to the other shard.
      const behind: WebhookJob[] = [];
      for (const job of await webhooksBehind(db)) if ((await placementOf(env, job.companyId)).shard === shard) behind.push(job);
      for (let i = 0; i < behind.length; i += 100) await env.WEBHOOK_QUEUE.sendBatch(behind.slice(i, i + 100).map((job) => ({ body: job })));
      if (moving.has(shard)) log("info", "retention", { shard, skipped: "a company is moving from or to this shard" });
      else await runRetention(shardEnv, db);
    }
  },
} satisfies ExportedHandler<Env>;
