/** Postal-code areas, tour areas and their geometries on the wire; the operator's postal-area import. */
import { z } from "@hono/zod-openapi";

/** Bounds of a geometry a client sends (far above any postal-code area; the 5 MB body limit comes first for most). */
const position = z.array(z.number()).min(2).max(3);
const ring = z.array(position).max(100_000);
const polygon = z.array(ring).max(1_000);

export const PolygonGeometry = z
  .object({ type: z.literal("Polygon"), coordinates: polygon })
  .openapi("PolygonGeometry", { description: "GeoJSON Polygon, positions [longitude, latitude]" });

export const MultiPolygonGeometry = z
  .object({ type: z.literal("MultiPolygon"), coordinates: z.array(polygon).max(10_000) })
  .openapi("MultiPolygonGeometry", { description: "GeoJSON MultiPolygon, positions [longitude, latitude]" });

export const AreaGeometrySchema = z.union([PolygonGeometry, MultiPolygonGeometry]).openapi("AreaGeometry");

// ---------------------------------------------------------------- schemas

export const PlzAreaSchema = z
  .object({
    gid: z.number().int().openapi({ description: "Id of the postal-code area" }),
    plz: z.string().openapi({ example: "80331" }),
    note: z.string().nullable().openapi({ description: "Place name", example: "München" }),
    area_id: z.number().int().nullable().openapi({ description: "Id of this company's tour area containing the postal-code area, null when none does" }),
    geom: AreaGeometrySchema,
  })
  .openapi("PlzArea");

/** A postal-code area inside a tour area's `plzareas` (no geometry: the tour area's `geom` covers them). */
export const PlzAreaBriefSchema = PlzAreaSchema.omit({ geom: true }).openapi("PlzAreaBrief");

export const PlzAreaIndexSchema = z
  .object({ plz: z.string(), gid: z.number().int(), area_id: z.number().int().nullable() })
  .openapi("PlzAreaIndexEntry");

export const TourAreaSchema = z
  .object({
    id: z.number().int(),
    areaname: z.string().nullable().openapi({
      description: "Name of the tour area. (dispatch-api.md types it as an integer in the response shape; it is a name, so it is a string.)",
      example: "Munich centre",
    }),
    driver_id: z.number().int().nullable().openapi({ description: "Driver automatically assigned to tours built from deliveries in this area; null when unbound" }),
    geom: MultiPolygonGeometry.openapi({ description: "Union of the member postal-code areas (GeoJSON MultiPolygon)" }),
    plzareas: z
      .object({
        num_results: z.number().int(),
        objects: z.array(PlzAreaBriefSchema),
        page: z.number().int(),
        total_pages: z.number().int(),
      })
      .openapi({ description: "List envelope of the member postal-code areas, all on page 1, without their geometries (see `GET /plzarea` for those)" }),
  })
  .openapi("TourArea");

/** A member given in `plzareas`: a gid (number), a postal code (string), or an object with `gid` or `plz`. */
export const MemberRefSchema = z.union([
  z.number().int().positive(),
  z.string().trim().min(1).max(20),
  z.object({ gid: z.number().int().positive() }).passthrough(),
  z.object({ plz: z.string().trim().min(1).max(20) }).passthrough(),
]);

export const TourAreaPatchSchema = z
  .object({
    id: z.number().int().optional().openapi({ description: "Optional; must equal the id in the path" }),
    areaname: z.string().trim().min(1).max(200).optional(),
    driver_id: z.number().int().positive().nullable().optional().openapi({ description: "A driver of the company (active or not); null unbinds" }),
    plz_list: z.array(z.string().trim().min(1).max(20)).max(10_000).optional().openapi({ description: "New membership as postal codes; replaces the current one and recomputes `geom`" }),
    plzareas: z
      .union([z.array(MemberRefSchema).max(10_000), z.object({ objects: z.array(MemberRefSchema).max(10_000) }).passthrough()])
      .optional()
      .openapi({
        description:
          "New membership: an array of gids, postal codes or `{gid}` / `{plz}` objects, or a list envelope whose `objects` are such (as returned by GET). " +
          "Replaces the current membership and recomputes `geom`.",
      }),
    geom: AreaGeometrySchema.optional().openapi({ description: "Sets the geometry directly (stored as MultiPolygon); wins over the recomputed union" }),
  })
  .openapi("TourAreaPatch");

export const PostalAreaImportBody = z
  .object({
    type: z.literal("FeatureCollection"),
    features: z
      .array(
        z
          .object({
            type: z.literal("Feature"),
            properties: z.record(z.string(), z.unknown()).nullable().optional(),
            geometry: z.unknown().openapi({ description: "GeoJSON Polygon or MultiPolygon" }),
          })
          .passthrough(),
      )
      .min(1)
      .max(50_000),
  })
  .openapi("PostalAreaFeatureCollection", {
    description: "Features with a postal code in `properties.plz` (or `postcode` / `PLZ`), an optional `properties.note`, and a Polygon or MultiPolygon geometry.",
  });

export const ImportResultSchema = z
  .object({
    imported: z.number().int().openapi({ description: "Areas inserted" }),
    replaced: z.number().int().openapi({ description: "Existing areas removed (superseded postal codes; with replace, every derived area)" }),
    kept: z.number().int().openapi({ description: "Superseded areas kept because a tour area still uses them and the import has no area of their postal code" }),
    tour_areas_updated: z.number().int().openapi({ description: "Tour areas whose membership moved to imported areas (their geom was recomputed)" }),
  })
  .openapi("PostalAreaImportResult");
