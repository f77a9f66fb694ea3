/**
 * The one definition of every table. Migrations in /migrations are generated
 * from this file by drizzle-kit; hand-written SQL migrations only add what
 * drizzle cannot express (FTS5 virtual tables, triggers, reference data).
 *
 * Conventions:
 * - every tenant row carries `company_id`; every query filters by it;
 * - date-times are ISO 8601 UTC strings `YYYY-MM-DDTHH:MM:SSZ`, so text
 *   comparison orders them correctly and filters can use indexes;
 * - coordinates are stored as separate `lng` / `lat` columns (WGS84).
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { BreakSpec, RouteBreak, WorkingTimeRuleId } from "../../shared/contract/breaks";
import type { LineString } from "../../shared/contract/geo";

/** The current time as stored (ISO 8601 UTC, seconds): column default, and the value of rows inserted by SELECT. */
export const now = sql`(strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))`;

export const companies = sqliteTable("companies", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  slug: text("slug").notNull().unique(),
  companyname: text("companyname").notNull(),
  /** The depot address: company centre and default start of tours. */
  location_id: integer("location_id"),
  pricing_package: integer("pricing_package").notNull().default(0),
  test_phase: integer("test_phase", { mode: "boolean" }).notNull().default(false),
  timezone: text("timezone").notNull().default("Europe/Berlin"),
  /** Language of messages to drivers, dispatchers and customers. */
  language: text("language", { enum: ["de", "en"] }).notNull().default("de"),
  /** A customer is told again when the ETA of a started route moves by more than this. */
  eta_update_minutes: integer("eta_update_minutes").notNull().default(15),
  /** A customer is told when this many stops lie between the driver and them (0: never). */
  notify_stops_before: integer("notify_stops_before").notNull().default(1),
  /** Driver positions older than this many days move from D1 to R2, one file per driver and day (services/position-archive.ts). */
  position_retention_days: integer("position_retention_days").notNull().default(30),
  /** Proofs of delivery (photo, signature, recipient, where reported) are deleted this many days after they were made (services/retention.ts). */
  proof_retention_days: integer("proof_retention_days").notNull().default(90),
  /** The customer's tracking page shows the proof's photo and signature (time-limited signed links). */
  proof_on_tracking_page: integer("proof_on_tracking_page", { mode: "boolean" }).notNull().default(false),
  /** Service minutes of a delivery without `els`, by `deliverytype_id` (keys as strings); a type not listed: 0. */
  service_minutes_by_type: text("service_minutes_by_type", { mode: "json" }).$type<Partial<Record<string, number>>>().notNull().default(sql`'{}'`),
  /** Working-time rules of every vehicle that names none of its own (`vehicles.working_time_rules` null). */
  working_time_rules: text("working_time_rules", { mode: "json" }).$type<WorkingTimeRuleId[]>().notNull().default(sql`'[]'`),
  created_at: text("created_at").notNull().default(now),
});

/** Dispatchers, watchers and drivers share one table, told apart by `usertype`. */
export const users = sqliteTable(
  "users",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    company_id: integer("company_id").notNull().references(() => companies.id),
    usertype: text("usertype", { enum: ["dispatcher", "watcher", "driver"] }).notNull(),
    /** Stored lower-case: emails are case-insensitive. */
    email: text("email").notNull(),
    password_hash: text("password_hash"),
    firstname: text("firstname"),
    lastname: text("lastname"),
    expires: text("expires"),
    active: integer("active", { mode: "boolean" }).notNull().default(false),
    confirmed_at: text("confirmed_at"),
    /** SHA-256 of the invitation / activation code sent by email. */
    code_hash: text("code_hash"),
    mobilenr: text("mobilenr"),
    htmlcolor: text("htmlcolor"),
    vehicle: text("vehicle"),
    /** A driver's skills ("adr", "two-person"): they count for the vehicle the driver drives (docs/features/fleet-and-opening-hours.md). */
    skills: text("skills", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    /** A driver's own working-time rules and fixed breaks: they win over the vehicle's when the driver is bound to it; null: the vehicle's. */
    working_time_rules: text("working_time_rules", { mode: "json" }).$type<WorkingTimeRuleId[]>(),
    breaks: text("breaks", { mode: "json" }).$type<BreakSpec[]>(),
    status: integer("status"),
    /** Device identifier given at driver activation. */
    imei: text("imei"),
    /** Tokens issued before this time (ms) are refused: set when a driver is deactivated (lib/tokens.ts). */
    tokens_valid_after: integer("tokens_valid_after"),
    created_at: text("created_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("users_company_email").on(t.company_id, t.email),
    index("users_company_type").on(t.company_id, t.usertype),
    index("users_code").on(t.company_id, t.code_hash),
  ],
);

export const driverAvailabilities = sqliteTable(
  "driver_availabilities",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    company_id: integer("company_id").notNull().references(() => companies.id),
    driver_id: integer("driver_id").notNull().references(() => users.id),
    fromtime: text("fromtime").notNull(),
    totime: text("totime").notNull(),
  },
  (t) => [index("availabilities_driver_time").on(t.company_id, t.driver_id, t.fromtime)],
);

export const driverTracking = sqliteTable(
  "driver_tracking",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    company_id: integer("company_id").notNull().references(() => companies.id),
    driver_id: integer("driver_id").notNull().references(() => users.id),
    timestamp: text("timestamp").notNull(),
    lng: real("lng").notNull(),
    lat: real("lat").notNull(),
  },
  (t) => [
    index("tracking_driver_time").on(t.company_id, t.driver_id, t.timestamp),
    // Lists in the default order (id): (company_id, rowid) pages without sorting the company's whole track.
    index("tracking_company").on(t.company_id),
  ],
);

export const addresses = sqliteTable(
  "addresses",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    company_id: integer("company_id").notNull().references(() => companies.id),
    contactcompany: text("contactcompany"),
    customernr: text("customernr"),
    contactfirstname: text("contactfirstname"),
    contactlastname: text("contactlastname"),
    street: text("street"),
    housenumber: text("housenumber"),
    postalcode: text("postalcode"),
    city: text("city"),
    district: text("district"),
    country: text("country"),
    email: text("email"),
    phonenr: text("phonenr"),
    lng: real("lng"),
    lat: real("lat"),
    addresstype: text("addresstype"),
    /** Where the coordinate came from: `input`, `gazetteer`, `provider`. */
    geocode_source: text("geocode_source"),
    /** The sending system's own id of the address (a customer number), unique within the company. */
    external_id: text("external_id"),
    created_at: text("created_at").notNull().default(now),
  },
  (t) => [
    uniqueIndex("addresses_company_external_id").on(t.company_id, t.external_id),
    index("addresses_company_lat").on(t.company_id, t.lat),
    index("addresses_company_postalcode").on(t.company_id, t.postalcode),
    // Lists in the default order (id) page along (company_id, rowid) instead of sorting every address of the company.
    index("addresses_company").on(t.company_id),
  ],
);

export const vehicles = sqliteTable(
  "vehicles",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    company_id: integer("company_id").notNull().references(() => companies.id),
    name: text("name").notNull(),
    plate: text("plate"),
    vehicle_class: text("vehicle_class").notNull().default("car"),
    depot_location_id: integer("depot_location_id").references(() => addresses.id),
    driver_id: integer("driver_id").references(() => users.id),
    capacity_1: integer("capacity_1"),
    capacity_2: integer("capacity_2"),
    capacity_3: integer("capacity_3"),
    daily_rate: real("daily_rate"),
    km_rate: real("km_rate"),
    waiting_hour_rate: real("waiting_hour_rate"),
    traveltime_factor: real("traveltime_factor"),
    /** Time of day `hh:mm:ss+hh:mm` (offset resolved at write time). */
    departure_time_from: text("departure_time_from"),
    departure_time_to: text("departure_time_to"),
    return_time_to: text("return_time_to"),
    max_tour_duration: integer("max_tour_duration"),
    /** Stops a tour of this vehicle may have; null: no limit. */
    max_stops: integer("max_stops"),
    /** What the vehicle can do ("refrigerated", "tail-lift"): it serves only deliveries whose `required_skills` it (with its driver) has. */
    skills: text("skills", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    /** Working-time rules its tours keep; null: the company's (`companies.working_time_rules`). */
    working_time_rules: text("working_time_rules", { mode: "json" }).$type<WorkingTimeRuleId[]>(),
    /** Breaks at given times of day its tours take. */
    breaks: text("breaks", { mode: "json" }).$type<BreakSpec[]>().notNull().default(sql`'[]'`),
    /** Emission factor of this vehicle, g CO2e per km (well-to-wheel); null: its class's default (domain/day-report.ts). */
    co2e_g_per_km: real("co2e_g_per_km"),
    active: integer("active", { mode: "boolean" }).notNull().default(true),
  },
  (t) => [uniqueIndex("vehicles_company_name").on(t.company_id, t.name)],
);

/** What a route's update keeps of the run that planned it (`routes.plan_options`). */
export interface RoutePlanOptions {
  vehicle_class: string;
  roundtrip: boolean;
  traffic: boolean;
}

export const routes = sqliteTable(
  "routes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    company_id: integer("company_id").notNull().references(() => companies.id),
    /** The routing process that produced the route: makes queue redelivery idempotent. */
    process_id: text("process_id"),
    creationtime: text("creationtime").notNull().default(now),
    ast: text("ast"),
    tst_from: text("tst_from"),
    tst_to: text("tst_to"),
    pst: integer("pst"),
    /** Metres. */
    distance: integer("distance").notNull().default(0),
    driver_id: integer("driver_id").references(() => users.id),
    /** Seconds; rendered in minutes by /route and in seconds by /routemetadata. */
    gross_duration: integer("gross_duration").notNull().default(0),
    net_duration: integer("net_duration").notNull().default(0),
    status: integer("status").notNull().default(0),
    custom_id: text("custom_id"),
    previous_deliveries: text("previous_deliveries", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    previous_drivers: text("previous_drivers", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    replaces: integer("replaces"),
    replaced_by: integer("replaced_by"),
    routebase_address_id: integer("routebase_address_id").references(() => addresses.id),
    /** The vehicle the tour was planned for: its name, and its id when it is a stored vehicle. */
    vehicle: text("vehicle"),
    vehicle_id: integer("vehicle_id"),
    /** The breaks the plan placed, in time order. */
    breaks: text("breaks", { mode: "json" }).$type<RouteBreak[]>().notNull().default(sql`'[]'`),
    /** The options of the run that planned it, which an update plans with again; null on routes planned before they were kept. */
    plan_options: text("plan_options", { mode: "json" }).$type<RoutePlanOptions>(),
    areatext: text("areatext"),
    htmlcolor: text("htmlcolor"),
    /** GeoJSON LineString. */
    routestring: text("routestring", { mode: "json" }).$type<LineString>(),
  },
  (t) => [
    index("routes_company_status").on(t.company_id, t.status),
    index("routes_company_driver").on(t.company_id, t.driver_id),
    index("routes_process").on(t.company_id, t.process_id),
    // Lists in the default order (id) page along (company_id, rowid) instead of sorting every route of the company.
    index("routes_company").on(t.company_id),
  ],
);

export const deliveries = sqliteTable(
  "deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    company_id: integer("company_id").notNull().references(() => companies.id),
    deliveryissuename: text("deliveryissuename"),
    pdt_from: text("pdt_from"),
    pdt_to: text("pdt_to"),
    /** Several windows inside pdt_from..pdt_to (opening hours), sorted, UTC; [] = the one window pdt_from..pdt_to. */
    time_windows: text("time_windows", { mode: "json" }).$type<{ from: string; to: string }[]>().notNull().default(sql`'[]'`),
    /** The window of `time_windows` the plan serves it in (null: pdt_from..pdt_to); ETAs, lateness and the report use it. */
    window_from: text("window_from"),
    window_to: text("window_to"),
    eta_from: text("eta_from"),
    eta_to: text("eta_to"),
    tdt_from: text("tdt_from"),
    tdt_to: text("tdt_to"),
    ddt_from: text("ddt_from"),
    ddt_to: text("ddt_to"),
    ata: text("ata"),
    atd: text("atd"),
    els: integer("els"),
    als: real("als"),
    tfp: integer("tfp"),
    creationtime: text("creationtime").notNull().default(now),
    deliverprio: integer("deliverprio"),
    orderindex: integer("orderindex"),
    load: integer("load"),
    /** Loads of the second and third kind, against the vehicle's `capacity_2` and `capacity_3`. */
    load_2: integer("load_2"),
    load_3: integer("load_3"),
    /** Skills the vehicle or its driver must have to serve it. */
    required_skills: text("required_skills", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    notes: text("notes"),
    custom_id: text("custom_id"),
    /** The sending system's own id of the order, unique within the company (upserts key on it). */
    external_id: text("external_id"),
    custom_tour: text("custom_tour"),
    drivernotes: text("drivernotes"),
    final: integer("final", { mode: "boolean" }),
    vehicle: text("vehicle"),
    scancode: text("scancode"),
    notify_customer: integer("notify_customer", { mode: "boolean" }).notNull().default(false),
    /** Channels the customer asked for; null = every channel the address has (when `notify_customer`). */
    notify_customer_email: integer("notify_customer_email", { mode: "boolean" }),
    notify_customer_sms: integer("notify_customer_sms", { mode: "boolean" }),
    deliverylocation_id: integer("deliverylocation_id").references(() => addresses.id),
    supplierlocation_id: integer("supplierlocation_id").references(() => addresses.id),
    route_id: integer("route_id").references(() => routes.id),
    status: integer("status").notNull().default(0),
    code: integer("code"),
    distances: text("distances"),
    deliverytype_id: integer("deliverytype_id"),
    waiting_time: integer("waiting_time"),
    /** Delivery whose pickup must precede this one on the same tour. */
    pickup_ref_id: integer("pickup_ref_id"),
  },
  (t) => [
    // Lists in the default order (id) page along (company_id, rowid) instead of sorting every delivery of the company.
    index("deliveries_company").on(t.company_id),
    // The consoles' list: deliveries of a status by window start (filter, order and count from the index alone).
    index("deliveries_company_status_pdt").on(t.company_id, t.status, t.pdt_from),
    index("deliveries_company_route").on(t.company_id, t.route_id, t.orderindex),
    index("deliveries_company_pdt").on(t.company_id, t.pdt_from),
    // Address responses list the deliveries to and from each address.
    index("deliveries_company_target").on(t.company_id, t.deliverylocation_id),
    index("deliveries_company_supplier").on(t.company_id, t.supplierlocation_id),
    // NULLs are distinct in a unique index: only the deliveries that have an external id are bound by it.
    uniqueIndex("deliveries_company_external_id").on(t.company_id, t.external_id),
  ],
);

export const tourAreas = sqliteTable(
  "tour_areas",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    company_id: integer("company_id").notNull().references(() => companies.id),
    areaname: text("areaname"),
    driver_id: integer("driver_id").references(() => users.id),
    /** GeoJSON MultiPolygon: union of the member postal-code areas. */
    geom: text("geom", { mode: "json" }).$type<{ type: "MultiPolygon"; coordinates: number[][][][] }>(),
    created_at: text("created_at").notNull().default(now),
  },
  (t) => [index("tour_areas_company").on(t.company_id)],
);

/** Which postal-code areas make up a company's tour area (gives `plzarea.area_id`). */
export const tourAreaMembers = sqliteTable(
  "tour_area_members",
  {
    company_id: integer("company_id").notNull().references(() => companies.id),
    tourarea_id: integer("tourarea_id").notNull().references(() => tourAreas.id, { onDelete: "cascade" }),
    postal_area_gid: integer("postal_area_gid").notNull().references(() => postalAreas.gid),
  },
  (t) => [primaryKey({ columns: [t.tourarea_id, t.postal_area_gid] }), index("tour_area_members_gid").on(t.company_id, t.postal_area_gid)],
);

/**
 * Reference data shared by every company (no company_id: it is public
 * geography, identical for all tenants, loaded by a data migration).
 * Postal-code places: forward and reverse geocoding without a network.
 */
export const gazetteerPlaces = sqliteTable(
  "gazetteer_places",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    country: text("country").notNull(),
    postalcode: text("postalcode").notNull(),
    place: text("place").notNull(),
    /** Lower-case ASCII-folded place name for case- and umlaut-insensitive lookups. */
    place_key: text("place_key").notNull(),
    lng: real("lng").notNull(),
    lat: real("lat").notNull(),
    /** How the coordinate was obtained, e.g. `geonames`, `interpolated`. */
    source: text("source").notNull(),
  },
  (t) => [
    index("gazetteer_country_postalcode").on(t.country, t.postalcode),
    index("gazetteer_country_place").on(t.country, t.place_key),
    index("gazetteer_lat").on(t.lat),
  ],
);

/** Postal-code area polygons (global), with a bounding box for indexed point lookups. */
export const postalAreas = sqliteTable(
  "postal_areas",
  {
    gid: integer("gid").primaryKey({ autoIncrement: true }),
    plz: text("plz").notNull(),
    note: text("note"),
    /** GeoJSON Polygon or MultiPolygon. */
    geom: text("geom").notNull(),
    min_lng: real("min_lng").notNull(),
    min_lat: real("min_lat").notNull(),
    max_lng: real("max_lng").notNull(),
    max_lat: real("max_lat").notNull(),
    /** `derived` (Voronoi approximation) or `imported` (operator-supplied polygons). */
    source: text("source").notNull().default("derived"),
  },
  (t) => [index("postal_areas_plz").on(t.plz), index("postal_areas_bbox").on(t.min_lng, t.max_lng, t.min_lat, t.max_lat)],
);

/** Results of an external geocoding provider, cached per company. */
export const geocodeCache = sqliteTable(
  "geocode_cache",
  {
    company_id: integer("company_id").notNull().references(() => companies.id),
    query_key: text("query_key").notNull(),
    lng: real("lng"),
    lat: real("lat"),
    result: text("result", { mode: "json" }),
    created_at: text("created_at").notNull().default(now),
  },
  (t) => [primaryKey({ columns: [t.company_id, t.query_key] })],
);

/** Routing and upload processes; their per-action status lives in the company Durable Object. */
export const processes = sqliteTable(
  "processes",
  {
    id: text("id").primaryKey(),
    company_id: integer("company_id").notNull().references(() => companies.id),
    kind: text("kind", { enum: ["routing", "upload"] }).notNull(),
    params: text("params", { mode: "json" }),
    created_by: integer("created_by").references(() => users.id),
    created_at: text("created_at").notNull().default(now),
  },
  (t) => [index("processes_company").on(t.company_id, t.created_at)],
);

/** Every outgoing message is recorded here; a queue consumer hands it to a provider. */
export const outbox = sqliteTable(
  "outbox",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    company_id: integer("company_id").notNull().references(() => companies.id),
    channel: text("channel", { enum: ["email", "sms"] }).notNull(),
    /** Email address, or an E.164 phone number for SMS. */
    to: text("to").notNull(),
    /** Subject, text and HTML as sent: rendered from `template` and `data` when the message goes out. */
    subject: text("subject"),
    body: text("body"),
    html: text("html"),
    template: text("template").notNull(),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>(),
    status: text("status", { enum: ["queued", "sent", "failed"] }).notNull().default("queued"),
    attempts: integer("attempts").notNull().default(0),
    last_error: text("last_error"),
    /** The provider's id of the sent message (Cloudflare Email, the HTTP mail API, the SMS API). */
    provider_message_id: text("provider_message_id"),
    created_at: text("created_at").notNull().default(now),
    sent_at: text("sent_at"),
  },
  (t) => [index("outbox_company_status").on(t.company_id, t.status)],
);

/**
 * The event log: every live event (route, delivery, process, ETA; driver
 * positions only while a webhook wants them), in order, each inserted in the
 * D1 batch of the change that causes it (`eventInsert`; process status: by
 * the company's coordinator). Webhooks are delivered from it and
 * reconnecting websocket clients resume from it.
 */
export const events = sqliteTable(
  "events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    company_id: integer("company_id").notNull().references(() => companies.id),
    /** `route.updated`, `delivery.updated`, `process.updated`, `driver.position`, `eta.updated`. */
    type: text("type").notNull(),
    /** The driver the event concerns: drivers only ever see their own. */
    driver_id: integer("driver_id"),
    /** The live message as sent on the websocket. */
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    created_at: text("created_at").notNull().default(now),
    /** The id of the company's Durable Object outbox entry that logged it (process events): logging it again changes nothing. */
    source_id: text("source_id"),
  },
  (t) => [index("events_company").on(t.company_id, t.id), uniqueIndex("events_source").on(t.source_id)],
);

/** Webhook endpoints of a company: events are POSTed to them in order, signed (Standard Webhooks). */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    company_id: integer("company_id").notNull().references(() => companies.id),
    url: text("url").notNull(),
    /** Event types or `group.*` patterns. */
    event_types: text("event_types", { mode: "json" }).$type<string[]>().notNull(),
    /** `whsec_` + base64 key; shown once, at creation. */
    secret: text("secret").notNull(),
    description: text("description"),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    /** The last event delivered (or skipped as not wanted): delivery goes on after it. */
    cursor: integer("cursor").notNull().default(0),
    /** Failed attempts in a row; reaching the limit disables the endpoint. */
    failures: integer("failures").notNull().default(0),
    disabled_reason: text("disabled_reason"),
    /** One delivery run at a time per endpoint keeps the order: a run holds the lease until then (epoch s). */
    lease_until: integer("lease_until"),
    /** After a failure, no run before this (epoch s): the backoff holds however many events arrive. */
    retry_at: integer("retry_at"),
    created_at: text("created_at").notNull().default(now),
  },
  (t) => [index("webhooks_company").on(t.company_id)],
);

/** Every delivery attempt of a webhook: what the receiver answered and how fast. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    company_id: integer("company_id").notNull().references(() => companies.id),
    webhook_id: integer("webhook_id").notNull().references(() => webhooks.id, { onDelete: "cascade" }),
    event_id: integer("event_id").notNull(),
    event_type: text("event_type").notNull(),
    /** 1 for the first try of this event at this endpoint. */
    attempt: integer("attempt").notNull(),
    status_code: integer("status_code"),
    latency_ms: integer("latency_ms").notNull(),
    error: text("error"),
    succeeded: integer("succeeded", { mode: "boolean" }).notNull(),
    created_at: text("created_at").notNull().default(now),
  },
  (t) => [index("webhook_deliveries_webhook").on(t.webhook_id, t.id)],
);

/**
 * Customer tracking links (`/<slug>/t/<token>`): an unguessable token per
 * delivery, opening a page about that one delivery without a login. A new
 * link revokes the previous one; revoked links show "not found".
 */
export const trackingLinks = sqliteTable(
  "tracking_links",
  {
    token: text("token").primaryKey(),
    company_id: integer("company_id").notNull().references(() => companies.id),
    delivery_id: integer("delivery_id").notNull(),
    created_at: text("created_at").notNull().default(now),
    revoked_at: text("revoked_at"),
  },
  (t) => [index("tracking_links_delivery").on(t.company_id, t.delivery_id)],
);

/**
 * The directory of shards (docs/operations/shards.md): which D1 database holds each
 * company's rows. It lives only in the first database (binding `DB`); on the other
 * shards the table exists (every shard runs every migration) and stays empty. A
 * company without a row here lives on the first database. The company's own rows,
 * its `companies` row included, live on its shard only.
 */
export const companyDirectory = sqliteTable(
  "company_directory",
  {
    /** The company's id (given by its shard's `companies`; ids are unique across shards, see `shard_blocks`). */
    company_id: integer("company_id").primaryKey(),
    slug: text("slug").notNull().unique(),
    /** 0: the binding `DB`; n: the binding `DB_SHARD_<n>`. */
    shard: integer("shard").notNull().default(0),
    /** Writes answer 503 with Retry-After while the company moves between shards. */
    read_only: integer("read_only", { mode: "boolean" }).notNull().default(false),
    /** The state of a move in progress (services/company-move.ts), null when none. */
    move: text("move", { mode: "json" }).$type<Record<string, unknown>>(),
    updated_at: text("updated_at").notNull().default(now),
  },
  (t) => [index("company_directory_shard").on(t.shard)],
);

/**
 * Id blocks of the shards (first database only): shard `shard` allocates the ids of
 * every AUTOINCREMENT table of company data from `block` x 10^12 on. A shard that
 * receives a moved company first takes a fresh block above every block in use, so
 * ids stay unique across shards (a moved company keeps its ids) and grow with time
 * within each company (event cursors).
 */
export const shardBlocks = sqliteTable("shard_blocks", {
  shard: integer("shard").primaryKey(),
  block: integer("block").notNull().unique(),
});

/**
 * Proof of delivery (beyond the interface documents): one row per delivery
 * and route it was reported on — the recipient's name, where the report was
 * made (and how far from the address), the code the driver scanned, and the
 * R2 keys of the photo and signature (`UPLOADS`, under `proofs/<company>/`,
 * never public). No foreign key on the delivery or route: retention removes
 * rows (and their objects) by age even when the delivery is gone.
 */
export const deliveryProofs = sqliteTable(
  "delivery_proofs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    company_id: integer("company_id").notNull().references(() => companies.id),
    delivery_id: integer("delivery_id").notNull(),
    route_id: integer("route_id").notNull(),
    /** The driver of the route when the proof was made. */
    driver_id: integer("driver_id"),
    recipient: text("recipient"),
    photo_key: text("photo_key"),
    photo_type: text("photo_type"),
    photo_bytes: integer("photo_bytes"),
    photo_width: integer("photo_width"),
    photo_height: integer("photo_height"),
    signature_key: text("signature_key"),
    signature_type: text("signature_type"),
    signature_bytes: integer("signature_bytes"),
    /** When the driver reported, by the phone (an offline report keeps its original time). */
    reported_at: text("reported_at"),
    /** The driver's position at the report, and its distance to the delivery address. */
    lat: real("lat"),
    lng: real("lng"),
    accuracy: real("accuracy"),
    distance_m: real("distance_m"),
    far_from_address: integer("far_from_address", { mode: "boolean" }),
    /** The code the driver scanned or typed at the door, and whether it is the delivery's `scancode`. */
    scanned_code: text("scanned_code"),
    scan_match: integer("scan_match", { mode: "boolean" }),
    created_at: text("created_at").notNull().default(now),
    updated_at: text("updated_at").notNull().default(now),
  },
  (t) => [uniqueIndex("delivery_proofs_report").on(t.company_id, t.delivery_id, t.route_id), index("delivery_proofs_company_age").on(t.company_id, t.created_at)],
);

/**
 * The day report's figures of one finished route (domain/day-report.ts),
 * computed once: when the route finishes (the company's Durable Object, after
 * the report that finished it), or on the first report read that finds a
 * finished route without its row. Reads only sum these rows. `day` is the
 * company's local date of the route's start (`ast`, else `tst_from`).
 * No foreign key on `route_id`: the figures outlive nothing, but a finished
 * route is never deleted either (services/retention.ts).
 */
export const routeReports = sqliteTable(
  "route_reports",
  {
    route_id: integer("route_id").primaryKey(),
    company_id: integer("company_id").notNull().references(() => companies.id),
    day: text("day").notNull(),
    driver_id: integer("driver_id"),
    /** `RouteFigures` of domain/day-report.ts, stops included. */
    figures: text("figures", { mode: "json" }).$type<import("../domain/day-report").RouteFigures>().notNull(),
    /** Version of the arithmetic that computed it (DAY_REPORT_VERSION). */
    version: integer("version").notNull(),
    computed_at: text("computed_at").notNull().default(now),
  },
  (t) => [index("route_reports_company_day").on(t.company_id, t.day)],
);

/**
 * The `Idempotency-Key` of a POST or PATCH (IETF draft "The Idempotency-Key HTTP
 * Header Field"; services/idempotency.ts): per company, user and key, the request's
 * fingerprint and, once answered, the answer a repeat gets instead of the work.
 * While the first request runs, `holder` names it until `held_until` (a request cut
 * off by a crash frees its key then). Pruned IDEMPOTENCY_HOURS after `created_at`
 * (services/retention.ts).
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    company_id: integer("company_id").notNull().references(() => companies.id),
    user_id: integer("user_id").notNull(),
    key: text("key").notNull(),
    /** SHA-256 (hex) of the method, path, query and body. */
    fingerprint: text("fingerprint").notNull(),
    /** The running request holding the key (a random token); null once answered. */
    holder: text("holder"),
    held_until: text("held_until"),
    /** The stored answer: null while the first request runs. */
    status: integer("status"),
    content_type: text("content_type"),
    location: text("location"),
    /** The answer's body; null when it was larger than what is kept (the status still replays). */
    body: text("body"),
    created_at: text("created_at").notNull().default(now),
  },
  (t) => [primaryKey({ columns: [t.company_id, t.user_id, t.key] }), index("idempotency_keys_age").on(t.created_at)],
);
