/** Routing answers on the wire that the route records do not cover. */
import { z } from "@hono/zod-openapi";

/** One plan of POST /routingvariants, as answered. */
export const RoutingVariantSchema = z
  .object({
    name: z.enum(["fewest_tours", "shorter_days", "one_more_tour"]),
    description: z.string(),
    tours: z.number().int(),
    distance: z.number().int().openapi({ description: "Metres" }),
    duration: z.number().int().openapi({ description: "Seconds, all tours together" }),
    longest_tour: z.number().int().openapi({ description: "Seconds" }),
    waiting: z.number().int().openapi({ description: "Seconds" }),
    unassigned: z.array(z.number().int()),
    sequences: z.array(z.array(z.number().int())).openapi({ description: "Delivery ids per tour in driving order" }),
  })
  .openapi("RoutingVariant");
