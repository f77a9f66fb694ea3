/**
 * The base map (no login: the console and the customers' tracking pages read it): which map to
 * draw, vector tiles from the deployment's PMTiles archive in R2, raster tiles passed on from a
 * configured tile server. Tiles go through the Workers Cache API (`caches.default`), so repeated
 * reads are answered at the edge without touching R2 or the tile server.
 */
import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { unprocessable } from "../../core/errors";
import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { errorResponse, validationHook, zodFields, zodMessage } from "../errors";
import { errorResponses, jsonResponse } from "../openapi";
import { mapConfig, rasterTile, vectorTile } from "../../core/services/basemap";
import { publicBase } from "./company";

const MapConfigSchema = z
  .object({
    mode: z.enum(["vector", "raster", "none"]).openapi({
      description: "`vector`: the PMTiles archive in R2; `raster`: the configured raster tile server through this service; `none`: no base map (the pages draw country outlines)",
    }),
    tiles: z.string().nullable().openapi({ description: "Absolute URL template of the tiles ({z}, {x}, {y}), always on this service's origin; null in mode `none`" }),
    attribution: z.string().nullable().openapi({ description: "Plain-text attribution the map data's licence requires, e.g. `© OpenStreetMap contributors`" }),
    attribution_url: z.string().nullable().openapi({ description: "Where the attribution links to (the licence or copyright page)" }),
    bounds: z.tuple([z.number(), z.number(), z.number(), z.number()]).nullable().openapi({ description: "West, south, east, north of the archive (mode `vector`)" }),
    center: z.tuple([z.number(), z.number(), z.number()]).nullable().openapi({ description: "Longitude, latitude and zoom of the archive's centre (mode `vector`)" }),
    minzoom: z.number().int().nullable(),
    maxzoom: z.number().int().nullable().openapi({ description: "Deepest zoom with tiles; the pages draw deeper zooms from these" }),
  })
  .openapi("MapConfig");

const Zxy = z.object({
  z: z.coerce.number().int().min(0).max(30).openapi({ param: { name: "z", in: "path", required: true }, example: 13 }),
  x: z.coerce.number().int().min(0).openapi({ param: { name: "x", in: "path", required: true }, example: 4400 }),
  y: z.coerce.number().int().min(0).openapi({ param: { name: "y", in: "path", required: true }, example: 2686 }),
});

const configRoute = createRoute({
  method: "get",
  path: "/tiles/map.json",
  operationId: "getBaseMap",
  security: [],
  tags: ["Base map"],
  summary: "Which base map the pages draw, and its bounds, zooms and attribution",
  description:
    "The archive in R2 (`MAP_ARCHIVE_KEY`, default `basemap/region.pmtiles`) when there is one; else the raster tile server of `MAP_RASTER_URL`; " +
    "else none. Read by the console and the tracking page at start, so a newly uploaded archive shows without rebuilding anything.",
  responses: { 200: jsonResponse(MapConfigSchema, "The base map") },
});

const vectorRoute = createRoute({
  method: "get",
  path: "/tiles/{z}/{x}/{y}.mvt",
  operationId: "getVectorTile",
  security: [],
  tags: ["Base map"],
  summary: "A vector tile of the base map archive",
  description:
    "Mapbox Vector Tile of the PMTiles archive (Protomaps basemap layers). `ETag` per archive version and tile, `If-None-Match` answers 304; " +
    "with `v` equal to the archive's version (as in `tiles` of `/tiles/map.json`) cached for a year, else a day. 204 for an empty tile inside the archive, " +
    "404 outside its bounds or zooms or without an archive.",
  request: { params: Zxy, query: z.object({ v: z.string().max(64).optional().openapi({ description: "The archive version the page read from `/tiles/map.json`" }) }) },
  responses: {
    200: { description: "The tile", content: { "application/vnd.mapbox-vector-tile": { schema: z.string().openapi({ format: "binary" }) } } },
    204: { description: "The archive holds no data for this tile inside its bounds" },
    304: { description: "Not modified (`If-None-Match`)" },
    404: errorResponses[404],
    422: errorResponses[422],
  },
});

const rasterRoute = createRoute({
  method: "get",
  path: "/tiles/raster/{z}/{x}/{y}.png",
  operationId: "getRasterTile",
  security: [],
  tags: ["Base map"],
  summary: "A raster tile of the configured tile server, through this service",
  description: "The tile of `MAP_RASTER_URL`, passed on (cached a day) so that browsers load nothing from another origin. 404 without a raster server; 502 when it fails.",
  request: { params: Zxy },
  responses: {
    200: { description: "The tile image", content: { "image/png": { schema: z.string().openapi({ format: "binary" }) } } },
    404: errorResponses[404],
    422: errorResponses[422],
    502: { description: "The tile server failed", content: errorResponses[404].content },
  },
});

/** The edge cache's answer for this request, or the one `make` builds (stored when it is a 200). */
async function cached(c: Context<AppEnv>, make: () => Promise<Response>): Promise<Response> {
  const cache = (globalThis as { caches?: { default?: Cache } }).caches?.default;
  const key = new Request(c.req.url, { method: "GET" });
  const hit = await cache?.match(key);
  // An answer of the cache has immutable headers; the middleware (security headers, CORS) sets its own.
  const res = hit ? new Response(hit.body, hit) : await make();
  if (!hit && cache && res.status === 200) {
    const copy = res.clone();
    c.executionCtx.waitUntil(cache.put(key, copy).catch(() => undefined));
  }
  const etag = res.headers.get("etag");
  if (etag && c.req.header("if-none-match")?.split(/\s*,\s*/).includes(etag)) {
    await res.body?.cancel();
    return new Response(null, { status: 304, headers: { etag, "cache-control": res.headers.get("cache-control") ?? "" } });
  }
  return res;
}

/**
 * z/x/y of a tile path whose last segment is `<y>.<ext>` (Hono names a parameter up to the next `/`,
 * so the route takes the segment whole); invalid numbers are a 422 naming the field, like every route.
 */
function tileParams(c: Context<AppEnv>, ext: string) {
  const file = c.req.param("file") ?? "";
  const parsed = Zxy.safeParse({ z: c.req.param("z"), x: c.req.param("x"), y: file.slice(0, -ext.length - 1) });
  if (!parsed.success) throw unprocessable(zodMessage(parsed.error), zodFields(parsed.error));
  return parsed.data;
}

export const mapRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
mapRoutes.openapi(configRoute, async (c) => c.json(await mapConfig(c.env, publicBase(c)), 200, { "cache-control": "no-cache" }));
// Declared for the OpenAPI document; served by the plain routes below (the `.png`/`.mvt` suffix).
mapRoutes.openAPIRegistry.registerPath(rasterRoute);
mapRoutes.openAPIRegistry.registerPath(vectorRoute);
mapRoutes.get("/tiles/raster/:z/:x/:file{[^/]+\\.png}", async (c) => {
  const { z: zoom, x, y } = tileParams(c, "png");
  return cached(c, async () => {
    const tile = await rasterTile(c.env, zoom, x, y);
    if (tile.status !== 200) return errorResponse(c, tile.status, tile.message);
    return new Response(tile.body, { headers: { "content-type": tile.contentType, "cache-control": tile.cacheControl } });
  });
});
mapRoutes.get("/tiles/:z/:x/:file{[^/]+\\.mvt}", async (c) => {
  const { z: zoom, x, y } = tileParams(c, "mvt");
  const v = c.req.query("v");
  if (v !== undefined && v.length > 64) throw unprocessable("v: at most 64 characters", "v");
  return cached(c, async () => {
    const tile = await vectorTile(c.env, zoom, x, y, v);
    if (tile.status === 404) return errorResponse(c, 404, tile.message);
    const headers = { etag: tile.etag, "cache-control": tile.cacheControl, "content-type": "application/vnd.mapbox-vector-tile" };
    return new Response(tile.status === 200 ? tile.body : null, { status: tile.status, headers });
  });
});
