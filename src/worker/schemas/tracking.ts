/** Driver tracking entries and positions on the wire. */
import { z } from "@hono/zod-openapi";
import { DateTime } from "../openapi";

/** GeoJSON point with range-checked coordinates `[longitude, latitude]`. */
export const TrackingPoint = z
  .object({
    type: z.literal("Point"),
    coordinates: z.tuple([z.number().min(-180).max(180), z.number().min(-90).max(90)]).openapi({ minItems: 2, maxItems: 2 }),
  })
  .openapi("TrackingPoint", { description: "GeoJSON point `[longitude, latitude]`, longitude -180..180, latitude -90..90" });

export const TrackingSchema = z
  .object({
    id: z.number().int(),
    timestamp: DateTime,
    position: TrackingPoint,
    driver_id: z.number().int(),
  })
  .openapi("DriverTracking");

export const PositionRecordSchema = TrackingSchema.extend({
  firstname: z.string().nullable(),
  lastname: z.string().nullable(),
  htmlcolor: z.string().nullable(),
}).openapi("DriverPosition");
