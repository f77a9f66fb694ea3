/**
 * Operator import of real postal-code polygons into `postal_areas`
 * (`POST /_operator/postal-areas`).
 *
 * Semantics:
 * - every feature becomes one area with `source = 'imported'`; several features
 *   of one postal code are kept as several areas of that code;
 * - the import supersedes the existing areas (derived or earlier imported) of
 *   the postal codes it contains; with `replace` it also removes every derived
 *   area, so the Voronoi approximation is replaced by the imported dataset;
 * - tour-area memberships of superseded areas move to the new areas of the same
 *   postal code, and those tour areas get their union recomputed; a superseded
 *   area still referenced by a tour area and without a new counterpart is kept
 *   (counted in `kept`);
 * - inserts, membership moves and deletions are one D1 batch (all or nothing);
 *   rows travel as JSON parameters in chunks below D1's value-size limit.
 * Imports are operator actions and are not meant to run concurrently.
 */
import { unprocessable } from "../errors";
import { unionPostalAreas } from "../geo";
import { type Bbox, geometryBbox, validateAreaGeometry } from "./area-geometry";

/** The operator's import: a GeoJSON FeatureCollection of postal-code areas (`properties.plz`, `postcode` or `PLZ`; optional `note`). */
export interface PostalAreaImport {
  type: "FeatureCollection";
  features: { type: "Feature"; properties?: Record<string, unknown> | null; geometry: unknown }[];
}


interface ImportRow extends Bbox {
  plz: string;
  note: string | null;
  geom: string;
}

/** Largest geometry accepted (a D1 row holds at most 2 MB). */
const MAX_GEOM_CHARS = 1_900_000;
/** JSON parameter size per insert statement. */
const CHUNK_CHARS = 900_000;
const MAX_REPORTED_ERRORS = 5;

const PLZ_KEYS = ["plz", "postcode", "PLZ"] as const;

/** Checks every feature; 422 naming the offending features when any is invalid. */
export function prepareImportRows(body: PostalAreaImport): ImportRow[] {
  const rows: ImportRow[] = [];
  const errors: { field: string; message: string }[] = [];
  body.features.forEach((feature, i) => {
    if (errors.length >= MAX_REPORTED_ERRORS) return;
    const props = feature.properties ?? {};
    const rawPlz = PLZ_KEYS.map((k) => props[k]).find((v) => v !== undefined && v !== null);
    const plz = typeof rawPlz === "string" || typeof rawPlz === "number" ? String(rawPlz).trim() : "";
    if (!plz || plz.length > 20) {
      errors.push({ field: `features.${i}.properties.plz`, message: "needs a postal code in properties.plz (or postcode / PLZ), at most 20 characters" });
      return;
    }
    const checked = validateAreaGeometry(feature.geometry);
    if (!checked.ok) {
      errors.push({ field: `features.${i}.geometry`, message: checked.message });
      return;
    }
    const geom = JSON.stringify(checked.geom);
    if (geom.length > MAX_GEOM_CHARS) {
      errors.push({ field: `features.${i}.geometry`, message: `geometry larger than ${MAX_GEOM_CHARS} characters; simplify it` });
      return;
    }
    const note = props.note;
    rows.push({ plz, note: typeof note === "string" && note.trim() ? note.trim().slice(0, 200) : null, geom, ...geometryBbox(checked.geom) });
  });
  if (errors.length) throw unprocessable(`Invalid features: ${errors.map((e) => `${e.field}: ${e.message}`).join("; ")}`, errors.map((e) => e.field));
  return rows;
}

/** Rows as JSON arrays `[plz, note, geom, min_lng, min_lat, max_lng, max_lat]`, cut into chunks below CHUNK_CHARS. */
function chunkRows(rows: ImportRow[]): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const r of rows) {
    const item = JSON.stringify([r.plz, r.note, r.geom, r.min_lng, r.min_lat, r.max_lng, r.max_lat]);
    if (current.length && size + item.length > CHUNK_CHARS) {
      chunks.push(`[${current.join(",")}]`);
      current = [];
      size = 0;
    }
    current.push(item);
    size += item.length + 1;
  }
  if (current.length) chunks.push(`[${current.join(",")}]`);
  return chunks;
}

/**
 * The superseded areas: existing (gid <= ?1) areas of an imported code (?2, a
 * JSON array), plus every derived area when ?3 = 1.
 */
const superseded = (t = "postal_areas") => `${t}.gid <= ?1 AND (${t}.plz IN (SELECT value FROM json_each(?2)) OR (?3 = 1 AND ${t}.source = 'derived'))`;

export async function importPostalAreas(d1: D1Database, rows: ImportRow[], replace: boolean) {
  const codes = JSON.stringify([...new Set(rows.map((r) => r.plz))]);
  const max = (await d1.prepare("SELECT coalesce(max(gid), 0) AS max FROM postal_areas").first<{ max: number }>())?.max ?? 0;
  const params = [max, codes, replace ? 1 : 0] as const;

  const inserts = chunkRows(rows).map((chunk) =>
    d1
      .prepare(
        `INSERT INTO postal_areas (plz, note, geom, min_lng, min_lat, max_lng, max_lat, source)
         SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'),
                json_extract(value, '$[4]'), json_extract(value, '$[5]'), json_extract(value, '$[6]'), 'imported'
         FROM json_each(?1)`,
      )
      .bind(chunk),
  );
  const results = await d1.batch([
    ...inserts,
    // Tour areas whose membership is about to move (a superseded area with a new one of its code).
    d1
      .prepare(
        `SELECT DISTINCT m.tourarea_id, m.company_id FROM tour_area_members m JOIN postal_areas o ON o.gid = m.postal_area_gid
         WHERE ${superseded("o")} AND EXISTS (SELECT 1 FROM postal_areas n WHERE n.plz = o.plz AND n.gid > ?1)`,
      )
      .bind(...params),
    // Their memberships move to the new areas of the same postal code ...
    d1
      .prepare(
        `INSERT OR IGNORE INTO tour_area_members (company_id, tourarea_id, postal_area_gid)
         SELECT m.company_id, m.tourarea_id, n.gid FROM tour_area_members m
         JOIN postal_areas o ON o.gid = m.postal_area_gid
         JOIN postal_areas n ON n.plz = o.plz AND n.gid > ?1
         WHERE m.postal_area_gid IN (SELECT gid FROM postal_areas WHERE ${superseded()})`,
      )
      .bind(...params),
    d1
      .prepare(
        `DELETE FROM tour_area_members WHERE postal_area_gid IN (
           SELECT o.gid FROM postal_areas o WHERE ${superseded("o")}
           AND EXISTS (SELECT 1 FROM postal_areas n WHERE n.plz = o.plz AND n.gid > ?1))`,
      )
      .bind(...params),
    // ... and the superseded areas nobody uses any more go.
    d1.prepare(`DELETE FROM postal_areas WHERE ${superseded()} AND gid NOT IN (SELECT postal_area_gid FROM tour_area_members)`).bind(...params),
    d1.prepare(`SELECT count(*) AS kept FROM postal_areas WHERE ${superseded()}`).bind(...params),
  ]);
  const imported = results.slice(0, inserts.length).reduce((n, r) => n + (r.meta.changes ?? 0), 0);
  const affected = results[inserts.length].results as { tourarea_id: number; company_id: number }[];
  const replaced = results[inserts.length + 3].meta.changes ?? 0;
  const kept = (results[inserts.length + 4].results[0] as { kept: number }).kept;

  await recomputeTourAreas(d1, affected);
  return { imported, replaced, kept, tour_areas_updated: affected.length };
}

/** Recomputes the union of the given tour areas from their current members. */
async function recomputeTourAreas(d1: D1Database, areas: { tourarea_id: number; company_id: number }[]) {
  const updates: D1PreparedStatement[] = [];
  for (const area of areas) {
    const { results } = await d1
      .prepare("SELECT p.geom AS geom FROM tour_area_members m JOIN postal_areas p ON p.gid = m.postal_area_gid WHERE m.tourarea_id = ?1 AND m.company_id = ?2")
      .bind(area.tourarea_id, area.company_id)
      .all<{ geom: string }>();
    const geom = unionPostalAreas(results.map((r) => r.geom));
    updates.push(d1.prepare("UPDATE tour_areas SET geom = ?1 WHERE id = ?2 AND company_id = ?3").bind(JSON.stringify(geom), area.tourarea_id, area.company_id));
  }
  for (let i = 0; i < updates.length; i += 50) await d1.batch(updates.slice(i, i + 50));
}
