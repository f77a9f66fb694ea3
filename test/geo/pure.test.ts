import { describe, expect, it } from "vitest";
import { toCountryCode } from "../../src/core/geo/country";
import { haversineMeters } from "../../src/core/geo/distance";
import { cityKeyVariants } from "../../src/core/geo/gazetteer";
import { geocodeCacheKey } from "../../src/core/geo/http";
import { normalizePostalcode, placeKey } from "../../src/core/geo/normalize";
import { unionPostalAreas } from "../../src/core/geo/postal-areas";
import * as lib from "../../scripts/gazetteer-lib.mjs";

describe("toCountryCode", () => {
  it.each([
    ["DE", "DE"],
    ["de", "DE"],
    ["DEU", "DE"],
    ["Deutschland", "DE"],
    ["germany", "DE"],
    ["  GERMANY ", "DE"],
    ["Bundesrepublik Deutschland", "DE"],
    ["Österreich", "AT"],
    ["oesterreich", "AT"],
    ["Osterreich", "AT"],
    ["Austria", "AT"],
    ["Schweiz", "CH"],
    ["Suisse", "CH"],
    ["Switzerland", "CH"],
    ["Niederlande", "NL"],
    ["Holland", "NL"],
    ["Frankreich", "FR"],
    ["Dänemark", "DK"],
    ["Polen", "PL"],
    ["Tschechien", "CZ"],
    ["Czech Republic", "CZ"],
    ["Luxemburg", "LU"],
    ["Belgien", "BE"],
    ["UK", "GB"],
    ["Vereinigtes Königreich", "GB"],
    ["Griechenland", "GR"],
    ["EL", "GR"],
    ["Liechtenstein", "LI"],
    ["USA", "US"],
    ["jp", "JP"],
  ])("%s -> %s", (input, code) => {
    expect(toCountryCode(input)).toBe(code);
  });

  it.each(["", "   ", "Atlantis", "XX", "ZZZ", "Deutschlandd"])("unknown %j -> null", (input) => {
    expect(toCountryCode(input)).toBeNull();
  });

  it("null and undefined -> null", () => {
    expect(toCountryCode(null)).toBeNull();
    expect(toCountryCode(undefined)).toBeNull();
  });
});

describe("placeKey", () => {
  it.each([
    ["München", "muenchen"],
    ["MÜNCHEN", "muenchen"],
    ["Düsseldorf", "duesseldorf"],
    ["Köln", "koeln"],
    ["Gießen", "giessen"],
    ["Halle (Saale)", "halle saale"],
    ["Frankfurt am Main", "frankfurt am main"],
    ["Schwedt/Oder", "schwedt oder"],
    ["Hörnum (Sylt)", "hoernum sylt"],
    ["Besançon", "besancon"],
    ["  St. Ingbert ", "st ingbert"],
    ["Stechow-Ferchesar", "stechow ferchesar"],
  ])("%s -> %s", (input, key) => {
    expect(placeKey(input)).toBe(key);
  });

  it("is the same function as the build script's", () => {
    for (const s of ["München", "Halle (Saale)", "Groß Kreutz (Havel)", "Wenningstedt-Braderup (Sylt)", "Île-de-France", "ÄÖÜß"]) {
      expect(placeKey(s)).toBe(lib.placeKey(s));
    }
  });
});

describe("matchKeys (build script)", () => {
  it("expands abbreviations and strips qualifiers", () => {
    expect(lib.matchKeys("Frankfurt (Oder)")).toEqual(["frankfurt oder", "frankfurt"]);
    expect(lib.matchKeys("Schwedt/Oder")).toEqual(["schwedt oder", "schwedt"]);
    expect(lib.matchKeys("Hammer a.d. Uecker")).toEqual(["hammer an der uecker", "hammer"]);
    expect(lib.matchKeys("Born a. Darß")).toEqual(["born am darss", "born"]);
    expect(lib.matchKeys("St. Ingbert")).toEqual(["sankt ingbert"]);
    expect(lib.matchKeys("Munich")).toEqual(["muenchen"]);
    expect(lib.matchKeys("Berlin")).toEqual(["berlin"]);
  });
});

describe("normalizePostalcode", () => {
  it("normalises German codes", () => {
    expect(normalizePostalcode("10115")).toBe("10115");
    expect(normalizePostalcode(" 10 115 ")).toBe("10115");
    expect(normalizePostalcode("D-10115")).toBe("10115");
    expect(normalizePostalcode("DE 80331")).toBe("80331");
    expect(normalizePostalcode("1067")).toBe("01067");
    expect(normalizePostalcode("123")).toBeNull();
    expect(normalizePostalcode("abcde")).toBeNull();
    expect(normalizePostalcode("")).toBeNull();
    expect(normalizePostalcode(null)).toBeNull();
  });
  it("keeps other countries' formats", () => {
    expect(normalizePostalcode("1010", "AT")).toBe("1010");
    expect(normalizePostalcode("A-1010", "AT")).toBe("1010");
  });
});

describe("cityKeyVariants", () => {
  it("tries Sankt/St. and the first word", () => {
    expect(cityKeyVariants("hamburg altona")).toEqual(["hamburg altona", "hamburg"]);
    expect(cityKeyVariants("st ingbert")).toEqual(["st ingbert", "sankt ingbert"]);
    expect(cityKeyVariants("bad homburg")).toEqual(["bad homburg"]);
    expect(cityKeyVariants("berlin")).toEqual(["berlin"]);
  });
});

describe("geocodeCacheKey", () => {
  it("ignores case, umlauts, spacing and country spelling", () => {
    const a = geocodeCacheKey("nominatim", { street: "Hauptstraße", housenumber: "1", postalcode: "10115", city: "Berlin" }, "DE");
    const b = geocodeCacheKey("nominatim", { street: " HAUPTSTRASSE ", housenumber: "1", postalcode: "10 115", city: "berlin" }, "DE");
    expect(a).toBe(b);
    expect(a).toBe("nominatim|hauptstrasse|1|10115|berlin|DE");
    expect(geocodeCacheKey("photon", { city: "Berlin" }, "DE")).not.toBe(geocodeCacheKey("nominatim", { city: "Berlin" }, "DE"));
  });
});

describe("haversineMeters", () => {
  it("gives known distances", () => {
    expect(haversineMeters(13.405, 52.52, 13.405, 52.52)).toBe(0);
    // Berlin (Alexanderplatz) - München (Marienplatz): ~504 km
    const d = haversineMeters(13.4132, 52.5219, 11.5755, 48.1374);
    expect(d).toBeGreaterThan(500_000);
    expect(d).toBeLessThan(508_000);
    // one degree of latitude ~ 111.2 km
    expect(haversineMeters(10, 50, 10, 51)).toBeCloseTo(111_195, -2);
    // symmetric
    expect(haversineMeters(1, 2, 3, 4)).toBeCloseTo(haversineMeters(3, 4, 1, 2), 6);
  });
  it("agrees with the build script's copy", () => {
    expect(lib.haversine(8.68, 50.11, 9.99, 53.55)).toBeCloseTo(haversineMeters(8.68, 50.11, 9.99, 53.55), 6);
  });
});

describe("Sutherland–Hodgman clipping (build script)", () => {
  const square = (x0: number, y0: number, x1: number, y1: number) => [
    [x0, y0],
    [x1, y0],
    [x1, y1],
    [x0, y1],
    [x0, y0],
  ];
  const area = (ring: number[][]) => Math.abs(lib.ringArea(ring));

  it("clips overlapping squares to their intersection", () => {
    const out = lib.clipRingConvex(square(0, 0, 2, 2), square(1, 1, 3, 3));
    expect(area(out)).toBeCloseTo(1, 10);
    expect(out[0]).toEqual(out[out.length - 1]);
    for (const [x, y] of out) {
      expect(x).toBeGreaterThanOrEqual(1);
      expect(y).toBeGreaterThanOrEqual(1);
      expect(x).toBeLessThanOrEqual(2);
      expect(y).toBeLessThanOrEqual(2);
    }
  });

  it("returns the subject when inside, [] when disjoint, regardless of orientation", () => {
    const inner = square(1, 1, 2, 2);
    expect(area(lib.clipRingConvex(inner, square(0, 0, 3, 3)))).toBeCloseTo(1, 10);
    expect(area(lib.clipRingConvex(inner, square(0, 0, 3, 3).reverse()))).toBeCloseTo(1, 10);
    expect(lib.clipRingConvex(inner, square(5, 5, 6, 6))).toEqual([]);
  });

  it("clips a concave subject against a convex cell (area of the true intersection)", () => {
    // U shape: 3x3 square minus the notch [1,2]x[1,3]
    const u = [
      [0, 0],
      [3, 0],
      [3, 3],
      [2, 3],
      [2, 1],
      [1, 1],
      [1, 3],
      [0, 3],
      [0, 0],
    ];
    // the cell covers both arms above y=2: two separate parts of area 1 each
    const out = lib.clipRingConvex(u, square(0, 2, 3, 3));
    expect(area(out)).toBeCloseTo(2, 10);
    expect(lib.pointInRing(0.5, 2.5, out)).toBe(true);
    expect(lib.pointInRing(2.5, 2.5, out)).toBe(true);
    expect(lib.pointInRing(1.5, 2.5, out)).toBe(false);
    expect(area(lib.clipRingConvex(u, square(-1, -1, 4, 1.5)))).toBeCloseTo(3 * 1.5 - 0.5, 10);
  });

  it("clips polygons with several parts and drops the ones outside", () => {
    const polys = [[square(0, 0, 1, 1)], [square(10, 10, 11, 11)], [square(2, 0, 4, 1)]];
    const out = lib.clipPolygonsConvex(polys, square(0.5, 0, 3, 1));
    expect(out).toHaveLength(2);
    expect(area(out[0][0]) + area(out[1][0])).toBeCloseTo(0.5 + 1, 10);
  });

  it("spiral puts the first point on the centre and keeps all inside the radius", () => {
    const pts = lib.spiral(13.4, 52.5, 50, 10);
    expect(pts[0]).toEqual([13.4, 52.5]);
    const dists = pts.map(([x, y]) => haversineMeters(13.4, 52.5, x, y));
    expect(Math.max(...dists)).toBeLessThanOrEqual(10_050);
    expect(new Set(pts.map((p) => p.join())).size).toBe(50);
  });
});

describe("cityLayout (build script)", () => {
  // a Berlin-like city: centre group 101, inner zone 10xxx, outer zones 12xxx/13xxx
  const codes = [
    ...["10115", "10117", "10119", "10178"],
    ...["10243", "10245", "10247", "10249"],
    ...["10405", "10407", "10409", "10435", "10437"],
    ...["12043", "12045", "12047", "12049", "12051", "12053"],
    ...["13051", "13053", "13055", "13057", "13059"],
  ];
  const [lng, lat] = [13.41, 52.52];
  const pts = lib.cityLayout(lng, lat, codes, 4.5);
  const km = (i: number) => haversineMeters(lng, lat, pts[i][0], pts[i][1]) / 1000;
  const angle = (i: number) => Math.atan2(pts[i][1] - lat, (pts[i][0] - lng) * Math.cos((lat * Math.PI) / 180));
  const idx = (prefix: string) => codes.flatMap((c, i) => (c.startsWith(prefix) ? [i] : []));

  it("puts the lowest code on the centre and everything inside the disc", () => {
    expect(pts).toHaveLength(codes.length);
    expect(pts[0]).toEqual([lng, lat]);
    const radius = Math.sqrt((codes.length * 4.5) / Math.PI);
    for (let i = 0; i < codes.length; i++) expect(km(i)).toBeLessThanOrEqual(radius + 0.01);
    expect(new Set(pts.map((p) => p.join())).size).toBe(codes.length);
  });

  it("centre group < inner zone < outer zones in distance", () => {
    const maxCentre = Math.max(...idx("101").map(km));
    const inner = [...idx("102"), ...idx("104")].map(km);
    const outer = [...idx("120"), ...idx("130")].map(km);
    expect(Math.min(...inner)).toBeGreaterThanOrEqual(maxCentre);
    expect(Math.min(...outer)).toBeGreaterThanOrEqual(Math.max(...inner));
  });

  it("each 3-digit group of a ring occupies its own angular sector", () => {
    const sector = (prefix: string) => {
      const as = idx(prefix).map((i) => (angle(i) + 2 * Math.PI) % (2 * Math.PI));
      return [Math.min(...as), Math.max(...as)];
    };
    const [a120, b120] = sector("120");
    const [a130, b130] = sector("130");
    expect(b120 < a130 || b130 < a120).toBe(true);
    const [a102, b102] = sector("102");
    const [a104, b104] = sector("104");
    expect(b102 < a104 || b104 < a102).toBe(true);
  });

  it("falls back to the spiral for a single group", () => {
    expect(lib.cityLayout(lng, lat, ["01067", "01069"], 4.5)).toEqual(lib.spiral(lng, lat, 2, Math.sqrt((2 * 4.5) / Math.PI)));
  });
});

describe("unionPostalAreas (synthetic)", () => {
  const sq = (x0: number, y0: number, x1: number, y1: number) => ({
    type: "Polygon" as const,
    coordinates: [
      [
        [x0, y0],
        [x1, y0],
        [x1, y1],
        [x0, y1],
        [x0, y0],
      ],
    ],
  });
  it("dissolves touching squares into one part, keeps disjoint ones apart, always MultiPolygon", () => {
    const touching = unionPostalAreas([sq(0, 0, 1, 1), sq(1, 0, 2, 1)]);
    expect(touching.type).toBe("MultiPolygon");
    expect(touching.coordinates).toHaveLength(1);
    const xs = touching.coordinates[0][0].map((p) => p[0]);
    expect(Math.min(...xs)).toBe(0);
    expect(Math.max(...xs)).toBe(2);
    const apart = unionPostalAreas([sq(0, 0, 1, 1), JSON.stringify(sq(5, 5, 6, 6))]);
    expect(apart.coordinates).toHaveLength(2);
    expect(unionPostalAreas([sq(0, 0, 1, 1)])).toEqual({ type: "MultiPolygon", coordinates: [sq(0, 0, 1, 1).coordinates] });
    expect(unionPostalAreas([])).toEqual({ type: "MultiPolygon", coordinates: [] });
    expect(() => unionPostalAreas(['{"type":"Point","coordinates":[0,0]}'])).toThrow(TypeError);
  });
});
