import { createExecutionContext, env } from "cloudflare:test";
import { Hono } from "hono";
import worker from "../src/worker/index";
import { beforeAll, describe, expect, it } from "vitest";
import { handleError } from "../src/worker/errors";
import { OPERATOR, type TestCompany, call, createCompany } from "./helpers";

describe("error envelope", () => {
  let co: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
  });

  it("unknown path: 404 with the body", async () => {
    const res = await call("GET", "/definitely/not/here");
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 404, fields: "" });
    const api = await co.api("GET", "/nothing-here");
    expect(api.status).toBe(404);
    expect(api.body.code).toBe(404);
  });

  it("malformed JSON: 422 with the body", async () => {
    const res = await co.api("POST", "/adduser/watcher", { raw: "{not json" });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe(422);
    expect(typeof res.body.message).toBe("string");
  });

  it("validation failure names every offending field", async () => {
    const res = await co.api("POST", "/adduser/watcher", { body: { email: "not-an-email", firstname: 42 } });
    expect(res.status).toBe(422);
    expect(res.body.fields.split(",").sort()).toEqual(["email", "firstname"]);
  });

  it("missing body: 422", async () => {
    const res = await co.api("POST", "/adduser/watcher");
    expect(res.status).toBe(422);
  });

  it("too large a body: 413", async () => {
    const res = await co.api("POST", "/adduser/watcher", { raw: JSON.stringify({ email: "a@b.de", firstname: "x".repeat(6 * 1024 * 1024) }) });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe(413);
  });

  it("unexpected exceptions: 500 without a stack trace", async () => {
    const app = new Hono().get("/boom", () => {
      throw new Error("secret internals at line 42");
    });
    app.onError(handleError);
    const res = await app.request("/boom");
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(body).toEqual({ code: 500, message: "Internal error", fields: "" });
  });

  it("unique violations racing past checks become 409", async () => {
    const app = new Hono().get("/dup", () => {
      throw new Error("D1_ERROR: UNIQUE constraint failed: vehicles.company_id, vehicles.name: SQLITE_CONSTRAINT");
    });
    app.onError(handleError);
    const res = await app.request("/dup");
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ code: 409, fields: "name" });
  });
});

describe("operator API", () => {
  it("rejects a wrong or missing operator token", async () => {
    expect((await call("GET", "/_operator/companies/x/outbox")).status).toBe(403);
    expect((await call("GET", "/_operator/companies/x/outbox", { headers: { Authorization: "Bearer wrong" } })).status).toBe(403);
  });

  it("creates a company once; the slug is validated", async () => {
    const body = { slug: "acme-op", companyname: "ACME", depot: { city: "Berlin", lat: 52.5, lng: 13.4 }, dispatcher: { email: "a@acme.example", password: "long enough pw" } };
    const first = await call("POST", "/_operator/companies", { headers: OPERATOR, body });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ slug: "acme-op" });
    expect((await call("POST", "/_operator/companies", { headers: OPERATOR, body })).status).toBe(409);
    const bad = await call("POST", "/_operator/companies", { headers: OPERATOR, body: { ...body, slug: "Bad Slug!" } });
    expect(bad.status).toBe(422);
    expect(bad.body.fields).toBe("slug");
  });

  it("creates users; drivers come back inactive with their activation code", async () => {
    const co = await createCompany();
    const driver = await call("POST", `/_operator/companies/${co.slug}/users`, { headers: OPERATOR, body: { usertype: "driver", email: "d@x.example", password: "long enough pw" } });
    expect(driver.status).toBe(201);
    expect(driver.body).toMatchObject({ usertype: "driver", active: false });
    expect(driver.body.confirmed_at).toMatch(/Z$/);
    expect(driver.body.code).toMatch(/^[A-Z0-9]{12}$/);
    const watcher = await call("POST", `/_operator/companies/${co.slug}/users`, { headers: OPERATOR, body: { usertype: "watcher", email: "w@x.example", password: "long enough pw" } });
    expect(watcher.body).toMatchObject({ usertype: "watcher", active: true });
    expect(watcher.body.code).toBeUndefined();
    expect((await call("POST", `/_operator/companies/nope-nope/users`, { headers: OPERATOR, body: { usertype: "watcher", email: "w@x.example", password: "long enough pw" } })).status).toBe(404);
  });
});

describe("OpenAPI document and reference page", () => {
  it("describes the declared endpoints", async () => {
    const res = await call("GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    const paths = Object.keys(res.body.paths);
    for (const p of ["/{slug}/auth", "/{slug}/register", "/{slug}/api/company", "/{slug}/api/dispatcher/{dispatcher_id}", "/{slug}/api/adduser/watcher", "/{slug}/api/ws", "/_operator/companies"]) {
      expect(paths).toContain(p);
    }
    const op = res.body.paths["/{slug}/api/dispatcher/{dispatcher_id}"].get;
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(["slug", "dispatcher_id"]);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "403", "404", "422"]));
  });

  it("serves a readable page", async () => {
    const res = await call("GET", "/docs");
    expect(res.status).toBe(200);
    expect(res.text).toContain("<!doctype html>");
    expect(res.text).toContain("/{slug}/api/dispatcher");
    expect(res.text).not.toContain("<script");
  });
});

describe("CORS", () => {
  it("answers preflight requests for browser clients", async () => {
    const res = await call("OPTIONS", "/demo/api/delivery", { headers: { Origin: "https://console.example", "Access-Control-Request-Method": "PATCH", "Access-Control-Request-Headers": "authorization,content-type" } });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")).toContain("PATCH");
    expect(res.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("authorization");
  });
});

describe("rate limit", () => {
  it("answers 429 with Retry-After when the company's budget is spent", async () => {
    const co = await createCompany();
    const limited = { ...env, RATE_LIMITER: { limit: async () => ({ success: false }) } };
    const res = await worker.fetch(new Request(`http://dispatch.test/${co.slug}/api/company`, { headers: { Authorization: `JWT ${co.dispatcher.token}` } }), limited as never, createExecutionContext());
    expect(res.status).toBe(429);
    expect(res.headers.get("Retry-After")).toBe("1");
    expect(await res.json()).toMatchObject({ code: 429 });
    const keys: string[] = [];
    const counting = { ...env, RATE_LIMITER: { limit: async ({ key }: { key: string }) => (keys.push(key), { success: true }) } };
    const ok = await worker.fetch(new Request(`http://dispatch.test/${co.slug}/api/company`, { headers: { Authorization: `JWT ${co.dispatcher.token}` } }), counting as never, createExecutionContext());
    expect(ok.status).toBe(200);
    expect(keys).toEqual([`company:${co.id}`]);
  });

  it("refuses a burst above 200 in one second at once, per company", async () => {
    const [busy, quiet] = await Promise.all([createCompany(), createCompany()]);
    // The interface's limit (the suite lifts it: vitest.config.ts).
    const limited = { ...env, RATE_LIMIT_PER_SECOND: "200" };
    const get = async (co: typeof busy) => {
      const res = await worker.fetch(new Request(`http://dispatch.test/${co.slug}/api/deliverystatus`, { headers: { Authorization: `JWT ${co.dispatcher.token}` } }), limited as never, createExecutionContext());
      return { status: res.status, headers: res.headers, body: await res.json() };
    };
    const burst = Array.from({ length: 600 }, () => get(busy));
    const others = Array.from({ length: 20 }, () => get(quiet));
    const [answers, otherAnswers] = await Promise.all([Promise.all(burst), Promise.all(others)]);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(answers.filter((r) => r.status === 200).length + refused.length).toBe(600);
    expect(refused[0].headers.get("Retry-After")).toBe("1");
    expect(refused[0].body).toEqual({ code: 429, message: "Rate limit exceeded: 200 requests per second", fields: "" });
    expect(otherAnswers.map((r) => r.status)).toEqual(Array(20).fill(200));
    // What is left, as the IETF RateLimit draft writes it: the quiet company's bucket barely touched, the busy one's empty.
    expect(refused[0].headers.get("RateLimit")).toBe('"company";r=0;t=1');
    expect(otherAnswers[0].headers.get("RateLimit-Policy")).toBe('"company";q=200;w=1');
    const left = otherAnswers.map((r) => Number(/r=(\d+)/.exec(r.headers.get("RateLimit") ?? "")?.[1]));
    expect(Math.max(...left)).toBeGreaterThanOrEqual(180);
    expect(Math.min(...left)).toBeLessThan(200);
  });

  it("sends the limit with every answer of the company's paths, refusals too", async () => {
    const co = await createCompany();
    const ok = await co.api("GET", "/company");
    expect(ok.headers.get("RateLimit-Policy")).toMatch(/^"company";q=\d+;w=1$/);
    expect(ok.headers.get("RateLimit")).toMatch(/^"company";r=\d+;t=[01]$/);
    const missing = await co.api("GET", "/delivery/999999999");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("RateLimit")).toMatch(/^"company";r=\d+;t=[01]$/);
    const invalid = await co.api("POST", "/delivery", { body: { deliverylocation_id: "x" } });
    expect(invalid.status).toBe(422);
    expect(invalid.headers.get("RateLimit")).not.toBeNull();
    const auth = await call("POST", `/${co.slug}/auth`, { body: { email: "nobody@example.com", password: "wrong" } });
    expect(auth.headers.get("RateLimit-Policy")).not.toBeNull();
  });

  it("limits the service's own paths per client address; /health has no limit", async () => {
    const limited = { ...env, RATE_LIMIT_PER_SECOND: "3" };
    const get = (path: string, address: string) =>
      worker.fetch(new Request(`http://dispatch.test${path}`, { headers: { "CF-Connecting-IP": address } }), limited as never, createExecutionContext());
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await get("/tiles/map.json", "198.51.100.7"));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 429, 429]);
    expect(answers[0].headers.get("RateLimit-Policy")).toBe('"client";q=3;w=1');
    expect(answers[3].headers.get("Retry-After")).toBe("1");
    // Another client is not refused for the first one's burst, and liveness answers whatever the burst.
    expect((await get("/tiles/map.json", "198.51.100.8")).status).toBe(200);
    const health = await get("/health", "198.51.100.7");
    expect(health.status).toBe(200);
    expect(health.headers.get("RateLimit")).toBeNull();
  });
});
