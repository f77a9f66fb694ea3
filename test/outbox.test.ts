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
});
