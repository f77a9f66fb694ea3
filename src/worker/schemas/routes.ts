/** Route records on the wire: the full record and the reduced one (dispatch-api.md "Route"). */
import { z } from "@hono/zod-openapi";
import { DateTime } from "../openapi";
import { AddressSchema } from "./addresses";
import { DeliverySchema } from "./deliveries";
import { RouteBreakSchema } from "./breaks";

const int = z.number().int().nullable();
const str = z.string().nullable();
const dt = DateTime.nullable();
const ids = z.array(z.number().int());

export const RouteLineString = z
  .object({ type: z.literal("LineString"), coordinates: z.array(z.array(z.number())) })
  .openapi("RouteLineString", { description: "GeoJSON line string of the tour, points `[longitude, latitude]`" });

/** Fields shared by the full and the reduced record. */
const routeBase = {
  id: z.number().int(),
  creationtime: DateTime,
  ast: dt.openapi({ description: "Actual start time; set when the route goes on the way" }),
  tst_from: dt.openapi({ description: "Target start time span, earliest" }),
  tst_to: dt.openapi({ description: "Target start time span, latest" }),
  pst: int.openapi({ description: "Deprecated planned start time" }),
  distance: z.number().int().openapi({ description: "Route length, metres" }),
  driver_id: int,
  status: z.number().int().openapi({ description: "See GET /routestatus" }),
  custom_id: str.openapi({ description: "Arbitrary tour id or name" }),
  previous_deliveries: ids.openapi({ description: "Ids of deliveries removed from or changed on the route" }),
  previous_drivers: ids.openapi({ description: "Ids of drivers previously assigned" }),
  replaces: int.openapi({ description: "The route this one replaced in an update" }),
  replaced_by: int.openapi({ description: "The route that replaced this one in an update" }),
  routebase_address_id: int.openapi({ description: "Start address (depot) of the tour" }),
  vehicle: str.openapi({ description: "The vehicle the tour was planned for (its `name`; beyond the interface)" }),
  vehicle_id: int.openapi({ description: "Its id when it is one of the company's stored vehicles (null for inline or identical vehicles; beyond the interface)" }),
  breaks: z.array(RouteBreakSchema).openapi({ description: "The breaks the plan placed, in time order: the working-time rules' and the fixed breaks of the vehicle or its driver (beyond the interface; docs/features/fleet-and-opening-hours.md)" }),
  sorted_deliveries: ids.openapi({ description: "Deprecated: the delivery ids in driving order (same as the order of `deliveries`)" }),
  areatext: str.openapi({ description: "Summary of the route's region" }),
  htmlcolor: str.openapi({ description: "Colour for map display" }),
};

export const RouteSchema = z
  .object({
    ...routeBase,
    gross_duration: z.number().int().openapi({ description: "Full tour duration including stops, MINUTES (rounded)" }),
    net_duration: z.number().int().openapi({ description: "Pure driving time, MINUTES (rounded)" }),
    deliveries: z.array(DeliverySchema).openapi({ description: "Delivery objects in driving order (`orderindex`)" }),
    routebase_address: AddressSchema.nullable().openapi({ description: "Start address (depot) record" }),
  })
  .openapi("Route", { description: "Full route record. The line string is served by `GET /routemetadata?routestring=true`." });

export const RouteMetadataSchema = z
  .object({
    ...routeBase,
    gross_duration: z.number().int().openapi({ description: "Full tour duration including stops, SECONDS" }),
    net_duration: z.number().int().openapi({ description: "Pure driving time, SECONDS" }),
    deliveries: ids.openapi({ description: "Delivery ids in driving order (`orderindex`)" }),
    routestring: RouteLineString.nullable().optional().openapi({ description: "Only present with `routestring=true` (null when the route has none)" }),
  })
  .openapi("RouteMetadata", { description: "Reduced route record: delivery ids instead of objects, no routebase address details, durations in seconds." });

export const RouteDeliveryDistanceSchema = z
  .object({
    delivery_id: z.number().int(),
    orderindex: z.number().int().nullable(),
    distance: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Metres from the preceding stop (the route base for the first delivery); null when a coordinate is unknown" }),
  })
  .openapi("RouteDeliveryDistance");
