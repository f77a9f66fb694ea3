/**
 * Validation of client-supplied area geometries (PATCH /tourarea geom, the
 * operator's postal-area import): GeoJSON Polygon / MultiPolygon with finite
 * WGS84 positions; rings of at least four positions, closed if left open.
 */
import type { MultiPolygon, Polygon, Position } from "geojson";
import { toMultiPolygon } from "../geo";

export type AreaGeometry = Polygon | MultiPolygon;

export interface Bbox {
  min_lng: number;
  min_lat: number;
  max_lng: number;
  max_lat: number;
}

/**
 * Checks and normalises a geometry: returns the geometry (rings closed,
 * positions cut to [lng, lat]) or a message saying what is wrong.
 */
export function validateAreaGeometry(input: unknown): { ok: true; geom: AreaGeometry } | { ok: false; message: string } {
  if (!input || typeof input !== "object") return { ok: false, message: "geometry must be a GeoJSON Polygon or MultiPolygon" };
  const g = input as { type?: unknown; coordinates?: unknown };
  if (g.type !== "Polygon" && g.type !== "MultiPolygon") return { ok: false, message: `geometry type ${String(g.type)} is not Polygon or MultiPolygon` };
  if (!Array.isArray(g.coordinates)) return { ok: false, message: "coordinates must be an array" };
  const polygons: unknown[] = g.type === "Polygon" ? [g.coordinates] : g.coordinates;
  if (polygons.length === 0) return { ok: false, message: "geometry has no polygons" };
  const out: Position[][][] = [];
  for (const [p, poly] of polygons.entries()) {
    if (!Array.isArray(poly) || poly.length === 0) return { ok: false, message: `polygon ${p} has no rings` };
    const rings: Position[][] = [];
    for (const [r, ring] of poly.entries()) {
      if (!Array.isArray(ring)) return { ok: false, message: `polygon ${p} ring ${r} is not an array of positions` };
      const positions: Position[] = [];
      for (const pos of ring) {
        if (!Array.isArray(pos) || pos.length < 2) return { ok: false, message: `polygon ${p} ring ${r}: a position needs [longitude, latitude]` };
        const [lng, lat] = pos;
        if (typeof lng !== "number" || typeof lat !== "number" || !Number.isFinite(lng) || !Number.isFinite(lat))
          return { ok: false, message: `polygon ${p} ring ${r}: positions must be finite numbers` };
        if (lng < -180 || lng > 180 || lat < -90 || lat > 90) return { ok: false, message: `polygon ${p} ring ${r}: position [${lng}, ${lat}] out of range` };
        positions.push([lng, lat]);
      }
      const first = positions[0];
      const last = positions[positions.length - 1];
      if (first && (first[0] !== last[0] || first[1] !== last[1])) positions.push([first[0], first[1]]);
      if (positions.length < 4) return { ok: false, message: `polygon ${p} ring ${r} needs at least three distinct positions` };
      rings.push(positions);
    }
    out.push(rings);
  }
  return { ok: true, geom: g.type === "Polygon" ? { type: "Polygon", coordinates: out[0] } : { type: "MultiPolygon", coordinates: out } };
}

/** MultiPolygon of a validated geometry. */
export const asMultiPolygon = (geom: AreaGeometry): MultiPolygon => toMultiPolygon(geom);

/** Bounding box over the outer rings (holes lie inside them). */
export function geometryBbox(geom: AreaGeometry): Bbox {
  let minLng = Infinity;
  let minLat = Infinity;
  let maxLng = -Infinity;
  let maxLat = -Infinity;
  for (const poly of toMultiPolygon(geom).coordinates) {
    for (const [lng, lat] of poly[0] ?? []) {
      if (lng < minLng) minLng = lng;
      if (lng > maxLng) maxLng = lng;
      if (lat < minLat) minLat = lat;
      if (lat > maxLat) maxLat = lat;
    }
  }
  return { min_lng: minLng, min_lat: minLat, max_lng: maxLng, max_lat: maxLat };
}
