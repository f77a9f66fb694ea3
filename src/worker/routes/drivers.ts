/** Drivers: list, create (with activation email), change, activate, status values, current routes. */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { DriverSchema, DriverStatusValue, HtmlColor } from "../schemas/drivers";
import { Email } from "../schemas/users";
import { SkillsInput } from "../schemas/skills";
import { FixedBreaksInput, RULES_TEXT, WorkingTimeRules } from "../schemas/breaks";
import type { AppEnv } from "../app-env";
import { pageOf } from "../../core/db/list";
import { validationHook } from "../errors";
import { BooleanQuery, IdParam, ListQuery, apiRoute, envelope, jsonBody, jsonResponse } from "../openapi";
import { DateTimeInput } from "../schemas/availability";
import {
  DRIVER_STATUSES,
  DRIVER_STATUS_DESCRIPTION,
  activateDriver,
  createDriver,
  currentRoute,
  driverRouteRef,
  listDrivers,
  loadDriver,
  presentDrivers,
  routeOnTheWay,
  updateDriver,
} from "../../core/services/drivers";
import { throttledAttempt } from "../credential-attempts";
import { publicBase } from "./company";

const IncludeQuery = {
  includeavail: BooleanQuery.optional().openapi({ description: "Add `available`: an availability window covers now (default false)" }),
  includeposition: BooleanQuery.optional().openapi({ description: "Add `current_position`: the newest tracking entry or null (default false)" }),
  driverinfo: BooleanQuery.optional().openapi({
    description: "Add `current_position` as a driver position record, i.e. with the driver's `firstname`, `lastname`, `htmlcolor` (default false)",
  }),
};

const getDrivers = apiRoute({
  method: "get",
  path: "/driver",
  operationId: "listDrivers",
  tags: ["Drivers"],
  summary: "Drivers",
  description:
    "Every driver carries `driveravailabilities`: its availability windows that have not ended yet, ordered by `fromtime`. " +
    "`q` filters on the driver fields and, with `any`, on `driveravailabilities` (`fromtime`, `totime`, `id`).",
  request: { query: ListQuery.extend(IncludeQuery) },
  responses: { 200: jsonResponse(z.union([envelope(DriverSchema, "DriverList"), DriverSchema]), "Drivers (or one with q.single)") },
});

const getDriver = apiRoute({
  method: "get",
  path: "/driver/{driver_id}",
  operationId: "getDriver",
  tags: ["Drivers"],
  summary: "One driver",
  request: { params: IdParam("driver_id"), query: z.object(IncludeQuery) },
  responses: { 200: jsonResponse(DriverSchema, "The driver") },
});

const Name = z.string().trim().max(100);
const MobileNr = z.string().trim().max(50);
const VehicleName = z.string().trim().min(1).max(50).openapi({ description: "Vehicle kind of the driver, e.g. `car` (see GET /vehicletype)" });

/** What counts for the vehicle a driver is bound to in a routing run (beyond the interface; docs/features/fleet-and-opening-hours.md). */
const driverPlanningFields = {
  skills: SkillsInput.optional().openapi({ description: "What the driver can do (e.g. `adr`, `two-person`): counts for the vehicle the driver is bound to in a routing run" }),
  working_time_rules: WorkingTimeRules.nullable().optional().openapi({ description: `The driver's own working-time rules: they replace the vehicle's when the driver is bound to it; null: the vehicle's. ${RULES_TEXT}` }),
  breaks: FixedBreaksInput.nullable().optional().openapi({ description: "The driver's own breaks at given times of day: they replace the vehicle's when the driver is bound to it; null: the vehicle's" }),
};

const NewDriverBody = z
  .object({
    email: Email,
    firstname: Name.nullable().optional(),
    lastname: Name.nullable().optional(),
    mobilenr: MobileNr.nullable().optional(),
    htmlcolor: HtmlColor.optional(),
    vehicle: VehicleName.optional(),
    status: DriverStatusValue.optional(),
    expires: DateTimeInput.nullable().optional(),
    ...driverPlanningFields,
  })
  .openapi("NewDriver");

const postDriver = apiRoute({
  method: "post",
  path: "/driver",
  operationId: "createDriver",
  tags: ["Drivers"],
  summary: "Create a driver",
  description:
    "Defaults: `active` false, `vehicle` `car`, `status` 0, `usertype` `driver`, `confirmed_at` null, `driveravailabilities` [], " +
    "a random six-hex-digit `htmlcolor`. Queues three emails: the activation code (as `code` parameter of the registration link) " +
    "to the driver, a notice to the creating dispatcher and a log copy to the operator. The driver registers with the code at " +
    "`POST /{slug}/register`, logs in and activates its device with `POST /activatedriver`. 409 when the email is taken in this company. " +
    "Any other field, the read-only ones (`active`, `usertype`, `confirmed_at`, `company_id`, `id`) included, -> 422 naming it: a driver becomes " +
    "active only through `POST /activatedriver` (or a dispatcher's `PATCH /driver/{driver_id}`).",
  request: { body: jsonBody(NewDriverBody) },
  responses: { 201: jsonResponse(DriverSchema, "The new driver") },
});

const Computed = z.unknown().optional().openapi({ description: "Computed: ignored, so a read object can be sent back" });

const DriverPatchBody = z
  .object({
    email: Email.optional(),
    firstname: Name.nullable().optional(),
    lastname: Name.nullable().optional(),
    mobilenr: MobileNr.nullable().optional(),
    htmlcolor: HtmlColor.optional(),
    vehicle: VehicleName.optional(),
    status: DriverStatusValue.optional(),
    active: z.boolean().optional().openapi({ description: "Dispatchers may (de)activate a driver; routes can only be assigned to active drivers" }),
    ...driverPlanningFields,
    expires: DateTimeInput.nullable().optional(),
    id: z.number().int().optional().openapi({ description: "Read-only: must equal the path id when given" }),
    usertype: z.string().max(20).optional().openapi({ description: "Read-only: only `driver` is accepted" }),
    company_id: z.number().int().optional().openapi({ description: "Read-only: only the own company id is accepted" }),
    confirmed_at: z.string().max(40).nullable().optional().openapi({ description: "Read-only: only the stored value is accepted" }),
    driveravailabilities: Computed,
    available: Computed,
    current_position: Computed,
  })
  .openapi("DriverPatch");

const patchDriver = apiRoute({
  method: "patch",
  path: "/driver/{driver_id}",
  operationId: "updateDriver",
  tags: ["Drivers"],
  summary: "Change a driver",
  description:
    "Any writable driver field. `usertype`, `company_id`, `confirmed_at` and `id` cannot be changed: sending a different value -> 422 " +
    "naming the field (the unchanged value is accepted, so a read object can be sent back). The computed `driveravailabilities`, `available` and " +
    "`current_position` are ignored (windows are managed with `/driveravailability`); any other field -> 422 naming it. 409 when the new email is taken.",
  request: { params: IdParam("driver_id"), body: jsonBody(DriverPatchBody) },
  responses: { 200: jsonResponse(DriverSchema, "The updated driver") },
});

const activate = apiRoute({
  method: "post",
  path: "/activatedriver",
  operationId: "activateDriver",
  tags: ["Drivers"],
  summary: "Activate the calling driver's device",
  description:
    "Called by the driver app after registration and login, with the activation code from the email and a device identifier. " +
    "Sets `active` true and stores the device id. Wrong code, or a driver that is already active (code used) -> 403. " +
    "Wrong codes are throttled like logins, per driver and per client address (429 with `Retry-After`, see `POST /{slug}/auth`).",
  roles: ["driver"],
  request: { body: jsonBody(z.object({ code: z.string().trim().min(1).max(100), imei: z.string().trim().min(1).max(100) })) },
  responses: { 200: jsonResponse(z.object({ message: z.string(), status: z.literal(200) }), "Activated") },
});

const DriverStatusSchema = z.object({ id: z.number().int(), name: z.string() }).openapi("DriverStatus");

const listDriverStatus = apiRoute({
  method: "get",
  path: "/driverstatus",
  operationId: "listDriverStatuses",
  tags: ["Drivers"],
  summary: "Driver status values",
  description: DRIVER_STATUS_DESCRIPTION,
  request: { query: ListQuery.omit({ q: true }) },
  responses: { 200: jsonResponse(envelope(DriverStatusSchema, "DriverStatusList"), "All driver status values") },
});

const RouteRef = z
  .object({
    route_id: z.number().int(),
    status: z.number().int().openapi({ description: "Route status: 1 assigned, 2 accepted, 3 ontheway" }),
  })
  .openapi("DriverRouteRef");

const driverRoute = apiRoute({
  method: "get",
  path: "/driverroute/{driver_id}",
  operationId: "listDriverRoutes",
  tags: ["Drivers"],
  summary: "The route the driver is driving now",
  description: "The route with status 3 (`ontheway`) of the driver (the most recently started one). 404 when the driver drives none.",
  request: { params: IdParam("driver_id") },
  responses: { 200: jsonResponse(RouteRef, "The route on the way") },
});

const currentDriverRoute = apiRoute({
  method: "get",
  path: "/currentdriverroute/{driver_id}",
  operationId: "getCurrentDriverRoute",
  tags: ["Drivers"],
  summary: "The route the driver is driving, else its next one",
  description:
    "The route on the way (status 3); else the next assigned or accepted route (status 1 or 2) with the earliest `tst_from` " +
    "(routes without `tst_from` last, then by id). 404 when there is none.",
  request: { params: IdParam("driver_id") },
  responses: { 200: jsonResponse(RouteRef, "The current or next route") },
});

export const driverRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(getDrivers, async (c) => {
    const { includeavail, includeposition, driverinfo, ...params } = c.req.valid("query");
    return c.json(await listDrivers(c.get("db"), c.get("company").id, params, { includeavail, includeposition, driverinfo }), 200);
  })
  .openapi(getDriver, async (c) => {
    const db = c.get("db");
    const cid = c.get("company").id;
    const row = await loadDriver(db, cid, c.req.valid("param").driver_id);
    const [driver] = await presentDrivers(db, cid, [row], c.req.valid("query"));
    return c.json(driver, 200);
  })
  .openapi(postDriver, async (c) => {
    const db = c.get("db");
    const company = c.get("company");
    const row = await createDriver(c.env, db, company, c.get("user").id, c.req.valid("json"), publicBase(c));
    const [driver] = await presentDrivers(db, company.id, [row]);
    return c.json(driver, 201);
  })
  .openapi(patchDriver, async (c) => c.json(await updateDriver(c.env, c.get("db"), c.get("company").id, c.req.valid("param").driver_id, c.req.valid("json")), 200))
  .openapi(activate, async (c) => {
    const { code, imei } = c.req.valid("json");
    const driverId = c.get("user").id;
    await throttledAttempt(c, "activate", String(driverId), () => activateDriver(c.get("db"), c.get("company").id, driverId, code, imei));
    return c.json({ message: "Driver activated", status: 200 as const }, 200);
  })
  .openapi(listDriverStatus, (c) => {
    const objects = DRIVER_STATUSES.map((s) => ({ id: s.id, name: s.name }));
    return c.json(pageOf(objects, c.req.valid("query")), 200);
  })
  .openapi(driverRoute, async (c) => c.json(await driverRouteRef(c.get("db"), c.get("company").id, c.req.valid("param").driver_id, routeOnTheWay, "Route on the way"), 200))
  .openapi(currentDriverRoute, async (c) => c.json(await driverRouteRef(c.get("db"), c.get("company").id, c.req.valid("param").driver_id, currentRoute, "Current route"), 200));
