/**
 * Route and delivery state changes of contract.md §5: assigning drivers,
 * accepting, starting (ETAs, customer notifications), reporting deliveries,
 * finishing, cancelling, and ETA updates. The company's Durable Object calls
 * these one at a time (`CompanyCoordinator.change`); each write is also a
 * compare-and-set on the state it was checked against, so even a direct call
 * can never produce a state outside the table.
 */
import { and, asc, desc, eq, gte, inArray, isNull, lt, ne, sql } from "drizzle-orm";
import type { LifecycleOp, LifecycleOutcome, RouteChange } from "../coordinator/changes";
import type { LiveEntry, PublishedEvent } from "../coordinator/live";
import type { ReportExtras } from "../coordinator/changes";
import type { AuthUser, Company, Db } from "../context";
import { DeliveryStatus, RouteStatus } from "../../shared/contract/states";
import type { BatchItem } from "drizzle-orm/batch";
import { addresses, companies, deliveries, driverTracking, outbox, routes, users } from "../db/schema";
import { estimateArrivals, pausesBefore } from "../domain/eta";
import { roadEngine } from "./road-engine";
import type { VehicleClassId } from "../../solver";
import { UNFINISHED_ROUTE_STATUSES, canTransitionRoute } from "../domain/states";
import type { Env } from "../env";
import { haversineMeters } from "../geo/distance";
import { ApiError, type ErrorStatus, conflict, forbidden, notFound, unprocessable } from "../errors";
import { formatDateTime, nowIso, parseDateTime } from "../lib/time";
import { type RouteRow, lastReportedStop, loadRoute } from "./route-records";
import { arrivalFromPositions } from "./tracking-positions";
import { trackingTokens, trackingUrl } from "./customer-tracking";
import { eventInsert, loggedEvents } from "./events";
import { type OutgoingMessage, dispatchOutbox, outboxInsert } from "./outbox";
import { guardedProofUpsert, proofOfReport, proofSummary, reportProofFields, reportTime } from "./proofs";
import { heldWindow } from "../../shared/contract/delivery-window";

/** What a change did: the events its batches logged, to publish (with the driver they concern). */
export interface ChangeResult {
  events: PublishedEvent[];
}

const ROUTE_OPEN_DELIVERIES = [DeliveryStatus.none, DeliveryStatus.routed] as number[];

/** The route row is written only if it is still as it was read; otherwise someone else changed it first. */
const unchanged = (route: RouteRow) =>
  and(eq(routes.id, route.id), eq(routes.company_id, route.company_id), eq(routes.status, route.status), route.driver_id === null ? isNull(routes.driver_id) : eq(routes.driver_id, route.driver_id));

/** The route is still as it was read: the guard of its compare-and-set write, and of the event logged with it. */
const routeAsRead = (route: RouteRow) => sql`exists (select 1 from ${routes} where ${unchanged(route)})`;

const routeEvent = (id: number, status: number, driverId: number | null): LiveEntry => ({ event: { type: "route", id, status, driver_id: driverId }, driverId });

/** PATCH /route, POST /setroutestatus: status and driver changes along the transition table. */
export async function changeRoute(env: Env, db: Db, company: Company, actor: AuthUser, routeId: number, change: RouteChange, base: string): Promise<ChangeResult> {
  const route = await loadRoute(db, company.id, routeId);
  if (actor.role === "driver") {
    // Drivers accept (2) and start (3) their own routes, nothing else.
    if (route.driver_id !== actor.id) throw forbidden("Drivers may change only routes assigned to them");
    if (change.driver_id !== undefined || (change.status !== 2 && change.status !== 3)) throw forbidden("Drivers may only set status 2 (accepted) or 3 (on the way)");
  }
  if (change.status === RouteStatus.cancelled) return cancelRoute(env, db, company, routeId);
  if (change.status === RouteStatus.finished) throw conflict("A route finishes by itself when every delivery is reported", "status");
  if (change.status === RouteStatus.route_replaced) throw conflict("Routes are replaced by PATCH /calcroute/update/timewindow", "status");

  let status = route.status;
  let driverId = route.driver_id;
  const previousDrivers = [...route.previous_drivers];

  if (change.driver_id !== undefined && change.driver_id !== route.driver_id) {
    if (change.driver_id === null) {
      if (route.status !== RouteStatus.assigned) throw conflict(`The driver can be removed only from an assigned route (status ${route.status})`, "driver_id");
      status = RouteStatus.new;
    } else {
      const [driver] = await db
        .select({ id: users.id, active: users.active })
        .from(users)
        .where(and(eq(users.company_id, company.id), eq(users.id, change.driver_id), eq(users.usertype, "driver")));
      if (!driver) throw unprocessable(`No driver with id ${change.driver_id} in this company`, "driver_id");
      if (!driver.active) throw conflict("Routes can be assigned only to active drivers", "driver_id");
      if (route.status !== RouteStatus.new && route.status !== RouteStatus.assigned) throw conflict(`The driver of a route with status ${route.status} cannot change`, "driver_id");
      status = RouteStatus.assigned;
    }
    if (route.driver_id !== null) previousDrivers.push(route.driver_id);
    driverId = change.driver_id;
  }

  if (change.status !== undefined && change.status !== status) {
    if (!canTransitionRoute(status, change.status)) throw conflict(`Route status cannot change from ${status} to ${change.status}`, "status");
    if (change.status === RouteStatus.assigned && driverId === null) throw conflict("Assigning needs a driver: give driver_id", "driver_id");
    if (change.status === RouteStatus.new) throw conflict("Remove the driver (driver_id null) to make a route new again", "status");
    status = change.status;
  }
  if (status === route.status && driverId === route.driver_id) return { events: [] };

  const values: Partial<RouteRow> = { status, driver_id: driverId, previous_drivers: previousDrivers };
  if (status === RouteStatus.ontheway) values.ast = nowIso();
  const [logged, updated] = await db.batch([
    eventInsert(db, company.id, { ...routeEvent(route.id, status, driverId), when: routeAsRead(route) }),
    db.update(routes).set(values).where(unchanged(route)).returning(),
  ]);
  if (!updated.length) throw conflict("The route changed meanwhile; read it again", "status");
  const events: PublishedEvent[] = loggedEvents([logged]);
  if (status === RouteStatus.ontheway) events.push(...(await startTour(env, db, company, updated[0], base)));
  return { events };
}

/**
 * Going on the way: target times and ETAs of the open deliveries from now and
 * the driver's position; the customers who asked to be notified get an email
 * and/or SMS with their time window (through the outbox). Answers the logged `eta` event.
 */
async function startTour(env: Env, db: Db, company: Company, route: RouteRow, base: string): Promise<PublishedEvent[]> {
  const etas = await withTrackingLinks(db, company, base, await computeEtas(env, db, company.id, company.timezone, route));
  const messages = customerMessages("delivery_eta", route.id, etas);
  const updates = etas.map((e) =>
    db.update(deliveries).set({ tdt_from: e.tdt_from, tdt_to: e.tdt_to, eta_from: e.eta_from, eta_to: e.eta_to }).where(and(eq(deliveries.company_id, company.id), eq(deliveries.id, e.id))),
  );
  return writeEtas(env, db, company.id, route, updates, messages);
}

/** The customers who hear from us get the link of their tracking page along. */
async function withTrackingLinks<T extends CustomerEta>(db: Db, company: Company, base: string, etas: T[]): Promise<T[]> {
  const tokens = await trackingTokens(db, company.id, etas.filter((e) => e.notify).map((e) => e.id));
  return etas.map((e) => (tokens.has(e.id) ? { ...e, tracking_link: trackingUrl(base, company.slug, tokens.get(e.id)!) } : e));
}

/** Customer messages of one kind to the deliveries that asked for them: email and/or SMS to the address's contacts. */
function customerMessages(template: string, routeId: number, etas: CustomerEta[], extra: Record<string, unknown> = {}): OutgoingMessage[] {
  return etas.flatMap((e) => {
    if (!e.notify) return [];
    const data = { delivery_id: e.id, route_id: routeId, eta_from: e.eta_from, eta_to: e.eta_to, ...(e.tracking_link ? { tracking_link: e.tracking_link } : {}), ...extra };
    return [
      ...(e.email && e.byEmail !== false ? [{ channel: "email" as const, to: e.email, template, data }] : []),
      ...(e.phonenr && e.bySms !== false ? [{ channel: "sms" as const, to: e.phonenr, country: e.country, template, data }] : []),
    ];
  });
}

/**
 * Writes a route's new ETAs, the messages they cause and the route's `eta`
 * event in one batch, then hands the messages to the queue; answers the logged event.
 */
async function writeEtas(env: Env, db: Db, companyId: number, route: Pick<RouteRow, "id" | "driver_id">, updates: BatchItem<"sqlite">[], messages: OutgoingMessage[]) {
  const [logged, queued] = await db.batch([
    eventInsert(db, companyId, { event: { type: "eta", route_id: route.id }, driverId: route.driver_id }),
    messages.length ? outboxInsert(db, companyId, messages) : noMessages(db),
    ...updates,
  ]);
  await dispatchOutbox(env, companyId, queued);
  return loggedEvents([logged]);
}

/** Nothing to tell still inserts nothing: an insert needs at least one row, so the batch carries a no-op read in its place. */
const noMessages = (db: Db) => db.select({ id: outbox.id, status: outbox.status }).from(outbox).where(sql`0`);

/** What a customer message needs of a delivery. */
interface CustomerEta {
  id: number;
  eta_from: string;
  eta_to: string;
  notify: boolean;
  /** The channels asked for (null: every channel the address has). */
  byEmail: boolean | null;
  bySms: boolean | null;
  email: string | null;
  phonenr: string | null;
  country: string | null;
  /** The customer's tracking page. */
  tracking_link?: string;
}

interface DeliveryEta extends CustomerEta {
  tdt_from: string;
  tdt_to: string;
}

const customerColumns = {
  notify: deliveries.notify_customer,
  byEmail: deliveries.notify_customer_email,
  bySms: deliveries.notify_customer_sms,
  email: addresses.email,
  phonenr: addresses.phonenr,
  country: addresses.country,
};

/** Metres from where the route was started beyond which the driver counts as under way (GPS noise and a yard stay below). */
const UNDER_WAY_METERS = 500;

/**
 * ETAs of a route's open deliveries, in driving order. Until the route's
 * planned start (`tst_from`, on its day) and while the driver has not moved
 * since starting it, they are the plan's: a driver who starts tomorrow's
 * route tonight does not leave now. Otherwise they are estimated from the
 * driver's last position (else the depot) and now.
 */
async function computeEtas(env: Env, db: Db, companyId: number, timeZone: string, route: RouteRow): Promise<DeliveryEta[]> {
  const [open, position, base] = await Promise.all([
    db
      .select({
        id: deliveries.id,
        lng: addresses.lng,
        lat: addresses.lat,
        pdt_from: deliveries.pdt_from,
        pdt_to: deliveries.pdt_to,
        window_from: deliveries.window_from,
        window_to: deliveries.window_to,
        els: deliveries.els,
        orderindex: deliveries.orderindex,
        planned: { tdt_from: deliveries.tdt_from, tdt_to: deliveries.tdt_to, eta_from: deliveries.eta_from, eta_to: deliveries.eta_to },
        ...customerColumns,
      })
      .from(deliveries)
      .innerJoin(addresses, eq(addresses.id, deliveries.deliverylocation_id))
      .where(and(eq(deliveries.company_id, companyId), eq(deliveries.route_id, route.id), eq(deliveries.status, DeliveryStatus.routed)))
      .orderBy(asc(deliveries.orderindex)),
    route.driver_id === null ? Promise.resolve([]) : lastPosition(db, companyId, route.driver_id),
    route.routebase_address_id === null
      ? Promise.resolve([])
      : db.select({ lng: addresses.lng, lat: addresses.lat }).from(addresses).where(and(eq(addresses.company_id, companyId), eq(addresses.id, route.routebase_address_id))),
  ]);
  const now = Math.floor(Date.now() / 1000);
  const plannedStart = route.tst_from ? parseDateTime(route.tst_from) : null;
  if (plannedStart !== null && now * 1000 < plannedStart && open.every((d) => d.planned.tdt_from && d.planned.tdt_to && d.planned.eta_from && d.planned.eta_to)) {
    if (!(await movedSinceStart(db, companyId, route, position[0]))) {
      return open.map(({ planned, orderindex: _orderindex, ...d }) => ({ ...d, tdt_from: planned.tdt_from!, tdt_to: planned.tdt_to!, eta_from: planned.eta_from!, eta_to: planned.eta_to! }));
    }
  }
  const from = position[0] ?? base[0];
  const located = open.filter((d) => d.lng !== null && d.lat !== null);
  const windowStart = (d: (typeof open)[number]) => {
    const from = heldWindow(d).from;
    return from ? (parseDateTime(from) ?? 0) / 1000 : null;
  };
  // The planned stay (which has the delivery type's default when `els` is empty), else `els`.
  const service = (d: (typeof open)[number]) =>
    d.planned.tdt_from && d.planned.tdt_to ? ((parseDateTime(d.planned.tdt_to) ?? 0) - (parseDateTime(d.planned.tdt_from) ?? 0)) / 1000 : (d.els ?? 0) * 60;
  if (!from || from.lng === null || from.lat === null || !located.length) return [];
  const pauses = pausesBefore(route.breaks, located.map((d) => d.orderindex ?? 0), now);
  const vehicleClass = (route.plan_options?.vehicle_class ?? "car") as VehicleClassId;
  // The road engine's drive through the stops when one is configured (as planning uses it), else the embedded model.
  const engine = roadEngine(env);
  const legSeconds = engine ? await engine.legs([{ lat: from.lat, lon: from.lng }, ...located.map((d) => ({ lat: d.lat!, lon: d.lng! }))], vehicleClass) : null;
  const arrivals = estimateArrivals(
    { lng: from.lng, lat: from.lat },
    now,
    located.map((d, i) => ({ lng: d.lng!, lat: d.lat!, windowStart: windowStart(d), service: service(d), pauseBefore: pauses[i] })),
    { timeZone, vehicleClass, legSeconds },
  );
  return located.map((d, i) => {
    const a = arrivals[i];
    const { planned: _planned, orderindex: _orderindex, pdt_from: _from, pdt_to: _to, window_from: _wf, window_to: _wt, ...fields } = d;
    return {
      ...fields,
      tdt_from: formatDateTime(a.serviceStart * 1000),
      eta_from: formatDateTime(a.etaFrom * 1000),
      eta_to: formatDateTime(a.etaTo * 1000),
      tdt_to: formatDateTime((a.serviceStart + service(d)) * 1000),
    };
  });
}

/** The driver's newest tracked position (`before`: before that time). */
function lastPosition(db: Db, companyId: number, driverId: number, before?: string) {
  return db
    .select({ lng: driverTracking.lng, lat: driverTracking.lat, timestamp: driverTracking.timestamp })
    .from(driverTracking)
    .where(and(eq(driverTracking.company_id, companyId), eq(driverTracking.driver_id, driverId), before ? lt(driverTracking.timestamp, before) : undefined))
    .orderBy(desc(driverTracking.timestamp), desc(driverTracking.id))
    .limit(1);
}

/**
 * Whether the driver's newest position lies more than {@link UNDER_WAY_METERS} from where they were when the route
 * went on the way: their last position before, else the first one since (the driver app tracks only routes on the way).
 */
async function movedSinceStart(db: Db, companyId: number, route: RouteRow, latest: { lng: number; lat: number; timestamp: string } | undefined): Promise<boolean> {
  if (route.driver_id === null || !route.ast || !latest) return false;
  const [[atStart], [firstAfter]] = await Promise.all([
    lastPosition(db, companyId, route.driver_id, route.ast),
    db
      .select({ lng: driverTracking.lng, lat: driverTracking.lat })
      .from(driverTracking)
      .where(and(eq(driverTracking.company_id, companyId), eq(driverTracking.driver_id, route.driver_id), gte(driverTracking.timestamp, route.ast)))
      .orderBy(asc(driverTracking.timestamp), asc(driverTracking.id))
      .limit(1),
  ]);
  const start = atStart ?? firstAfter;
  return !!start && haversineMeters(start.lng, start.lat, latest.lng, latest.lat) > UNDER_WAY_METERS;
}

/**
 * GET /updateetas/timewindow[/<route_id>] and the periodic refresh: fresh ETAs
 * of routes on the way, each route's written with its logged `eta` event
 * (`events`, to publish). A customer who was told a window hears again when it
 * moved by more than the company's `eta_update_minutes`.
 */
export async function updateEtas(env: Env, db: Db, companyId: number, routeId?: number) {
  const onTheWay = routeId === undefined
    ? await db.select().from(routes).where(and(eq(routes.company_id, companyId), eq(routes.status, RouteStatus.ontheway)))
    : [await loadRoute(db, companyId, routeId)];
  if (routeId !== undefined && onTheWay[0].status !== RouteStatus.ontheway) throw conflict("ETAs are computed for routes on the way only", "route_id");
  const [company] = await db.select({ timezone: companies.timezone, margin: companies.eta_update_minutes }).from(companies).where(eq(companies.id, companyId));
  const results = [];
  const events: PublishedEvent[] = [];
  for (const route of onTheWay) {
    const etas = await computeEtas(env, db, companyId, company.timezone, route);
    const told = await lastToldEtas(db, companyId, etas.map((e) => e.id));
    // Told before: the same tracking link goes along again.
    const moved = etas.flatMap((e) => {
      const before = told.get(e.id);
      return before !== undefined && Math.abs(Date.parse(e.eta_from) - Date.parse(before.eta_from)) > company.margin * 60_000 ? [{ ...e, tracking_link: before.tracking_link }] : [];
    });
    const updates = etas.map((e) => db.update(deliveries).set({ eta_from: e.eta_from, eta_to: e.eta_to }).where(and(eq(deliveries.company_id, companyId), eq(deliveries.id, e.id))));
    events.push(...(await writeEtas(env, db, companyId, route, updates, customerMessages("delivery_eta_update", route.id, moved))));
    results.push({ route_id: route.id, driver_id: route.driver_id, etas: etas.map(({ id, eta_from, eta_to }) => ({ delivery_id: id, eta_from, eta_to })) });
  }
  return { routes: results, events };
}

/**
 * The ETA (window start) each customer was last told, and the link they got, by delivery id: on whichever route
 * it was (an update or a re-plan replaces the route; the customer was told of the delivery).
 */
async function lastToldEtas(db: Db, companyId: number, deliveryIds: number[]): Promise<Map<number, { eta_from: string; tracking_link?: string }>> {
  if (!deliveryIds.length) return new Map();
  const told = await db
    .select({ data: outbox.data })
    .from(outbox)
    .where(and(eq(outbox.company_id, companyId), inArray(outbox.template, [...ETA_TEMPLATES]), sql`json_extract(${outbox.data}, '$.delivery_id') in (select value from json_each(${JSON.stringify(deliveryIds)}))`))
    .orderBy(asc(outbox.id));
  const byDelivery = new Map<number, { eta_from: string; tracking_link?: string }>();
  for (const { data } of told) if (data) byDelivery.set(Number(data.delivery_id), { eta_from: String(data.eta_from), tracking_link: data.tracking_link === undefined ? undefined : String(data.tracking_link) });
  return byDelivery;
}

const ETA_TEMPLATES = ["delivery_eta", "delivery_eta_update", "delivery_approaching"] as const;

/** POST /cancelroute: 0..3 -> 5; its unfinished deliveries return to the pool. */
export async function cancelRoute(_env: Env, db: Db, company: Company, routeId: number): Promise<ChangeResult> {
  const route = await loadRoute(db, company.id, routeId);
  if (!UNFINISHED_ROUTE_STATUSES.includes(route.status)) throw conflict(`A route with status ${route.status} cannot be cancelled`, "status");
  const { event, writes } = cancelStatements(db, route);
  const [logged, updated] = await db.batch([event, ...writes]);
  if (!updated.length) throw conflict("The route changed meanwhile; read it again", "status");
  return { events: loggedEvents([logged]) };
}

/**
 * Cancelling a route as it was read, for a batch: its `route` event (logged
 * only when the cancel applies; it must stand before `writes`), the
 * compare-and-set of the route, and its unfinished deliveries back to the
 * pool, only together with the route's own change (same snapshot).
 */
export function cancelStatements(db: Db, route: RouteRow) {
  return {
    event: eventInsert(db, route.company_id, { ...routeEvent(route.id, RouteStatus.cancelled, route.driver_id), when: routeAsRead(route) }),
    writes: [
      db.update(routes).set({ status: RouteStatus.cancelled }).where(unchanged(route)).returning({ id: routes.id }),
      db
        .update(deliveries)
        .set({ status: DeliveryStatus.none, route_id: null, orderindex: null, tdt_from: null, tdt_to: null, eta_from: null, eta_to: null, window_from: null, window_to: null })
        .where(
          and(
            eq(deliveries.company_id, route.company_id),
            eq(deliveries.route_id, route.id),
            inArray(deliveries.status, [...ROUTE_OPEN_DELIVERIES, DeliveryStatus.undelivered]),
            sql`exists (select 1 from ${routes} where ${routes.id} = ${route.id} and ${routes.status} = ${RouteStatus.cancelled})`,
          ),
        ),
    ] as const,
  };
}

/** POST /deliverydone: a delivery of a route on the way reported; the last report finishes the route. */
export async function reportDelivery(env: Env, db: Db, company: Company, actor: AuthUser, deliveryId: number, outcome: "delivered" | "undelivered", base: string, drivernotes?: string, extras: ReportExtras = {}): Promise<ChangeResult> {
  const [delivery] = await db.select().from(deliveries).where(and(eq(deliveries.company_id, company.id), eq(deliveries.id, deliveryId)));
  if (!delivery) throw notFound("Delivery");
  const route = delivery.route_id === null ? null : await loadRoute(db, company.id, delivery.route_id);
  if (actor.role === "driver" && route?.driver_id !== actor.id) throw forbidden("Drivers may report only deliveries of their own routes");
  if (!route || route.status !== RouteStatus.ontheway) throw conflict("Deliveries can be reported only while their route is on the way", "status");
  if (delivery.status !== DeliveryStatus.routed) throw conflict(`Delivery already reported (status ${delivery.status})`, "status");
  // An offline report keeps the phone's time of the report (atd, ata when empty, and its proof).
  const now = reportTime(extras, route.ast);
  const status = outcome === "delivered" ? DeliveryStatus.delivered : DeliveryStatus.undelivered;
  const [target] = delivery.deliverylocation_id === null ? [] : await db.select({ lat: addresses.lat, lng: addresses.lng }).from(addresses).where(and(eq(addresses.company_id, company.id), eq(addresses.id, delivery.deliverylocation_id)));
  const proofFields = reportProofFields(extras, now, target ?? { lat: null, lng: null }, delivery.scancode);
  const ata = delivery.ata ?? (await arrivedAt(db, company.id, route, target, now)) ?? now;
  const earlier = await proofOfReport(db, company.id, delivery.id, route.id);
  const proof = proofFields || earlier ? proofSummary({ photo_key: null, signature_key: null, recipient: null, far_from_address: null, scan_match: null, ...earlier, ...proofFields }) : null;
  const reportedAll = sql`not exists (select 1 from ${deliveries} where ${deliveries.route_id} = ${route.id} and ${deliveries.status} = ${DeliveryStatus.routed})`;
  const reportable = and(eq(deliveries.id, delivery.id), eq(deliveries.status, DeliveryStatus.routed), sql`exists (select 1 from ${routes} where ${routes.id} = ${route.id} and ${routes.status} = ${RouteStatus.ontheway})`);
  // Evaluated after the report: the last one finishes the route.
  const finishing = and(eq(routes.id, route.id), eq(routes.status, RouteStatus.ontheway), reportedAll);
  const approaching = await approachingMessages(db, company, route.id, delivery.id, base);
  // Each event insert stands right before its write, guarded by that write's WHERE.
  const reportApplies = sql`exists (select 1 from ${deliveries} where ${reportable})`;
  const [reportLogged, , updated, finishLogged, , queued] = await db.batch([
    eventInsert(db, company.id, { event: { type: "delivery", id: delivery.id, status, route_id: route.id, ...(proof ? { proof } : {}) }, driverId: route.driver_id, when: reportApplies }),
    guardedProofUpsert(db, company.id, delivery.id, route.id, route.driver_id, proofFields ?? {}, proofFields ? reportApplies : sql`0`),
    db
      .update(deliveries)
      .set({ status, atd: now, ata, ...(drivernotes !== undefined ? { drivernotes } : {}) })
      .where(reportable)
      .returning({ id: deliveries.id }),
    eventInsert(db, company.id, { ...routeEvent(route.id, RouteStatus.finished, route.driver_id), when: sql`exists (select 1 from ${routes} where ${finishing})` }),
    db.update(routes).set({ status: RouteStatus.finished }).where(finishing),
    approaching.length ? outboxInsert(db, company.id, approaching) : noMessages(db),
  ] as const);
  if (!updated.length) throw conflict("The delivery or its route changed meanwhile; read it again", "status");
  await dispatchOutbox(env, company.id, queued);
  return { events: loggedEvents([reportLogged, finishLogged]) };
}


/**
 * When the driver arrived at the stop being reported, by their positions: the first one near it since their last
 * report on this tour (else since the tour started), if earlier than the report; else null (the report's time).
 */
async function arrivedAt(db: Db, companyId: number, route: RouteRow, stop: { lng: number | null; lat: number | null } | undefined, reportedAt: string): Promise<string | null> {
  if (route.driver_id === null || !route.ast || !stop || stop.lng === null || stop.lat === null) return null;
  const last = (await lastReportedStop(db, companyId, route.id))?.at;
  const since = last && last > route.ast ? last : route.ast;
  const arrived = await arrivalFromPositions(db, companyId, route.driver_id, { lng: stop.lng, lat: stop.lat }, since, reportedAt);
  return arrived !== null && arrived < reportedAt ? arrived : null;
}

/**
 * After a report: the customer with exactly `notify_stops_before` open stops
 * left before theirs hears that the driver is close (once: each delivery
 * passes that place in the order once).
 */
async function approachingMessages(db: Db, company: Company, routeId: number, reportedId: number, base: string): Promise<OutgoingMessage[]> {
  const companyId = company.id;
  const [settings] = await db.select({ stopsBefore: companies.notify_stops_before }).from(companies).where(eq(companies.id, companyId));
  if (!settings || settings.stopsBefore < 1) return [];
  const open = await db
    .select({ id: deliveries.id, eta_from: deliveries.eta_from, eta_to: deliveries.eta_to, ...customerColumns })
    .from(deliveries)
    .innerJoin(addresses, eq(addresses.id, deliveries.deliverylocation_id))
    .where(and(eq(deliveries.company_id, companyId), eq(deliveries.route_id, routeId), eq(deliveries.status, DeliveryStatus.routed), ne(deliveries.id, reportedId)))
    .orderBy(asc(deliveries.orderindex));
  const next = open[settings.stopsBefore];
  if (!next?.eta_from || !next.eta_to) return [];
  const linked = await withTrackingLinks(db, company, base, [{ ...next, eta_from: next.eta_from, eta_to: next.eta_to }]);
  return customerMessages("delivery_approaching", routeId, linked, { stops_before: settings.stopsBefore });
}

export async function applyLifecycleOp(env: Env, db: Db, op: LifecycleOp): Promise<LifecycleOutcome> {
  try {
    const result =
      op.kind === "route"
        ? await changeRoute(env, db, op.company, op.actor, op.routeId, op.change, op.base)
        : op.kind === "cancel"
          ? await cancelRoute(env, db, op.company, op.routeId)
          : await reportDelivery(env, db, op.company, op.actor, op.deliveryId, op.outcome, op.base, op.drivernotes, op.extras);
    return { ok: true, events: result.events };
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, status: err.status as ErrorStatus, message: err.message, fields: err.fields };
    throw err;
  }
}
