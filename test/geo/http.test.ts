import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { createGeocoder } from "../../src/core/geo";
import { GazetteerGeocoder } from "../../src/core/geo/gazetteer";
import { D1GeocodeCache, HttpGeocoder, MemoryGeocodeCache } from "../../src/core/geo/http";

interface Call {
  url: URL;
  headers: Headers;
}

/** A fake fetch answering with `handler`'s JSON (or throwing / hanging), recording every call. */
function fakeFetch(handler: (url: URL) => unknown | Promise<unknown>) {
  const calls: Call[] = [];
  const fn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    calls.push({ url, headers: new Headers(init?.headers) });
    const body = await handler(url);
    if (body instanceof Response) return body;
    return new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
  }) as typeof fetch;
  return { fn, calls };
}

/** Never answers; rejects when the request's signal aborts (as a real fetch does). */
function hangingFetch() {
  const calls: string[] = [];
  const fn = ((input: RequestInfo | URL, init?: RequestInit) => {
    calls.push(String(input));
    return new Promise<Response>((_, reject) => {
      init?.signal?.addEventListener("abort", () => reject(init.signal!.reason));
    });
  }) as typeof fetch;
  return { fn, calls };
}

const NOMINATIM_HIT = [
  {
    lat: "52.5170365",
    lon: "13.3888599",
    addresstype: "building",
    address: { road: "Unter den Linden", house_number: "77", postcode: "10117", city: "Berlin", country_code: "de" },
  },
];

const PHOTON_HIT = {
  type: "FeatureCollection",
  features: [
    {
      type: "Feature",
      geometry: { type: "Point", coordinates: [11.5755, 48.1374] },
      properties: { type: "house", street: "Marienplatz", housenumber: "8", postcode: "80331", city: "München", countrycode: "DE" },
    },
  ],
};

describe("HttpGeocoder (nominatim)", () => {
  it("builds a structured /search request and parses the answer", async () => {
    const f = fakeFetch(() => NOMINATIM_HIT);
    const geo = new HttpGeocoder({ baseUrl: "https://geo.example/", kind: "nominatim", apiKey: "k123", fetch: f.fn, userAgent: "test-agent" });
    const r = await geo.geocode({ street: "Unter den Linden", housenumber: "77", postalcode: "10117", city: "Berlin", country: "Deutschland" });
    expect(r).toEqual({ lng: 13.3888599, lat: 52.5170365, postalcode: "10117", city: "Berlin", country: "DE", source: "provider", precision: "street" });
    expect(f.calls).toHaveLength(1);
    const u = f.calls[0].url;
    expect(u.origin + u.pathname).toBe("https://geo.example/search");
    expect(u.searchParams.get("format")).toBe("jsonv2");
    expect(u.searchParams.get("street")).toBe("77 Unter den Linden");
    expect(u.searchParams.get("postalcode")).toBe("10117");
    expect(u.searchParams.get("city")).toBe("Berlin");
    expect(u.searchParams.get("countrycodes")).toBe("de");
    expect(u.searchParams.get("key")).toBe("k123");
    expect(f.calls[0].headers.get("user-agent")).toBe("test-agent");
  });

  it("reverse: /reverse with lat/lon and the distance to the answer", async () => {
    const f = fakeFetch(() => NOMINATIM_HIT[0]);
    const geo = new HttpGeocoder({ baseUrl: "https://geo.example", fetch: f.fn });
    const r = await geo.reverse(13.389, 52.517);
    expect(r?.postalcode).toBe("10117");
    expect(r?.source).toBe("provider");
    expect(r!.distance).toBeLessThan(50);
    expect(f.calls[0].url.pathname).toBe("/reverse");
    expect(f.calls[0].url.searchParams.get("lat")).toBe("52.517");
    expect(f.calls[0].url.searchParams.get("lon")).toBe("13.389");
  });

  it("timeout -> fallback (gazetteer)", async () => {
    const h = hangingFetch();
    const geo = new HttpGeocoder({ baseUrl: "https://geo.example", fetch: h.fn, timeoutMs: 50, fallback: new GazetteerGeocoder(env.DB) });
    const t = Date.now();
    const r = await geo.geocode({ postalcode: "80331", city: "München" });
    expect(Date.now() - t).toBeLessThan(2500);
    expect(h.calls).toHaveLength(1);
    expect(r?.source).toBe("gazetteer");
    expect(r?.postalcode).toBe("80331");
    expect(geo.lastError).not.toBeNull();
    const rev = await geo.reverse(13.405, 52.52);
    expect(rev?.source).toBe("gazetteer");
    expect(rev?.postalcode).toMatch(/^101/);
  });

  it("HTTP error, network error and malformed answers -> fallback", async () => {
    const fallback = new GazetteerGeocoder(env.DB);
    const cases: Array<() => unknown> = [
      () => new Response("overloaded", { status: 503 }),
      () => {
        throw new TypeError("network down");
      },
      () => new Response("<html>not json</html>", { status: 200 }),
      () => [], // nothing found
      () => [{ lat: "x", lon: "y" }],
      () => ({ error: "Unable to geocode" }),
    ];
    for (const answer of cases) {
      const f = fakeFetch(answer);
      const geo = new HttpGeocoder({ baseUrl: "https://geo.example", fetch: f.fn, fallback });
      const r = await geo.geocode({ postalcode: "20095" });
      expect(f.calls).toHaveLength(1);
      expect(r?.source).toBe("gazetteer");
      expect(r?.city).toBe("Hamburg");
    }
    // nothing to look up: no request at all
    const idle = fakeFetch(() => NOMINATIM_HIT);
    expect(await new HttpGeocoder({ baseUrl: "https://geo.example", fetch: idle.fn, fallback }).geocode({ housenumber: "7", country: "DE" })).toBeNull();
    expect(idle.calls).toHaveLength(0);
    // without fallback: null
    const f = fakeFetch(() => new Response("", { status: 500 }));
    expect(await new HttpGeocoder({ baseUrl: "https://geo.example", fetch: f.fn }).geocode({ city: "Berlin" })).toBeNull();
  });

  it("a cache hit does not call fetch; fallback answers are not cached", async () => {
    const cache = new MemoryGeocodeCache();
    const f = fakeFetch(() => NOMINATIM_HIT);
    const geo = new HttpGeocoder({ baseUrl: "https://geo.example", fetch: f.fn, cache });
    const q = { street: "Unter den Linden", housenumber: "77", postalcode: "10117", city: "Berlin" };
    const first = await geo.geocode(q);
    expect(f.calls).toHaveLength(1);
    const second = await geo.geocode({ ...q, street: "unter den linden ", city: "BERLIN" });
    expect(f.calls).toHaveLength(1);
    expect(second).toEqual(first);
    expect(cache.entries.size).toBe(1);

    const failing = fakeFetch(() => new Response("", { status: 502 }));
    const geo2 = new HttpGeocoder({ baseUrl: "https://geo.example", fetch: failing.fn, cache, fallback: new GazetteerGeocoder(env.DB) });
    expect((await geo2.geocode({ postalcode: "50667" }))?.source).toBe("gazetteer");
    expect(cache.entries.size).toBe(1);
  });
});

describe("HttpGeocoder negative cache", () => {
  it("'nothing found' is cached (no second request), errors are not", async () => {
    const cache = new MemoryGeocodeCache();
    const fallback = new GazetteerGeocoder(env.DB);
    const empty = fakeFetch(() => []);
    const geo = new HttpGeocoder({ baseUrl: "https://geo.example", fetch: empty.fn, cache, fallback });
    expect((await geo.geocode({ postalcode: "20095", street: "Nowhere-Weg" }))?.source).toBe("gazetteer");
    expect((await geo.geocode({ postalcode: "20095", street: "Nowhere-Weg" }))?.city).toBe("Hamburg");
    expect(empty.calls).toHaveLength(1);
    expect([...cache.entries.values()]).toEqual([{ notFound: true }]);

    const down = fakeFetch(() => new Response("", { status: 503 }));
    const geo2 = new HttpGeocoder({ baseUrl: "https://geo.example", fetch: down.fn, cache, fallback });
    await geo2.geocode({ city: "Köln" });
    await geo2.geocode({ city: "Köln" });
    expect(down.calls).toHaveLength(2);
    expect(cache.entries.size).toBe(1);
  });
});

describe("HttpGeocoder (photon)", () => {
  it("queries /api?q= and filters by country", async () => {
    const f = fakeFetch(() => PHOTON_HIT);
    const geo = new HttpGeocoder({ baseUrl: "https://photon.example", kind: "photon", fetch: f.fn });
    const r = await geo.geocode({ street: "Marienplatz", housenumber: "8", postalcode: "80331", city: "München", country: "DE" });
    expect(r).toEqual({ lng: 11.5755, lat: 48.1374, postalcode: "80331", city: "München", country: "DE", source: "provider", precision: "street" });
    expect(f.calls[0].url.pathname).toBe("/api");
    expect(f.calls[0].url.searchParams.get("q")).toBe("Marienplatz 8, 80331 München, DE");
    // the only feature is in Germany: asking for Austria finds nothing
    expect(await geo.geocode({ city: "München", country: "AT" })).toBeNull();
  });

  it("reverse uses /reverse", async () => {
    const f = fakeFetch(() => PHOTON_HIT);
    const geo = new HttpGeocoder({ baseUrl: "https://photon.example", kind: "photon", fetch: f.fn });
    const r = await geo.reverse(11.576, 48.1375);
    expect(r?.postalcode).toBe("80331");
    expect(f.calls[0].url.pathname).toBe("/reverse");
    expect(f.calls[0].url.searchParams.get("lon")).toBe("11.576");
  });
});

describe("D1GeocodeCache and createGeocoder", () => {
  let companyId = 0;
  beforeAll(async () => {
    const row = await env.DB.prepare("INSERT INTO companies (slug, companyname) VALUES ('geo-test', 'Geo Test') RETURNING id").first<{ id: number }>();
    companyId = row!.id;
  });

  it("stores provider results per company in geocode_cache", async () => {
    const f = fakeFetch(() => NOMINATIM_HIT);
    const geo = createGeocoder({ GEOCODER_URL: "https://geo.example", GEOCODER_KIND: "nominatim" }, env.DB, companyId, { fetch: f.fn });
    expect(geo).toBeInstanceOf(HttpGeocoder);
    const q = { street: "Unter den Linden", housenumber: "77", postalcode: "10117", city: "Berlin", country: "DE" };
    expect((await geo.geocode(q))?.source).toBe("provider");
    expect((await geo.geocode(q))?.source).toBe("provider");
    expect(f.calls).toHaveLength(1);
    const rows = await env.DB.prepare("SELECT company_id, query_key, lng, lat, result FROM geocode_cache WHERE company_id = ?").bind(companyId).all<{
      company_id: number;
      query_key: string;
      lng: number;
      lat: number;
      result: string;
    }>();
    expect(rows.results).toHaveLength(1);
    expect(rows.results[0].query_key).toBe("nominatim|unter den linden|77|10117|berlin|DE");
    expect(rows.results[0].lng).toBeCloseTo(13.3888599, 6);
    expect(JSON.parse(rows.results[0].result).postalcode).toBe("10117");

    // another company does not see the entry
    const other = new D1GeocodeCache(env.DB, companyId + 1000);
    expect(await other.get(rows.results[0].query_key)).toBeNull();
    // expired entries are ignored
    expect(await new D1GeocodeCache(env.DB, companyId, -1).get(rows.results[0].query_key)).toBeNull();
  });

  it("stores 'not found' without coordinates and forgets it after notFoundMaxAgeDays", async () => {
    const cache = new D1GeocodeCache(env.DB, companyId);
    await cache.set("nominatim|nowhere", { notFound: true });
    const row = await env.DB.prepare("SELECT lng, lat, result FROM geocode_cache WHERE company_id = ? AND query_key = 'nominatim|nowhere'")
      .bind(companyId)
      .first<{ lng: number | null; lat: number | null; result: string }>();
    expect(row).toEqual({ lng: null, lat: null, result: '{"notFound":true}' });
    expect(await cache.get("nominatim|nowhere")).toEqual({ notFound: true });
    // backdate by 8 days: results (180 days) are still valid, "not found" (7 days) no longer
    await cache.set("nominatim|somewhere", { lng: 1, lat: 2, postalcode: null, city: null, country: null, source: "provider", precision: "place" });
    await env.DB.prepare("UPDATE geocode_cache SET created_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-8 days') WHERE company_id = ?").bind(companyId).run();
    expect(await cache.get("nominatim|nowhere")).toBeNull();
    expect((await cache.get("nominatim|somewhere")) as { lng: number }).toMatchObject({ lng: 1, lat: 2 });
  });

  it("photon flavour by configuration; provider failure falls back to the gazetteer", async () => {
    const f = fakeFetch(() => new Response("", { status: 500 }));
    const geo = createGeocoder({ GEOCODER_URL: "https://photon.example", GEOCODER_KIND: "Photon" }, env.DB, companyId, { fetch: f.fn });
    const r = await geo.geocode({ city: "Köln" });
    expect(f.calls[0].url.pathname).toBe("/api");
    expect(r?.source).toBe("gazetteer");
    expect(r?.city).toBe("Köln");
  });
});
