/**
 * The base map of the pages, chosen at runtime (docs/features/base-map.md):
 *   vector  a PMTiles archive of vector tiles in R2 (`UPLOADS` at `MAP_ARCHIVE_KEY`), one per
 *           deployment, read by range requests (the `pmtiles` decoder over an R2 source);
 *   raster  else a raster tile server (`MAP_RASTER_URL`), fetched by the Worker and passed on,
 *           so the browser still loads everything from the service's own origin;
 *   none    else nothing: the pages draw their offline country outlines.
 * Tiles carry an ETag and long cache headers and go through the Workers Cache API.
 */
import { EtagMismatch, PMTiles, type RangeResponse, type Source, TileType } from "pmtiles";
import type { Env } from "../env";
import { log } from "../lib/log";

export const DEFAULT_ARCHIVE_KEY = "basemap/region.pmtiles";
/** A tile URL that names the archive's version (`?v=`) is cached this long; without or with an old one, a day. */
const IMMUTABLE = "public, max-age=31536000, immutable";
const A_DAY = "public, max-age=86400";
/** Deepest zoom a raster tile may be asked for. */
const RASTER_MAX_ZOOM = 20;

export const archiveKey = (env: Pick<Env, "MAP_ARCHIVE_KEY">) => env.MAP_ARCHIVE_KEY || DEFAULT_ARCHIVE_KEY;

/** The archive has no object at its key (any more). */
class ArchiveMissing extends Error {}

/** pmtiles' refusals of an object that is no PMTiles v3 archive (it keeps them for its instance: the instance is dropped). */
const isInvalidArchive = (e: unknown) => e instanceof Error && /magic number|spec version|Empty directory|varint/i.test(e.message);

/** An unusable archive answers as none (logged): the pages still draw their fallback instead of failing. */
function unusable(env: Env, e: unknown): null {
  archives.delete(archiveKey(env));
  log("error", "the base map archive in R2 is not a PMTiles v3 archive; pages draw no base map", { key: archiveKey(env), error: e });
  return null;
}

/** Range reads of the archive object; `etag` pins the version the cached header and directories came from. */
class R2Source implements Source {
  constructor(
    private readonly bucket: R2Bucket,
    private readonly key: string,
  ) {}
  getKey() {
    return this.key;
  }
  async getBytes(offset: number, length: number, _signal?: AbortSignal, etag?: string): Promise<RangeResponse> {
    const object = await this.bucket.get(this.key, { range: { offset, length }, ...(etag ? { onlyIf: { etagMatches: etag } } : {}) });
    if (!object) throw new ArchiveMissing(this.key);
    // A conditional read of a replaced archive answers the object without a body: pmtiles drops its cache and reads again.
    if (!("arrayBuffer" in object)) throw new EtagMismatch();
    return { data: await object.arrayBuffer(), etag: object.etag };
  }
}

/** One decoder per archive key and isolate: the header and directories stay cached between requests. */
const archives = new Map<string, PMTiles>();
function archiveOf(env: Env): PMTiles {
  const key = archiveKey(env);
  let archive = archives.get(key);
  if (!archive) {
    archive = new PMTiles(new R2Source(env.UPLOADS, key));
    archives.set(key, archive);
  }
  return archive;
}

export interface ArchiveInfo {
  /** The R2 object's etag: the archive's version. */
  etag: string;
  bounds: [number, number, number, number];
  center: [number, number, number];
  minzoom: number;
  maxzoom: number;
  name: string | null;
  attribution: string;
  attributionUrl: string | null;
}

const stripTags = (s: string) => s.replace(/<[^>]*>/g, "").replace(/&copy;/g, "©").replace(/&amp;/g, "&").replace(/\s+/g, " ").trim();

/** The archive's header and metadata, or null when there is none (or it is not a vector tile archive). Checks the object's etag on every call. */
export async function archiveInfo(env: Env): Promise<ArchiveInfo | null> {
  const head = await env.UPLOADS.head(archiveKey(env));
  checkedAt.set(archiveKey(env), Date.now());
  if (!head) return null;
  const archive = archiveOf(env);
  try {
    let header = await archive.getHeader();
    if (header.etag !== head.etag) {
      // Replaced since this isolate read it: start again from the new version.
      archives.delete(archiveKey(env));
      header = await archiveOf(env).getHeader();
    }
    if (header.tileType !== TileType.Mvt) return null;
    const metadata = ((await archiveOf(env).getMetadata()) ?? {}) as { name?: unknown; attribution?: unknown };
    const html = typeof metadata.attribution === "string" ? metadata.attribution : "";
    // OpenStreetMap data links to its licence (ODbL) page; other data to the first https link of its attribution.
    const osm = !html || /openstreetmap/i.test(html);
    const href = osm ? "https://www.openstreetmap.org/copyright" : (/href="(https:\/\/[^"]+)"/.exec(html)?.[1] ?? null);
    return {
      etag: header.etag ?? head.etag,
      bounds: [header.minLon, header.minLat, header.maxLon, header.maxLat],
      center: [header.centerLon, header.centerLat, header.centerZoom],
      minzoom: header.minZoom,
      maxzoom: header.maxZoom,
      name: typeof metadata.name === "string" ? metadata.name : null,
      attribution: stripTags(html) || "© OpenStreetMap contributors",
      attributionUrl: href,
    };
  } catch (e) {
    if (e instanceof ArchiveMissing) return null;
    if (isInvalidArchive(e)) return unusable(env, e);
    throw e;
  }
}

/** `MAP_RASTER_URL` when it is a usable template (http(s), with {z}, {x} and {y}); a broken one is logged and treated as unset. */
function rasterTemplate(env: Env): string | null {
  const url = env.MAP_RASTER_URL;
  if (!url) return null;
  if (/^https?:\/\/[^/]+\//.test(url) && ["{z}", "{x}", "{y}"].every((p) => url.includes(p))) return url;
  log("warn", "MAP_RASTER_URL is not an http(s) URL template with {z}, {x} and {y}; no raster tiles", { url });
  return null;
}

export type MapMode = "vector" | "raster" | "none";

export interface MapConfig {
  mode: MapMode;
  tiles: string | null;
  attribution: string | null;
  attribution_url: string | null;
  bounds: [number, number, number, number] | null;
  center: [number, number, number] | null;
  minzoom: number | null;
  maxzoom: number | null;
}

/** Which map the pages draw, with absolute tile URLs under `origin`. */
export async function mapConfig(env: Env, origin: string): Promise<MapConfig> {
  const base = origin.replace(/\/$/, "");
  const info = await archiveInfo(env);
  if (info)
    return {
      mode: "vector",
      tiles: `${base}/tiles/{z}/{x}/{y}.mvt?v=${version(info.etag)}`,
      attribution: info.attribution,
      attribution_url: info.attributionUrl,
      bounds: info.bounds,
      center: info.center,
      minzoom: info.minzoom,
      maxzoom: info.maxzoom,
    };
  if (rasterTemplate(env))
    return {
      mode: "raster",
      tiles: `${base}/tiles/raster/{z}/{x}/{y}.png`,
      attribution: env.MAP_RASTER_ATTRIBUTION || "© OpenStreetMap contributors",
      attribution_url: env.MAP_RASTER_ATTRIBUTION_URL || "https://www.openstreetmap.org/copyright",
      bounds: null,
      center: null,
      minzoom: 0,
      maxzoom: RASTER_MAX_ZOOM,
    };
  return { mode: "none", tiles: null, attribution: null, attribution_url: null, bounds: null, center: null, minzoom: null, maxzoom: null };
}

const version = (etag: string) => etag.replace(/[^0-9a-zA-Z]/g, "").slice(0, 16);

const tileX = (lng: number, z: number) => ((lng + 180) / 360) * 2 ** z;
const tileY = (lat: number, z: number) => {
  const s = Math.sin((Math.max(-85.05, Math.min(85.05, lat)) * Math.PI) / 180);
  return (0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI)) * 2 ** z;
};

/** Whether tile z/x/y touches the bounds (west, south, east, north). */
export function tileInBounds(z: number, x: number, y: number, [w, s, e, n]: [number, number, number, number]) {
  return x + 1 > tileX(w, z) && x < tileX(e, z) && y + 1 > tileY(n, z) && y < tileY(s, z);
}

export type TileAnswer =
  | { status: 200; body: ArrayBuffer; etag: string; cacheControl: string }
  | { status: 204; etag: string; cacheControl: string }
  | { status: 404; message: string };

/**
 * Tile z/x/y of the archive: 200 with the (decompressed) MVT bytes, 204 for a tile inside the
 * archive's bounds and zooms that it does not hold (empty), 404 outside them or without an archive.
 * `v`: the version the page asked for (`?v=` of the config's URL).
 */
export async function vectorTile(env: Env, z: number, x: number, y: number, v: string | undefined): Promise<TileAnswer> {
  const info = await archiveHeader(env, v);
  if (!info) return { status: 404, message: "No base map archive is configured" };
  if (z < info.minZoom || z > info.maxZoom) return { status: 404, message: `Zoom ${z} is outside the archive's zooms ${info.minZoom}–${info.maxZoom}` };
  if (x >= 2 ** z || y >= 2 ** z || !tileInBounds(z, x, y, [info.minLon, info.minLat, info.maxLon, info.maxLat]))
    return { status: 404, message: `Tile ${z}/${x}/${y} is outside the archive's bounds` };
  let tile: RangeResponse | undefined;
  try {
    tile = await archiveOf(env).getZxy(z, x, y);
  } catch (e) {
    if (!(e instanceof ArchiveMissing)) throw e;
    archives.delete(archiveKey(env));
    return { status: 404, message: "No base map archive is configured" };
  }
  // The read may have found a replaced archive (pmtiles reads the new header then): its version names the answer.
  const current = version((await archiveOf(env).getHeader()).etag ?? "");
  const etag = `"${current}-${z}-${x}-${y}"`;
  const cacheControl = v && v === current ? IMMUTABLE : A_DAY;
  return tile ? { status: 200, body: tile.data, etag, cacheControl } : { status: 204, etag, cacheControl };
}

/** When this isolate last compared its archive's header with the object in R2, per key. */
const checkedAt = new Map<string, number>();
/** How long a header read from R2 is trusted for the bounds and zooms of tile requests. */
const RECHECK_MS = 60_000;

/**
 * The archive's header for a tile request. The bounds and zooms decide 404s without reading R2, so a
 * replaced archive must be noticed without a tile read: the object's etag is compared once a minute,
 * and at once when the page asks for another version than the one cached (such answers are in the
 * edge cache under their own URL, so this costs one metadata read per tile not yet cached).
 */
async function archiveHeader(env: Env, v: string | undefined) {
  const key = archiveKey(env);
  try {
    let header = await archiveOf(env).getHeader();
    const since = Date.now() - (checkedAt.get(key) ?? 0);
    if (since > RECHECK_MS || (v !== undefined && v !== version(header.etag ?? ""))) {
      checkedAt.set(key, Date.now());
      const head = await env.UPLOADS.head(key);
      if (!head) throw new ArchiveMissing(key);
      if (head.etag !== header.etag) {
        archives.delete(key);
        header = await archiveOf(env).getHeader();
      }
    }
    return header.tileType === TileType.Mvt ? { ...header, etag: header.etag ?? "" } : null;
  } catch (e) {
    if (e instanceof ArchiveMissing) {
      archives.delete(archiveKey(env));
      return null;
    }
    if (isInvalidArchive(e)) return unusable(env, e);
    throw e;
  }
}

export type RasterAnswer = { status: 200; body: ReadableStream | null; contentType: string; cacheControl: string } | { status: 404 | 502; message: string };

/**
 * Raster tile z/x/y from `MAP_RASTER_URL` ({z}, {x}, {y}; {s} becomes "a"), passed on so the pages
 * load nothing from elsewhere. 404 without a raster server or outside the tile grid; 502 when the
 * server fails or answers something that is not an image.
 */
export async function rasterTile(env: Env, z: number, x: number, y: number, fetcher: typeof fetch = fetch): Promise<RasterAnswer> {
  const template = rasterTemplate(env);
  if (!template) return { status: 404, message: "No raster tile server is configured" };
  if (z > RASTER_MAX_ZOOM || x >= 2 ** z || y >= 2 ** z) return { status: 404, message: `Tile ${z}/${x}/${y} is outside the tile grid` };
  const url = template.replace("{z}", String(z)).replace("{x}", String(x)).replace("{y}", String(y)).replace("{s}", "a");
  let res: Response;
  try {
    // Tile servers' usage policies ask for an identifying User-Agent; the platform caches the upstream answer.
    res = await fetcher(url, { headers: { "user-agent": `dispatch-service (${env.PUBLIC_URL ?? "self-hosted"})` }, cf: { cacheEverything: true, cacheTtl: 86400 } } as RequestInit);
  } catch {
    return { status: 502, message: "The raster tile server did not answer" };
  }
  const contentType = res.headers.get("content-type") ?? "";
  if (!res.ok || !contentType.startsWith("image/")) {
    await res.body?.cancel();
    return { status: 502, message: `The raster tile server answered ${res.status} ${contentType}`.trim() };
  }
  return { status: 200, body: res.body, contentType, cacheControl: A_DAY };
}
