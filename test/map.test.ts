import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { DEMO_ATTRIBUTION, DEMO_BOUNDS, demoArchive, encodeTile, tilesOf, writePmtiles } from "../scripts/pmtiles-lib.mjs";
import { DEFAULT_ARCHIVE_KEY, mapConfig, rasterTile } from "../src/core/services/basemap";
import { ORIGIN, call } from "./helpers";

/** The demo depot (Invalidenstraße, Berlin) and its tile at zoom 13. */
const DEPOT = { lng: 13.3849, lat: 52.5317 };
const tileAt = (z: number) => ({
  x: Math.floor(((DEPOT.lng + 180) / 360) * 2 ** z),
  y: Math.floor((0.5 - Math.log((1 + Math.sin((DEPOT.lat * Math.PI) / 180)) / (1 - Math.sin((DEPOT.lat * Math.PI) / 180))) / (4 * Math.PI)) * 2 ** z),
});
const text = (bytes: ArrayBuffer) => new TextDecoder().decode(bytes);

async function fetchRaw(path: string, headers: Record<string, string> = {}) {
  const { exports } = await import("cloudflare:workers");
  return exports.default.fetch(new Request(`${ORIGIN}${path}`, { headers }));
}

describe("base map without an archive or raster server", () => {
  it("the config says none and tiles are 404 in the error envelope", async () => {
    await env.UPLOADS.delete(DEFAULT_ARCHIVE_KEY);
    const config = await call("GET", "/tiles/map.json");
    expect(config.status).toBe(200);
    expect(config.body).toMatchObject({ mode: "none", tiles: null, attribution: null });
    const { x, y } = tileAt(12);
    const tile = await call("GET", `/tiles/12/${x}/${y}.mvt`);
    expect(tile.status).toBe(404);
    expect(tile.body).toMatchObject({ code: 404, message: "No base map archive is configured" });
    expect((await call("GET", `/tiles/raster/12/${x}/${y}.png`)).status).toBe(404);
  });
});

describe("base map from a PMTiles archive in R2", () => {
  let version = "";
  beforeAll(async () => {
    await env.UPLOADS.put(DEFAULT_ARCHIVE_KEY, await demoArchive({ minzoom: 12, maxzoom: 13 }));
    const config = await call("GET", "/tiles/map.json");
    version = new URL(config.body.tiles.replace(/[{}]/g, "")).searchParams.get("v")!;
  });

  it("the config names the archive's bounds, zooms and attribution, with an absolute tile URL on the service's origin", async () => {
    const res = await call("GET", "/tiles/map.json");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ mode: "vector", attribution: DEMO_ATTRIBUTION, minzoom: 12, maxzoom: 13, center: [DEPOT.lng, DEPOT.lat, 13] });
    res.body.bounds.forEach((b: number, i: number) => expect(b).toBeCloseTo(DEMO_BOUNDS[i], 6));
    expect(res.body.tiles).toBe(`${ORIGIN}/tiles/{z}/{x}/{y}.mvt?v=${version}`);
    expect(version).toMatch(/^[0-9a-zA-Z]{8,16}$/);
  });

  it("a tile inside the archive is its vector tile, with an ETag and a year's caching for the current version", async () => {
    const { x, y } = tileAt(13);
    const res = await fetchRaw(`/tiles/13/${x}/${y}.mvt?v=${version}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.mapbox-vector-tile");
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(res.headers.get("etag")).toBe(`"${version}-13-${x}-${y}"`);
    const body = text(await res.arrayBuffer());
    // Decompressed MVT: the layer names and a district's name are there as plain strings.
    for (const layer of ["earth", "water", "landuse", "roads", "places"]) expect(body).toContain(layer);
    expect(body).toContain("Mitte");
  });

  it("without the version (or with an old one) a tile is cached for a day", async () => {
    const { x, y } = tileAt(12);
    for (const query of ["", "?v=old"]) {
      const res = await fetchRaw(`/tiles/12/${x}/${y}.mvt${query}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("public, max-age=86400");
      await res.arrayBuffer();
    }
  });

  it("If-None-Match with the tile's ETag answers 304 without a body", async () => {
    const { x, y } = tileAt(13);
    const first = await fetchRaw(`/tiles/13/${x}/${y}.mvt`);
    await first.arrayBuffer();
    const again = await fetchRaw(`/tiles/13/${x}/${y}.mvt`, { "if-none-match": first.headers.get("etag")! });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    const other = await fetchRaw(`/tiles/13/${x}/${y}.mvt`, { "if-none-match": '"something-else"' });
    expect(other.status).toBe(200);
    await other.arrayBuffer();
  });

  it("tiles outside the archive's bounds or zooms are 404; malformed coordinates 422", async () => {
    const { x, y } = tileAt(13);
    expect((await call("GET", `/tiles/13/${x + 40}/${y}.mvt`)).body).toMatchObject({ code: 404, message: `Tile 13/${x + 40}/${y} is outside the archive's bounds` });
    expect((await call("GET", `/tiles/11/${x >> 2}/${y >> 2}.mvt`)).body).toMatchObject({ code: 404, message: "Zoom 11 is outside the archive's zooms 12–13" });
    expect((await call("GET", `/tiles/14/${x * 2}/${y * 2}.mvt`)).status).toBe(404);
    expect((await call("GET", `/tiles/13/${2 ** 13}/${y}.mvt`)).status).toBe(404);
    const bad = await call("GET", `/tiles/13/abc/${y}.mvt`);
    expect(bad.status).toBe(422);
    expect(bad.body.fields).toBe("x");
  });

  it("a tile inside the bounds that the archive does not hold is an empty 204", async () => {
    // An archive of the depot's one zoom-13 tile, with bounds wider than that tile.
    const { x, y } = tileAt(13);
    const data = encodeTile([{ name: "roads", features: [{ type: 2, props: { kind: "major_road", name: "Einzelstraße" }, geometry: [[[0, 0], [4096, 4096]]] }] }]);
    const sparse = await writePmtiles([{ z: 13, x, y, data }], { bounds: DEMO_BOUNDS, center: [DEPOT.lng, DEPOT.lat, 13], metadata: { attribution: '<a href="https://www.openstreetmap.org/copyright">© OpenStreetMap</a>' } });
    await env.UPLOADS.put(DEFAULT_ARCHIVE_KEY, sparse);
    try {
      const config = await call("GET", "/tiles/map.json");
      expect(config.body).toMatchObject({ mode: "vector", minzoom: 13, maxzoom: 13, attribution: "© OpenStreetMap", attribution_url: "https://www.openstreetmap.org/copyright" });
      const v = new URL(config.body.tiles.replace(/[{}]/g, "")).searchParams.get("v");
      expect(v).not.toBe(version);
      const held = await fetchRaw(`/tiles/13/${x}/${y}.mvt?v=${v}`);
      expect(text(await held.arrayBuffer())).toContain("Einzelstraße");
      const empty = await fetchRaw(`/tiles/13/${x + 1}/${y}.mvt?v=${v}`);
      expect(empty.status).toBe(204);
      expect(tilesOf(DEMO_BOUNDS, 13).some((t) => t.x === x + 1 && t.y === y)).toBe(true);
    } finally {
      await env.UPLOADS.put(DEFAULT_ARCHIVE_KEY, await demoArchive({ minzoom: 12, maxzoom: 13 }));
    }
  });

  it("a tile once read is answered by the edge cache, even after the archive is gone from R2", async () => {
    const { x, y } = tileAt(12);
    const url = `/tiles/12/${x}/${y}.mvt?v=${version}`;
    const first = await fetchRaw(url);
    expect(first.status).toBe(200);
    const bytes = await first.arrayBuffer();
    // The answer is stored after it was sent (waitUntil); the first read without R2 may come a moment later.
    await env.UPLOADS.delete(DEFAULT_ARCHIVE_KEY);
    try {
      await expect.poll(async () => (await fetchRaw(url)).status, { timeout: 5000 }).toBe(200);
      const cached = await fetchRaw(url);
      expect(new Uint8Array(await cached.arrayBuffer())).toEqual(new Uint8Array(bytes));
      expect(cached.headers.get("etag")).toBe(first.headers.get("etag"));
      // A tile nobody read before has no copy: without the archive it is a 404.
      expect((await fetchRaw(`/tiles/12/${x + 1}/${y}.mvt?v=${version}`)).status).toBe(404);
    } finally {
      await env.UPLOADS.put(DEFAULT_ARCHIVE_KEY, await demoArchive({ minzoom: 12, maxzoom: 13 }));
    }
  });

  it("an object at the key that is no PMTiles archive counts as none (logged), not as an error", async () => {
    await env.UPLOADS.put(DEFAULT_ARCHIVE_KEY, new TextEncoder().encode("not an archive, ".repeat(2000)));
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const config = await call("GET", "/tiles/map.json");
      expect(config.status).toBe(200);
      expect(config.body.mode).toBe("none");
      const { x, y } = tileAt(13);
      // A URL nobody read before (the edge cache keeps earlier answers).
      expect((await call("GET", `/tiles/13/${x}/${y + 1}.mvt?v=unread`)).body).toMatchObject({ code: 404, message: "No base map archive is configured" });
      expect(errors.mock.calls.map((c) => String(c[0])).some((line) => line.includes("not a PMTiles v3 archive"))).toBe(true);
    } finally {
      errors.mockRestore();
      await env.UPLOADS.put(DEFAULT_ARCHIVE_KEY, await demoArchive({ minzoom: 12, maxzoom: 13 }));
    }
  });

  it("the endpoints are in the OpenAPI document", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/tiles/map.json", "/tiles/{z}/{x}/{y}.mvt", "/tiles/raster/{z}/{x}/{y}.png"]));
  });
});

describe("raster tiles from a configured tile server", () => {
  const rasterEnv = { ...env, MAP_ARCHIVE_KEY: "basemap/none-here.pmtiles", MAP_RASTER_URL: "https://tiles.example/{z}/{x}/{y}.png", MAP_RASTER_ATTRIBUTION: "© Example Maps" };

  it("the config chooses raster when there is no archive, with tiles through the service's origin", async () => {
    expect(await mapConfig(rasterEnv, ORIGIN)).toMatchObject({
      mode: "raster",
      tiles: `${ORIGIN}/tiles/raster/{z}/{x}/{y}.png`,
      attribution: "© Example Maps",
      attribution_url: "https://www.openstreetmap.org/copyright",
    });
    // A template without the tile's coordinates is no raster server.
    expect((await mapConfig({ ...rasterEnv, MAP_RASTER_URL: "https://tiles.example/tile.png" }, ORIGIN)).mode).toBe("none");
    // An archive wins over the raster server.
    expect((await mapConfig({ ...rasterEnv, MAP_ARCHIVE_KEY: DEFAULT_ARCHIVE_KEY }, ORIGIN)).mode).toBe("vector");
  });

  it("a raster tile is fetched from the template's URL and passed on; a failing server is a 502", async () => {
    const asked: string[] = [];
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    const ok = (async (url: string) => (asked.push(url), new Response(png, { headers: { "content-type": "image/png" } }))) as unknown as typeof fetch;
    const tile = await rasterTile(rasterEnv, 13, 4400, 2686, ok);
    expect(asked).toEqual(["https://tiles.example/13/4400/2686.png"]);
    expect(tile).toMatchObject({ status: 200, contentType: "image/png", cacheControl: "public, max-age=86400" });
    const failing = (async () => new Response("busy", { status: 503, headers: { "content-type": "text/plain" } })) as unknown as typeof fetch;
    expect(await rasterTile(rasterEnv, 13, 4400, 2686, failing)).toMatchObject({ status: 502 });
    expect(await rasterTile(rasterEnv, 3, 8, 0, ok)).toMatchObject({ status: 404 });
  });
});
