import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { haversineMeters } from "../../src/core/geo/distance";
import { GazetteerGeocoder } from "../../src/core/geo/gazetteer";
import { createGeocoder } from "../../src/core/geo";
import { placeKey, splitPostalcodeCity } from "../../src/core/geo/normalize";

// Known centres: Berlin Alexanderplatz, München Marienplatz, Hamburg Rathaus, Frankfurt Römer, Köln Dom.
const CENTRES = {
  berlin: [13.4132, 52.5219],
  muenchen: [11.5755, 48.1374],
  hamburg: [9.9927, 53.5503],
  frankfurt: [8.6821, 50.1106],
  koeln: [6.9583, 50.9413],
} as const;
const km = (r: { lng: number; lat: number }, [lng, lat]: readonly [number, number]) => haversineMeters(r.lng, r.lat, lng, lat) / 1000;

describe("gazetteer data (migration 0100)", () => {
  it("holds every German postal code with a coordinate inside Germany", async () => {
    const stats = await env.DB.prepare(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT postalcode) AS codes, MIN(lng) AS minLng, MAX(lng) AS maxLng, MIN(lat) AS minLat, MAX(lat) AS maxLat,
              SUM(source = 'interpolated') AS interpolated FROM gazetteer_places WHERE country = 'DE'`,
    ).first<{ n: number; codes: number; minLng: number; maxLng: number; minLat: number; maxLat: number; interpolated: number }>();
    expect(stats!.n).toBe(12881);
    expect(stats!.codes).toBe(8168);
    expect(stats!.minLng).toBeGreaterThanOrEqual(5.8);
    expect(stats!.maxLng).toBeLessThanOrEqual(15.1);
    expect(stats!.minLat).toBeGreaterThanOrEqual(47.2);
    expect(stats!.maxLat).toBeLessThanOrEqual(55.1);
    expect(stats!.interpolated).toBeGreaterThan(0);
  });

  it("stores place_key exactly as placeKey() computes it", async () => {
    const { results } = await env.DB.prepare("SELECT place, place_key FROM gazetteer_places").all<{ place: string; place_key: string }>();
    expect(results.length).toBe(12881);
    const wrong = results.filter((r) => placeKey(r.place) !== r.place_key);
    expect(wrong).toEqual([]);
  });
});

describe("GazetteerGeocoder.geocode", () => {
  const geo = new GazetteerGeocoder(env.DB);

  it.each([
    ["10115", "Berlin", CENTRES.berlin, 3],
    ["80331", "München", CENTRES.muenchen, 2],
    ["20095", "Hamburg", CENTRES.hamburg, 3],
    ["50667", "Köln", CENTRES.koeln, 3],
  ] as const)("postal code %s lands in %s centre", async (postalcode, city, centre, maxKm) => {
    const r = await geo.geocode({ postalcode });
    expect(r).not.toBeNull();
    expect(r!.postalcode).toBe(postalcode);
    expect(r!.city).toBe(city);
    expect(r!.country).toBe("DE");
    expect(r!.precision).toBe("postalcode");
    expect(r!.source).toBe("gazetteer");
    expect(km(r!, centre)).toBeLessThan(maxKm);
  });

  it("city only: Berlin, München (any case, umlaut or transcription)", async () => {
    for (const city of ["Berlin", "BERLIN", " berlin "]) {
      const r = await geo.geocode({ city });
      expect(r?.postalcode).toBe("10115");
      expect(r?.precision).toBe("place");
      expect(km(r!, CENTRES.berlin)).toBeLessThan(3);
    }
    for (const city of ["München", "münchen", "MUENCHEN", "Muenchen"]) {
      const r = await geo.geocode({ city, country: "Deutschland" });
      expect(r?.city).toBe("München");
      expect(r?.postalcode).toBe("80331");
      expect(km(r!, CENTRES.muenchen)).toBeLessThan(2);
    }
  });

  it("city names with qualifiers and districts", async () => {
    const ffm = await geo.geocode({ city: "Frankfurt am Main" });
    expect(ffm?.city).toBe("Frankfurt am Main");
    expect(km(ffm!, CENTRES.frankfurt)).toBeLessThan(5);
    // prefix: the Frankfurt with most codes
    expect((await geo.geocode({ city: "Frankfurt" }))?.city).toBe("Frankfurt am Main");
    expect((await geo.geocode({ city: "Frankfurt (Oder)" }))?.postalcode).toMatch(/^152/);
    const halle = await geo.geocode({ city: "Halle (Saale)" });
    expect(halle?.postalcode).toMatch(/^06[01]/);
    expect((await geo.geocode({ city: "halle saale" }))?.postalcode).toBe(halle?.postalcode);
    // district written after the city
    expect((await geo.geocode({ city: "Hamburg-Altona" }))?.city).toBe("Hamburg");
  });

  it("postal code + city prefers the row matching both", async () => {
    const rows = await env.DB.prepare("SELECT place FROM gazetteer_places WHERE postalcode = '14715' ORDER BY place").all<{ place: string }>();
    expect(rows.results.length).toBeGreaterThan(3);
    for (const { place } of rows.results) {
      const r = await geo.geocode({ postalcode: "14715", city: place });
      expect(r?.city).toBe(place);
      expect(r?.postalcode).toBe("14715");
    }
    // a city not in the code: the code still wins
    const r = await geo.geocode({ postalcode: "10115", city: "Hamburg" });
    expect(r?.postalcode).toBe("10115");
    expect(r?.city).toBe("Berlin");
    // an unknown code with a known city: the city
    const c = await geo.geocode({ postalcode: "00000", city: "Hamburg" });
    expect(c?.city).toBe("Hamburg");
    expect(c?.precision).toBe("place");
  });

  it("accepts country names and codes; other countries are not in the gazetteer", async () => {
    for (const country of ["DE", "de", "Germany", "Deutschland", "DEU"]) {
      expect((await geo.geocode({ postalcode: "80331", country }))?.city).toBe("München");
    }
    expect(await geo.geocode({ postalcode: "1010", city: "Wien", country: "Österreich" })).toBeNull();
    expect(await geo.geocode({ postalcode: "80331", country: "Atlantis" })).toBeNull();
  });

  it("repairs '10115 Berlin' typed into one field", async () => {
    expect(splitPostalcodeCity(null, "10115 Berlin")).toEqual({ postalcode: "10115", city: "Berlin" });
    expect(splitPostalcodeCity("80331 München", "")).toEqual({ postalcode: "80331", city: "München" });
    expect(splitPostalcodeCity("D-20095 Hamburg", "Hamburg")).toEqual({ postalcode: "20095", city: "Hamburg" });
    expect(splitPostalcodeCity("10115", "Berlin")).toEqual({ postalcode: "10115", city: "Berlin" });
    // conflicting fields are left alone
    expect(splitPostalcodeCity("10115", "80331 München")).toEqual({ postalcode: "10115", city: "80331 München" });
    const r = await geo.geocode({ city: "80331 München" });
    expect(r?.postalcode).toBe("80331");
    expect(r?.precision).toBe("postalcode");
  });

  it("ungeocodable input gives null", async () => {
    expect(await geo.geocode({})).toBeNull();
    expect(await geo.geocode({ street: "Hauptstraße", housenumber: "1" })).toBeNull();
    expect(await geo.geocode({ postalcode: "99999" })).toBeNull();
    expect(await geo.geocode({ city: "Xyzzyville" })).toBeNull();
    expect(await geo.geocode({ postalcode: "abc", city: "  " })).toBeNull();
  });

  it("street is ignored offline but the postal code still locates", async () => {
    const r = await geo.geocode({ street: "Unter den Linden", housenumber: "1", postalcode: "10117", city: "Berlin" });
    expect(r?.postalcode).toBe("10117");
    expect(r?.precision).toBe("postalcode");
    expect(km(r!, CENTRES.berlin)).toBeLessThan(5);
  });
});

describe("GazetteerGeocoder.reverse", () => {
  const geo = new GazetteerGeocoder(env.DB);

  it("Berlin Mitte gives a 101xx code", async () => {
    const r = await geo.reverse(13.405, 52.52);
    expect(r).not.toBeNull();
    expect(r!.postalcode).toMatch(/^101\d\d$/);
    expect(r!.city).toBe("Berlin");
    expect(r!.distance).toBeLessThan(3000);
    expect(r!.distance).toBe(Math.round(haversineMeters(13.405, 52.52, r!.lng, r!.lat)));
  });

  it("Munich Marienplatz gives 80331; Hamburg Rathaus a 20xxx code", async () => {
    expect((await geo.reverse(11.5755, 48.1374))?.postalcode).toBe("80331");
    expect((await geo.reverse(9.9927, 53.5503))?.postalcode).toMatch(/^20\d{3}$/);
  });

  it("far from any place: null (Atlantic, North Sea beyond the limit, invalid)", async () => {
    expect(await geo.reverse(-30, 45)).toBeNull();
    expect(await geo.reverse(5.0, 55.5)).toBeNull();
    expect(await geo.reverse(Number.NaN, 52)).toBeNull();
    // within the default 30 km of the coast it still answers
    expect(await geo.reverse(8.3, 54.0)).not.toBeNull();
    expect(await new GazetteerGeocoder(env.DB, { maxReverseDistanceMeters: 1000 }).reverse(8.3, 54.0)).toBeNull();
  });
});

describe("createGeocoder", () => {
  it("without GEOCODER_URL is the gazetteer", async () => {
    const g = createGeocoder({}, env.DB, 1);
    expect(g).toBeInstanceOf(GazetteerGeocoder);
    expect((await g.geocode({ postalcode: "20095" }))?.city).toBe("Hamburg");
  });
});

describe("latency", () => {
  it("measures 1000 forward and 1000 reverse lookups", async () => {
    const geo = new GazetteerGeocoder(env.DB);
    const { results } = await env.DB.prepare("SELECT postalcode, place, lng, lat FROM gazetteer_places ORDER BY id").all<{ postalcode: string; place: string; lng: number; lat: number }>();
    const sample = Array.from({ length: 1000 }, (_, i) => results[(i * 7919) % results.length]);

    let t = performance.now();
    let hits = 0;
    for (const r of sample) if ((await geo.geocode({ postalcode: r.postalcode }))?.postalcode === r.postalcode) hits++;
    const byCode = performance.now() - t;
    expect(hits).toBe(1000);

    t = performance.now();
    hits = 0;
    for (const r of sample) if (await geo.geocode({ city: r.place })) hits++;
    const byCity = performance.now() - t;
    expect(hits).toBe(1000);

    t = performance.now();
    hits = 0;
    for (const r of sample) if (await geo.reverse(r.lng + 0.01, r.lat + 0.01)) hits++;
    const reverse = performance.now() - t;
    expect(hits).toBe(1000);

    // performance.now() in workerd advances with I/O only, so these are upper-level figures for local D1
    console.log(
      `gazetteer latency per lookup: postal code ${(byCode / 1000).toFixed(3)} ms, city ${(byCity / 1000).toFixed(3)} ms, reverse ${(reverse / 1000).toFixed(3)} ms`,
    );
  }, 120_000);
});
