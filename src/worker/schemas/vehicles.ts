/** Vehicles on the wire: the record, the vehicle types, and the writable fields. */
import { z } from "@hono/zod-openapi";
import { SkillsInput, SkillsOutput } from "./skills";
import { BreakSpecSchema, FixedBreaksInput, RULES_TEXT, WorkingTimeRules, WorkingTimeRulesOutput } from "./breaks";

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
    max_stops: z.number().int().nullable().openapi({ description: "Most stops a tour of this vehicle may have; null: no limit (beyond the interface)" }),
    skills: SkillsOutput.openapi({ description: "What the vehicle can do; it serves only deliveries whose `required_skills` it, or the driver bound to it, has (beyond the interface; docs/features/fleet-and-opening-hours.md)" }),
    working_time_rules: WorkingTimeRulesOutput.nullable().openapi({ description: "Working-time rules its tours keep; null: the company's (beyond the interface; docs/features/fleet-and-opening-hours.md)" }),
    breaks: z.array(BreakSpecSchema).openapi({ description: "Breaks at given times of day its tours take (beyond the interface)" }),
    co2e_g_per_km: z.number().nullable().openapi({ description: "Emission factor of this vehicle, g CO₂e per km (well-to-wheel), used by the day report; null: the default of its class (docs/features/day-report.md)" }),
    active: z.boolean(),
  })
  .openapi("Vehicle");

/** The vehicle type list (`GET /vehicletype`), from the route optimiser's vehicle classes. */
export const VehicleTypeSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    speed_kmh: z.number().openapi({ description: "Average travel speed of the embedded travel model, km/h" }),
    restrictions: z.string(),
  })
  .openapi("VehicleType");

const Count = z.number().int().min(0);
const Rate = z.number().min(0);

/** Writable vehicle fields (POST: `name` required; PATCH: all optional). */
export const vehicleInputShape = {
  name: z.string().trim().min(1).max(100),
  plate: z.string().trim().max(50).nullable().optional(),
  vehicle_class: z.string().max(20).nullable().optional().openapi({ description: "One of GET /vehicletype; default (and `null`) `car`" }),
  depot_location_id: z.number().int().positive().nullable().optional().openapi({ description: "An address of the company: the vehicle's tours start (and, on round trips, end) there; null: the run's start address (docs/features/fleet-and-opening-hours.md)" }),
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
  max_stops: z.number().int().min(1).max(1000).nullable().optional().openapi({ description: "Most stops per tour; null: no limit" }),
  skills: SkillsInput.optional(),
  working_time_rules: WorkingTimeRules.nullable().optional().openapi({ description: `Working-time rules its tours keep; null: the company's; []: none. ${RULES_TEXT}` }),
  breaks: FixedBreaksInput.optional(),
  co2e_g_per_km: z.number().min(0).max(10_000).nullable().optional().openapi({ description: "g CO₂e per km; null: the class default" }),
  active: z.boolean().optional(),
};
