/**
 * Driver availability windows as the API manages them: dispatchers for any
 * driver of the company, drivers for themselves only (reads are open to both).
 */
import { and, eq } from "drizzle-orm";
import { companyRow } from "../db/company-row";
import type { AuthUser, Db } from "../context";
import { type ListParams, listObjects } from "../db/list";
import { driverAvailabilities } from "../db/schema";
import { forbidden, notFound, unprocessable } from "../errors";
import { type Availability, type AvailabilityRow, assertWindow, availabilityFields, mergeAvailability, presentAvailability } from "./driver-availability";
import { assertCompanyDrivers } from "./drivers";

export interface WindowInput {
  fromtime: string;
  totime: string;
  /** Required for dispatchers; drivers may omit it (themselves). */
  driver_id?: number;
}

/** The driver a write is for: drivers act only for themselves, dispatchers name one of the company's drivers. */
async function targetDriver(db: Db, companyId: number, user: AuthUser, driverId: number | undefined): Promise<number> {
  if (user.role === "driver") {
    if (driverId !== undefined && driverId !== user.id) throw forbidden("Drivers may only manage their own availability");
    return user.id;
  }
  if (driverId === undefined) throw unprocessable("driver_id is required", "driver_id");
  await assertCompanyDrivers(db, companyId, [driverId]);
  return driverId;
}

const loadWindow = (db: Db, companyId: number, id: number): Promise<AvailabilityRow> => companyRow(db, driverAvailabilities, companyId, id, "Driver availability");

function assertOwn(user: AuthUser, row: AvailabilityRow) {
  if (user.role === "driver" && row.driver_id !== user.id) throw forbidden("Drivers may only manage their own availability");
}

const ofId = (companyId: number, id: number) => and(eq(driverAvailabilities.id, id), eq(driverAvailabilities.company_id, companyId));

export const listWindows = (db: Db, companyId: number, query: ListParams) =>
  listObjects(
    db,
    { table: driverAvailabilities, scope: eq(driverAvailabilities.company_id, companyId), fields: availabilityFields, idColumn: driverAvailabilities.id, present: (rows: AvailabilityRow[]) => rows.map(presentAvailability) },
    query,
  );

export const getWindow = async (db: Db, companyId: number, id: number): Promise<Availability> => presentAvailability(await loadWindow(db, companyId, id));

export async function createWindow(db: Db, companyId: number, user: AuthUser, input: WindowInput): Promise<Availability> {
  assertWindow(input.fromtime, input.totime);
  const driverId = await targetDriver(db, companyId, user, input.driver_id);
  const [row] = await db.insert(driverAvailabilities).values({ company_id: companyId, driver_id: driverId, fromtime: input.fromtime, totime: input.totime }).returning();
  return presentAvailability(row);
}

export async function updateWindow(db: Db, companyId: number, user: AuthUser, id: number, patch: Partial<WindowInput>): Promise<Availability> {
  const row = await loadWindow(db, companyId, id);
  assertOwn(user, row);
  const driverId = patch.driver_id === undefined || patch.driver_id === row.driver_id ? row.driver_id : await targetDriver(db, companyId, user, patch.driver_id);
  const fromtime = patch.fromtime ?? row.fromtime;
  const totime = patch.totime ?? row.totime;
  assertWindow(fromtime, totime);
  const [updated] = await db.update(driverAvailabilities).set({ fromtime, totime, driver_id: driverId }).where(ofId(companyId, row.id)).returning();
  if (!updated) throw notFound("Driver availability");
  return presentAvailability(updated);
}

export async function deleteWindow(db: Db, companyId: number, user: AuthUser, id: number): Promise<Availability> {
  const row = await loadWindow(db, companyId, id);
  assertOwn(user, row);
  const [deleted] = await db.delete(driverAvailabilities).where(ofId(companyId, row.id)).returning();
  if (!deleted) throw notFound("Driver availability");
  return presentAvailability(deleted);
}

/** Merges the window with the driver's overlapping or touching ones (atomically), or creates it when none does. */
export async function mergeWindow(d1: D1Database, db: Db, companyId: number, user: AuthUser, input: WindowInput) {
  assertWindow(input.fromtime, input.totime);
  const driverId = await targetDriver(db, companyId, user, input.driver_id);
  const result = await mergeAvailability(d1, companyId, driverId, input.fromtime, input.totime);
  return { merged: result.merged, mergedIds: result.mergedIds, window: presentAvailability(result.window) };
}
