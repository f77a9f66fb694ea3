/** Driver availability windows on the wire. */
import { z } from "@hono/zod-openapi";
import { normaliseDateTime } from "../../core/lib/time";
import { DateTime } from "../openapi";

export const AvailabilitySchema = z
  .object({
    id: z.number().int(),
    fromtime: DateTime,
    totime: DateTime,
    driver_id: z.number().int(),
  })
  .openapi("DriverAvailability");

/** An ISO 8601 date-time input, normalised to the stored UTC form (no zone = UTC). */
export const DateTimeInput = z
  .string()
  .max(40)
  .transform((v, ctx) => {
    const normalised = normaliseDateTime(v);
    if (!normalised) {
      ctx.addIssue({ code: "custom", message: "not an ISO 8601 date-time" });
      return z.NEVER;
    }
    return normalised;
  })
  .openapi({ type: "string", format: "date-time", maxLength: 40, example: "2026-11-23T08:00:00Z" });
