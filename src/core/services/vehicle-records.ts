/** Vehicles: input validation against the company's addresses and drivers, presentation. */
import { and, eq } from "drizzle-orm";
import { companyRow } from "../db/company-row";
import { VEHICLE_CLASSES } from "../../solver/vehicle-classes";
import { addresses, vehicles } from "../db/schema";
import type { Db } from "../context";
import { type ListParams, listObjects } from "../db/list";
import { notFound, unprocessable } from "../errors";
import type { FieldMap } from "../lib/filters";
import { normaliseTimeOfDay } from "../lib/time";
import { assertCompanyDrivers } from "./drivers";
import type { BreakSpec } from "../../shared/contract/breaks";

export type VehicleRow = typeof vehicles.$inferSelect;

/** A vehicle as the API answers it: its row but the company. Times of day as stored. */
export type Vehicle = Omit<VehicleRow, "company_id">;

/** Writable vehicle fields (POST: `name` required; PATCH: all optional). */
export type VehicleInput = Partial<{ [K in Exclude<keyof Vehicle, "id" | "vehicle_class" | "active" | "skills" | "breaks">]: Vehicle[K] | null }> & {
  vehicle_class?: string | null;
  active?: boolean;
  skills?: string[];
  breaks?: BreakSpec[];
};

/** An entry of the vehicle type list (`GET /vehicletype`), from the route optimiser's vehicle classes. */
export interface VehicleType {
  id: string;
  name: string;
  /** Average travel speed of the embedded travel model, km/h. */
  speed_kmh: number;
  restrictions: string;
}

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
  max_stops: r.max_stops,
  skills: r.skills,
  working_time_rules: r.working_time_rules,
  breaks: r.breaks,
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
  max_stops: { column: vehicles.max_stops, type: "integer" },
  co2e_g_per_km: { column: vehicles.co2e_g_per_km, type: "number" },
  active: { column: vehicles.active, type: "boolean" },
};

export const vehicleTypes = (): VehicleType[] =>
  VEHICLE_CLASSES.map((v) => ({ id: v.id, name: v.name, speed_kmh: v.speedKmh, restrictions: v.restrictions }));

const TIME_FIELDS = ["departure_time_from", "departure_time_to", "return_time_to"] as const;

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

/** A page of the company's vehicles (`q`, `page`, `results_per_page` as every list). */
export const listVehicles = (db: Db, companyId: number, query: ListParams) =>
  listObjects(db, { table: vehicles, scope: eq(vehicles.company_id, companyId), fields: vehicleFields, idColumn: vehicles.id, present: (rows: VehicleRow[]) => rows.map(presentVehicle) }, query);

export const getVehicle = async (db: Db, companyId: number, id: number): Promise<Vehicle> => presentVehicle(await companyRow(db, vehicles, companyId, id, "Vehicle"));

export async function createVehicle(db: Db, companyId: number, input: VehicleInput & { name: string }): Promise<Vehicle> {
  const values = await prepareVehicle(db, companyId, input);
  const [row] = await db
    .insert(vehicles)
    .values({ ...values, name: input.name, company_id: companyId })
    .returning();
  return presentVehicle(row);
}

/** Changes the given fields; nothing given answers the vehicle as stored. */
export async function updateVehicle(db: Db, companyId: number, id: number, input: VehicleInput): Promise<Vehicle> {
  const where = and(eq(vehicles.id, id), eq(vehicles.company_id, companyId));
  const existing = await companyRow(db, vehicles, companyId, id, "Vehicle");
  const values = await prepareVehicle(db, companyId, input);
  if (Object.keys(values).length === 0) return presentVehicle(existing);
  const [row] = await db.update(vehicles).set(values).where(where).returning();
  if (!row) throw notFound("Vehicle");
  return presentVehicle(row);
}
