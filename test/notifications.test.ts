import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../src/worker/index";
import { OUTBOX_MAX_ATTEMPTS } from "../src/core/services/outbox";
import { OPERATOR, type TestCompany, call, createCompany, insertAddress, routeAndStart, tomorrowAt } from "./helpers";

interface OutboxRow {
  id: number;
  channel: string;
  to: string;
  template: string;
  subject: string | null;
  body: string | null;
  html: string | null;
  status: string;
  attempts: number;
  last_error: string | null;
  provider_message_id: string | null;
  data: Record<string, unknown>;
}

const outboxOf = async (slug: string, template?: string): Promise<OutboxRow[]> => {
  const q = template ? `?q=${encodeURIComponent(JSON.stringify({ filters: [{ name: "template", op: "==", val: template }] }))}` : "";
  return (await call("GET", `/_operator/companies/${slug}/outbox${q}`, { headers: OPERATOR })).body.objects;
};

/** Runs the notifications consumer on these outbox rows, as the queue would (attempt `attempts`). */
async function deliver(companyId: number, ids: number[], overrides: Partial<typeof env> = {}, attempts = 1) {
  const batch = createMessageBatch(
    "dispatch-notifications",
    ids.map((id, i) => ({ id: `m-${id}-${attempts}-${i}`, timestamp: new Date(), attempts, body: { outboxId: id, companyId } })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ...overrides });
  return getQueueResult(batch, ctx);
}

interface Recorded {
  url: string;
  method: string;
  headers: Headers;
  body: string;
}

/** Replaces fetch for the providers' HTTP APIs, recording every request (the HTTP boundary). */
function fakeProviderApi(answer: (req: Recorded) => Response) {
  const requests: Recorded[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    const recorded = { url: request.url, method: request.method, headers: request.headers, body: await request.text() };
    requests.push(recorded);
    return answer(recorded);
  });
  return requests;
}

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * An outbox row written straight into D1 with no queue message, so only this
 * test's consumer runs touch it (the queue's own consumer never sees it).
 */
async function queuedRow(co: TestCompany, m: { channel?: "email" | "sms"; to: string; template: string; data: Record<string, unknown> }): Promise<number> {
  const row = await env.DB.prepare('INSERT INTO outbox (company_id, channel, "to", template, data) VALUES (?, ?, ?, ?, ?) RETURNING id')
    .bind(co.id, m.channel ?? "email", m.to, m.template, JSON.stringify(m.data))
    .first<{ id: number }>();
  return row!.id;
}

const invitation = (co: TestCompany, to: string) => queuedRow(co, { to, template: "invitation", data: { usertype: "watcher", code: "K7Q2", link: `https://dispatch.example/${co.slug}/register?code=K7Q2&x=1` } });
const rowOf = async (co: TestCompany, id: number) => (await outboxOf(co.slug)).find((m) => m.id === id)!;

describe("email providers", () => {
  it("Cloudflare Email Service (the default): German text and HTML from the template, the message id recorded", async () => {
    const co = await createCompany();
    const id = await invitation(co, "w@example.com");
    expect((await rowOf(co, id)).status).toBe("queued");
    const result = await deliver(co.id, [id]);
    expect(result.explicitAcks).toHaveLength(1);
    const sent = await rowOf(co, id);
    expect(sent).toMatchObject({ status: "sent", attempts: 1, last_error: null });
    expect(sent.provider_message_id).toBeTruthy();
    expect(sent.subject).toBe(`Ihr Zugang bei Company ${co.slug}`);
    expect(sent.body).toContain("Passwort festlegen: ");
    expect(sent.html).toContain(`<a href="${String(sent.data.link).replace(/&/g, "&amp;")}">Passwort festlegen</a>`);
  });

  it("the HTTP mail API gets the Resend request shape with the key, the company as sender name and an idempotency key", async () => {
    const co = await createCompany();
    const row = { id: await invitation(co, "http@example.com") };
    const requests = fakeProviderApi(() => Response.json({ id: "re_123" }));
    const config = { MAIL_PROVIDER: "http", MAIL_HTTP_URL: "https://mail.example/emails", MAIL_HTTP_KEY: "mail-key", MAIL_FROM: "dispatch@example.com" };
    await deliver(co.id, [row.id], config);
    expect(requests).toHaveLength(1);
    const [req] = requests;
    expect(req.url).toBe("https://mail.example/emails");
    expect(req.method).toBe("POST");
    expect(req.headers.get("authorization")).toBe("Bearer mail-key");
    expect(req.headers.get("idempotency-key")).toBe(`outbox-${row.id}`);
    const body = JSON.parse(req.body);
    expect(body).toMatchObject({ from: `"Company ${co.slug}" <dispatch@example.com>`, to: ["http@example.com"], subject: `Ihr Zugang bei Company ${co.slug}` });
    expect(body.text).toContain("Passwort festlegen");
    expect(body.html).toContain("<a href=");
    expect(await rowOf(co, row.id)).toMatchObject({ status: "sent", provider_message_id: "re_123" });
    // Redelivery of a sent message sends nothing.
    await deliver(co.id, [row.id], config, 2);
    expect(requests).toHaveLength(1);
  });

  it("a failing provider is retried with the error recorded, then marked failed after the last attempt", async () => {
    const co = await createCompany();
    const row = { id: await invitation(co, "down@example.com") };
    const requests = fakeProviderApi(() => new Response("upstream down", { status: 503 }));
    const config = { MAIL_PROVIDER: "http", MAIL_HTTP_URL: "https://mail.example/emails", MAIL_HTTP_KEY: "k" };
    for (let attempt = 1; attempt < OUTBOX_MAX_ATTEMPTS; attempt++) {
      const result = await deliver(co.id, [row.id], config, attempt);
      expect(result.retryMessages).toHaveLength(1);
      const now = await rowOf(co, row.id);
      expect(now).toMatchObject({ status: "queued", attempts: attempt });
      expect(now.last_error).toContain("503");
    }
    const last = await deliver(co.id, [row.id], config, OUTBOX_MAX_ATTEMPTS);
    expect(last.retryMessages).toHaveLength(0);
    expect(last.explicitAcks).toHaveLength(1);
    expect(await rowOf(co, row.id)).toMatchObject({ status: "failed", attempts: OUTBOX_MAX_ATTEMPTS });
    expect(requests).toHaveLength(OUTBOX_MAX_ATTEMPTS);
    // The operator finds it by status.
    const q = encodeURIComponent(JSON.stringify({ filters: [{ name: "status", op: "==", val: "failed" }] }));
    expect((await call("GET", `/_operator/companies/${co.slug}/outbox?q=${q}`, { headers: OPERATOR })).body.objects.map((m: OutboxRow) => m.id)).toEqual([row.id]);
  });

  it("writes in the company's language", async () => {
    const co = await createCompany();
    const patched = await call("PATCH", `/_operator/companies/${co.slug}`, { headers: OPERATOR, body: { language: "en" } });
    expect(patched.status, patched.text).toBe(200);
    expect((await co.api("GET", "/company")).body.objects[0]).toMatchObject({ language: "en", timezone: "Europe/Berlin", eta_update_minutes: 15, notify_stops_before: 1 });
    const id = await invitation(co, "en@example.com");
    await deliver(co.id, [id]);
    expect((await rowOf(co, id)).subject).toBe(`Your watcher account at Company ${co.slug}`);
  });

  it("refuses settings it cannot use, changing nothing", async () => {
    const co = await createCompany();
    for (const body of [{ timezone: "Mars/Olympus" }, { language: "fr" }, { eta_update_minutes: 0 }, { notify_stops_before: -1 }]) {
      const res = await call("PATCH", `/_operator/companies/${co.slug}`, { headers: OPERATOR, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.fields).toContain(Object.keys(body)[0]);
    }
    expect((await co.api("GET", "/company")).body.objects[0]).toMatchObject({ language: "de", timezone: "Europe/Berlin" });
  });
});

/** A started route of three deliveries whose customers want to hear (email and SMS), with an active driver. */
async function startedRoute(phones: string[], window = { from: tomorrowAt(6), to: tomorrowAt(20) }) {
  const co = await createCompany();
  const ids: number[] = [];
  for (const [i, [lng, lat]] of [[13.42, 52.5], [13.45, 52.52], [13.4, 52.54]].entries()) {
    const address = await insertAddress(co.id, { lng, lat });
    await env.DB.prepare("UPDATE addresses SET email = ?, phonenr = ?, country = 'DE' WHERE id = ?").bind(`c${i}@example.com`, phones[i] ?? null, address).run();
    ids.push((await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: window.from, pdt_to: window.to, els: 5, notify_customer: true } })).body.id);
  }
  const { driver, routeId, started } = await routeAndStart(co, ids);
  const order: number[] = started.body.deliveries.map((d: { id: number }) => d.id);
  return { co, driver, routeId, order };
}

describe("customer messages", () => {
  it("SMS numbers are normalised to E.164 from the address's country; one that cannot be dialled fails at once with the reason", async () => {
    const { co } = await startedRoute(["030 1234567", "0171 2345678", "12"]);
    const sms = (await outboxOf(co.slug, "delivery_eta")).filter((m) => m.channel === "sms");
    expect(sms.map((m) => m.to).sort()).toEqual(["+49301234567", "+491712345678", "12"].sort());
    const invalid = sms.find((m) => m.to === "12")!;
    expect(invalid).toMatchObject({ status: "failed", attempts: 0 });
    expect(invalid.last_error).toContain("not a valid phone number");
  });

  it("SMS go through the Twilio-compatible API: form fields, basic auth, the provider's id recorded", async () => {
    const co = await createCompany();
    const eta = { delivery_id: 1, route_id: 1, eta_from: tomorrowAt(9), eta_to: tomorrowAt(9, 30) };
    const id = await queuedRow(co, { channel: "sms", to: "+491712345678", template: "delivery_eta", data: eta });
    const requests = fakeProviderApi(() => Response.json({ sid: "SM123" }, { status: 201 }));
    const config = { SMS_PROVIDER: "twilio", SMS_ACCOUNT_SID: "AC42", SMS_AUTH_TOKEN: "secret", SMS_FROM: "+4915000000", SMS_API_URL: "https://sms.example" };
    await deliver(co.id, [id], config);
    expect(requests).toHaveLength(1);
    const [req] = requests;
    expect(req.url).toBe("https://sms.example/2010-04-01/Accounts/AC42/Messages.json");
    expect(req.headers.get("content-type")).toBe("application/x-www-form-urlencoded");
    expect(req.headers.get("authorization")).toBe(`Basic ${btoa("AC42:secret")}`);
    const form = new URLSearchParams(req.body);
    expect(form.get("From")).toBe("+4915000000");
    expect(form.get("To")).toBe("+491712345678");
    expect(form.get("Body")).toContain(`Ihre Lieferung von Company ${co.slug}`);
    expect(await rowOf(co, id)).toMatchObject({ status: "sent", provider_message_id: "SM123" });
  });

  it("a customer who asked for one channel hears only on that one", async () => {
    const co = await createCompany();
    const address = await insertAddress(co.id, { lng: 13.42, lat: 52.5 });
    await env.DB.prepare("UPDATE addresses SET email = 'both@example.com', phonenr = '0171 2345678', country = 'DE' WHERE id = ?").bind(address).run();
    const smsOnly = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: tomorrowAt(6), pdt_to: tomorrowAt(20), notify_customer: true, notify_customer_email: false } });
    expect(smsOnly.body).toMatchObject({ notify_customer: true, notify_customer_email: false, notify_customer_sms: null });
    await routeAndStart(co, [smsOnly.body.id]);
    // Through deliverydata (as uploads and shops send them): email only.
    const { started } = await routeAndStart(co, [], [
      { lat: 52.51, lng: 13.44, city: "Berlin", country: "DE", email: "mail@example.com", phonenr: "030 1234567", pdt_from: tomorrowAt(6), pdt_to: tomorrowAt(20), notify_customer_email: true },
    ]);
    const emailOnly = started.body.deliveries[0];
    expect(emailOnly).toMatchObject({ notify_customer: true, notify_customer_email: true, notify_customer_sms: false });
    const messages = await outboxOf(co.slug, "delivery_eta");
    expect(messages.map((m) => `${m.data.delivery_id}:${m.channel}`).sort()).toEqual([`${smsOnly.body.id}:sms`, `${emailOnly.id}:email`].sort());
  });

  it("the ETA email reads the window in the company's time zone", async () => {
    const { co, order } = await startedRoute([]);
    const [first] = (await outboxOf(co.slug, "delivery_eta")).filter((m) => m.data.delivery_id === order[0]);
    await deliver(co.id, [first.id]);
    const [sent] = (await outboxOf(co.slug, "delivery_eta")).filter((m) => m.id === first.id);
    const berlin = (iso: unknown) => new Intl.DateTimeFormat("de-DE", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(Date.parse(String(iso)));
    expect(sent.body).toContain(`zwischen ${berlin(first.data.eta_from)} und ${berlin(first.data.eta_to)} Uhr`);
    expect(sent.body).toContain("Europe/Berlin");
  });

  it("a customer hears again when the ETA moves by more than the margin, and not when it does not", async () => {
    // Windows open now, so ETAs follow the driving alone.
    const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
    const { co, driver, routeId, order } = await startedRoute([], { from: iso(Date.now()), to: iso(Date.now() + 14 * 3600_000) });
    // Refreshing from the same place moves nothing: no second message.
    await co.api("GET", `/updateetas/timewindow/${routeId}`);
    expect(await outboxOf(co.slug, "delivery_eta_update")).toHaveLength(0);
    // The depot is in Berlin; the driver turns out to be in Hamburg: every ETA moves by hours.
    await co.api("POST", "/drivertracking", { token: driver.token, body: { driver_id: driver.id, position: { type: "Point", coordinates: [9.99, 53.55] } } });
    const refreshed = await co.api("GET", `/updateetas/timewindow/${routeId}`);
    expect(refreshed.status).toBe(200);
    const updates = (await outboxOf(co.slug, "delivery_eta_update")).filter((m) => m.channel === "email");
    expect(updates.map((m) => m.data.delivery_id).sort()).toEqual([...order].sort());
    for (const m of updates) expect(m.data.eta_from).toBe(refreshed.body.etas.find((e: { delivery_id: number }) => e.delivery_id === m.data.delivery_id).eta_from);
    // Told once: the next refresh from the same place says nothing more.
    await co.api("GET", `/updateetas/timewindow/${routeId}`);
    expect((await outboxOf(co.slug, "delivery_eta_update")).filter((m) => m.channel === "email")).toHaveLength(order.length);
  });

  it("after a re-plan of the day, a customer hears of the new window only when it moved by more than the margin", async () => {
    const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
    const { co, driver, order } = await startedRoute([], { from: iso(Date.now()), to: iso(Date.now() + 14 * 3600_000) });
    // Re-planned from where the tour is: the windows barely move, nobody hears again.
    expect((await co.api("POST", "/calcroute/replan?async=false", { body: {} })).status).toBe(200);
    expect(await outboxOf(co.slug, "delivery_eta_update")).toHaveLength(0);
    // The driver is in Hamburg: re-planned from there, every window moves by hours and each customer hears once.
    await co.api("POST", "/drivertracking", { token: driver.token, body: { driver_id: driver.id, position: { type: "Point", coordinates: [9.99, 53.55] } } });
    const replanned = await co.api("POST", "/calcroute/replan?async=false", { body: {} });
    expect(replanned.status, replanned.text).toBe(200);
    const updates = (await outboxOf(co.slug, "delivery_eta_update")).filter((m) => m.channel === "email");
    expect(updates.map((m) => m.data.delivery_id).sort()).toEqual([...order].sort());
    expect(updates.every((m) => m.data.route_id === replanned.body.routes[0].id)).toBe(true);
  });

  it("the customer with one stop left before theirs hears that the driver is close", async () => {
    const { co, driver, order } = await startedRoute([]);
    expect(await outboxOf(co.slug, "delivery_approaching")).toHaveLength(0);
    expect((await co.api("POST", `/deliverydone/${order[0]}`, { token: driver.token, body: { status: "delivered" } })).status).toBe(200);
    const approaching = await outboxOf(co.slug, "delivery_approaching");
    expect(approaching.map((m) => m.data.delivery_id)).toEqual([order[2]]);
    expect(approaching[0]).toMatchObject({ channel: "email", data: { stops_before: 1 } });
    // No one is one stop away after the next report: nothing more.
    await co.api("POST", `/deliverydone/${order[1]}`, { token: driver.token, body: { status: "delivered" } });
    expect(await outboxOf(co.slug, "delivery_approaching")).toHaveLength(1);
  });
});
