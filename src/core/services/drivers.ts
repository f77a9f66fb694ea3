/**
 * Drivers: users with usertype `driver`, their presentation (with availability
 * windows, the computed `available` flag and the last position), creation with
 * the three outgoing emails, activation, and the route lookups.
 */
import type { BreakSpec, WorkingTimeRuleId } from "../../shared/contract/breaks";
import type { Company, Db } from "../context";
import { type SQL, and, asc, desc, eq, gt, inArray, sql } from "drizzle-orm";
import { companyRow } from "../db/company-row";
import { type JsonListSpec, type ListParams, listObjects } from "../db/list";
import { driverAvailabilities, driverTracking, routes, users } from "../db/schema";
import type { Env } from "../env";
import { forbidden, notFound, unprocessable } from "../errors";
import { hashCode } from "../lib/crypto";
import type { FieldMap } from "../lib/filters";
import { log } from "../lib/log";
import { normaliseDateTime, nowIso } from "../lib/time";
import { forgetUser } from "../lib/tokens";
import { type Availability, availabilityFields, presentAvailability } from "./driver-availability";
import { companyStub } from "./live";
import { driverActivationEmail, driverCreatedNotice } from "./messages";
import { type OutgoingMessage, dispatchOutbox, outboxInsert } from "./outbox";
import { type Tracking, latestPositions, positionJson, presentPosition } from "./tracking-positions";
import { type User, prepareUser, type UserRow } from "./users";
import { inList } from "../db/sql";

/**
 * Driver status values (`GET /driverstatus`). The status is set by the
 * dispatcher or the driver app; it is informational and does not gate routing
 * (`active` does).
 */
export const DRIVER_STATUSES = [
  { id: 0, name: "offline" },
  { id: 1, name: "available" },
  { id: 2, name: "ontour" },
  { id: 3, name: "break" },
] as const;

export const DRIVER_STATUS_DESCRIPTION =
  "Driver status values: 0 `offline` (not working; default on creation), 1 `available` (working, free for a tour), " +
  "2 `ontour` (driving a tour), 3 `break` (working, temporarily not available).";

/** A driver record as the driver endpoints answer it. */
export interface Driver extends Omit<User, "usertype"> {
  usertype: "driver";
  mobilenr: string | null;
  htmlcolor: string | null;
  vehicle: string | null;
  status: number;
  /** What the driver can do: counts for the vehicle the driver is bound to. */
  skills: string[];
  /** The driver's own working-time rules and fixed breaks (null: the vehicle's). */
  working_time_rules: WorkingTimeRuleId[] | null;
  breaks: BreakSpec[] | null;
  /** Availability windows that have not ended yet, by `fromtime`. */
  driveravailabilities: Availability[];
  /** With `includeavail`: an availability window covers now (computed). */
  available?: boolean;
  /** With `includeposition` (or `driverinfo`): the newest tracking entry. */
  current_position?: CurrentPosition | null;
}

/** The `current_position` of a driver: its newest tracking entry. */
export interface CurrentPosition extends Tracking {
  firstname?: string | null;
  lastname?: string | null;
  htmlcolor?: string | null;
}

export const driverFields: FieldMap = {
  id: { column: users.id, type: "integer" },
  firstname: { column: users.firstname, type: "text" },
  lastname: { column: users.lastname, type: "text" },
  email: { column: users.email, type: "text" },
  company_id: { column: users.company_id, type: "integer" },
  active: { column: users.active, type: "boolean" },
  confirmed_at: { column: users.confirmed_at, type: "datetime" },
  expires: { column: users.expires, type: "datetime" },
  usertype: { column: users.usertype, type: "text" },
  mobilenr: { column: users.mobilenr, type: "text" },
  htmlcolor: { column: users.htmlcolor, type: "text" },
  vehicle: { column: users.vehicle, type: "text" },
  status: { column: users.status, type: "integer" },
  driveravailabilities: {
    relation: "many",
    fields: availabilityFields,
    exists: (condition) =>
      sql`exists (select 1 from ${driverAvailabilities} where ${driverAvailabilities.driver_id} = ${users.id} and ${driverAvailabilities.company_id} = ${users.company_id} and ${condition})`,
  },
};

/** Drivers of the company (the tenant scope of every driver query). */
export const driverScope = (companyId: number): SQL => and(eq(users.company_id, companyId), eq(users.usertype, "driver"))!;

export interface PresentOptions {
  includeavail?: boolean;
  includeposition?: boolean;
  driverinfo?: boolean;
}

const positionFields: FieldMap = {
  driver_id: { column: users.id, type: "integer" },
  firstname: { column: users.firstname, type: "text" },
  lastname: { column: users.lastname, type: "text" },
  htmlcolor: { column: users.htmlcolor, type: "text" },
};

/** `GET /driverposition`: the drivers that have reported a position, each with its newest one, built as JSON by SQLite in the page's statement. */
export function positionList(companyId: number): JsonListSpec {
  const hasPosition = sql`exists (select 1 from ${driverTracking} where ${driverTracking.company_id} = ${users.company_id} and ${driverTracking.driver_id} = ${users.id})`;
  return {
    table: users,
    scope: and(driverScope(companyId), hasPosition),
    fields: positionFields,
    idColumn: users.id,
    json: positionJson,
  };
}

/**
 * Presents driver rows with their open availability windows (and, on request,
 * `available` and `current_position`): one extra query per kind for the whole page.
 */
export async function presentDrivers(db: Db, companyId: number, rows: UserRow[], opts: PresentOptions = {}): Promise<Driver[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const now = nowIso();
  const withPosition = opts.includeposition || opts.driverinfo;
  const [windows, positions] = await Promise.all([
    openWindows(db, companyId, ids, now),
    withPosition ? latestPositions(db, companyId, ids) : Promise.resolve([]),
  ]);
  return rows.map((r) => {
    const own = windows.filter((w) => w.driver_id === r.id);
    const driver: Driver = {
      id: r.id,
      firstname: r.firstname,
      lastname: r.lastname,
      email: r.email,
      company_id: r.company_id,
      expires: r.expires,
      active: r.active,
      confirmed_at: r.confirmed_at,
      usertype: "driver",
      mobilenr: r.mobilenr,
      htmlcolor: r.htmlcolor,
      vehicle: r.vehicle,
      status: r.status ?? 0,
      skills: r.skills,
      working_time_rules: r.working_time_rules,
      breaks: r.breaks,
      driveravailabilities: own.map(presentAvailability),
    };
    if (opts.includeavail) driver.available = own.some((w) => w.fromtime <= now && now < w.totime);
    if (withPosition) {
      const p = positions.find((x) => x.driver_id === r.id);
      driver.current_position = p ? presentPosition(p, opts.driverinfo ? r : undefined) : null;
    }
    return driver;
  });
}

/** Windows of the drivers that end after `now`, by `fromtime`. */
function openWindows(db: Db, companyId: number, ids: number[], now: string) {
  return db
    .select()
    .from(driverAvailabilities)
    .where(and(eq(driverAvailabilities.company_id, companyId), inList(driverAvailabilities.driver_id, ids), gt(driverAvailabilities.totime, now)))
    .orderBy(asc(driverAvailabilities.fromtime), asc(driverAvailabilities.id));
}

/** The company's driver with this id, or 404. */
export const loadDriver = (db: Db, companyId: number, driverId: number): Promise<UserRow> => companyRow(db, users, companyId, driverId, "Driver", eq(users.usertype, "driver"));

/** Checks that every id is a driver of the company; 422 naming `field` otherwise. */
export async function assertCompanyDrivers(db: Db, companyId: number, driverIds: number[], field = "driver_id") {
  const wanted = [...new Set(driverIds)];
  if (wanted.length === 0) return;
  const rows = await db
    .select({ id: users.id })
    .from(users)
    .where(and(driverScope(companyId), inList(users.id, wanted)));
  const found = new Set(rows.map((r) => r.id));
  const missing = wanted.filter((id) => !found.has(id));
  if (missing.length) throw unprocessable(`No driver with id ${missing.join(", ")} in this company`, field);
}

export interface NewDriver {
  email: string;
  firstname?: string | null;
  lastname?: string | null;
  mobilenr?: string | null;
  htmlcolor?: string | null;
  vehicle?: string | null;
  status?: number;
  expires?: string | null;
  skills?: string[];
  working_time_rules?: WorkingTimeRuleId[] | null;
  breaks?: BreakSpec[] | null;
}

/**
 * POST /driver: the driver row and the three outgoing emails (activation code
 * to the driver, notice to the creating dispatcher, log copy to the operator)
 * in one D1 batch, then handed to the notifications queue.
 */
export async function createDriver(env: Env, db: Db, company: Company, creatorId: number, input: NewDriver, base: string): Promise<UserRow> {
  const [prepared, [creator]] = await Promise.all([
    prepareUser(db, company.id, { usertype: "driver", email: input.email, firstname: input.firstname, lastname: input.lastname, mobilenr: input.mobilenr, vehicle: input.vehicle, htmlcolor: input.htmlcolor }),
    db.select({ email: users.email }).from(users).where(and(eq(users.id, creatorId), eq(users.company_id, company.id))),
  ]);
  const messages: OutgoingMessage[] = [
    driverActivationEmail({ base, slug: company.slug, email: input.email, firstname: input.firstname ?? null, code: prepared.code }),
  ];
  if (creator) messages.push(driverCreatedNotice({ to: creator.email, driverEmail: input.email, template: "driver_created_dispatcher" }));
  if (env.OPERATOR_EMAIL) messages.push(driverCreatedNotice({ to: env.OPERATOR_EMAIL, driverEmail: input.email, template: "driver_created_operator" }));

  // Fields prepareUser does not know are set by an update of the new row inside the same batch.
  const extra: Partial<UserRow> = {};
  if (input.status !== undefined) extra.status = input.status;
  if (input.expires !== undefined) extra.expires = input.expires;
  if (input.skills !== undefined) extra.skills = input.skills;
  if (input.working_time_rules !== undefined) extra.working_time_rules = input.working_time_rules;
  if (input.breaks !== undefined) extra.breaks = input.breaks;
  const email = input.email.toLowerCase();
  const byEmail = and(eq(users.company_id, company.id), eq(users.email, email));
  const [[inserted], ids, updated] = await db.batch([
    prepared.insert,
    outboxInsert(db, company.id, messages),
    ...(Object.keys(extra).length ? [db.update(users).set(extra).where(byEmail).returning()] : []),
  ] as const);
  await dispatchOutbox(env, company.id, ids);
  return (updated as UserRow[] | undefined)?.[0] ?? inserted;
}

/**
 * POST /activatedriver: the calling driver's own activation code; one
 * conditional update, so a code works once (already active -> 403).
 */
export async function activateDriver(db: Db, companyId: number, driverId: number, code: string, imei: string): Promise<UserRow> {
  const [row] = await db
    .update(users)
    .set({ active: true, imei })
    .where(and(eq(users.id, driverId), driverScope(companyId), eq(users.code_hash, await hashCode(code)), eq(users.active, false)))
    .returning();
  if (!row) throw forbidden("Invalid or already used activation code");
  return row;
}

/** Route status values used here (contract.md §5). */
const ASSIGNED = 1;
const ACCEPTED = 2;
const ONTHEWAY = 3;

/** The route the driver is driving now (status 3), newest start first. */
export async function routeOnTheWay(db: Db, companyId: number, driverId: number) {
  const [row] = await db
    .select({ id: routes.id, status: routes.status, ast: routes.ast })
    .from(routes)
    .where(and(eq(routes.company_id, companyId), eq(routes.driver_id, driverId), eq(routes.status, ONTHEWAY)))
    .orderBy(desc(routes.ast), desc(routes.id))
    .limit(1);
  return row ?? null;
}

/** The route on the way, else the next assigned or accepted one (earliest `tst_from`, routes without one last). */
export async function currentRoute(db: Db, companyId: number, driverId: number) {
  const driving = await routeOnTheWay(db, companyId, driverId);
  if (driving) return driving;
  const [next] = await db
    .select({ id: routes.id, status: routes.status, ast: routes.ast })
    .from(routes)
    .where(and(eq(routes.company_id, companyId), eq(routes.driver_id, driverId), inArray(routes.status, [ASSIGNED, ACCEPTED])))
    .orderBy(sql`${routes.tst_from} is null`, asc(routes.tst_from), asc(routes.id))
    .limit(1);
  return next ?? null;
}

/** A page of the company's drivers, presented with what `include` asks for. */
export const listDrivers = (db: Db, companyId: number, params: ListParams, include: PresentOptions) =>
  listObjects(db, { table: users, scope: driverScope(companyId), fields: driverFields, idColumn: users.id, present: (rows: UserRow[]) => presentDrivers(db, companyId, rows, include) }, params);

/**
 * `PATCH /driver/<id>`: the writable fields, and the read-only ones a client
 * may send back from a read (accepted only unchanged, else 422 naming them;
 * the computed ones are ignored).
 */
export interface DriverPatch {
  email?: string;
  firstname?: string | null;
  lastname?: string | null;
  mobilenr?: string | null;
  htmlcolor?: string;
  vehicle?: string;
  status?: number;
  active?: boolean;
  expires?: string | null;
  skills?: string[];
  working_time_rules?: WorkingTimeRuleId[] | null;
  breaks?: BreakSpec[] | null;
  id?: number;
  usertype?: string;
  company_id?: number;
  confirmed_at?: string | null;
  driveravailabilities?: unknown;
  available?: unknown;
  current_position?: unknown;
}

function assertReadOnly(row: UserRow, companyId: number, patch: DriverPatch) {
  const bad: string[] = [];
  if (patch.id !== undefined && patch.id !== row.id) bad.push("id");
  if (patch.usertype !== undefined && patch.usertype !== "driver") bad.push("usertype");
  if (patch.company_id !== undefined && patch.company_id !== companyId) bad.push("company_id");
  if (patch.confirmed_at !== undefined) {
    const given = patch.confirmed_at === null ? null : normaliseDateTime(patch.confirmed_at);
    if (given !== row.confirmed_at) bad.push("confirmed_at");
  }
  if (bad.length) throw unprocessable(`Read-only fields cannot be changed: ${bad.join(", ")}`, bad);
}

/**
 * Changes a driver. Deactivation ends the driver's tokens (lib/tokens.ts) and
 * its used activation code, which would otherwise let the phone activate
 * itself again (a dispatcher reactivates with `active: true`), and closes its
 * open websockets.
 */
export async function updateDriver(env: Env, db: Db, companyId: number, driverId: number, patch: DriverPatch): Promise<Driver> {
  const row = await loadDriver(db, companyId, driverId);
  assertReadOnly(row, companyId, patch);
  const { id: _id, usertype: _u, company_id: _c, confirmed_at: _ca, driveravailabilities: _da, available: _a, current_position: _cp, ...changes } = patch;
  let updated = row;
  if (Object.keys(changes).length) {
    const ending = changes.active === false && row.active ? { tokens_valid_after: Date.now(), code_hash: null } : {};
    [updated] = await db
      .update(users)
      .set({ ...changes, ...ending })
      .where(and(eq(users.id, driverId), driverScope(companyId)))
      .returning();
    if (!updated) throw notFound("Driver");
    forgetUser(driverId);
    // Its open websockets were authenticated before: they close now (a failure here leaves their next resume to refuse them).
    if ("tokens_valid_after" in ending) {
      await companyStub(env, companyId)
        .endSessions(driverId)
        .catch((err: unknown) => log("error", "closing websockets of a deactivated driver failed", { company_id: companyId, driver_id: driverId, error: err }));
    }
  }
  const [driver] = await presentDrivers(db, companyId, [updated]);
  return driver;
}

/** `{route_id, status}` of the route `find` picks for a driver of the company (404 naming `what` when none). */
export async function driverRouteRef(db: Db, companyId: number, driverId: number, find: typeof routeOnTheWay, what: string) {
  await loadDriver(db, companyId, driverId);
  const route = await find(db, companyId, driverId);
  if (!route) throw notFound(what);
  return { route_id: route.id, status: route.status };
}
