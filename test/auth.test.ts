import { env } from "cloudflare:test";
import { randomBytes, scryptSync } from "node:crypto";
import { SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { type TestCompany, call, createCompany } from "./helpers";

const secret = new TextEncoder().encode(env.JWT_SECRET);
const b64url = (value: unknown) => btoa(JSON.stringify(value)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");

describe("authentication", () => {
  let a: TestCompany;
  let b: TestCompany;
  beforeAll(async () => {
    a = await createCompany();
    b = await createCompany();
  });

  const get = (slug: string, headers: Record<string, string>) => call("GET", `/${slug}/api/company`, { headers });

  it("accepts a valid token with the JWT prefix", async () => {
    const res = await get(a.slug, { Authorization: `JWT ${a.dispatcher.token}` });
    expect(res.status).toBe(200);
  });

  it("hashes with OWASP's scrypt parameters (N 2^14, r 8, p 5) and replaces a weaker stored hash at the next successful login", async () => {
    const co = await createCompany();
    const hashOf = async () => (await env.DB.prepare("SELECT password_hash FROM users WHERE company_id = ? AND email = ?").bind(co.id, co.dispatcher.email).first<{ password_hash: string }>())!.password_hash;
    expect(await hashOf()).toMatch(/^scrypt\$16384\$8\$5\$/);
    // A hash made with p = 1, as before: the login still works, and afterwards the hash is today's.
    const salt = randomBytes(16);
    const weak = `scrypt$16384$8$1$${salt.toString("base64")}$${scryptSync(co.dispatcher.password.normalize("NFKC"), salt, 32, { N: 16384, r: 8, p: 1 }).toString("base64")}`;
    await env.DB.prepare("UPDATE users SET password_hash = ? WHERE company_id = ? AND email = ?").bind(weak, co.id, co.dispatcher.email).run();
    const wrong = await call("POST", `/${co.slug}/auth`, { body: { email: co.dispatcher.email, password: "not the password" } });
    expect(wrong.status).toBe(403);
    expect(await hashOf()).toBe(weak);
    expect((await call("POST", `/${co.slug}/auth`, { body: { email: co.dispatcher.email, password: co.dispatcher.password } })).status).toBe(200);
    const replaced = await hashOf();
    expect(replaced).toMatch(/^scrypt\$16384\$8\$5\$/);
    expect(replaced).not.toBe(weak);
    expect((await call("POST", `/${co.slug}/auth`, { body: { email: co.dispatcher.email, password: co.dispatcher.password } })).status).toBe(200);
    expect(await hashOf()).toBe(replaced);
  });

  it("logs in with a case-insensitive email", async () => {
    const res = await call("POST", `/${a.slug}/auth`, { body: { email: a.dispatcher.email.toUpperCase(), password: a.dispatcher.password } });
    expect(res.status).toBe(200);
    expect(res.body.access_token.split(".")).toHaveLength(3);
  });

  it.each([
    ["Bearer prefix", (t: string) => `Bearer ${t}`],
    ["no prefix", (t: string) => t],
    ["garbage token", () => "JWT not.a.token"],
    ["empty token", () => "JWT "],
    ["tampered signature", (t: string) => `JWT ${t.slice(0, -3)}${t.endsWith("AAA") ? "BBB" : "AAA"}`],
  ])("rejects %s with 403 and the error body", async (_name, header) => {
    const res = await get(a.slug, { Authorization: header(a.dispatcher.token) });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 403, fields: "" });
    expect(typeof res.body.message).toBe("string");
  });

  it("rejects a missing header", async () => {
    expect((await get(a.slug, {})).status).toBe(403);
  });

  it("rejects an expired token", async () => {
    const token = await new SignJWT({ cid: a.id, role: "dispatcher" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("1")
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(secret);
    expect((await get(a.slug, { Authorization: `JWT ${token}` })).status).toBe(403);
  });

  it("rejects alg none", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = `${b64url({ alg: "none", typ: "JWT" })}.${b64url({ sub: "1", cid: a.id, role: "dispatcher", iat: now, exp: now + 3600 })}.`;
    expect((await get(a.slug, { Authorization: `JWT ${token}` })).status).toBe(403);
  });

  it("rejects a token signed with another secret", async () => {
    const token = await new SignJWT({ cid: a.id, role: "dispatcher" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("1")
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("some-other-secret-0123456789abcdef"));
    expect((await get(a.slug, { Authorization: `JWT ${token}` })).status).toBe(403);
  });

  it("rejects company A's token under company B", async () => {
    const res = await get(b.slug, { Authorization: `JWT ${a.dispatcher.token}` });
    expect(res.status).toBe(403);
  });

  it("answers 403 for an unknown slug on /auth and /api", async () => {
    expect((await call("POST", "/no-such-company/auth", { body: { email: "x@y.z", password: "whatever1" } })).status).toBe(403);
    expect((await get("no-such-company", { Authorization: `JWT ${a.dispatcher.token}` })).status).toBe(403);
  });

  it("rejects a wrong password and missing credentials with 403", async () => {
    expect((await call("POST", `/${a.slug}/auth`, { body: { email: a.dispatcher.email, password: "wrong password" } })).status).toBe(403);
    expect((await call("POST", `/${a.slug}/auth`, { body: { email: "nobody@example.com", password: "wrong password" } })).status).toBe(403);
    const missing = await call("POST", `/${a.slug}/auth`, { body: {} });
    expect(missing.status).toBe(403);
    expect(missing.body.code).toBe(403);
  });

  it("registers an invited user with the emailed code, once", async () => {
    const invited = await a.api("POST", "/adduser/watcher", { body: { firstname: "Wanda", lastname: "Watch", email: "wanda@example.com" } });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ usertype: "watcher", email: "wanda@example.com", confirmed_at: null });
    const outbox = await call("GET", `/_operator/companies/${a.slug}/outbox?q=${encodeURIComponent(JSON.stringify({ filters: [{ name: "to", op: "==", val: "wanda@example.com" }] }))}`, {
      headers: { Authorization: `Bearer ${env.OPERATOR_TOKEN}` },
    });
    expect(outbox.body.num_results).toBe(1);
    const code = outbox.body.objects[0].data.code as string;
    expect(outbox.body.objects[0].data.link).toContain(`code=${code}`);

    const wrong = await call("POST", `/${a.slug}/register`, { body: { email: "wanda@example.com", code: "WRONGCODE", password: "a long password" } });
    expect(wrong.status).toBe(403);
    // Not confirmed yet: no login.
    expect((await call("POST", `/${a.slug}/auth`, { body: { email: "wanda@example.com", password: "a long password" } })).status).toBe(403);

    const short = await call("POST", `/${a.slug}/register`, { body: { email: "wanda@example.com", code, password: "short" } });
    expect(short.status).toBe(422);
    expect(short.body.fields).toBe("password");

    const ok = await call("POST", `/${a.slug}/register`, { body: { email: "wanda@example.com", code, password: "a long password" } });
    expect(ok.status).toBe(200);
    expect(ok.body.confirmed_at).toMatch(/Z$/);
    expect(ok.body).not.toHaveProperty("password_hash");

    const again = await call("POST", `/${a.slug}/register`, { body: { email: "wanda@example.com", code, password: "another long password" } });
    expect(again.status).toBe(403);
    expect((await call("POST", `/${a.slug}/auth`, { body: { email: "wanda@example.com", password: "a long password" } })).status).toBe(200);
  });
});
