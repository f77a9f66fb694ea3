/** Worker entry: HTTP through Hono, queue consumers, and the Durable Object class. */
import { createApp } from "./app";
import type { Env, NotificationJob, RoutingJob } from "./env";
import { createDb } from "./db/client";
import { deliverOutboxMessage } from "./services/outbox";
import { runRouting } from "./services/routing";
import { runOneStepUpload } from "./services/uploads";
import { type WebhookJob, deliverWebhook, webhooksBehind } from "./services/webhooks";

export { CompanyCoordinator } from "../durable/company";

const app = createApp();

export const QUEUES = { notifications: "dispatch-notifications", routing: "dispatch-routing", webhooks: "dispatch-webhooks" } as const;

export default {
  fetch: app.fetch,

  async queue(batch: MessageBatch<unknown>, env: Env): Promise<void> {
    const db = createDb(env.DB);
    for (const message of batch.messages) {
      try {
        if (batch.queue === QUEUES.webhooks) {
          const run = await deliverWebhook(env, db, message.body as WebhookJob);
          // Order per endpoint: a failed event is retried before anything after it is sent.
          if (run.outcome === "later") message.retry({ delaySeconds: run.delaySeconds });
          else {
            if (run.outcome === "more") await env.WEBHOOK_QUEUE.send(message.body as WebhookJob);
            message.ack();
          }
          continue;
        }
        if (batch.queue.startsWith(QUEUES.notifications)) await deliverOutboxMessage(env, db, (message.body as NotificationJob).outboxId);
        else if (batch.queue.startsWith(QUEUES.routing)) {
          const job = message.body as RoutingJob;
          // The message id is the same on redelivery: a retry of this message may resume its own claim.
          if (job.kind === "upload") await runOneStepUpload(env, db, job.companyId, job.processId, message.id);
          else await runRouting(env, db, job.companyId, job.processId, message.id);
        } else throw new Error(`No consumer for queue ${batch.queue}`);
        message.ack();
      } catch (err) {
        console.error("queue message failed", batch.queue, message.id, err);
        // At-least-once delivery with backoff; the dead-letter queue keeps what finally fails.
        message.retry({ delaySeconds: Math.min(2 ** message.attempts, 300) });
      }
    }
  },

  /** Every few minutes: a delivery run for every webhook endpoint behind the event log (a lost queue message loses nothing). */
  async scheduled(_controller: ScheduledController, env: Env): Promise<void> {
    const behind = await webhooksBehind(createDb(env.DB));
    for (let i = 0; i < behind.length; i += 100) await env.WEBHOOK_QUEUE.sendBatch(behind.slice(i, i + 100).map((job) => ({ body: job })));
  },
} satisfies ExportedHandler<Env>;
