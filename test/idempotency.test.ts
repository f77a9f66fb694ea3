import { createScheduledController, env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../src/worker/index";
import { HOLD_SECONDS, IDEMPOTENCY_HOURS } from "../src/core/services/idempotency";
import { ORIGIN, type TestCompany, call, createCompany, insertAddress, login, tomorrowAt } from "./helpers";

const count = async (co: TestCompany, table: string) => (await co.d1.prepare(`SELECT count(*) AS n FROM ${table} WHERE company_id = ?`).bind(co.id).first<{ n: number }>())!.n;
const keyed = (key: string) => ({ "Idempotency-Key": key });

async function companyWithAddress() {
  const co = await createCompany();
  const address = await insertAddress(co.id, { lng: 13.41, lat: 52.52 });
  return { co, order: { deliverylocation_id: address, pdt_from: tomorrowAt(9), pdt_to: tomorrowAt(12) } };
}

afterEach(() => vi.useRealTimers());

describe("Idempotency-Key", () => {
  it("a POST repeated after its answer was lost answers the first answer, marked replayed, and creates nothing more", async () => {
    const { co, order } = await companyWithAddress();
    const first = await co.api("POST", "/delivery", { body: order, headers: keyed("order-4711") });
    expect(first.status).toBe(201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    const again = await co.api("POST", "/delivery", { body: order, headers: keyed("order-4711") });
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.headers.get("content-type")).toMatch(/application\/json/);
    expect(again.body).toEqual(first.body);
    expect(await count(co, "deliveries")).toBe(1);
    // Another key is another request: a second delivery.
    expect((await co.api("POST", "/delivery", { body: order, headers: keyed("order-4712") })).status).toBe(201);
    expect(await count(co, "deliveries")).toBe(2);
  });

  it("50 concurrent repeats do the work once: one answer from the work, the others its replay or 409 while it runs", async () => {
    const { co, order } = await companyWithAddress();
    const answers = await Promise.all(Array.from({ length: 50 }, () => co.api("POST", "/delivery", { body: order, headers: keyed("burst-1") })));
    expect(await count(co, "deliveries")).toBe(1);
    const worked = answers.filter((a) => a.status === 201 && a.headers.get("Idempotent-Replayed") === null);
    expect(worked).toHaveLength(1);
    for (const a of answers) {
      if (a.status === 409) {
        expect(a.body).toMatchObject({ code: 409, fields: "Idempotency-Key" });
        expect(a.headers.get("Retry-After")).toBe("1");
      } else {
        expect(a.status).toBe(201);
        expect(a.body.id).toBe(worked[0].body.id);
      }
    }
    // Once the first has answered, every repeat is its replay.
    const later = await co.api("POST", "/delivery", { body: order, headers: keyed("burst-1") });
    expect([later.status, later.body.id, later.headers.get("Idempotent-Replayed")]).toEqual([201, worked[0].body.id, "true"]);
  });

  it("the same key with another body or path answers 422 and does nothing", async () => {
    const { co, order } = await companyWithAddress();
    const addresses = await count(co, "addresses");
    expect((await co.api("POST", "/delivery", { body: order, headers: keyed("k-1") })).status).toBe(201);
    const otherBody = await co.api("POST", "/delivery", { body: { ...order, notes: "ring twice" }, headers: keyed("k-1") });
    expect(otherBody.status).toBe(422);
    expect(otherBody.body).toMatchObject({ code: 422, fields: "Idempotency-Key" });
    expect(otherBody.body.message).toMatch(/another request/);
    const otherPath = await co.api("POST", "/address", { body: { street: "Invalidenstr.", housenumber: "1", postalcode: "10115", city: "Berlin", lat: 52.53, lng: 13.38 }, headers: keyed("k-1") });
    expect(otherPath.status).toBe(422);
    expect(await count(co, "deliveries")).toBe(1);
    expect(await count(co, "addresses")).toBe(addresses);
  });

  it("keys belong to their user: another user's same key is its own request, and a watcher cannot replay a dispatcher's answer", async () => {
    const { co, order } = await companyWithAddress();
    const other = await co.user("dispatcher");
    const watcher = await co.user("watcher");
    expect((await co.api("POST", "/delivery", { body: order, headers: keyed("shared") })).status).toBe(201);
    const second = await co.api("POST", "/delivery", { body: order, headers: keyed("shared"), token: other.token });
    expect([second.status, second.headers.get("Idempotent-Replayed")]).toEqual([201, null]);
    expect(await count(co, "deliveries")).toBe(2);
    const watched = await co.api("POST", "/delivery", { body: order, headers: keyed("shared"), token: watcher.token });
    expect(watched.status).toBe(403);
    // Keys of one company are not another's.
    const { co: elsewhere, order: theirs } = await companyWithAddress();
    expect((await elsewhere.api("POST", "/delivery", { body: theirs, headers: keyed("shared") })).headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("a refusal is kept like a success (a repeat does not run again); a PATCH repeats its first answer", async () => {
    const { co, order } = await companyWithAddress();
    const refused = await co.api("POST", "/delivery", { body: { ...order, deliverylocation_id: 999_999 }, headers: keyed("bad-1") });
    expect(refused.status).toBe(422);
    const repeated = await co.api("POST", "/delivery", { body: { ...order, deliverylocation_id: 999_999 }, headers: keyed("bad-1") });
    expect([repeated.status, repeated.headers.get("Idempotent-Replayed"), repeated.body]).toEqual([422, "true", refused.body]);

    const created = await co.api("POST", "/delivery", { body: order });
    const patch = { id: created.body.id, notes: "first change" };
    const changed = await co.api("PATCH", "/delivery", { body: patch, headers: keyed("p-1") });
    expect(changed.status).toBe(200);
    // Someone else changes it meanwhile: the repeat does not write the first change again.
    expect((await co.api("PATCH", "/delivery", { body: { id: created.body.id, notes: "second change" } })).status).toBe(200);
    const again = await co.api("PATCH", "/delivery", { body: patch, headers: keyed("p-1") });
    expect([again.status, again.headers.get("Idempotent-Replayed"), again.body.notes]).toEqual([200, "true", "first change"]);
    expect((await co.api("GET", `/delivery/${created.body.id}`)).body.notes).toBe("second change");
  });

  it("takes the key as the draft's quoted string or bare, and refuses a malformed one with nothing stored", async () => {
    const { co, order } = await companyWithAddress();
    expect((await co.api("POST", "/delivery", { body: order, headers: keyed('"8e03978e-40d5-43e8-bc93-6894a57f9324"') })).status).toBe(201);
    const bare = await co.api("POST", "/delivery", { body: order, headers: keyed("8e03978e-40d5-43e8-bc93-6894a57f9324") });
    expect(bare.headers.get("Idempotent-Replayed")).toBe("true");
    for (const bad of ["", "with space", "x".repeat(256), "ümlaut"]) {
      const res = await co.api("POST", "/delivery", { body: order, headers: keyed(bad) });
      expect([res.status, res.body.fields], JSON.stringify(bad)).toEqual([422, "Idempotency-Key"]);
    }
    expect(await count(co, "deliveries")).toBe(1);
    // GET (safe by itself) ignores the header.
    expect((await co.api("GET", "/delivery", { headers: keyed("with space") })).status).toBe(200);
  });

  it("a request cut off before answering holds its key until HOLD_SECONDS, then a repeat runs", async () => {
    const { co, order } = await companyWithAddress();
    const first = await co.api("POST", "/delivery", { body: order, headers: keyed("cut-1") });
    const user = await co.d1.prepare("SELECT user_id, fingerprint FROM idempotency_keys WHERE company_id = ? AND key = 'cut-1'").bind(co.id).first<{ user_id: number; fingerprint: string }>();
    // The state a crash leaves: the key held, no answer.
    const crashed = (heldUntilMs: number) =>
      co.d1
        .prepare("INSERT INTO idempotency_keys (company_id, user_id, key, fingerprint, holder, held_until) VALUES (?, ?, 'cut-2', ?, 'gone', ?)")
        .bind(co.id, user!.user_id, user!.fingerprint, new Date(heldUntilMs).toISOString().replace(/\.\d{3}Z$/, "Z"))
        .run();
    await crashed(Date.now() + HOLD_SECONDS * 1000);
    const held = await co.api("POST", "/delivery", { body: order, headers: keyed("cut-2") });
    expect(held.status).toBe(409);
    await co.d1.prepare("DELETE FROM idempotency_keys WHERE company_id = ? AND key = 'cut-2'").bind(co.id).run();
    await crashed(Date.now() - 1000);
    const taken = await co.api("POST", "/delivery", { body: order, headers: keyed("cut-2") });
    expect([taken.status, taken.headers.get("Idempotent-Replayed")]).toEqual([201, null]);
    expect(taken.body.id).not.toBe(first.body.id);
    expect(await count(co, "deliveries")).toBe(2);
  });

  it(`a key is free again after ${IDEMPOTENCY_HOURS} hours, and the cron prunes it`, async () => {
    const { co, order } = await companyWithAddress();
    await co.api("POST", "/delivery", { body: order, headers: keyed("day-1") });
    await co.api("POST", "/delivery", { body: order, headers: keyed("day-2") });
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + (IDEMPOTENCY_HOURS + 1) * 3_600_000);
    // The same user signs in again (its token of yesterday has ended).
    const token = await login(co.slug, co.dispatcher.email, co.dispatcher.password);
    const afterADay = await co.api("POST", "/delivery", { body: order, headers: keyed("day-1"), token });
    expect([afterADay.status, afterADay.headers.get("Idempotent-Replayed")]).toEqual([201, null]);
    await worker.scheduled(createScheduledController(), { ...env, WEBHOOK_QUEUE: { send: async () => undefined, sendBatch: async () => undefined } as never });
    vi.useRealTimers();
    const left = await co.d1.prepare("SELECT key FROM idempotency_keys WHERE company_id = ?").bind(co.id).all<{ key: string }>();
    // day-2 is gone; day-1 was claimed anew "a day later" and stays.
    expect(left.results.map((r) => r.key)).toEqual(["day-1"]);
  });

  it("a multipart upload repeated with a new boundary is the same request: replayed, the deliveries made once", async () => {
    const co = await createCompany();
    const csv = ["custom_id;PLZ;Ort;Von;Bis", `U-1;10115;Berlin;${tomorrowAt(8)};${tomorrowAt(12)}`, `U-2;10243;Berlin;${tomorrowAt(8)};${tomorrowAt(12)}`].join("\n");
    const send = async () => {
      const form = new FormData();
      form.append("file[]", new File([csv], "orders.csv"));
      const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/upload/deliveryonly`, { method: "POST", headers: { Authorization: `JWT ${co.dispatcher.token}`, ...keyed("night-import") }, body: form }));
      return { status: res.status, replayed: res.headers.get("Idempotent-Replayed"), body: (await res.json()) as { delivery_ids: number[] } };
    };
    const first = await send();
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const again = await send();
    expect([again.status, again.replayed, again.body.delivery_ids]).toEqual([200, "true", first.body.delivery_ids]);
    expect(await count(co, "deliveries")).toBe(2);
  });

  it("is declared on every POST and PATCH of the OpenAPI document, with its answers", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: "Idempotency-Key", in: "header", required: false });
    for (const [path, item] of Object.entries<Record<string, { parameters?: { $ref?: string }[]; responses: Record<string, { headers?: Record<string, unknown> }> }>>(doc.paths)) {
      if (!path.startsWith("/{slug}/api/")) continue;
      for (const [method, op] of Object.entries(item)) {
        const keyedMethod = method === "post" || method === "patch";
        expect(op.parameters?.some((p) => p.$ref === "#/components/parameters/IdempotencyKey") ?? false, `${method} ${path}`).toBe(keyedMethod);
        if (keyedMethod) expect(op.responses["409"] && op.responses["422"], `${method} ${path}`).toBeTruthy();
      }
    }
  });
});
