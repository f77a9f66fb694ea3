/** Proofs of delivery on the wire. */
import { z } from "@hono/zod-openapi";
import { FAR_FROM_ADDRESS_METERS } from "../../core/services/proofs";
import { Point } from "../openapi";

const ImageInfo = z.object({
  url: z.string().openapi({ description: "Absolute API link of the image (needs the same Authorization)" }),
  type: z.enum(["image/jpeg", "image/png", "image/webp"]),
  bytes: z.number().int(),
});

export const ProofSchema = z
  .object({
    id: z.number().int(),
    delivery_id: z.number().int(),
    route_id: z.number().int(),
    driver_id: z.number().int().nullable(),
    recipient: z.string().nullable().openapi({ description: "Name of the person who received the delivery" }),
    reported_at: z.string().nullable().openapi({ format: "date-time", description: "When the driver reported, by the phone's clock (an offline report keeps its original time)" }),
    location: Point.extend({ accuracy: z.number().nullable().openapi({ description: "Metres" }) })
      .nullable()
      .openapi({ description: "Where the report was made (the phone's position then): a GeoJSON point as everywhere in the interface, `accuracy` in metres beside its coordinates (the shape `POST /deliverydone` takes)" }),
    position: z
      .object({ lat: z.number(), lng: z.number(), accuracy: z.number().nullable() })
      .nullable()
      .openapi({ deprecated: true, description: "Deprecated: `location` as `{lat, lng, accuracy}`, kept for clients written before it" }),
    distance_m: z.number().nullable().openapi({ description: "Metres between `location` and the delivery address" }),
    far_from_address: z.boolean().nullable().openapi({ description: `true when the report was made more than ${FAR_FROM_ADDRESS_METERS} m from the delivery address` }),
    scanned_code: z.string().nullable().openapi({ description: "The code the driver scanned (or typed) at the door" }),
    scan_match: z.boolean().nullable().openapi({ description: "Whether `scanned_code` is the delivery's `scancode` (null: nothing scanned, or the delivery has no code)" }),
    photo: ImageInfo.extend({ width: z.number().int(), height: z.number().int() }).nullable(),
    signature: ImageInfo.nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("DeliveryProof");
