import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ORIGIN, type TestCompany, createCompany, insertAddress, routeAndStart, tomorrowAt } from "./helpers";

const count = async (co: TestCompany, table: string) => (await co.d1.prepare(`SELECT count(*) AS n FROM ${table} WHERE company_id = ?`).bind(co.id).first<{ n: number }>())!.n;
const byExternalId = (what: "delivery" | "address", id: string) => `/${what}/by-external-id/${encodeURIComponent(id)}`;

async function companyWithAddress() {
  const co = await createCompany();
  const address = await insertAddress(co.id, { lng: 13.41, lat: 52.52 });
  return { co, order: { deliverylocation_id: address, pdt_from: tomorrowAt(9), pdt_to: tomorrowAt(12) } };
}

describe("orders keyed by the sending system's id (external_id)", () => {
  it("PUT creates the delivery once (201) and changes it after (200): never a second one", async () => {
    const { co, order } = await companyWithAddress();
    const created = await co.api("PUT", byExternalId("delivery", "SHOP-4711"), { body: { ...order, notes: "first" } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ external_id: "SHOP-4711", notes: "first", status: 0 });
    const changed = await co.api("PUT", byExternalId("delivery", "SHOP-4711"), { body: { notes: "second", pdt_to: tomorrowAt(13) } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ id: created.body.id, external_id: "SHOP-4711", notes: "second", pdt_from: tomorrowAt(9), pdt_to: tomorrowAt(13) });
    expect(await count(co, "deliveries")).toBe(1);
    // Found by it like any field.
    const listed = await co.api("GET", "/delivery");
    expect(listed.body.objects.map((d: { external_id: string }) => d.external_id)).toEqual(["SHOP-4711"]);
    const q = encodeURIComponent(JSON.stringify({ filters: [{ name: "external_id", op: "eq", val: "SHOP-4711" }], single: true }));
    expect((await co.api("GET", `/delivery?q=${q}`)).body.id).toBe(created.body.id);
  });

  it("two imports of the same order at once make one delivery: one creates it, the other changes it", async () => {
    const { co, order } = await companyWithAddress();
    for (const id of ["race-1", "race-2", "race-3"]) {
      const answers = await Promise.all([
        co.api("PUT", byExternalId("delivery", id), { body: { ...order, notes: "from the shop" } }),
        co.api("PUT", byExternalId("delivery", id), { body: { ...order, notes: "from the warehouse" } }),
      ]);
      expect(answers.map((a) => a.status).sort(), JSON.stringify(answers.map((a) => a.body))).toEqual([200, 201]);
      expect(answers[0].body.id).toBe(answers[1].body.id);
    }
    expect(await count(co, "deliveries")).toBe(3);
  });

  it("a new order needs its address, the body cannot rename it, and another delivery's id is a 409", async () => {
    const { co, order } = await companyWithAddress();
    const missing = await co.api("PUT", byExternalId("delivery", "no-address"), { body: { notes: "where to?" } });
    expect([missing.status, missing.body.fields]).toEqual([422, "deliverylocation_id"]);
    const renamed = await co.api("PUT", byExternalId("delivery", "a"), { body: { ...order, external_id: "b" } });
    expect(renamed.status).toBe(422);
    expect(await count(co, "deliveries")).toBe(0);

    expect((await co.api("PUT", byExternalId("delivery", "taken"), { body: order })).status).toBe(201);
    const posted = await co.api("POST", "/delivery", { body: { ...order, external_id: "taken" } });
    expect([posted.status, posted.body.fields]).toEqual([409, "external_id"]);
    const other = await co.api("POST", "/delivery", { body: { ...order, external_id: "free" } });
    expect(other.status).toBe(201);
    const patched = await co.api("PATCH", "/delivery", { body: { id: other.body.id, external_id: "taken" } });
    expect([patched.status, patched.body.fields]).toEqual([409, "external_id"]);
    for (const bad of ["", " ".repeat(3), "x".repeat(101), "tab\there"]) {
      const res = await co.api("POST", "/delivery", { body: { ...order, external_id: bad } });
      expect(res.status, JSON.stringify(bad)).toBe(422);
    }
    expect(await count(co, "deliveries")).toBe(2);
  });

  it("takes any printable id (a slash, spaces, umlauts) URL-encoded in the path; ids are per company", async () => {
    const { co, order } = await companyWithAddress();
    for (const id of ["2026/4711", "Bestellung 12 ä", "a?b#c"]) {
      const res = await co.api("PUT", byExternalId("delivery", id), { body: order });
      expect([res.status, res.body.external_id], id).toEqual([201, id]);
      expect((await co.api("PUT", byExternalId("delivery", id), { body: { notes: "again" } })).status).toBe(200);
    }
    const { co: elsewhere, order: theirs } = await companyWithAddress();
    expect((await elsewhere.api("PUT", byExternalId("delivery", "2026/4711"), { body: theirs })).status).toBe(201);
    expect(await count(co, "deliveries")).toBe(3);
    expect(await count(elsewhere, "deliveries")).toBe(1);
  });

  it("a change of an order on a route that is on the way is refused as PATCH refuses it; on a planned route it is changed", async () => {
    const { co, order } = await companyWithAddress();
    const planned = await co.api("PUT", byExternalId("delivery", "planned"), { body: order });
    const driving = await co.api("PUT", byExternalId("delivery", "driving"), { body: order });
    await routeAndStart(co, [driving.body.id]);
    const refused = await co.api("PUT", byExternalId("delivery", "driving"), { body: { notes: "too late" } });
    expect([refused.status, refused.body.fields]).toEqual([409, "route_id"]);
    expect((await co.api("GET", `/delivery/${driving.body.id}`)).body.notes).toBeNull();
    const changed = await co.api("PUT", byExternalId("delivery", "planned"), { body: { notes: "in time" } });
    expect([changed.status, changed.body.notes]).toEqual([200, "in time"]);
    expect(planned.body.id).toBe(changed.body.id);
  });

  it("addresses: PUT creates and then changes the address by its external id, geocoding it again when it moves", async () => {
    const co = await createCompany();
    const created = await co.api("PUT", byExternalId("address", "CUST-1042"), { body: { contactcompany: "Café Lindner", street: "Südstern", postalcode: "10961", city: "Berlin", lat: 52.49, lng: 13.41 } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ external_id: "CUST-1042", contactcompany: "Café Lindner" });
    const moved = await co.api("PUT", byExternalId("address", "CUST-1042"), { body: { street: "Marienplatz", postalcode: "80331", city: "München" } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: created.body.id, contactcompany: "Café Lindner", city: "München" });
    expect(moved.body.location.coordinates[1]).toBeGreaterThan(48);
    expect(moved.body.location.coordinates[1]).toBeLessThan(48.3);
    const answers = await Promise.all([1, 2].map(() => co.api("PUT", byExternalId("address", "CUST-2000"), { body: { city: "Berlin", lat: 52.5, lng: 13.4 } })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 201]);
    const taken = await co.api("POST", "/address", { body: { city: "Berlin", lat: 52.5, lng: 13.4, external_id: "CUST-2000" } });
    expect([taken.status, taken.body.fields]).toEqual([409, "external_id"]);
    const addresses = (await co.api("GET", "/address")).body.objects.filter((a: { external_id: string | null }) => a.external_id);
    expect(addresses.map((a: { external_id: string }) => a.external_id).sort()).toEqual(["CUST-1042", "CUST-2000"]);
  });

  it("an upload's rows with an external_id change the deliveries they name and add the others; one on the way is listed, not changed", async () => {
    const co = await createCompany();
    const upload = async (rows: string[]) => {
      const form = new FormData();
      form.append("file[]", new File([["external_id;PLZ;Ort;Von;Bis;notes", ...rows].join("\n")], "orders.csv"));
      const res = await exports.default.fetch(new Request(`${ORIGIN}/${co.slug}/api/upload/deliveryonly`, { method: "POST", headers: { Authorization: `JWT ${co.dispatcher.token}` }, body: form }));
      return { status: res.status, body: (await res.json()) as { num_created: number; num_updated: number; delivery_ids: number[]; vague_addresses: { row: number; message: string }[] } };
    };
    const first = await upload([`N-1;10115;Berlin;${tomorrowAt(8)};${tomorrowAt(12)};one`, `N-2;10243;Berlin;${tomorrowAt(8)};${tomorrowAt(12)};two`, `N-3;10437;Berlin;${tomorrowAt(8)};${tomorrowAt(12)};three`]);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect([first.body.num_created, first.body.num_updated]).toEqual([3, 0]);
    const ids = first.body.delivery_ids;
    const n3 = (await co.api("GET", `/delivery?q=${encodeURIComponent(JSON.stringify({ filters: [{ name: "external_id", op: "eq", val: "N-3" }], single: true }))}`)).body;
    await routeAndStart(co, [n3.id]);

    const second = await upload([`N-2;10243;Berlin;${tomorrowAt(14)};${tomorrowAt(18)};two, afternoon`, `N-3;10437;Berlin;${tomorrowAt(8)};${tomorrowAt(12)};three changed`, `N-4;10115;Berlin;${tomorrowAt(8)};${tomorrowAt(12)};four`]);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect([second.body.num_created, second.body.num_updated]).toEqual([1, 1]);
    expect(second.body.vague_addresses).toEqual([expect.objectContaining({ row: 3, message: expect.stringMatching(/N-3 is on a route that is on the way/) })]);
    expect(await count(co, "deliveries")).toBe(4);
    const n2 = (await co.api("GET", `/delivery/${ids[1]}`)).body;
    expect(n2).toMatchObject({ external_id: "N-2", notes: "two, afternoon", pdt_from: tomorrowAt(14), pdt_to: tomorrowAt(18) });
    expect(second.body.delivery_ids).toContain(ids[1]);
    expect((await co.api("GET", `/delivery/${n3.id}`)).body.notes).toBe("three");
  });
});
