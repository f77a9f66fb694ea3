/**
 * Postal-code areas (`postal_areas`, migration 0101: Voronoi approximations
 * of German postal-code areas, or operator-imported polygons).
 */
import { booleanPointInPolygon } from "@turf/boolean-point-in-polygon";
import { featureCollection, multiPolygon, polygon } from "@turf/helpers";
import { union } from "@turf/union";
import type { MultiPolygon, Polygon } from "geojson";

export type AreaGeometry = Polygon | MultiPolygon;

export interface PostalArea {
  gid: number;
  plz: string;
  note: string | null;
  geom: AreaGeometry;
}

/**
 * Widest derived area is 0.83° of longitude: a first query bounded by this
 * window reads only a slice of the bbox index; wider (imported) areas are
 * still found by the unbounded second query when the first finds nothing.
 */
const NARROW_WINDOW_DEG = 1;

type AreaRow = { gid: number; plz: string; note: string | null; geom: string };

/**
 * The postal area containing a point: candidates from the bbox index, then an
 * exact point-in-polygon test. Null outside every area. When areas overlap
 * (imported data) the smallest bbox wins.
 */
export async function findPostalAreaForPoint(db: D1Database, lng: number, lat: number): Promise<PostalArea | null> {
  if (!Number.isFinite(lng) || !Number.isFinite(lat)) return null;
  const order = "ORDER BY (max_lng - min_lng) * (max_lat - min_lat)";
  const narrow = await db
    .prepare(
      `SELECT gid, plz, note, geom FROM postal_areas
       WHERE min_lng BETWEEN ?1 - ?3 AND ?1 AND max_lng >= ?1 AND min_lat <= ?2 AND max_lat >= ?2 ${order}`,
    )
    .bind(lng, lat, NARROW_WINDOW_DEG)
    .all<AreaRow>();
  const hit = firstContaining(narrow.results, lng, lat);
  if (hit) return hit;
  const wide = await db
    .prepare(
      `SELECT gid, plz, note, geom FROM postal_areas
       WHERE min_lng < ?1 - ?3 AND max_lng >= ?1 AND min_lat <= ?2 AND max_lat >= ?2 ${order}`,
    )
    .bind(lng, lat, NARROW_WINDOW_DEG)
    .all<AreaRow>();
  return firstContaining(wide.results, lng, lat);
}

function firstContaining(rows: AreaRow[], lng: number, lat: number): PostalArea | null {
  for (const row of rows) {
    const geom = parseAreaGeometry(row.geom);
    if (geom && booleanPointInPolygon([lng, lat], geom)) return { gid: row.gid, plz: row.plz, note: row.note, geom };
  }
  return null;
}

/** Parses a stored GeoJSON Polygon / MultiPolygon (or a Feature holding one); null otherwise. */
export function parseAreaGeometry(input: string | AreaGeometry | { type: "Feature"; geometry: unknown }): AreaGeometry | null {
  let value: unknown = input;
  if (typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch {
      return null;
    }
  }
  if (value && typeof value === "object" && (value as { type?: string }).type === "Feature") value = (value as { geometry?: unknown }).geometry;
  if (!value || typeof value !== "object") return null;
  const g = value as { type?: string; coordinates?: unknown };
  if ((g.type === "Polygon" || g.type === "MultiPolygon") && Array.isArray(g.coordinates)) return g as AreaGeometry;
  return null;
}

/** MultiPolygon view of a Polygon or MultiPolygon. */
export function toMultiPolygon(geom: AreaGeometry): MultiPolygon {
  return geom.type === "MultiPolygon" ? { type: "MultiPolygon", coordinates: geom.coordinates } : { type: "MultiPolygon", coordinates: [geom.coordinates] };
}

/**
 * Union of postal areas (e.g. a tour area). Always a MultiPolygon: empty
 * (`coordinates: []`) for no input, the shape itself for one, the dissolved
 * union (shared borders removed) for several. Strings are parsed as GeoJSON.
 */
export function unionPostalAreas(geoms: ReadonlyArray<AreaGeometry | string>): MultiPolygon {
  const parsed: AreaGeometry[] = [];
  for (const g of geoms) {
    const p = parseAreaGeometry(g);
    if (!p) throw new TypeError("unionPostalAreas: not a GeoJSON Polygon or MultiPolygon");
    if (p.coordinates.length) parsed.push(p);
  }
  if (parsed.length === 0) return { type: "MultiPolygon", coordinates: [] };
  if (parsed.length === 1) return toMultiPolygon(parsed[0]);
  const features = parsed.map((g) => (g.type === "Polygon" ? polygon(g.coordinates) : multiPolygon(g.coordinates)));
  const result = union(featureCollection<Polygon | MultiPolygon>(features));
  if (!result) return { type: "MultiPolygon", coordinates: [] };
  return toMultiPolygon(result.geometry);
}
