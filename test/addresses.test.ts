import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { haversineMeters } from "../src/core/geo";
import { type TestCompany, call, createCompany } from "./helpers";

const q = (query: object) => `q=${encodeURIComponent(JSON.stringify(query))}`;
const coordsOf = (a: { location: { coordinates: [number, number] } }) => a.location.coordinates;
const distanceTo = (a: { location: { coordinates: [number, number] } }, lng: number, lat: number) =>
  haversineMeters(coordsOf(a)[0], coordsOf(a)[1], lng, lat);

describe("addresses: create, read, change", () => {
  let co: TestCompany;
  let other: TestCompany;
  beforeAll(async () => {
    co = await createCompany();
    other = await createCompany();
  });

  it("POST with coordinates keeps them, answers 201 with the stored object and normalises the country", async () => {
    const res = await co.api("POST", "/address", {
      body: {
        contactcompany: "Kaffeehaus Alster",
        contactlastname: "Jansen",
        street: "Jungfernstieg",
        housenumber: "1",
        postalcode: "20095",
        city: "Hamburg",
        country: "Deutschland",
        location: { type: "Point", coordinates: [9.9937, 53.5533] },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      contactcompany: "Kaffeehaus Alster",
      customernr: null,
      contactfirstname: null,
      contactlastname: "Jansen",
      street: "Jungfernstieg",
      housenumber: "1",
      postalcode: "20095",
      city: "Hamburg",
      district: null,
      country: "DE",
      email: null,
      phonenr: null,
      location: { type: "Point", coordinates: [9.9937, 53.5533] },
      addresstype: null,
      external_id: null,
      deliverylocations: [],
      source_for_deliveries: [],
    });
    const stored = await co.api("GET", `/address/${res.body.id}`);
    expect(stored.status).toBe(200);
    expect(stored.body).toEqual(res.body);
  });

  it("POST with lat/lng keeps them", async () => {
    const res = await co.api("POST", "/address", { body: { contactcompany: "LatLng GmbH", lat: 50.1109, lng: 8.6821, country: "DE" } });
    expect(res.status).toBe(201);
    expect(res.body.location).toEqual({ type: "Point", coordinates: [8.6821, 50.1109] });
  });

  it("POST without a location geocodes from the postal code (10115 Berlin)", async () => {
    const res = await co.api("POST", "/address", { body: { contactcompany: "Mitte Logistik", postalcode: "10115", city: "Berlin", country: "DE" } });
    expect(res.status).toBe(201);
    expect(res.body.postalcode).toBe("10115");
    expect(res.body.country).toBe("DE");
    expect(distanceTo(res.body, 13.384, 52.532)).toBeLessThan(5000);
  });

  it("POST geocodes 80331 München and accepts country names", async () => {
    const res = await co.api("POST", "/address", { body: { street: "Marienplatz", postalcode: "80331", city: "München", country: "Germany" } });
    expect(res.status).toBe(201);
    expect(res.body.country).toBe("DE");
    expect(res.body.city).toBe("München");
    expect(distanceTo(res.body, 11.5755, 48.1374)).toBeLessThan(5000);

    const byName = await co.api("POST", "/address", { body: { postalcode: "80331", country: "Deutschland" } });
    expect(byName.status).toBe(201);
    expect(byName.body.country).toBe("DE");
    expect(byName.body.city).toMatch(/^München/);
    expect(distanceTo(byName.body, 11.5755, 48.1374)).toBeLessThan(5000);
  });

  it("an address that cannot be geocoded is 422 and nothing is stored", async () => {
    const before = (await co.api("GET", "/address")).body.num_results;
    const byCode = await co.api("POST", "/address", { body: { contactcompany: "Ghost", postalcode: "00000", country: "DE" } });
    expect(byCode.status).toBe(422);
    expect(byCode.body.code).toBe(422);
    expect(byCode.body.fields).toContain("postalcode");
    const byCity = await co.api("POST", "/address", { body: { contactcompany: "Ghost", city: "Nowhereville" } });
    expect(byCity.status).toBe(422);
    expect(byCity.body.fields).toContain("city");
    const nothing = await co.api("POST", "/address", { body: { contactcompany: "No place at all" } });
    expect(nothing.status).toBe(422);
    const badCountry = await co.api("POST", "/address", { body: { postalcode: "10115", country: "Atlantis" } });
    expect(badCountry.status).toBe(422);
    expect(badCountry.body.fields).toBe("country");
    const after = (await co.api("GET", "/address")).body.num_results;
    expect(after).toBe(before);
  });

  it("invalid input is 422 naming the field", async () => {
    const res = await co.api("POST", "/address", { body: { postalcode: "10115", lat: 95, lng: 10 } });
    expect(res.status).toBe(422);
    expect(res.body.fields).toBe("lat");
    const half = await co.api("POST", "/address", { body: { postalcode: "10115", lat: 52 } });
    expect(half.status).toBe(422);
    expect(half.body.fields).toBe("lng");
  });

  it("GET /address/{id} is 404 for unknown ids and other companies' addresses", async () => {
    const mine = await co.api("POST", "/address", { body: { contactcompany: "Private", lat: 52.5, lng: 13.4 } });
    expect((await co.api("GET", `/address/${mine.body.id}`)).status).toBe(200);
    const foreign = await other.api("GET", `/address/${mine.body.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ code: 404, message: "Address not found", fields: "" });
    expect((await co.api("GET", "/address/999999")).status).toBe(404);
  });

  it("PATCH re-geocodes when the postal code and city change", async () => {
    const created = await co.api("POST", "/address", { body: { contactcompany: "Umzug AG", postalcode: "10115", city: "Berlin" } });
    expect(distanceTo(created.body, 13.384, 52.532)).toBeLessThan(5000);
    const moved = await co.api("PATCH", "/address", { body: { id: created.body.id, postalcode: "80331", city: "München" } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: created.body.id, contactcompany: "Umzug AG", postalcode: "80331", city: "München", country: "DE" });
    expect(distanceTo(moved.body, 11.5755, 48.1374)).toBeLessThan(5000);
    const stored = await co.api("GET", `/address/${created.body.id}`);
    expect(stored.body).toEqual(moved.body);
  });

  it("PATCH of non-locating fields keeps the coordinate; a given location is kept as given", async () => {
    const created = await co.api("POST", "/address", { body: { contactcompany: "Fix Punkt", postalcode: "12345", country: "DE", location: { type: "Point", coordinates: [7.1, 50.7] } } });
    expect(created.status).toBe(201);
    // "Germany" is the stored country (DE): not a change, so no geocoding
    const renamed = await co.api("PATCH", "/address", { body: { id: created.body.id, contactcompany: "Fix Punkt 2", phonenr: "+49 30 1234", country: "Germany" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ contactcompany: "Fix Punkt 2", phonenr: "+49 30 1234", postalcode: "12345", country: "DE" });
    expect(renamed.body.location.coordinates).toEqual([7.1, 50.7]);
    // a new postal code together with a location: the location wins, no geocoding
    const placed = await co.api("PATCH", "/address", { body: { id: created.body.id, postalcode: "80331", lat: 48.2, lng: 11.6 } });
    expect(placed.status).toBe(200);
    expect(placed.body.location.coordinates).toEqual([11.6, 48.2]);
    expect(placed.body.postalcode).toBe("80331");
    // null clears a text field
    const cleared = await co.api("PATCH", "/address", { body: { id: created.body.id, phonenr: null } });
    expect(cleared.body.phonenr).toBeNull();
    expect(cleared.body.contactcompany).toBe("Fix Punkt 2");
  });

  it("PATCH to an ungeocodable address is 422 and changes nothing", async () => {
    const created = await co.api("POST", "/address", { body: { contactcompany: "Bleibt", postalcode: "10115", city: "Berlin" } });
    const res = await co.api("PATCH", "/address", { body: { id: created.body.id, contactcompany: "Weg", postalcode: "00000", city: "Nowhereville" } });
    expect(res.status).toBe(422);
    const stored = await co.api("GET", `/address/${created.body.id}`);
    expect(stored.body).toEqual(created.body);
  });

  it("PATCH of an unknown or another company's id is 404; without id 422", async () => {
    const mine = await co.api("POST", "/address", { body: { contactcompany: "Mine", lat: 52.5, lng: 13.4 } });
    expect((await co.api("PATCH", "/address", { body: { id: 999999, contactcompany: "x" } })).status).toBe(404);
    const foreign = await other.api("PATCH", "/address", { body: { id: mine.body.id, contactcompany: "Stolen" } });
    expect(foreign.status).toBe(404);
    expect((await co.api("GET", `/address/${mine.body.id}`)).body.contactcompany).toBe("Mine");
    const noId = await co.api("PATCH", "/address", { body: { contactcompany: "x" } });
    expect(noId.status).toBe(422);
    expect(noId.body.fields).toBe("id");
  });

  it("watchers read but may not POST or PATCH", async () => {
    const watcher = await co.user("watcher");
    const created = await co.api("POST", "/address", { body: { contactcompany: "Watched", lat: 52.5, lng: 13.4 } });
    expect((await co.api("GET", "/address", { token: watcher.token })).status).toBe(200);
    expect((await co.api("GET", `/address/${created.body.id}`, { token: watcher.token })).status).toBe(200);
    const post = await co.api("POST", "/address", { token: watcher.token, body: { contactcompany: "W", lat: 52.5, lng: 13.4 } });
    expect(post.status).toBe(403);
    const patch = await co.api("PATCH", "/address", { token: watcher.token, body: { id: created.body.id, contactcompany: "W" } });
    expect(patch.status).toBe(403);
    expect((await co.api("GET", `/address/${created.body.id}`)).body.contactcompany).toBe("Watched");
  });
});

describe("addresses: list", () => {
  let co: TestCompany;
  let ids: Record<string, number>;
  beforeAll(async () => {
    co = await createCompany();
    ids = {};
    const rows = [
      { key: "a", contactcompany: "Alpha Bau", customernr: "K-1", postalcode: "10115", city: "Berlin", country: "DE", addresstype: "customer", lat: 52.53, lng: 13.38 },
      { key: "b", contactcompany: "Beta Handel", customernr: "K-2", postalcode: "80331", city: "München", country: "DE", addresstype: "supplier", lat: 48.14, lng: 11.57 },
      { key: "c", contactcompany: "Gamma Wien", customernr: "K-3", postalcode: "1010", city: "Wien", country: "Österreich", addresstype: "customer", lat: 48.21, lng: 16.37 },
    ];
    for (const { key, ...body } of rows) {
      const res = await co.api("POST", "/address", { body });
      expect(res.status).toBe(201);
      ids[key] = res.body.id;
    }
  });

  const names = (res: { body: { objects: { contactcompany: string }[] } }) => res.body.objects.map((o) => o.contactcompany);

  it("lists the company's addresses (depot included) in the envelope", async () => {
    const res = await co.api("GET", "/address");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ num_results: 4, page: 1, total_pages: 1 });
    expect(res.body.objects.map((o: { id: number }) => o.id).slice(1)).toEqual([ids.a, ids.b, ids.c]);
    const paged = await co.api("GET", "/address?results_per_page=3&page=2");
    expect(paged.body).toMatchObject({ num_results: 4, page: 2, total_pages: 2 });
    expect(paged.body.objects.map((o: { id: number }) => o.id)).toEqual([ids.c]);
  });

  it("filters on address fields", async () => {
    expect(names(await co.api("GET", `/address?${q({ filters: [{ name: "postalcode", op: "==", val: "80331" }] })}`))).toEqual(["Beta Handel"]);
    expect(names(await co.api("GET", `/address?${q({ filters: [{ name: "country", op: "==", val: "AT" }] })}`))).toEqual(["Gamma Wien"]);
    expect(names(await co.api("GET", `/address?${q({ filters: [{ name: "city", op: "in", val: ["Berlin", "Wien"] }], order_by: [{ field: "city", direction: "desc" }] })}`))).toEqual(["Gamma Wien", null, "Alpha Bau"]);
    expect(names(await co.api("GET", `/address?${q({ filters: [{ name: "addresstype", op: "==", val: "customer" }] })}`))).toEqual(["Alpha Bau", "Gamma Wien"]);
    expect(names(await co.api("GET", `/address?${q({ filters: [{ name: "contactcompany", op: "like", val: "%Handel%" }] })}`))).toEqual(["Beta Handel"]);
    expect(names(await co.api("GET", `/address?${q({ filters: [{ name: "customernr", op: "==", val: "K-3" }] })}`))).toEqual(["Gamma Wien"]);
    expect(names(await co.api("GET", `/address?${q({ filters: [{ name: "id", op: ">=", val: ids.b }] })}`))).toEqual(["Beta Handel", "Gamma Wien"]);
    const recent = await co.api("GET", `/address?${q({ filters: [{ name: "created_at", op: ">=", val: "2000-01-01T00:00:00Z" }] })}`);
    expect(recent.body.num_results).toBe(4);
    const single = await co.api("GET", `/address?${q({ filters: [{ name: "customernr", op: "==", val: "K-1" }], single: true })}`);
    expect(single.status).toBe(200);
    expect(single.body).toMatchObject({ id: ids.a, contactcompany: "Alpha Bau", deliverylocations: [], source_for_deliveries: [] });
  });

  it("an unknown filter field is 422 naming it", async () => {
    const res = await co.api("GET", `/address?${q({ filters: [{ name: "company_id", op: "==", val: 1 }] })}`);
    expect(res.status).toBe(422);
    expect(res.body.fields).toContain("company_id");
  });

  it("answers deliverylocations and source_for_deliveries", async () => {
    const insert = (to: number | null, from: number | null) =>
      env.DB.prepare("INSERT INTO deliveries (company_id, deliverylocation_id, supplierlocation_id) VALUES (?1, ?2, ?3) RETURNING id")
        .bind(co.id, to, from)
        .first<{ id: number }>()
        .then((r) => r!.id);
    const d1 = await insert(ids.a, ids.b);
    const d2 = await insert(ids.a, ids.b);
    const d3 = await insert(ids.b, ids.c);
    const list = await co.api("GET", "/address");
    const byId = new Map(list.body.objects.map((o: { id: number }) => [o.id, o]));
    expect(byId.get(ids.a)).toMatchObject({ deliverylocations: [d1, d2], source_for_deliveries: [] });
    expect(byId.get(ids.b)).toMatchObject({ deliverylocations: [d3], source_for_deliveries: [d1, d2] });
    expect(byId.get(ids.c)).toMatchObject({ deliverylocations: [], source_for_deliveries: [d3] });
    const one = await co.api("GET", `/address/${ids.b}`);
    expect(one.body).toMatchObject({ deliverylocations: [d3], source_for_deliveries: [d1, d2] });
  });
});

describe("addresses: reverse geocoding (/addressforlocation)", () => {
  let co: TestCompany;
  let stored: { id: number };
  beforeAll(async () => {
    co = await createCompany();
    stored = (await co.api("POST", "/address", { body: { contactcompany: "Elbe Lager", postalcode: "01067", city: "Dresden", lat: 51.0504, lng: 13.7373 } })).body;
  });

  it("a point near a stored address answers it", async () => {
    // ~60 m north-east of the stored point
    const res = await co.api("GET", "/addressforlocation?lon=13.7378&lat=51.0508");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: stored.id, contactcompany: "Elbe Lager", postalcode: "01067", city: "Dresden", deliverylocations: [], source_for_deliveries: [] });
    expect(res.body.location).toEqual({ type: "Point", coordinates: [13.7373, 51.0504] });
    expect(res.body.distance).toBeGreaterThan(40);
    expect(res.body.distance).toBeLessThan(80);
  });

  it("takes the longitude as lng too (the name every body uses), never both", async () => {
    const byLng = await co.api("GET", "/addressforlocation?lng=13.7378&lat=51.0508");
    expect([byLng.status, byLng.body.id]).toEqual([200, stored.id]);
    const both = await co.api("GET", "/addressforlocation?lon=13.7378&lng=13.7378&lat=51.0508");
    expect([both.status, both.body.fields]).toEqual([422, "lon,lng"]);
    const neither = await co.api("GET", "/addressforlocation?lat=51.0508");
    expect([neither.status, neither.body.fields]).toEqual([422, "lon"]);
    const areaByLng = await co.api("GET", "/areaforpoint?lat=48.1374&lng=11.5755");
    expect([areaByLng.status, areaByLng.body.plz]).toEqual([200, "80331"]);
  });

  it("the company depot is found too", async () => {
    const res = await co.api("GET", "/addressforlocation?lon=13.3849&lat=52.5317");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ postalcode: "10115", city: "Berlin", distance: 0 });
    expect(res.body.id).toEqual(expect.any(Number));
  });

  it("elsewhere in Germany answers the gazetteer place with id null", async () => {
    // Dresden, ~300 m from the stored address: beyond 150 m
    const res = await co.api("GET", "/addressforlocation?lon=13.7373&lat=51.0530");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: null, addresstype: "gazetteer", country: "DE", contactcompany: null, deliverylocations: [], source_for_deliveries: [] });
    expect(res.body.postalcode).toMatch(/^01\d{3}$/);
    expect(res.body.city).toMatch(/Dresden/);
    // Hamburg, Rathausmarkt
    const hh = await co.api("GET", "/addressforlocation?lon=9.9925&lat=53.5503");
    expect(hh.status).toBe(200);
    expect(hh.body).toMatchObject({ id: null, addresstype: "gazetteer", country: "DE", city: "Hamburg" });
    expect(hh.body.postalcode).toMatch(/^20\d{3}$/);
    expect(hh.body.distance).toBeLessThan(5000);
    expect(distanceTo(hh.body, 9.9925, 53.5503)).toBeLessThan(5000);
  });

  it("nothing near (the Atlantic) is 422", async () => {
    const res = await co.api("GET", "/addressforlocation?lon=-30&lat=45");
    expect(res.status).toBe(422);
    expect(res.body.code).toBe(422);
  });

  it("missing, non-numeric or out-of-range coordinates are 422 naming them", async () => {
    const missing = await co.api("GET", "/addressforlocation?lon=13.4");
    expect(missing.status).toBe(422);
    expect(missing.body.fields).toBe("lat");
    const empty = await co.api("GET", "/addressforlocation?lon=13.4&lat=");
    expect(empty.status).toBe(422);
    expect(empty.body.fields).toBe("lat");
    const text = await co.api("GET", "/addressforlocation?lon=east&lat=52");
    expect(text.status).toBe(422);
    expect(text.body.fields).toBe("lon");
    const range = await co.api("GET", "/addressforlocation?lon=13.4&lat=91");
    expect(range.status).toBe(422);
    expect(range.body.fields).toBe("lat");
  });

  it("another company's address is not answered", async () => {
    const other = await createCompany();
    const res = await other.api("GET", "/addressforlocation?lon=13.7378&lat=51.0508");
    expect(res.status).toBe(200);
    expect(res.body.id).toBeNull();
  });
});

describe("addresses: OpenAPI", () => {
  it("declares every address endpoint", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    for (const [path, method] of [
      ["/{slug}/api/address", "get"],
      ["/{slug}/api/address", "post"],
      ["/{slug}/api/address", "patch"],
      ["/{slug}/api/address/{address_id}", "get"],
      ["/{slug}/api/addressforlocation", "get"],
      ["/{slug}/api/searchaddress", "get"],
    ]) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    expect(doc.paths["/{slug}/api/address"].post.responses["201"]).toBeDefined();
  });
});
