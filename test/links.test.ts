/**
 * Every link the service hands out is absolute, carries the company's slug,
 * and works as given (with the right token): process status records,
 * websocket process events, and emailed registration links. The emailed
 * result link of a one-step upload is followed in uploads.test.ts.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../src/worker/index";
import { ORIGIN, OPERATOR, call, createCompany, insertAddress, login } from "./helpers";

const follow = (link: string, token: string) => exports.default.fetch(new Request(link, { headers: { Authorization: `JWT ${token}` } }));

describe("links", () => {
  it("the status link of a routing process and of its websocket event lead to its routes", async () => {
    const co = await createCompany();
    const socket = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/ws?access_token=${co.dispatcher.token}`, { headers: { Upgrade: "websocket" } }));
    const ws = socket.webSocket!;
    ws.accept();
    const events: { type: string; action?: string; status?: string; link?: string }[] = [];
    ws.addEventListener("message", (e) => events.push(JSON.parse(e.data as string)));

    const address = await insertAddress(co.id, { lng: 13.42, lat: 52.5 });
    const delivery = (await co.api("POST", "/delivery", { body: { deliverylocation_id: address } })).body;
    const pid = (await co.api("POST", "/calcroute/optimized/timewindow", { body: { deliveryids: [delivery.id] } })).body.process_id;
    let final;
    for (let i = 0; i < 150 && final?.status !== "finished"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      final = (await co.api("GET", `/process/status/${pid}/final`)).body;
    }
    expect(final.link).toBe(`${ORIGIN}/${co.slug}/api/process/status/${pid}/final?response_data=base`);
    const routes = await follow(final.link, co.dispatcher.token);
    expect(routes.status).toBe(200);
    const body = (await routes.json()) as { num_results: number; objects: { deliveries: { id: number }[] }[] };
    expect(body.num_results).toBe(1);
    expect(body.objects[0].deliveries.map((d) => d.id)).toEqual([delivery.id]);
    // Another company's token gets nothing from it.
    const other = await createCompany();
    expect((await follow(final.link, other.dispatcher.token)).status).toBe(403);

    await new Promise((r) => setTimeout(r, 100));
    const event = events.find((m) => m.type === "process" && m.action === "final" && m.status === "finished");
    expect(event?.link).toBe(final.link);
    ws.close(1000);
  });

  it("PUBLIC_URL, when configured, is the origin of the links", async () => {
    const co = await createCompany();
    const address = await insertAddress(co.id, { lng: 13.42, lat: 52.5 });
    const delivery = (await co.api("POST", "/delivery", { body: { deliverylocation_id: address } })).body;
    const request = new Request(`${ORIGIN}/${co.slug}/api/calcroute/optimized/timewindow?async=false`, {
      method: "POST",
      headers: { Authorization: `JWT ${co.dispatcher.token}`, "content-type": "application/json" },
      body: JSON.stringify({ deliveryids: [delivery.id] }),
    });
    const res = await worker.fetch(request, { ...env, PUBLIC_URL: "https://dispatch.example.com/" }, createExecutionContext());
    expect(res.status).toBe(200);
    const { id: pid } = (await env.DB.prepare("SELECT id FROM processes WHERE company_id = ?").bind(co.id).first<{ id: string }>())!;
    const final = (await co.api("GET", `/process/status/${pid}/final`)).body;
    expect(final.link).toBe(`https://dispatch.example.com/${co.slug}/api/process/status/${pid}/final?response_data=base`);
  });

  it("emailed registration links of invited users and of drivers register the account", async () => {
    const co = await createCompany();
    expect((await co.api("POST", "/adduser/watcher", { body: { email: "watch@example.com" } })).status).toBe(201);
    expect((await co.api("POST", "/driver", { body: { email: "drive@example.com", firstname: "Dana" } })).status).toBe(201);
    const outbox = (await call("GET", `/_operator/companies/${co.slug}/outbox`, { headers: OPERATOR })).body.objects as { to: string; template: string; data: { link?: string } }[];
    for (const [email, template] of [
      ["watch@example.com", "invitation"],
      ["drive@example.com", "driver_activation"],
    ]) {
      const link = outbox.find((m) => m.to === email && m.template === template)?.data.link;
      expect(link, template).toMatch(new RegExp(`^${ORIGIN}/${co.slug}/register\\?code=`));
      const code = new URL(link!).searchParams.get("code");
      const registered = await exports.default.fetch(
        new Request(link!, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, code, password: "a long enough password" }) }),
      );
      expect(registered.status, template).toBe(200);
      if (template === "invitation") expect(await login(co.slug, email, "a long enough password")).toBeTruthy();
    }
  });
});
