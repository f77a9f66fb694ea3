/**
 * What ends a token before it expires (lib/tokens.ts): deactivating a driver
 * ends its tokens at once in the isolate that made the change and within
 * USER_RECHECK_MS everywhere; a removed user's tokens stop within that time.
 */
import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { USER_RECHECK_MS } from "../src/core/lib/tokens";
import { ORIGIN, type TestCompany, call, createCompany, login } from "./helpers";

/** A websocket of the live channel with the messages it got and its close code once closed. */
async function openSocket(co: TestCompany, token: string) {
  const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/ws?access_token=${token}`, { headers: { Upgrade: "websocket" } }));
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const socket = { ws, messages: [] as { type: string }[], closed: undefined as { code: number; reason: string } | undefined };
  ws.addEventListener("message", (e) => {
    socket.messages.push(JSON.parse(e.data as string));
  });
  ws.addEventListener("close", (e) => {
    socket.closed = { code: e.code, reason: e.reason };
  });
  return socket;
}

async function until(done: () => boolean) {
  for (let i = 0; i < 100 && !done(); i++) await new Promise((r) => setTimeout(r, 20));
}

afterEach(() => vi.restoreAllMocks());

describe("token lifetime", () => {
  it("a deactivated driver's tokens stop working; a login after the deactivation gets a working token, its old code no activation", async () => {
    const co = await createCompany();
    const driver = await co.user("driver");
    await env.DB.prepare("UPDATE users SET active = 1 WHERE id = ?").bind(driver.id).run();
    const asDriver = (token: string) => call("GET", `/${co.slug}/api/currentdriverroute/${driver.id}`, { token });
    expect((await asDriver(driver.token)).status).not.toBe(403);
    expect((await co.api("PATCH", `/driver/${driver.id}`, { body: { active: false } })).status).toBe(200);
    const refused = await asDriver(driver.token);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe("Invalid or expired token");
    // Tokens are stamped in seconds: a login in the same second as the deactivation would count as before it.
    await new Promise((r) => setTimeout(r, 1100));
    const fresh = await login(co.slug, driver.email, "another good password");
    expect((await asDriver(fresh)).status).not.toBe(403);
    // The used activation code cannot make the driver active again; a dispatcher can.
    const again = await call("POST", `/${co.slug}/api/activatedriver`, { token: fresh, body: { code: driver.code, imei: "356938035643809" } });
    expect(again.status).toBe(403);
    expect((await co.api("GET", `/driver/${driver.id}`)).body.active).toBe(false);
    expect((await co.api("PATCH", `/driver/${driver.id}`, { body: { active: true } })).body.active).toBe(true);
  });

  it(`a removed user's token stops working within ${USER_RECHECK_MS / 1000} s, and at once where it was not in use`, async () => {
    const co = await createCompany();
    const watcher = await co.user("watcher");
    const unused = await co.user("watcher");
    expect((await co.api("GET", "/company", { token: watcher.token })).status).toBe(200);
    await env.DB.prepare("DELETE FROM users WHERE id IN (?, ?)").bind(watcher.id, unused.id).run();
    expect((await co.api("GET", "/company", { token: unused.token })).status).toBe(403);
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + USER_RECHECK_MS + 1000);
    const late = await co.api("GET", "/company", { token: watcher.token });
    expect(late.status).toBe(403);
  });

  it("a token whose role no longer matches the user is refused", async () => {
    const co = await createCompany();
    const user = await co.user("dispatcher");
    await env.DB.prepare("UPDATE users SET usertype = 'watcher' WHERE id = ?").bind(user.id).run();
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + USER_RECHECK_MS + 1000);
    expect((await co.api("GET", "/company", { token: user.token })).status).toBe(403);
  });

  it("deactivating a driver closes its open websockets with 4403; a dispatcher's socket stays open", async () => {
    const co = await createCompany();
    const driver = await co.user("driver");
    await env.DB.prepare("UPDATE users SET active = 1 WHERE id = ?").bind(driver.id).run();
    const driverSocket = await openSocket(co, driver.token);
    const staffSocket = await openSocket(co, co.dispatcher.token);
    expect((await co.api("PATCH", `/driver/${driver.id}`, { body: { active: false } })).status).toBe(200);
    await until(() => driverSocket.closed !== undefined);
    expect(driverSocket.closed).toEqual({ code: 4403, reason: "token revoked" });
    staffSocket.ws.send(JSON.stringify({ type: "ping" }));
    await until(() => staffSocket.messages.length > 0);
    expect(staffSocket.messages).toEqual([{ type: "pong" }]);
    expect(staffSocket.closed).toBeUndefined();
    staffSocket.ws.close(1000);
  });

  it("a resume on a socket whose user was removed or changed role closes it with 4403", async () => {
    const co = await createCompany();
    const removed = await co.user("watcher");
    const demoted = await co.user("dispatcher");
    const sockets = [await openSocket(co, removed.token), await openSocket(co, demoted.token)];
    await env.DB.prepare("DELETE FROM users WHERE id = ?").bind(removed.id).run();
    await env.DB.prepare("UPDATE users SET usertype = 'watcher' WHERE id = ?").bind(demoted.id).run();
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + USER_RECHECK_MS + 1000);
    for (const s of sockets) s.ws.send(JSON.stringify({ type: "resume", after: 0 }));
    await until(() => sockets.every((s) => s.closed !== undefined));
    for (const s of sockets) {
      expect(s.closed).toEqual({ code: 4403, reason: "token revoked" });
      expect(s.messages).toEqual([]);
    }
  });
});
