import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type TestCompany, call, createCompany } from "./helpers";

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
