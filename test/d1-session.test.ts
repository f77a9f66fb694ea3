import { env } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type TestCompany, call, createCompany } from "./helpers";

const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32,64}$/;

describe("D1 sessions and bookmarks (x-d1-bookmark)", () => {
  let co: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
  });
  afterEach(() => vi.restoreAllMocks());

  it("a client reads its own write: the write answers a bookmark, a read with it sees the object and answers one at least as new", async () => {
    const created = await co.api("POST", "/address", { body: { contactcompany: "Lesen nach Schreiben GmbH", city: "Berlin", country: "DE", lat: 52.52, lng: 13.4 } });
    expect(created.status).toBe(201);
    const written = created.headers.get("x-d1-bookmark");
    expect(written).toMatch(BOOKMARK);

    const read = await co.api("GET", `/address/${created.body.id}`, { headers: { "x-d1-bookmark": written! } });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: created.body.id, contactcompany: "Lesen nach Schreiben GmbH" });
    const after = read.headers.get("x-d1-bookmark");
    expect(after).toMatch(BOOKMARK);
    expect(after! >= written!).toBe(true);
  });

  it("reads start anywhere (or at the client's bookmark), everything else on the primary", async () => {
    const started = vi.spyOn(env.DB, "withSession");
    const first = await co.api("GET", "/company");
    const bookmark = first.headers.get("x-d1-bookmark")!;
    await co.api("GET", "/company", { headers: { "x-d1-bookmark": bookmark } });
    await co.api("POST", "/address", { body: { contactcompany: "Primär AG", lat: 52.5, lng: 13.4 } });
    expect(started.mock.calls.map(([constraint]) => constraint)).toEqual(["first-unconstrained", bookmark, "first-primary"]);
  });

  it("refuses a value that is not a bookmark with a 422 naming the header, and stores nothing", async () => {
    const before = (await co.api("GET", "/address")).body.num_results;
    for (const bad of ["first-primary", "not a bookmark", "00000000-0000000b-00000000-xyz", "x".repeat(300)]) {
      const res = await co.api("POST", "/address", { body: { contactcompany: "Nie gespeichert", lat: 52.5, lng: 13.4 }, headers: { "x-d1-bookmark": bad } });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ code: 422, message: expect.stringContaining("x-d1-bookmark"), fields: "x-d1-bookmark" });
    }
    expect((await co.api("GET", "/address")).body.num_results).toBe(before);
  });

  it("browsers may send the header and read it (CORS)", async () => {
    const preflight = await call("OPTIONS", `/${co.slug}/api/company`, {
      headers: { Origin: "https://console.example", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization,x-d1-bookmark" },
    });
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("x-d1-bookmark");
    const res = await co.api("GET", "/company", { headers: { Origin: "https://console.example" } });
    expect(res.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("x-d1-bookmark");
  });
});
