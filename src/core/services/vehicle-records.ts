/** Vehicles: schema, input validation against the company's addresses and drivers, presentation. */
import { z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { VEHICLE_CLASSES } from "../../solver/vehicle-classes";
import { addresses, vehicles } from "../db/schema";
import type { Db } from "../context";
import { unprocessable } from "../errors";
import type { FieldMap } from "../lib/filters";
import { normaliseTimeOfDay } from "../lib/time";
import { assertCompanyDrivers } from "./drivers";

export type VehicleRow = typeof vehicles.$inferSelect;

const TimeOfDay = z.string().max(20).openapi({
  example: "08:00:00+01:00",
  description:
    "Time of day `hh:mm:ss+hh:mm` (that offset, every day), or `hh:mm:ss` on the company's wall clock (its time zone's offset of the day planned, summer or winter time); answered as stored",
});

export const VehicleSchema = z
  .object({
    id: z.number().int(),
    name: z.string().openapi({ description: "Unique within the company" }),
    plate: z.string().nullable(),
    vehicle_class: z.string().openapi({ description: "One of GET /vehicletype" }),
    depot_location_id: z.number().int().nullable(),
    driver_id: z.number().int().nullable(),
    capacity_1: z.number().int().nullable(),
    capacity_2: z.number().int().nullable(),
    capacity_3: z.number().int().nullable(),
    daily_rate: z.number().nullable(),
    km_rate: z.number().nullable(),
    waiting_hour_rate: z.number().nullable(),
    traveltime_factor: z.number().nullable(),
    departure_time_from: TimeOfDay.nullable(),
    departure_time_to: TimeOfDay.nullable(),
    return_time_to: TimeOfDay.nullable(),
    max_tour_duration: z.number().int().nullable().openapi({ description: "Minutes" }),
    co2e_g_per_km: z.number().nullable().openapi({ description: "Emission factor of this vehicle, g CO₂e per km (well-to-wheel), used by the day report; null: the default of its class (README \"Day report\")" }),
    active: z.boolean(),
  })
  .openapi("Vehicle");

export type Vehicle = z.infer<typeof VehicleSchema>;

export const presentVehicle = (r: VehicleRow): Vehicle => ({
  id: r.id,
  name: r.name,
  plate: r.plate,
  vehicle_class: r.vehicle_class,
  depot_location_id: r.depot_location_id,
  driver_id: r.driver_id,
  capacity_1: r.capacity_1,
  capacity_2: r.capacity_2,
  capacity_3: r.capacity_3,
  daily_rate: r.daily_rate,
  km_rate: r.km_rate,
  waiting_hour_rate: r.waiting_hour_rate,
  traveltime_factor: r.traveltime_factor,
  departure_time_from: r.departure_time_from,
  departure_time_to: r.departure_time_to,
  return_time_to: r.return_time_to,
  max_tour_duration: r.max_tour_duration,
  co2e_g_per_km: r.co2e_g_per_km,
  active: r.active,
});

export const vehicleFields: FieldMap = {
  id: { column: vehicles.id, type: "integer" },
  name: { column: vehicles.name, type: "text" },
  plate: { column: vehicles.plate, type: "text" },
  vehicle_class: { column: vehicles.vehicle_class, type: "text" },
  depot_location_id: { column: vehicles.depot_location_id, type: "integer" },
  driver_id: { column: vehicles.driver_id, type: "integer" },
  capacity_1: { column: vehicles.capacity_1, type: "integer" },
  capacity_2: { column: vehicles.capacity_2, type: "integer" },
  capacity_3: { column: vehicles.capacity_3, type: "integer" },
  daily_rate: { column: vehicles.daily_rate, type: "number" },
  km_rate: { column: vehicles.km_rate, type: "number" },
  waiting_hour_rate: { column: vehicles.waiting_hour_rate, type: "number" },
  traveltime_factor: { column: vehicles.traveltime_factor, type: "number" },
  max_tour_duration: { column: vehicles.max_tour_duration, type: "integer" },
  co2e_g_per_km: { column: vehicles.co2e_g_per_km, type: "number" },
  active: { column: vehicles.active, type: "boolean" },
};

/** The vehicle type list (`GET /vehicletype`), from the route optimiser's vehicle classes. */
export const VehicleTypeSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    speed_kmh: z.number().openapi({ description: "Average travel speed of the embedded travel model, km/h" }),
    restrictions: z.string(),
  })
  .openapi("VehicleType");

export const vehicleTypes = (): z.infer<typeof VehicleTypeSchema>[] =>
  VEHICLE_CLASSES.map((v) => ({ id: v.id, name: v.name, speed_kmh: v.speedKmh, restrictions: v.restrictions }));

const Count = z.number().int().min(0);
const Rate = z.number().min(0);

/** Writable vehicle fields (POST: `name` required; PATCH: all optional). */
export const vehicleInputShape = {
  name: z.string().trim().min(1).max(100),
  plate: z.string().trim().max(50).nullable().optional(),
  vehicle_class: z.string().max(20).nullable().optional().openapi({ description: "One of GET /vehicletype; default (and `null`) `car`" }),
  depot_location_id: z.number().int().positive().nullable().optional().openapi({ description: "An address of the company" }),
  driver_id: z.number().int().positive().nullable().optional().openapi({ description: "A driver of the company" }),
  capacity_1: Count.nullable().optional(),
  capacity_2: Count.nullable().optional(),
  capacity_3: Count.nullable().optional(),
  daily_rate: Rate.nullable().optional(),
  km_rate: Rate.nullable().optional(),
  waiting_hour_rate: Rate.nullable().optional(),
  traveltime_factor: z.number().positive().max(10).nullable().optional(),
  departure_time_from: TimeOfDay.nullable().optional(),
  departure_time_to: TimeOfDay.nullable().optional(),
  return_time_to: TimeOfDay.nullable().optional(),
  max_tour_duration: Count.nullable().optional(),
  co2e_g_per_km: z.number().min(0).max(10_000).nullable().optional().openapi({ description: "g CO₂e per km; null: the class default" }),
  active: z.boolean().optional(),
};

const TIME_FIELDS = ["departure_time_from", "departure_time_to", "return_time_to"] as const;

type VehicleInput = Partial<{ [K in keyof typeof vehicleInputShape]: z.infer<(typeof vehicleInputShape)[K]> }>;

/**
 * Checks references and classes and resolves times of day; answers the
 * column values to write. 422 naming the offending fields.
 */
export async function prepareVehicle(db: Db, companyId: number, input: VehicleInput): Promise<Partial<VehicleRow>> {
  const values: Partial<VehicleRow> = {};
  for (const [key, value] of Object.entries(input)) if (value !== undefined) (values as Record<string, unknown>)[key] = value;

  if (input.vehicle_class === null) values.vehicle_class = "car";
  else if (input.vehicle_class !== undefined && !VEHICLE_CLASSES.some((v) => v.id === input.vehicle_class))
    throw unprocessable(`Unknown vehicle_class ${input.vehicle_class}; one of ${VEHICLE_CLASSES.map((v) => v.id).join(", ")}`, "vehicle_class");

  const badTimes = TIME_FIELDS.filter((f) => {
    const v = input[f];
    if (v === undefined || v === null) return false;
    const resolved = normaliseTimeOfDay(v);
    if (resolved === null) return true;
    values[f] = resolved;
    return false;
  });
  if (badTimes.length) throw unprocessable("Times of day must be hh:mm:ss+hh:mm or hh:mm:ss", badTimes);

  if (input.depot_location_id !== undefined && input.depot_location_id !== null) {
    const [address] = await db
      .select({ id: addresses.id })
      .from(addresses)
      .where(and(eq(addresses.id, input.depot_location_id), eq(addresses.company_id, companyId)));
    if (!address) throw unprocessable(`No address with id ${input.depot_location_id} in this company`, "depot_location_id");
  }
  if (input.driver_id !== undefined && input.driver_id !== null) await assertCompanyDrivers(db, companyId, [input.driver_id], "driver_id");
  return values;
}
