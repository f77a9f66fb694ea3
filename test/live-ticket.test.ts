/**
 * The live channel's tickets (issue 50, OWASP: no long-lived credential in a
 * URL): `POST /ws/ticket` exchanges the access token for a single-use ticket
 * that opens one websocket within 30 s; the token itself in the URL still
 * works, marked deprecated with its sunset.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { WsTickets } from "../src/durable/ws-tickets";
import { ACCESS_TOKEN_IN_URL } from "../src/shared/contract/live";
import { ORIGIN, type TestCompany, createCompany } from "./helpers";

const upgrade = (url: string) => exports.default.fetch(new Request(url, { headers: { Upgrade: "websocket" } }));

async function ticketOf(co: TestCompany, token = co.dispatcher.token) {
  const res = await co.api("POST", "/ws/ticket", { token });
  expect(res.status).toBe(201);
  return res.body as { ticket: string; expires_in: number; url: string };
}

async function pong(ws: WebSocket) {
  const messages: string[] = [];
  ws.accept();
  ws.addEventListener("message", (e) => messages.push(e.data as string));
  ws.send(JSON.stringify({ type: "ping" }));
  for (let i = 0; i < 50 && !messages.length; i++) await new Promise((r) => setTimeout(r, 20));
  ws.close(1000);
  return messages;
}

describe("live channel tickets", () => {
  it("a ticket opens one socket at the absolute URL it comes with, once; no Deprecation on it", async () => {
    const co = await createCompany();
    const t = await ticketOf(co);
    expect(t.expires_in).toBe(30);
    expect(t.url).toBe(`${ORIGIN.replace(/^http/, "ws")}/${co.slug}/api/ws?ticket=${t.ticket}`);
    const opened = await upgrade(t.url.replace(/^ws/, "http"));
    expect(opened.status).toBe(101);
    expect(opened.headers.get("Deprecation")).toBeNull();
    expect(await pong(opened.webSocket!)).toEqual([JSON.stringify({ type: "pong" })]);
    const again = await upgrade(t.url.replace(/^ws/, "http"));
    expect(again.status).toBe(403);
    expect((await again.json<{ message: string }>()).message).toMatch(/ticket/);
  });

  it("refuses an unknown ticket, another company's, and one that expired", async () => {
    const co = await createCompany();
    const other = await createCompany();
    expect((await upgrade(`${ORIGIN}/${co.slug}/api/ws?ticket=garbage`)).status).toBe(403);
    const theirs = await ticketOf(other);
    expect((await upgrade(`${ORIGIN}/${co.slug}/api/ws?ticket=${theirs.ticket}`)).status).toBe(403);
    // Tickets live in each company's own object: the other company's ticket was not spent by the attempt.
    expect((await upgrade(theirs.url.replace(/^ws/, "http"))).status).toBe(101);
    const late = await ticketOf(co);
    await runInDurableObject(env.COMPANY.getByName(`company:${co.id}`), (_instance, state) => {
      expect(new WsTickets(state.storage.sql).redeem(late.ticket, Date.now() + 31_000)).toBeNull();
    });
    expect((await upgrade(late.url.replace(/^ws/, "http"))).status).toBe(403);
  });

  it("a driver's ticket opens the driver's socket; a ticket outlives no deactivation", async () => {
    const co = await createCompany();
    const driver = await co.user("driver");
    await env.DB.prepare("UPDATE users SET active = 1 WHERE id = ?").bind(driver.id).run();
    const mine = await ticketOf(co, driver.token);
    const opened = await upgrade(mine.url.replace(/^ws/, "http"));
    expect(opened.status).toBe(101);
    opened.webSocket!.accept();
    expect(await env.COMPANY.getByName(`company:${co.id}`).connections()).toEqual({ staff: 0, drivers: 1 });
    opened.webSocket!.close(1000);
    const unused = await ticketOf(co, driver.token);
    expect((await co.api("PATCH", `/driver/${driver.id}`, { body: { active: false } })).status).toBe(200);
    expect((await upgrade(unused.url.replace(/^ws/, "http"))).status).toBe(403);
  });

  it("a ticket needs the access token; the token in the URL still opens the socket, marked deprecated with its sunset", async () => {
    const co = await createCompany();
    expect((await co.api("POST", "/ws/ticket", { token: "" })).status).toBe(403);
    const old = await upgrade(`${ORIGIN}/${co.slug}/api/ws?access_token=${co.dispatcher.token}`);
    expect(old.status).toBe(101);
    expect(old.headers.get("Deprecation")).toBe(`@${Date.parse(`${ACCESS_TOKEN_IN_URL.deprecated}T00:00:00Z`) / 1000}`);
    expect(old.headers.get("Sunset")).toBe("Wed, 30 Jun 2027 00:00:00 GMT");
    expect(await pong(old.webSocket!)).toEqual([JSON.stringify({ type: "pong" })]);
  });
});
