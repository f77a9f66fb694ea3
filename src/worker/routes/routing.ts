/** Route calculation (asynchronous through the routing queue, or synchronous) and process status. */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { routingVariants } from "../../core/services/routing/variants";
import { moveDelivery, updateRoute } from "../../core/services/routing/edit";
import { insertDeliveries } from "../../core/services/routing/insert";
import { REPLAN_ROUNDS, startReplan } from "../../core/services/routing/replan";
import { givenRoutes } from "../../core/services/routing/route-state";
import { RouteStatus } from "../../shared/contract/states";
import { processRoutes, processState, refusal } from "../../core/services/routing/outcome";
import { startRouting } from "../../core/services/routing/request";
import { RoutingVariantSchema } from "../schemas/routing";
import { RouteLineString, RouteSchema } from "../schemas/routes";
import type { AppEnv } from "../app-env";
import type { Db } from "../../core/context";
import { conflict, notFound, unprocessable } from "../../core/errors";
import { PROCESS_ACTIONS } from "../../core/coordinator/processes";
import { validationHook } from "../errors";
import { normaliseTimeOfDay } from "../../core/lib/time";
import { BooleanQuery, IdParam, apiRoute, envelope, jsonBody, jsonResponse } from "../openapi";
import { AddressInput } from "../schemas/addresses";
import { DeliveryData } from "../schemas/deliveries";
import { runRouting } from "../../core/services/routing/run";
import { companyStub } from "../../core/services/live";
import { MAX_TIME_BUDGET_SECONDS } from "../../core/services/routing/budget";
import { apiBase } from "./company";
import { vehicleTypes } from "../../core/services/vehicle-records";
import { vehicleInputShape } from "../schemas/vehicles";

const flag = (description: string, fallback: boolean) => BooleanQuery.optional().openapi({ description }).transform((v) => v ?? fallback);
const count = z.coerce.number().int();

/** Query parameter of every routing request (calculation, uploads, batch routing). */
/** Tour names: unique within the company's day (the interface leaves numbering across runs open). */
/** From when on the windows may be relaxed (`relax_minutes`): a time of day with its zone. */
export const RelaxAfterTime = z
  .string()
  .max(20)
  .regex(/^\d{2}:\d{2}(:\d{2})?([+-]\d{2}:?\d{2}|Z)$/, "hh:mm:ss+hh:mm with the zone")
  .optional();

export const NamePrefix = z
  .string()
  .max(50)
  .optional()
  .openapi({
    description:
      "Prefix of the tour names (`custom_id`), extended by numbers when more than one tour results; one tour takes the prefix as it is. " +
      "Without it tours are named `Tour <n>`. Numbers continue the company's day (the tours' start date in the company's time zone): " +
      "a second run of a day with `Tour 1` and `Tour 2` names its tours `Tour 3`, … (the same for a prefix), so generated names are unique within the day.",
  });

export const TimeBudgetSeconds = count
  .min(1)
  .max(MAX_TIME_BUDGET_SECONDS)
  .optional()
  .openapi({
    description:
      `Search time of the optimiser in seconds (1 to ${MAX_TIME_BUDGET_SECONDS}). Default from the plan's size: 8 s up to 200 deliveries, ` +
      `plus 65 ms per delivery beyond (1,000 deliveries: 60 s), at most ${MAX_TIME_BUDGET_SECONDS} s; synchronous requests at most 3 s unless set here. ` +
      "The `routing` record's meta shows `expected_seconds` and `expected_finish`.",
  });

const RoutingQuery = z.object({
  truck: flag("Respect truck restrictions (vehicle class truck)", false),
  roundtrip: flag("Tours return to the depot (default true)", true),
  traffic: flag("Time-dependent travel times by hour and weekday", false),
  cancelroutes: flag("Cancel all unfinished routes first; their open deliveries return to the pool", false),
  vehicle: z.enum(vehicleTypes().map((v) => v.id) as [string, ...string[]]).optional().openapi({ description: "Vehicle class of the identical fleet" }),
  num_vehicles: count.min(1).max(500).optional().openapi({ description: "Maximum number of tours; default the number of active drivers, 5 without drivers" }),
  numvehicles: count.min(1).max(500).optional().openapi({ description: "Alias of num_vehicles" }),
  assign_drivers: flag("Assign available active drivers to the tours (a tour area's tour goes to its driver)", false),
  usearea: flag("Keep the deliveries of each tour area together on one tour", false),
  relax_minutes: count.min(0).max(300).refine((v) => v % 30 === 0, "steps of 30 minutes").optional(),
  relax_after_time: RelaxAfterTime,
  nameprefix: NamePrefix,
  async: flag("true (default): answer 202 with a process id; false: solve in the request", true),
  response_data: z.enum(["base", "all"]).optional().openapi({ description: "Synchronous only: `all` adds the line string to each route" }),
  tour_duration_rate: z.coerce.number().min(0).optional().openapi({ description: "Cost per hour of tour duration" }),
  time_budget_seconds: TimeBudgetSeconds,
  objective: z
    .enum(["fleet", "cost"])
    .optional()
    .openapi({
      description:
        "`fleet` (default): fewest tours first, then cost. `cost`: the cheapest plan (distance x `km_rate`, `daily_rate` per used vehicle, time costs) within the fleet given, " +
        "without emptying tours first: for a fleet that is paid for anyway (beyond the interface).",
    }),
});

const RoutingBody = z.object({
  deliveryids: z.array(z.number().int().positive()).max(5000).optional().openapi({ description: "Existing open deliveries; win over deliverydata" }),
  deliverydata: z.array(DeliveryData).max(5000).optional().openapi({ description: "Deliveries to create (addresses geocoded) and route" }),
  vehicles: z.array(z.object({ ...vehicleInputShape, name: vehicleInputShape.name.optional() })).max(500).optional(),
  startaddress_id: z.number().int().positive().optional(),
  startaddress: AddressInput.optional(),
  start_time: z.string().max(40).optional().openapi({ format: "date-time", description: "Frame for deliveries without a window; vehicles leave no earlier" }),
  end_time: z.string().max(40).optional().openapi({ format: "date-time" }),
  vehcapacities: z.array(z.number().int().min(0)).max(500).optional(),
  fix_order: z.boolean().optional(),
});

const ProcessRecord = z
  .object({
    status: z.enum(["waiting", "running", "finished", "failed", "skipped"]),
    link: z.string().openapi({ description: "Absolute URL of the result (`PUBLIC_URL` or the request's origin, then `/{slug}/api/...`); empty until there is one" }),
    vague_addresses: z.array(z.unknown()),
    meta: z.string().openapi({
      description:
        "JSON: `progress` 0..1; `error` when failed; `routing` also `expected_seconds` and `expected_finish`, and for a big plan improved in parts by several consumers `parts_total`, `parts_done`, `parts_deadline` and `parts_missing` (parts merged with their first tours at the deadline); `final` also `watchdog` when the job was queued again and `last_error` of a failed attempt",
    }),
  })
  .openapi("ProcessRecord");
const RouteWithLine = RouteSchema.extend({ routestring: RouteLineString.nullable().optional() });
const RouteList = envelope(RouteWithLine, "RoutingResult");

const calcRoute = apiRoute({
  method: "post",
  path: "/calcroute/optimized/timewindow",
  operationId: "optimizeRoutesTimewindow",
  tags: ["Route calculation"],
  summary: "Compute tours from deliveries with time windows",
  description:
    "Minimises the number of tours under time windows and capacities, then cost (distance by default); `objective=cost` minimises the cost alone within the fleet. " +
    "Vehicles with their own `depot_location_id` start from it (several depots in one run, beyond the interface's one start location). " +
    "Asynchronous by default: 202 `{process_id}`; poll `GET /process/status/{process_id}/final` or watch the websocket. " +
    "With `async=false` the routes are computed in the request and answered as a list envelope. " +
    "When the deliveries do not fit into `num_vehicles` tours, no route is computed: the process fails (sync: 422 listing the deliveries in `fields`).",
  request: { query: RoutingQuery, body: jsonBody(RoutingBody) },
  responses: {
    200: jsonResponse(RouteList, "Synchronous result"),
    202: jsonResponse(z.object({ process_id: z.string() }), "Process started"),
  },
});

const updateRouteRoute = apiRoute({
  method: "patch",
  path: "/calcroute/update/timewindow/{route_id}",
  operationId: "updateRouteTimewindow",
  tags: ["Route calculation"],
  summary: "Recompute a route with deliveries added or removed",
  description:
    "Recomputes order and times from the route's unfinished deliveries plus `add_deliveryids` minus `del_deliveryids` (one tour, same start). " +
    "Creates the new route (`replaces` = old id, same status, driver and `ast`); the old one becomes `route_replaced` with `replaced_by`. " +
    "Removed deliveries return to the pool (status `none`); delivered and cancelled ones are untouched. New deliveries must start from the route's depot (422). " +
    "When the deliveries no longer fit into one tour, nothing changes (422 listing them). " +
    "The write is a compare-and-set on the route as read: when its status, driver or unfinished deliveries changed during the computation, or an added delivery was taken meanwhile, nothing changes (409).",
  request: {
    params: IdParam("route_id"),
    body: jsonBody(z.object({ add_deliveryids: z.array(z.number().int().positive()).max(1000).default([]), del_deliveryids: z.array(z.number().int().positive()).max(1000).default([]) })),
  },
  responses: { 200: jsonResponse(RouteWithLine, "The new route") },
});

const moveRoute = apiRoute({
  method: "post",
  path: "/calcroute/move",
  operationId: "moveDelivery",
  tags: ["Route calculation"],
  summary: "Move a delivery between two routes, or off its route, atomically (beyond the interface)",
  description:
    "Takes `delivery_id` off route `from_route_id` and puts it on route `to_route_id`, or back among the open deliveries (`\"open\"`). " +
    "Both routes are recomputed as `PATCH /calcroute/update/timewindow` does and replaced by new routes (same status, driver, `ast`), " +
    "written together in one transaction guarded by a compare-and-set on both routes as read: both are replaced, or nothing changes. " +
    "409: a route is not unfinished, or one of the routes (status, driver, unfinished deliveries) or the delivery changed during the computation (read them again). " +
    "422: the delivery is not an unfinished delivery of `from_route_id`, the source would be left without deliveries (cancel it instead), " +
    "the delivery starts from another depot than the target's (`fields` names `delivery_id`, `from_route_id` or `to_route_id`), " +
    "or the target cannot take it (the deliveries its tour leaves out, ids in `fields`, each with the remedy, as the update answers). " +
    "The interface has no such call: with it, a move is two or three updates, and a change in between left the delivery off both routes.",
  request: {
    body: jsonBody(
      z.object({
        delivery_id: z.number().int().positive(),
        from_route_id: z.number().int().positive().openapi({ description: "The route the delivery is on" }),
        to_route_id: z.union([z.number().int().positive(), z.literal("open")]).openapi({ description: "The route to put it on, or `open`: back among the open deliveries" }),
      }),
    ),
  },
  responses: {
    200: jsonResponse(
      z.object({ from_route: RouteWithLine.openapi({ description: "The source's new route" }), to_route: RouteWithLine.nullable().openapi({ description: "The target's new route; null for `open`" }) }),
      "The new routes",
    ),
  },
});

const InsertionCandidateSchema = z
  .object({
    route_id: z.number().int(),
    custom_id: z.string().nullable(),
    status: z.number().int(),
    driver_id: z.number().int().nullable(),
    feasible: z.boolean(),
    added_distance: z.number().int().nullable().openapi({ description: "Metres the delivery adds to the tour" }),
    added_cost: z.number().nullable().openapi({ description: "What it adds to the tour's cost (the vehicle's rates; by default kilometres)" }),
    orderindex: z.number().int().nullable().openapi({ description: "Its position on the new tour (1 = first)" }),
    tdt: z.string().nullable().openapi({ description: "Its planned service start on that tour" }),
    reason: z.string().nullable().openapi({ description: "Why the route cannot take it, with the remedy" }),
  })
  .openapi("InsertionCandidate");

const insertRoute = apiRoute({
  method: "post",
  path: "/calcroute/insert",
  operationId: "insertIntoRunningRoutes",
  tags: ["Route calculation"],
  summary: "Put new deliveries into the running tours where they cost least (beyond the interface)",
  description:
    "Prices each delivery on every assigned, accepted and on-the-way route of its day (its window's day, else today, in the company's time zone), or on `route_ids`: " +
    "each route as `PATCH /calcroute/update/timewindow` would plan it (its vehicle and run options; a route on the way from where its driver is, now), " +
    "its stops kept in their order and the delivery at the cheapest place that keeps every window, capacity, shift, duration, skill, stop limit and break. " +
    "The cheapest route is updated in that order (a new route replaces it, as the update does, under the same compare-and-set: 409 when it changed meanwhile). " +
    "Several deliveries go in turn, each seeing the routes the previous made. `dry_run`: only the prices, nothing written (each delivery against the routes as they are). " +
    "`candidates` lists every route priced, cheapest first, those that cannot take it last with the reason. " +
    "422 when no route can take a delivery (the message names each route's reason and the remedy: a new tour); 409 when a delivery is not open.",
  request: {
    body: jsonBody(
      z.object({
        deliveryids: z.array(z.number().int().positive()).min(1).max(50),
        route_ids: z.array(z.number().int().positive()).max(500).optional().openapi({ description: "Only these routes (any unfinished ones); default: the running routes of the delivery's day" }),
        dry_run: z.boolean().default(false),
      }),
    ),
  },
  responses: {
    200: jsonResponse(
      z.object({
        insertions: z.array(
          z.object({
            delivery_id: z.number().int(),
            route_id: z.number().int().nullable().openapi({ description: "The route chosen" }),
            new_route_id: z.number().int().nullable().openapi({ description: "The route that replaced it (null in a dry run)" }),
            candidates: z.array(InsertionCandidateSchema),
          }),
        ),
        routes: z.array(RouteWithLine).openapi({ description: "The new routes, in the order of the insertions (empty in a dry run)" }),
      }),
      "Where each delivery went",
    ),
  },
});

const replanRoute = apiRoute({
  method: "post",
  path: "/calcroute/replan",
  operationId: "replanRunningRoutes",
  tags: ["Route calculation"],
  summary: "Re-plan the rest of the day across running routes, or hand a broken-down route's stops to the others (beyond the interface)",
  description:
    "Plans the unfinished stops of `route_ids` (default: every assigned, accepted and on-the-way route of today in the company's time zone, or of the handed-over route's day) and the open `deliveryids` again in one run: " +
    "each route keeps its vehicle, driver and status; one on the way leaves from where its driver is (the fresh position, else the last reported stop), now; " +
    "one not yet on the way from its depot (its vehicle's shift). Reported stops stay where they are. Each route is replaced by its new tour (`replaces`/`replaced_by`, as an update); " +
    "a route left without stops is cancelled. `handover_route_id`: that route's driver drops out (a breakdown, an absent driver): its stops go to the other routes and it is cancelled. " +
    "What no route can take goes back among the open deliveries, listed with the reason in `unassigned` (the process's `routing` meta: `unassigned_deliveries`). " +
    "The write is guarded by every route's compare-and-set: when a driver reports a stop (or a route changes) while it plans, it reads the routes again and plans again " +
    `(at most ${REPLAN_ROUNDS} rounds; then the process fails and nothing is written), so a report is never lost or undone. ` +
    "Asynchronous by default (202 and a process: progress, `POST /process/cancel/{process_id}`, websocket and webhook events); `async=false` answers the routes. " +
    "Customers of routes on the way hear of a new window only when it moved by more than the company's `eta_update_minutes`.",
  request: {
    query: z.object({ async: flag("true (default): answer 202 with a process id; false: plan in the request", true), time_budget_seconds: TimeBudgetSeconds }),
    body: jsonBody(
      z.object({
        route_ids: z.array(z.number().int().positive()).max(500).optional().openapi({ description: "The routes to re-plan; default the running routes of today" }),
        deliveryids: z.array(z.number().int().positive()).max(2000).optional().openapi({ description: "Open deliveries to place on them too" }),
        handover_route_id: z.number().int().positive().optional().openapi({ description: "A route whose stops go to the others; it is cancelled" }),
      }),
    ),
  },
  responses: {
    200: jsonResponse(
      z.object({
        process_id: z.string(),
        routes: z.array(RouteWithLine).openapi({ description: "The new routes" }),
        cancelled_route_ids: z.array(z.number().int()).openapi({ description: "Routes cancelled: the handed-over one, and those left without stops" }),
        unassigned: z.array(z.object({ delivery_id: z.number().int(), reason: z.string(), remedy: z.string() })).openapi({ description: "Deliveries no route could take, now open" }),
      }),
      "Synchronous result",
    ),
    202: jsonResponse(z.object({ process_id: z.string() }), "Process started"),
  },
});

const variantsRoute = apiRoute({
  method: "post",
  path: "/routingvariants",
  operationId: "compareRoutingVariants",
  tags: ["Route calculation"],
  summary: "Alternative plans for a set of deliveries",
  description:
    "Computes, without storing anything: `mainvariant` (one element: the fewest tours, then least cost — what routing would do) and `variants`: " +
    "`shorter_days` (days capped at 80 % of the main variant's longest tour) and `one_more_tour` (one more tour, days balanced). Each with its figures.",
  request: { body: jsonBody(z.object({ deliveryids: z.array(z.number().int().positive()).min(1).max(2000) })) },
  responses: { 200: jsonResponse(z.object({ mainvariant: z.array(RoutingVariantSchema), variants: z.array(RoutingVariantSchema) }), "The variants") },
});

/** The id of a process (a UUID) in the path. */
export const ProcessParams = z.object({ process_id: z.string().max(36).uuid().openapi({ param: { name: "process_id", in: "path" } }) });
const ResponseData = z.object({ response_data: z.string().max(10).optional().openapi({ description: "`base` or `all` answer the routes of a finished process" }) });

const processStatus = apiRoute({
  method: "get",
  path: "/process/status/{process_id}",
  operationId: "getProcessStatus",
  tags: ["Route calculation"],
  summary: "Status of every action of a process",
  request: { params: ProcessParams, query: ResponseData },
  responses: { 200: jsonResponse(z.union([z.record(z.string(), ProcessRecord), RouteList]), "Status per action, or the routes") },
});

const processAction = apiRoute({
  method: "get",
  path: "/process/status/{process_id}/{action}",
  operationId: "getProcessActionStatus",
  tags: ["Route calculation"],
  summary: "Status of one action of a process",
  description: "Actions: `import_deliveries`, `cluster_deliveries`, `routing`, `final`; `current` = the action now running, else `final`.",
  request: {
    params: ProcessParams.extend({ action: z.enum([...PROCESS_ACTIONS, "current"]).openapi({ param: { name: "action", in: "path" } }) }),
    query: ResponseData,
  },
  responses: { 200: jsonResponse(z.union([ProcessRecord, RouteList]), "Status record, or the routes") },
});

const cancelProcess = apiRoute({
  method: "post",
  path: "/process/cancel/{process_id}",
  operationId: "cancelProcess",
  tags: ["Route calculation"],
  summary: "Cancel a running process (beyond the interface documents)",
  description:
    "Stops a routing or upload process that is not final: the optimiser stops at its next progress check (within about 2 s), the parts of a big plan are dropped, " +
    "no routes are written. The running (else first waiting) action and `final` become `failed` with `error: \"cancelled\"` and `cancelled_by` (the user's id) in `meta` " +
    "(contract.md has no `cancelled` process status); websocket and `process.updated` webhooks tell it. Answers the status of every action. " +
    "409 when the process is already final, or already writing its routes (cancel the tours then, `POST /cancelroute/{route_id}`). Deliveries an upload imported stay. " +
    "A synchronous request (`async=false`) whose process is cancelled answers 409.",
  request: { params: ProcessParams },
  responses: { 200: jsonResponse(z.record(z.string(), ProcessRecord), "Status per action after the cancel") },
});

const wantsRoutes = (responseData?: string) => responseData === "base" || responseData === "all";

/** Runs a registered routing process in the request (`async=false`); a run that wrote nothing is refused. */
async function runInRequest(env: AppEnv["Bindings"], db: Db, companyId: number, processId: string, apiBaseUrl: string, cancelled: string) {
  const outcome = await runRouting(env, db, companyId, processId, `sync:${processId}`, apiBaseUrl);
  if (!outcome) throw conflict(cancelled, "process_id");
  if (!outcome.ok) refusal(outcome);
}

export const routingRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(calcRoute, async (c) => {
    const db = c.get("db");
    const company = c.get("company");
    const query = c.req.valid("query");
    const body = c.req.valid("json");
    if (query.relax_after_time && !normaliseTimeOfDay(query.relax_after_time)) throw unprocessable("relax_after_time must be a time of day with zone", "relax_after_time");
    const options = { ...query, num_vehicles: query.num_vehicles ?? query.numvehicles, vehicle: query.vehicle as never };
    const { processId, job } = await startRouting(c.env, db, company, c.get("user").id, body, options, query.async ? "async" : "sync", apiBase(c));
    if (query.async) {
      await c.env.ROUTING_QUEUE.send(job);
      return c.json({ process_id: processId }, 202);
    }
    await runInRequest(c.env, db, company.id, processId, job.apiBase, "The routing was cancelled: no route was written");
    return c.json(await processRoutes(db, company.id, processId, query.response_data === "all"), 200);
  })
  .openapi(updateRouteRoute, async (c) => {
    const db = c.get("db");
    const company = c.get("company");
    const { add_deliveryids, del_deliveryids } = c.req.valid("json");
    const { processId, outcome } = await updateRoute(c.env, db, company, c.get("user").id, c.req.valid("param").route_id, add_deliveryids, del_deliveryids, apiBase(c));
    if (outcome && !outcome.ok) refusal(outcome);
    const result = await processRoutes(db, company.id, processId, true);
    return c.json(result.objects[0], 200);
  })
  .openapi(moveRoute, async (c) => {
    const db = c.get("db");
    const company = c.get("company");
    const { delivery_id, from_route_id, to_route_id } = c.req.valid("json");
    const { processIds, outcome } = await moveDelivery(c.env, db, company, c.get("user").id, delivery_id, from_route_id, to_route_id, apiBase(c));
    if (outcome && !outcome.ok) refusal(outcome);
    if (!outcome) throw conflict("The move was cancelled: nothing was moved", "process_id");
    const [from, to] = await Promise.all(processIds.map(async (pid) => (await processRoutes(db, company.id, pid, true)).objects[0]));
    return c.json({ from_route: from, to_route: to ?? null }, 200);
  })
  .openapi(insertRoute, async (c) => {
    const db = c.get("db");
    const company = c.get("company");
    const { deliveryids, route_ids, dry_run } = c.req.valid("json");
    const { insertions, processIds } = await insertDeliveries(c.env, db, company, c.get("user").id, deliveryids, { routeIds: route_ids, dryRun: dry_run }, apiBase(c));
    const written = await Promise.all(processIds.map(async (pid) => (await processRoutes(db, company.id, pid, true)).objects[0]));
    // A later insertion may have replaced an earlier one's route: answer each route as it was written.
    return c.json({ insertions, routes: written }, 200);
  })
  .openapi(replanRoute, async (c) => {
    const db = c.get("db");
    const company = c.get("company");
    const query = c.req.valid("query");
    const body = c.req.valid("json");
    const asked = { routeIds: body.route_ids, deliveryIds: body.deliveryids, handoverRouteId: body.handover_route_id, timeBudgetSeconds: query.time_budget_seconds };
    const { processId, job, params } = await startReplan(c.env, db, company, c.get("user").id, asked, query.async ? "async" : "sync", apiBase(c));
    if (query.async) {
      await c.env.ROUTING_QUEUE.send(job);
      return c.json({ process_id: processId }, 202);
    }
    await runInRequest(c.env, db, company.id, processId, job.apiBase, "The re-plan was cancelled: nothing was written");
    const state = await processState(c.env, db, company.id, processId);
    const meta = JSON.parse(state.routing.meta) as { unassigned_deliveries?: { delivery_id: number; reason: string; remedy: string }[] };
    const request = params.replan!.request;
    const retired = await givenRoutes(db, company, [...request.routeIds, ...(request.handoverRouteId !== null ? [request.handoverRouteId] : [])]);
    const cancelled = retired.filter((r) => r.status === RouteStatus.cancelled).map((r) => r.id);
    return c.json({ process_id: processId, routes: (await processRoutes(db, company.id, processId, true)).objects, cancelled_route_ids: cancelled, unassigned: meta.unassigned_deliveries ?? [] }, 200);
  })
  .openapi(variantsRoute, async (c) => {
    const result = await routingVariants(c.env, c.get("db"), c.get("company"), c.req.valid("json").deliveryids);
    return c.json(result, 200);
  })
  .openapi(cancelProcess, async (c) => {
    const cid = c.get("company").id;
    const { process_id } = c.req.valid("param");
    await processState(c.env, c.get("db"), cid, process_id);
    const outcome = await companyStub(c.env, cid).cancelProcess(process_id, { userId: c.get("user").id });
    if (!outcome.ok) throw outcome.status === 404 ? notFound("Process") : conflict(outcome.message, "process_id");
    return c.json(outcome.state, 200);
  })
  .openapi(processStatus, async (c) => {
    const cid = c.get("company").id;
    const { process_id } = c.req.valid("param");
    const state = await processState(c.env, c.get("db"), cid, process_id);
    const { response_data } = c.req.valid("query");
    if (wantsRoutes(response_data) && state.final.status === "finished") return c.json(await processRoutes(c.get("db"), cid, process_id, response_data === "all"), 200);
    return c.json(state, 200);
  })
  .openapi(processAction, async (c) => {
    const cid = c.get("company").id;
    const { process_id, action } = c.req.valid("param");
    const state = await processState(c.env, c.get("db"), cid, process_id);
    const { response_data } = c.req.valid("query");
    if (wantsRoutes(response_data) && state.final.status === "finished") return c.json(await processRoutes(c.get("db"), cid, process_id, response_data === "all"), 200);
    const resolved = action === "current" ? (PROCESS_ACTIONS.find((a) => state[a].status === "running") ?? "final") : action;
    return c.json(state[resolved], 200);
  });
