import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { searchMatchExpression, translateSearchQuery } from "../src/core/services/address-search";
import { type TestCompany, createCompany } from "./helpers";

describe("search query translation", () => {
  const fts = (input: string) => translateSearchQuery(input)?.expression ?? null;

  it("quotes every term and joins juxtaposed terms with AND", () => {
    expect(fts("Müller")).toBe('"Müller"');
    expect(fts("  Müller   Schmidt ")).toBe('"Müller" AND "Schmidt"');
    expect(fts("Müller AND Schmidt")).toBe('"Müller" AND "Schmidt"');
    expect(fts("Müller OR Schmidt NOT Meier")).toBe('"Müller" OR "Schmidt" NOT "Meier"');
  });

  it("keeps phrases and prefixes", () => {
    expect(fts('"Schmidt Transporte" Hans*')).toBe('"Schmidt Transporte" AND "Hans"*');
    expect(fts('"Bäckerei Mü"*')).toBe('"Bäckerei Mü"*');
    expect(fts("Hans-Peter")).toBe('"Hans Peter"');
  });

  it("only upper-case words are operators", () => {
    expect(fts("Müller and Schmidt")).toBe('"Müller" AND "and" AND "Schmidt"');
    expect(fts("a or b")).toBe('"a" AND "or" AND "b"');
  });

  it("drops syntax characters and dangling operators", () => {
    expect(fts("(Müller OR Schmidt)")).toBe('"Müller" OR "Schmidt"');
    expect(fts("{contactcompany}:x")).toBe('"contactcompany x"');
    expect(fts("NEAR(a b)")).toBe('"NEAR" AND "a" AND "b"');
    expect(fts('"unbalanced')).toBe('"unbalanced"');
    expect(fts("'; DROP TABLE addresses; --")).toBe('"DROP" AND "TABLE" AND "addresses"');
    expect(fts("AND Müller OR")).toBe('"Müller"');
    expect(fts("NOT Müller")).toBe('"Müller"');
    expect(fts("Müller AND OR NOT Schmidt")).toBe('"Müller" NOT "Schmidt"');
    expect(fts('a"b')).toBe('"a" AND "b"');
    expect(fts("^Müller +Schmidt")).toBe('"Müller" AND "Schmidt"');
  });

  it("answers null when nothing searchable is left", () => {
    for (const input of ["", "   ", "*", "AND OR", "NOT", '""', "()", "-- ;", '"*"']) expect(fts(input), input).toBeNull();
  });

  it("restricts columns by citocode", () => {
    expect(searchMatchExpression('"x"', false)).toBe('{contactcompany contactlastname contactfirstname} : ("x")');
    expect(searchMatchExpression('"x"', true)).toBe('{contactcompany contactlastname contactfirstname postalcode city} : ("x")');
  });
});

describe("FTS5 in D1", () => {
  it("the external-content index exists and MATCH works", async () => {
    const table = await env.DB.prepare("SELECT sql FROM sqlite_master WHERE name = 'addresses_fts'").first<{ sql: string }>();
    expect(table?.sql).toContain("fts5");
    const triggers = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'addresses' ORDER BY name").all<{ name: string }>();
    expect(triggers.results.map((r) => r.name)).toEqual(["addresses_fts_after_delete", "addresses_fts_after_insert", "addresses_fts_after_update"]);
    const probe = await env.DB.prepare("SELECT count(*) AS n FROM addresses_fts WHERE addresses_fts MATCH ?1").bind('"zzzznotthere"').first<{ n: number }>();
    expect(probe?.n).toBe(0);
  });
});

interface Hit {
  id: number;
  contactcompany: string;
}

describe("GET /searchaddress", () => {
  let co: TestCompany;
  let other: TestCompany;
  const ids: Record<string, number> = {};
  const seed = [
    { key: "baecker", contactcompany: "Bäckerei Müller GmbH", contactlastname: "Müller", contactfirstname: "Hans", postalcode: "10115", city: "Berlin", lat: 52.53, lng: 13.38 },
    { key: "soehne", contactcompany: "Müller & Söhne Logistik", contactlastname: "Schmidt", contactfirstname: "Anna", postalcode: "80331", city: "München", lat: 48.14, lng: 11.57 },
    { key: "transporte", contactcompany: "Schmidt Transporte", contactlastname: "Meier", contactfirstname: "Peter", postalcode: "20095", city: "Hamburg", lat: 53.55, lng: 9.99 },
    { key: "kaffee", contactcompany: "Berliner Kaffeerösterei", contactlastname: "Weber", contactfirstname: "Clara", postalcode: "50667", city: "Köln", lat: 50.94, lng: 6.96 },
    { key: "hansa", contactcompany: "Hansa Spedition", contactlastname: "Klein", contactfirstname: "Hans-Peter", postalcode: "10117", city: "Berlin", lat: 52.52, lng: 13.39 },
    { key: "francais", contactcompany: "Café Crème", contactlastname: "Lefèvre", contactfirstname: "Zoë", postalcode: "60311", city: "Frankfurt am Main", lat: 50.11, lng: 8.68 },
  ];

  const search = (params: string, company = co) => company.api("GET", `/searchaddress?${params}`);
  const found = async (query: string, extra = "") => {
    const res = await search(`query=${encodeURIComponent(query)}${extra}`);
    expect(res.status, `${query}: ${res.text}`).toBe(200);
    return (res.body.objects as Hit[]).map((o) => o.id);
  };
  const idsOf = (...keys: string[]) => keys.map((k) => ids[k]);
  const sorted = (list: number[]) => [...list].sort((a, b) => a - b);

  beforeAll(async () => {
    co = await createCompany();
    other = await createCompany();
    ids.depot = (await co.api("GET", "/companyaddress")).body.id; // 10115 Berlin, no names
    for (const { key, ...body } of seed) {
      const res = await co.api("POST", "/address", { body });
      expect(res.status).toBe(201);
      ids[key] = res.body.id;
    }
  });

  it("answers a list envelope of address objects", async () => {
    const res = await search("query=Spedition");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      num_results: 1,
      page: 1,
      total_pages: 1,
      objects: [
        expect.objectContaining({
          id: ids.hansa,
          contactcompany: "Hansa Spedition",
          contactfirstname: "Hans-Peter",
          postalcode: "10117",
          location: { type: "Point", coordinates: [13.39, 52.52] },
          deliverylocations: [],
          source_for_deliveries: [],
        }),
      ],
    });
    const none = await search("query=Nichtvorhanden");
    expect(none.body).toEqual({ num_results: 0, objects: [], page: 1, total_pages: 0 });
  });

  it("implicit AND and explicit AND", async () => {
    expect(await found("Müller Schmidt")).toEqual(idsOf("soehne"));
    expect(await found("Müller AND Schmidt")).toEqual(idsOf("soehne"));
    expect(await found("Schmidt Peter")).toEqual(idsOf("transporte"));
  });

  it("OR and NOT", async () => {
    expect(sorted(await found("Meier OR Weber"))).toEqual(sorted(idsOf("transporte", "kaffee")));
    expect(await found("Müller NOT Schmidt")).toEqual(idsOf("baecker"));
    expect(sorted(await found("Klein OR Müller AND Anna"))).toEqual(sorted(idsOf("hansa", "soehne")));
  });

  it("quoted phrases match exact word sequences", async () => {
    expect(await found('"Schmidt Transporte"')).toEqual(idsOf("transporte"));
    expect(await found('"Transporte Schmidt"')).toEqual([]);
    expect(await found('"Söhne Logistik"')).toEqual(idsOf("soehne"));
  });

  it("prefix terms", async () => {
    expect(await found("Spedi*")).toEqual(idsOf("hansa"));
    expect(await found("Kaffee*")).toEqual(idsOf("kaffee"));
    expect(sorted(await found("Hans*"))).toEqual(sorted(idsOf("baecker", "hansa")));
    expect(await found("Hansa")).toEqual(idsOf("hansa"));
    expect(await found("Kaffee")).toEqual([]);
  });

  it("ignores case, umlauts and accents", async () => {
    expect(sorted(await found("muller"))).toEqual(sorted(idsOf("baecker", "soehne")));
    expect(sorted(await found("MÜLLER"))).toEqual(sorted(idsOf("baecker", "soehne")));
    expect(await found("sohne")).toEqual(idsOf("soehne"));
    expect(await found("Backerei")).toEqual(idsOf("baecker"));
    expect(await found("cafe creme")).toEqual(idsOf("francais"));
    expect(await found("LEFEVRE zoe")).toEqual(idsOf("francais"));
  });

  it("ranks by bm25: more matching occurrences first", async () => {
    // "Müller" is company and last name of the bakery, only the company of the Söhne
    expect(await found("Müller")).toEqual(idsOf("baecker", "soehne"));
    const either = await found("Hans OR Peter");
    expect(either[0]).toBe(ids.hansa); // both words
    expect(sorted(either.slice(1))).toEqual(sorted(idsOf("baecker", "transporte")));
  });

  it("citocode=false searches names only; true adds postal code and city", async () => {
    expect(await found("Berlin")).toEqual([]);
    expect(await found("Berliner")).toEqual(idsOf("kaffee"));
    expect(sorted(await found("Berlin", "&citocode=true"))).toEqual(sorted(idsOf("depot", "baecker", "hansa")));
    expect(await found("80331")).toEqual([]);
    expect(await found("80331", "&citocode=true")).toEqual(idsOf("soehne"));
    expect(sorted(await found("101*", "&citocode=1"))).toEqual(sorted(idsOf("depot", "baecker", "hansa")));
    expect(await found("Koln", "&citocode=true")).toEqual(idsOf("kaffee"));
    expect(await found("Berlin", "&citocode=false")).toEqual([]);
    expect((await search("query=Berlin&citocode=maybe")).status).toBe(422);
  });

  it("limit: default 10, capped at 100, at least 1", async () => {
    for (let i = 0; i < 11; i++) {
      const res = await co.api("POST", "/address", { body: { contactcompany: `Limitfirma ${i}`, lat: 51, lng: 10 } });
      expect(res.status).toBe(201);
    }
    expect((await found("Limitfirma")).length).toBe(10);
    expect((await found("Limitfirma", "&limit=3")).length).toBe(3);
    expect((await found("Limitfirma", "&limit=1000")).length).toBe(11);
    const zero = await search("query=Limitfirma&limit=0");
    expect(zero.status).toBe(422);
    expect(zero.body.fields).toBe("limit");
    expect((await search("query=Limitfirma&limit=abc")).status).toBe(422);
  });

  it("hostile or malformed input is never a 500", async () => {
    const inputs = [
      '"unbalanced',
      "AND OR",
      "*",
      "NEAR(",
      "NEAR(Müller Schmidt, 2)",
      "'; DROP TABLE addresses; --",
      "{contactcompany}:x",
      "contactlastname:Schmidt",
      "Müller)",
      "(Müller",
      "^Müller",
      '"""',
      "Müller AND",
      "-Müller",
      "a".repeat(400),
      "\u0000",
      "🚚 Müller",
      "Müller*****",
      "x OR ".repeat(60),
    ];
    for (const input of inputs) {
      const res = await search(`query=${encodeURIComponent(input)}`);
      expect([200, 422], `${input}: ${res.status} ${res.text}`).toContain(res.status);
      if (res.status === 422) expect(res.body.fields).toBe("query");
    }
    // the addresses table is still there
    expect((await co.api("GET", "/address")).body.num_results).toBeGreaterThan(6);
    // specific answers
    expect(await found('"unbalanced')).toEqual([]);
    expect(await found("NEAR(")).toEqual([]);
    expect(await found("'; DROP TABLE addresses; --")).toEqual([]);
    expect(await found("{contactcompany}:x")).toEqual([]);
    expect(sorted(await found("(Müller"))).toEqual(sorted(idsOf("baecker", "soehne")));
    expect(sorted(await found("^Müller"))).toEqual(sorted(idsOf("baecker", "soehne")));
    expect(await found("🚚 Spedition")).toEqual(idsOf("hansa"));
    for (const input of ["AND OR", "*", "", '"*"', "()"]) {
      const res = await search(`query=${encodeURIComponent(input)}`);
      expect(res.status, input).toBe(422);
      expect(res.body).toMatchObject({ code: 422, fields: "query" });
    }
  });

  it("query is required", async () => {
    const res = await search("limit=5");
    expect(res.status).toBe(422);
    expect(res.body.fields).toBe("query");
  });

  it("another company cannot find the company's addresses", async () => {
    expect(await found("Spedition")).toEqual(idsOf("hansa"));
    const res = await search("query=Spedition", other);
    expect(res.status).toBe(200);
    expect(res.body.num_results).toBe(0);
    const theirs = await other.api("POST", "/address", { body: { contactcompany: "Hansa Spedition Nord", lat: 53.5, lng: 10 } });
    const fromOther = await search("query=Spedition", other);
    expect(fromOther.body.objects.map((o: Hit) => o.id)).toEqual([theirs.body.id]);
    expect(await found("Spedition")).toEqual(idsOf("hansa"));
  });

  it("the index follows updates and deletes", async () => {
    const created = await co.api("POST", "/address", { body: { contactcompany: "Alte Firma", contactlastname: "Vorher", lat: 52, lng: 13 } });
    expect(await found("Vorher")).toEqual([created.body.id]);
    await co.api("PATCH", "/address", { body: { id: created.body.id, contactlastname: "Nachher" } });
    expect(await found("Vorher")).toEqual([]);
    expect(await found("Nachher")).toEqual([created.body.id]);
    // a coordinate change does not touch the index entry
    await co.api("PATCH", "/address", { body: { id: created.body.id, lat: 52.1, lng: 13.1 } });
    expect(await found("Nachher Alte")).toEqual([created.body.id]);
    await env.DB.prepare("DELETE FROM addresses WHERE id = ?1").bind(created.body.id).run();
    expect(await found("Nachher")).toEqual([]);
    const integrity = await env.DB.prepare("INSERT INTO addresses_fts (addresses_fts, rank) VALUES ('integrity-check', 1)").run();
    expect(integrity.success).toBe(true);
  });

  it("watchers and drivers may search", async () => {
    const watcher = await co.user("watcher");
    const res = await co.api("GET", "/searchaddress?query=Spedition", { token: watcher.token });
    expect(res.status).toBe(200);
    expect(res.body.objects.map((o: Hit) => o.id)).toEqual(idsOf("hansa"));
  });
});
