import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../src/worker/index";
import { OPERATOR, type TestCompany, call, createCompany } from "./helpers";

/** Every line written to the console while `fn` runs. */
async function captureLines(fn: () => Promise<unknown>) {
  const lines: string[] = [];
  for (const method of ["log", "warn", "error"] as const) vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
  await fn();
  return lines;
}

describe("structured request logs", () => {
  let co: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
  });
  afterEach(() => vi.restoreAllMocks());

  it("each request line is JSON with the request id (echoed in X-Request-Id) and the company slug", async () => {
    let res!: Awaited<ReturnType<typeof co.api>>;
    const lines = await captureLines(async () => (res = await co.api("GET", "/company")));
    const id = res.headers.get("X-Request-Id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const records = lines.map((l) => JSON.parse(l));
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) expect(record).toMatchObject({ request_id: id, company: co.slug });
    expect(records).toContainEqual(expect.objectContaining({ msg: "request", method: "GET", path: `/${co.slug}/api/company`, status: 200 }));
  });

  it("a client's request id is kept; a malformed one is replaced", async () => {
    const kept = await call("GET", `/${co.slug}/api/company`, { token: co.dispatcher.token, headers: { "X-Request-Id": "trace-42.a" } });
    expect(kept.headers.get("X-Request-Id")).toBe("trace-42.a");
    const replaced = await call("GET", `/${co.slug}/api/company`, { token: co.dispatcher.token, headers: { "X-Request-Id": "bad id\"{" } });
    expect(replaced.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("error answers carry the request id too", async () => {
    const res = await call("GET", `/${co.slug}/api/company`, { token: "not-a-token" });
    expect(res.status).toBe(403);
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
  });

  it("no line carries a token or a password, whether sent in a header, the query or the body", async () => {
    const driver = await co.user("driver");
    const lines = await captureLines(async () => {
      await call("POST", `/${co.slug}/auth`, { body: { email: co.dispatcher.email, password: co.dispatcher.password } });
      await call("POST", `/${co.slug}/auth`, { body: { email: co.dispatcher.email, password: "wrong password" } });
      await co.api("GET", "/company");
      await call("GET", `/${co.slug}/api/ws?access_token=${driver.token}`, { headers: { Upgrade: "websocket" } });
      await call("POST", `/${co.slug}/api/drivertracking`, { token: driver.token, body: { position: { type: "Point", coordinates: [13.4, 52.5] } } });
    });
    expect(lines.length).toBeGreaterThanOrEqual(5);
    const text = lines.join("\n");
    for (const secret of [co.dispatcher.token, driver.token, co.dispatcher.password, "wrong password"]) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/eyJ[\w-]*\.[\w-]+/);
  });
});

describe("structured queue consumer logs", () => {
  let co: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
  });
  afterEach(() => vi.restoreAllMocks());

  /** The JSON lines of one message (consumers of messages the tests' own requests queued may write meanwhile). */
  async function consume(queue: string, id: string, body: unknown, bindings = env) {
    const batch = createMessageBatch(queue, [{ id, timestamp: new Date(), attempts: 1, body }]);
    const lines = await captureLines(() => worker.queue(batch, bindings));
    const result = await getQueueResult(batch, createExecutionContext());
    return { result, records: lines.map((l) => JSON.parse(l)).filter((r) => r.message_id === id) };
  }

  it("a routing job's lines carry the company slug and the process id, ending with one line for the message", async () => {
    const { result, records } = await consume("dispatch-routing", "log-routing-1", { processId: "no-such-process", companyId: co.id, apiBase: `http://dispatch.test/${co.slug}/api` });
    expect(result.explicitAcks).toEqual(["log-routing-1"]);
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) expect(record).toMatchObject({ company: co.slug, queue: "dispatch-routing", process_id: "no-such-process" });
    expect(records.at(-1)).toMatchObject({ level: "info", msg: "queue message", outcome: "done", attempts: 1, dead_letter: false, duration_ms: expect.any(Number) });
  });

  it("a failed job logs its error as JSON in its company's context and is retried", async () => {
    await co.api("POST", "/adduser/watcher", { body: { email: "log-watcher@example.com" } });
    const [message] = (await call("GET", `/_operator/companies/${co.slug}/outbox`, { headers: OPERATOR })).body.objects;
    // An http mail provider nobody listens to fails.
    const { result, records } = await consume("dispatch-notifications", "log-notify-1", { outboxId: message.id, companyId: co.id }, { ...env, MAIL_PROVIDER: "http", MAIL_HTTP_URL: "http://127.0.0.1:9/relay" });
    expect(result.retryMessages).toEqual([expect.objectContaining({ msgId: "log-notify-1" })]);
    for (const record of records) expect(record).toMatchObject({ company: co.slug, queue: "dispatch-notifications", process_id: null });
    expect(records).toContainEqual(expect.objectContaining({ level: "error", msg: "queue message failed", error: expect.objectContaining({ message: expect.any(String) }) }));
    expect(records.at(-1)).toMatchObject({ msg: "queue message", outcome: "retry" });
  });
});
