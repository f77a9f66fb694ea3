import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/worker/index";
import { OPERATOR, call, createCompany } from "./helpers";

const outboxOf = async (slug: string) => (await call("GET", `/_operator/companies/${slug}/outbox`, { headers: OPERATOR })).body.objects;

describe("outbox delivery", () => {
  it("the notifications consumer sends queued messages once and marks them sent", async () => {
    const co = await createCompany();
    await co.api("POST", "/adduser/watcher", { body: { email: "w@example.com" } });
    const [message] = await outboxOf(co.slug);
    expect(message).toMatchObject({ channel: "email", to: "w@example.com", template: "invitation" });

    const batch = createMessageBatch("dispatch-notifications", [
      { id: "m1", timestamp: new Date(), attempts: 1, body: { outboxId: message.id, companyId: co.id } },
      { id: "m2", timestamp: new Date(), attempts: 2, body: { outboxId: message.id, companyId: co.id } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["m1", "m2"]);
    const [after] = await outboxOf(co.slug);
    expect(after.status).toBe("sent");
    expect(after.sent_at).toMatch(/Z$/);
  });

  it("a failing provider makes the message retry; its dead letter marks the still queued row failed with the last error", async () => {
    const co = await createCompany();
    await co.api("POST", "/adduser/watcher", { body: { email: "w2@example.com" } });
    const [message] = await outboxOf(co.slug);
    const batch = createMessageBatch("dispatch-notifications", [{ id: "m3", timestamp: new Date(), attempts: 3, body: { outboxId: message.id, companyId: co.id } }]);
    const ctx = createExecutionContext();
    // An http provider pointing nowhere reachable fails.
    await worker.queue(batch, { ...env, MAIL_PROVIDER: "http", MAIL_HTTP_URL: "http://127.0.0.1:9/relay" });
    const result = await getQueueResult(batch, ctx);
    expect(result.retryMessages).toEqual([expect.objectContaining({ msgId: "m3" })]);
    expect(result.explicitAcks).toEqual([]);
    const [retrying] = await outboxOf(co.slug);
    expect(retrying.status).toBe("queued");
    expect(retrying.last_error).toMatch(/\S/); // the attempt's error, kept for the operator

    // The last retry failed outside the send: the dead letter marks the row failed, with the last error, and keeps it.
    const dead = createMessageBatch("dispatch-notifications-dlq", [{ id: "d1", timestamp: new Date(), attempts: 1, body: { outboxId: message.id, companyId: co.id } }]);
    await worker.queue(dead, env);
    expect((await getQueueResult(dead, ctx)).explicitAcks).toEqual(["d1"]);
    const [failed] = await outboxOf(co.slug);
    expect(failed).toMatchObject({ id: message.id, status: "failed", sent_at: null });
    expect(failed.last_error).toBe(`The job failed on every retry and went to the dead-letter queue; last error: ${retrying.last_error}`);
  });

  it("a dead letter of a message that was sent meanwhile leaves it sent", async () => {
    const co = await createCompany();
    await co.api("POST", "/adduser/watcher", { body: { email: "w3@example.com" } });
    const [message] = await outboxOf(co.slug);
    const body = { outboxId: message.id, companyId: co.id };
    await worker.queue(createMessageBatch("dispatch-notifications", [{ id: "s1", timestamp: new Date(), attempts: 1, body }]), env);
    await worker.queue(createMessageBatch("dispatch-notifications-dlq", [{ id: "s2", timestamp: new Date(), attempts: 1, body }]), env);
    expect((await outboxOf(co.slug))[0]).toMatchObject({ status: "sent", last_error: null });
  });
});
