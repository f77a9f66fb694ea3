/**
 * The login throttle (OWASP): failed password and code attempts per account
 * and per client address, counted in the company's Durable Object so that
 * parallel guesses are counted, not raced past; 429 with Retry-After, the
 * same for unknown emails; back-off doubles, decays, and a success resets it.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LoginThrottle, THROTTLE, waitAfter } from "../src/durable/login-throttle";
import { exports } from "cloudflare:workers";
import { ORIGIN, call, createCompany } from "./helpers";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const from = (address: string) => ({ "CF-Connecting-IP": address });

async function guess(slug: string, email: string, password: string, address: string) {
  const started = performance.now();
  const res = await call("POST", `/${slug}/auth`, { body: { email, password }, headers: from(address) });
  return { ...res, ms: performance.now() - started };
}

afterEach(() => vi.restoreAllMocks());

describe("login throttle", () => {
  it("counts a burst of 50 parallel guesses: 5 are tried, 45 get 429 with Retry-After; the right password works once the wait is over, and resets", async () => {
    const co = await createCompany();
    const lines: string[] = [];
    vi.spyOn(console, "warn").mockImplementation((line: string) => void lines.push(line));
    const burst = await Promise.all(Array.from({ length: 50 }, (_, i) => guess(co.slug, co.dispatcher.email, `wrong ${i}`, "198.51.100.7")));
    const statuses = burst.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 403)).toHaveLength(THROTTLE.free.account);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50 - THROTTLE.free.account);
    const throttled = burst.find((r) => r.status === 429)!;
    expect(throttled.body).toMatchObject({ code: 429, message: expect.stringMatching(/^Too many failed attempts; try again in \d+ s$/) });
    expect(Number(throttled.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "attempt throttled");
    expect(logged).toHaveLength(45);
    expect(logged[0]).toMatchObject({ level: "warn", company: co.slug, kind: "login", account: co.dispatcher.email, address: "198.51.100.7" });

    // While waiting, even the right password is refused (and the refusal is not counted).
    const early = await guess(co.slug, co.dispatcher.email, co.dispatcher.password, "198.51.100.7");
    expect(early.status).toBe(429);
    await sleep(Number(early.headers.get("Retry-After")) * 1000 + 50);
    expect((await guess(co.slug, co.dispatcher.email, co.dispatcher.password, "198.51.100.7")).status).toBe(200);
    // The success cleared the account: the next wrong password is a plain 403 again.
    expect((await guess(co.slug, co.dispatcher.email, "wrong again", "198.51.100.7")).status).toBe(403);
  });

  it("answers an unknown email exactly like a known one, in similar time", async () => {
    const co = await createCompany();
    const known: { status: number; ms: number }[] = [];
    const unknown: { status: number; ms: number }[] = [];
    for (let i = 0; i < 7; i++) {
      known.push(await guess(co.slug, co.dispatcher.email, `wrong ${i}`, "203.0.113.1"));
      unknown.push(await guess(co.slug, `nobody@${co.slug}.example`, `wrong ${i}`, "203.0.113.2"));
    }
    expect(unknown.map((r) => r.status)).toEqual(known.map((r) => r.status));
    expect(known.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 429, 429]);
    const median = (xs: { ms: number }[]) => xs.map((x) => x.ms).sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log(`failed login, median of the 403s: known email ${median(known.slice(0, 5)).toFixed(1)} ms, unknown email ${median(unknown.slice(0, 5)).toFixed(1)} ms`);
  });

  it("throttles an address across accounts, and leaves other addresses alone", async () => {
    const co = await createCompany();
    const spray = [];
    for (let i = 0; i < THROTTLE.free.address + 1; i++) spray.push((await guess(co.slug, `user${i}@${co.slug}.example`, "Summer2026!", "192.0.2.66")).status);
    expect(spray.slice(0, THROTTLE.free.address)).toEqual(Array(THROTTLE.free.address).fill(403));
    expect(spray.at(-1)).toBe(429);
    expect((await guess(co.slug, co.dispatcher.email, co.dispatcher.password, "192.0.2.66")).status).toBe(429);
    expect((await guess(co.slug, co.dispatcher.email, co.dispatcher.password, "192.0.2.99")).status).toBe(200);
  });

  it("throttles wrong registration and activation codes the same way", async () => {
    const co = await createCompany();
    await co.api("POST", "/driver", { body: { email: "codes@example.com" } });
    const register = async (code: string) => call("POST", `/${co.slug}/register`, { body: { email: "codes@example.com", code, password: "a long password" }, headers: from("198.51.100.20") });
    const wrongRegister = [];
    for (let i = 0; i < THROTTLE.free.account + 1; i++) wrongRegister.push((await register(`WRONG${i}`)).status);
    expect(wrongRegister).toEqual([403, 403, 403, 403, 403, 429]);
    // The form page says so too.
    const form = await exports.default.fetch(
      new Request(`${ORIGIN}/${co.slug}/register/form`, { method: "POST", headers: from("198.51.100.20"), body: new URLSearchParams({ email: "codes@example.com", code: "WRONG", password: "a long password" }) }),
    );
    expect(form.status).toBe(429);
    expect(form.headers.get("Retry-After")).toMatch(/^\d+$/);
    expect(await form.text()).toContain("Zu viele Fehlversuche");

    const driver = await co.user("driver");
    const activate = (code: string) => call("POST", `/${co.slug}/api/activatedriver`, { token: driver.token, body: { code, imei: "356938035643809" }, headers: from("198.51.100.21") });
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => activate(`WRONGCODE${i}`)));
    expect(burst.filter((r) => r.status === 403)).toHaveLength(THROTTLE.free.account);
    expect(burst.filter((r) => r.status === 429)).toHaveLength(20 - THROTTLE.free.account);
    const wait = Number(burst.find((r) => r.status === 429)!.headers.get("Retry-After"));
    expect((await activate(driver.code!)).status).toBe(429);
    await sleep(wait * 1000 + 50);
    expect((await activate(driver.code!)).status).toBe(200);
  });

  it("doubles the wait from 1 s to 15 minutes, forgets a failure per 15 minutes, and never counts refused attempts", async () => {
    const stub = env.COMPANY.getByName("throttle-clock");
    await runInDurableObject(stub, (_object, state) => {
      const throttle = new LoginThrottle(state.storage.sql);
      const who = { account: "owner@example.com", address: "192.0.2.1" };
      let now = 1_000_000;
      const waits: number[] = [];
      for (let allowed = 0; allowed < 16; ) {
        const verdict = throttle.begin("login", who, now);
        if (verdict.allowed) {
          allowed++;
          now += 1;
          continue;
        }
        waits.push(verdict.retryAfterSeconds);
        // Hammering during the wait changes nothing.
        for (let i = 0; i < 100; i++) expect(throttle.begin("login", who, now + i).allowed).toBe(false);
        now += verdict.retryAfterSeconds * 1000;
      }
      expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900]);
      expect(waitAfter("account", 30)).toBe(THROTTLE.maxWaitMs);
      // Quiet for 15 minutes per failure: all forgotten, the next failure is free again.
      now += 16 * THROTTLE.forgetMs;
      expect(throttle.begin("login", who, now)).toEqual({ allowed: true });
      expect(throttle.begin("login", who, now + 1)).toEqual({ allowed: true });
      // A success clears the account.
      throttle.end("login", who, "succeeded", now + 2);
      for (let k = 0; k < 4; k++) expect(throttle.begin("login", { ...who, address: `198.51.100.${k}` }, now + 3)).toEqual({ allowed: true });
    });
  });
});
