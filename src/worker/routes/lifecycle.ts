/** Route and delivery state changes (contract.md §5), serialised by the company's Durable Object. */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { RouteSchema } from "../schemas/routes";
import { loadDelivery } from "../../core/services/delivery-writes";
import { DeliverySchema } from "../schemas/deliveries";
import { TrackingPoint } from "../schemas/tracking";
import type { LifecycleOp } from "../../core/coordinator/changes";
import { ApiError } from "../../core/errors";
import { allOnOnePage } from "../../core/db/list";
import { ROUTE_STATUSES } from "../../core/domain/states";
import type { AppEnv } from "../app-env";
import { validationHook } from "../errors";
import { IdParam, apiRoute, envelope, jsonBody, jsonResponse, jsonText } from "../openapi";
import { presentDeliveries } from "../../core/services/deliveries";
import { companyStub, publishAll } from "../../core/services/live";
import { publicBase } from "./company";
import { loadRouteRecordJson } from "../../core/services/route-records";
import { updateEtas } from "../../core/services/route-lifecycle";
import { FAR_FROM_ADDRESS_METERS, PROOF_LIMITS } from "../../core/services/proofs";

const Accuracy = z.number().min(0).max(100_000).optional();

/** Where a report is made: the interface's GeoJSON point with `accuracy` beside it, or the older `{lat, lng, accuracy}`. */
const ReportPosition = z.union([
  TrackingPoint.extend({ accuracy: Accuracy }),
  z.object({ lat: z.number().min(-90).max(90), lng: z.number().min(-180).max(180), accuracy: Accuracy }),
]);

/** A report's position in the one form the proof keeps. */
const positionOf = (p: z.infer<typeof ReportPosition>) =>
  "coordinates" in p ? { lng: p.coordinates[0], lat: p.coordinates[1], ...(p.accuracy !== undefined ? { accuracy: p.accuracy } : {}) } : p;

const RouteStatusValue = z
  .number()
  .int()
  .refine((v) => ROUTE_STATUSES.some((s) => s.id === v), "unknown route status (see GET /routestatus)")
  .openapi({ type: "integer", description: "See GET /routestatus" });

const TRANSITIONS =
  "Allowed: 0->1 (an active driver set), 1->1 (driver changed; the old one goes to `previous_drivers`), 1->0 (driver removed, `driver_id: null`), " +
  "1->2 (accepted), 2->3 (on the way: `ast` set, target times and ETAs computed (the plan's until its planned start, see GET /updateetas/timewindow), customers with `notify_customer` notified), 0..3->5 (cancelled). " +
  "3->4 happens by itself when every delivery is reported. Anything else: 409, nothing changed. Drivers may set 2 and 3 on their own routes.";

const patchRoute = apiRoute({
  method: "patch",
  path: "/route/{route_id}",
  operationId: "updateRoute",
  tags: ["Routes"],
  summary: "Change a route's status or driver",
  description: TRANSITIONS,
  roles: ["dispatcher", "driver"],
  request: { params: IdParam("route_id"), body: jsonBody(z.object({ status: RouteStatusValue.optional(), driver_id: z.number().int().positive().nullable().optional() })) },
  responses: { 200: jsonResponse(RouteSchema, "The route") },
});

const setRouteStatus = apiRoute({
  method: "post",
  path: "/setroutestatus/{route_id}",
  operationId: "setRouteStatus",
  tags: ["Routes"],
  summary: "Set a route's status (POST alternative to PATCH)",
  description: `Body \`{"status": N}\`. ${TRANSITIONS}`,
  roles: ["dispatcher", "driver"],
  request: { params: IdParam("route_id"), body: jsonBody(z.object({ status: RouteStatusValue })) },
  responses: { 200: jsonResponse(RouteSchema, "The route") },
});

const cancelRouteRoute = apiRoute({
  method: "post",
  path: "/cancelroute/{route_id}",
  operationId: "cancelRoute",
  tags: ["Routes"],
  summary: "Cancel a route",
  description: "Status 0..3 -> 5; its unfinished deliveries (not delivered, not cancelled) return to the pool with status 0 `none`. Finished, cancelled or replaced routes: 409.",
  request: { params: IdParam("route_id") },
  responses: { 200: jsonResponse(RouteSchema, "The cancelled route") },
});

const deliveryDone = apiRoute({
  method: "post",
  path: "/deliverydone/{delivery_id}",
  operationId: "reportDelivery",
  tags: ["Deliveries"],
  summary: "Report a delivery as delivered or undelivered",
  description:
    "Only while the delivery's route is on the way (else 409). Sets `atd` (and `ata` when empty) and `drivernotes`. `undelivered` deliveries are open for the next routing. " +
    "When every delivery of the route is reported, the route becomes 4 `finished`. Drivers report deliveries of their own routes. " +
    "Proof of delivery (beyond the interface documents): `reported_at`, `position`, `recipient` and `scancode` go into the delivery's proof record, photo and signature are sent with `POST /delivery/{delivery_id}/proof` (before or after the report); " +
    "the `delivery` event of the report (websocket, `delivery.updated` webhook) carries `proof` (what it holds, never the images) when there is one.",
  roles: ["dispatcher", "driver"],
  request: {
    params: IdParam("delivery_id"),
    body: jsonBody(
      z.object({
        status: z.enum(["delivered", "undelivered"]),
        drivernotes: z.string().max(2000).optional(),
        reported_at: z.string().max(40).optional().openapi({ format: "date-time", description: "Beyond the interface documents: when the driver reported, by the phone (a report sent later, after the phone was offline, keeps its time). Sets `atd` (and `ata` when empty) instead of the server's time. At most 2 minutes ahead of the server's clock and not before the route went on the way (422)." }),
        position: ReportPosition.optional().openapi({
          description:
            `Beyond the interface documents: where the report is made, the phone's position as everywhere in the interface: a GeoJSON point (as \`POST /drivertracking\`) with \`accuracy\` in metres beside its coordinates; ` +
            `\`{lat, lng, accuracy}\` is taken too (the first form this call had). Kept with the proof of delivery; a report more than ${FAR_FROM_ADDRESS_METERS} m from the delivery address is flagged \`far_from_address\`.`,
        }),
        recipient: z.string().max(PROOF_LIMITS.recipientChars).optional().openapi({ description: "Beyond the interface documents: name of the person who received the delivery (proof of delivery)." }),
        scancode: z.string().max(PROOF_LIMITS.scancodeChars).optional().openapi({ description: "Beyond the interface documents: the code scanned (or typed) at the door; the proof records whether it is the delivery's own `scancode` (`scan_match`). A mismatch does not refuse the report: the driver app warns before, the console shows it after." }),
      }),
    ),
  },
  responses: { 200: jsonResponse(DeliverySchema, "The reported delivery") },
});

const Etas = z
  .object({ route_id: z.number().int(), driver_id: z.number().int().nullable(), etas: z.array(z.object({ delivery_id: z.number().int(), eta_from: z.string(), eta_to: z.string() })) })
  .openapi("RouteEtas");

const etaDescription =
  "Recomputes `eta_from`/`eta_to` of the route's open deliveries (status `routed`) from the driver's last tracked position (else the depot), now, and the hour-of-day traffic profile, " +
  "driving by the road engine's times through the stops when one is configured (`ROAD_ENGINE_URL`; when it fails, by the embedded model as planning does). " +
  "Until the route's planned start (`tst_from`) and while the driver has not moved more than 500 m from where they were when the route went on the way, " +
  "the ETAs are the plan's (a route started the evening before its day does not leave now). The route's planned breaks not over yet are kept, each before the first open stop after it (what is left of one under way). Delivered, undelivered and cancelled deliveries are left out.";

const updateEtasOne = apiRoute({
  method: "get",
  path: "/updateetas/timewindow/{route_id}",
  operationId: "updateRouteEtas",
  tags: ["Routes"],
  summary: "Recompute the ETAs of a route on the way",
  description: `${etaDescription} The route must be on the way (else 409).`,
  request: { params: IdParam("route_id") },
  responses: { 200: jsonResponse(Etas, "The new ETAs") },
});

const updateEtasAll = apiRoute({
  method: "get",
  path: "/updateetas/timewindow",
  operationId: "updateEtas",
  tags: ["Routes"],
  summary: "Recompute the ETAs of every route on the way",
  description: etaDescription,
  responses: { 200: jsonResponse(envelope(Etas, "RouteEtasList"), "The new ETAs per route") },
});

/** Runs a change through the company's coordinator; its refusal becomes the error answer. */
async function apply(env: AppEnv["Bindings"], companyId: number, op: LifecycleOp) {
  const outcome = await companyStub(env, companyId).applyChange(op);
  if (!outcome.ok) throw new ApiError(outcome.status, outcome.message, outcome.fields);
}


export const lifecycleRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(patchRoute, async (c) => {
    const company = c.get("company");
    const { route_id } = c.req.valid("param");
    await apply(c.env, company.id, { kind: "route", company, actor: c.get("user"), routeId: route_id, change: c.req.valid("json"), base: publicBase(c) });
    return jsonText(c, await loadRouteRecordJson(c.get("db"), company.id, route_id), 200);
  })
  .openapi(setRouteStatus, async (c) => {
    const company = c.get("company");
    const { route_id } = c.req.valid("param");
    await apply(c.env, company.id, { kind: "route", company, actor: c.get("user"), routeId: route_id, change: c.req.valid("json"), base: publicBase(c) });
    return jsonText(c, await loadRouteRecordJson(c.get("db"), company.id, route_id), 200);
  })
  .openapi(cancelRouteRoute, async (c) => {
    const company = c.get("company");
    const { route_id } = c.req.valid("param");
    await apply(c.env, company.id, { kind: "cancel", company, routeId: route_id });
    return jsonText(c, await loadRouteRecordJson(c.get("db"), company.id, route_id), 200);
  })
  .openapi(deliveryDone, async (c) => {
    const company = c.get("company");
    const { delivery_id } = c.req.valid("param");
    const { status, drivernotes, position, ...rest } = c.req.valid("json");
    const extras = { ...rest, ...(position ? { position: positionOf(position) } : {}) };
    await apply(c.env, company.id, { kind: "report", company, actor: c.get("user"), deliveryId: delivery_id, outcome: status, drivernotes, base: publicBase(c), extras });
    const row = await loadDelivery(c.get("db"), company.id, delivery_id);
    return c.json((await presentDeliveries(c.get("db"), company.id, [row]))[0], 200);
  })
  .openapi(updateEtasOne, async (c) => {
    const cid = c.get("company").id;
    const { routes: [result], events } = await updateEtas(c.env, c.get("db"), cid, c.req.valid("param").route_id);
    c.executionCtx.waitUntil(publishAll(c.env, cid, events));
    return c.json(result, 200);
  })
  .openapi(updateEtasAll, async (c) => {
    const cid = c.get("company").id;
    const { routes: results, events } = await updateEtas(c.env, c.get("db"), cid);
    c.executionCtx.waitUntil(publishAll(c.env, cid, events));
    return c.json(allOnOnePage(results), 200);
  });
