import { createScheduledController, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../src/worker/index";
import { BATCH, EVENT_REPLAY_DAYS, MAX_BATCHES, OUTBOX_DAYS, WEBHOOK_DELIVERY_DAYS } from "../src/worker/services/retention";
import { type TestCompany, createCompany, insertAddress } from "./helpers";

const DAY = 86_400_000;
/** The webhook queue of the cron run, kept out of the way: these tests are about retention. */
const quietQueue = { send: async () => undefined, sendBatch: async () => undefined };

/** A cron run with the clock `days` ahead of now; returns the retention log lines it wrote. */
async function cronAfterDays(days: number): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = [];
  const spy = vi.spyOn(console, "log").mockImplementation((line: unknown) => {
    const parsed = JSON.parse(String(line));
    if (parsed.msg === "retention") lines.push(parsed);
  });
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + days * DAY);
  try {
    await worker.scheduled(createScheduledController(), { ...env, WEBHOOK_QUEUE: quietQueue as never });
  } finally {
    vi.useRealTimers();
    spy.mockRestore();
  }
  return lines;
}

const count = async (table: string, companyId: number) => (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE company_id = ?`).bind(companyId).first<{ n: number }>())!.n;
const eventIds = async (companyId: number) => (await env.DB.prepare("SELECT id FROM events WHERE company_id = ? ORDER BY id").bind(companyId).all<{ id: number }>()).results.map((r) => r.id);

async function newDeliveries(co: TestCompany, n: number) {
  const address = await insertAddress(co.id, { lng: 13.41, lat: 52.5 });
  for (let i = 0; i < n; i++) expect((await co.api("POST", "/delivery", { body: { deliverylocation_id: address } })).status).toBe(201);
}

async function webhookWithDeliveries(co: TestCompany, n: number): Promise<number> {
  const hook = await co.api("POST", "/webhook", { body: { url: "https://receiver.example/hook", event_types: ["delivery.*"] } });
  expect(hook.status).toBe(201);
  await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO webhook_deliveries (company_id, webhook_id, event_id, event_type, attempt, status_code, latency_ms, succeeded) SELECT ?, ?, i, 'delivery.updated', 1, 200, 50, 1 FROM n`,
  )
    .bind(n, co.id, hook.body.id)
    .run();
  return hook.body.id;
}

afterEach(() => vi.useRealTimers());

describe("retention by the cron trigger", () => {
  it(`outbox rows go after ${OUTBOX_DAYS} days and webhook delivery logs after ${WEBHOOK_DELIVERY_DAYS}, not before`, async () => {
    const co = await createCompany();
    for (let i = 0; i < 3; i++) expect((await co.api("POST", "/adduser/watcher", { body: { email: `w${i}@retention.example` } })).status).toBe(201);
    await webhookWithDeliveries(co, 5);
    const outboxBefore = await count("outbox", co.id);
    expect(outboxBefore).toBeGreaterThanOrEqual(3);

    await cronAfterDays(Math.min(OUTBOX_DAYS, WEBHOOK_DELIVERY_DAYS) - 1);
    expect(await count("outbox", co.id)).toBe(outboxBefore);
    expect(await count("webhook_deliveries", co.id)).toBe(5);

    const lines = await cronAfterDays(Math.max(OUTBOX_DAYS, WEBHOOK_DELIVERY_DAYS) + 1);
    expect(await count("outbox", co.id)).toBe(0);
    expect(await count("webhook_deliveries", co.id)).toBe(0);
    expect(lines).toContainEqual(expect.objectContaining({ level: "info", table: "outbox", done: true }));
    expect(lines).toContainEqual(expect.objectContaining({ table: "webhook_deliveries", done: true }));
  });

  it(`the event log is pruned after ${EVENT_REPLAY_DAYS} days, never past an enabled endpoint's cursor`, async () => {
    const watched = await createCompany();
    const free = await createCompany();
    const hook = await webhookWithDeliveries(watched, 0);
    await newDeliveries(watched, 4);
    await newDeliveries(free, 2);
    const ids = await eventIds(watched.id);
    expect(ids).toHaveLength(4);
    // The endpoint has delivered the first two events.
    await env.DB.prepare("UPDATE webhooks SET cursor = ? WHERE id = ?").bind(ids[1], hook).run();

    await cronAfterDays(EVENT_REPLAY_DAYS - 1);
    expect(await eventIds(watched.id)).toEqual(ids);
    expect(await count("events", free.id)).toBe(2);

    const lines = await cronAfterDays(EVENT_REPLAY_DAYS + 1);
    expect(await eventIds(watched.id)).toEqual(ids.slice(2));
    expect(await count("events", free.id)).toBe(0);
    expect(lines).toContainEqual(expect.objectContaining({ table: "events", company_slug: watched.slug, deleted: 2, done: true }));

    // A disabled endpoint holds nothing back.
    await env.DB.prepare("UPDATE webhooks SET enabled = 0 WHERE id = ?").bind(hook).run();
    await cronAfterDays(EVENT_REPLAY_DAYS + 1);
    expect(await eventIds(watched.id)).toEqual([]);
  });

  it("a run deletes in bounded batches and the next run goes on where it stopped", async () => {
    const co = await createCompany();
    const perRun = BATCH * MAX_BATCHES;
    await cronAfterDays(WEBHOOK_DELIVERY_DAYS + 1); // what earlier tests' endpoints logged goes first
    await webhookWithDeliveries(co, perRun + 300);

    const first = await cronAfterDays(WEBHOOK_DELIVERY_DAYS + 1);
    expect(await count("webhook_deliveries", co.id)).toBe(300);
    expect(first).toContainEqual(expect.objectContaining({ table: "webhook_deliveries", deleted: perRun, done: false }));

    const second = await cronAfterDays(WEBHOOK_DELIVERY_DAYS + 1);
    expect(await count("webhook_deliveries", co.id)).toBe(0);
    expect(second).toContainEqual(expect.objectContaining({ table: "webhook_deliveries", deleted: 300, done: true }));

    // Nothing left to do: a run changes nothing and says nothing.
    expect((await cronAfterDays(WEBHOOK_DELIVERY_DAYS + 1)).filter((l) => l.table === "webhook_deliveries")).toEqual([]);
  });
});
