/**
 * Proof of delivery (beyond the interface documents): the recipient's name,
 * a photo and a signature, where the report was made and the code scanned at
 * the door, one record per delivery and route it was reported on
 * (`delivery_proofs`). Images live in R2 (`UPLOADS`) under
 * `proofs/<company>/<delivery>/<proof>/`, never public: the API serves them to
 * the company's users (drivers: their own routes' deliveries only), and, when
 * the company enables it, the customer's tracking page shows them through
 * time-limited signed links (HMAC-SHA256 with `JWT_SECRET`).
 */
import type { ReportExtras } from "../coordinator/changes";
import type { PublishedEvent } from "../coordinator/live";
import type { AuthUser, Company, Db } from "../context";
import { type SQL, and, asc, desc, eq, getTableColumns, inArray, lt, sql } from "drizzle-orm";
import { addresses, companies, deliveries, deliveryProofs, now, routes } from "../db/schema";
import { DeliveryStatus, RouteStatus } from "../../shared/contract/states";
import type { Env } from "../env";
import { ApiError, conflict, forbidden, notFound, unprocessable } from "../errors";
import { haversineMeters } from "../geo/distance";
import { type CheckedImage, ImageError, checkImage } from "../lib/images";
import { log } from "../lib/log";
import { formatDateTime, nowIso } from "../lib/time";
import { eventInsert, loggedEvents } from "./events";
import type { DeliveryProof, ProofSummary } from "../../shared/contract/proof";

const KiB = 1024;
const MiB = 1024 * KiB;

/** Server-side limits (the driver app scales photos to 1,600 px JPEG, a few hundred KB, before it sends them). */
export const PROOF_LIMITS = {
  photoBytes: 3 * MiB,
  signatureBytes: 512 * KiB,
  photoMaxSide: 4096,
  signatureMaxSide: 2048,
  recipientChars: 200,
  scancodeChars: 200,
} as const;

/** A report made farther than this from the delivery address is flagged (`far_from_address`). */
export const FAR_FROM_ADDRESS_METERS = 300;
/** Signed image links of the tracking page live this long (the page reloads every 30 s and signs anew). */
export const PROOF_LINK_SECONDS = 15 * 60;
/** A report's own time may lie this far ahead of the server's clock (phones' clocks drift). */
const CLOCK_SKEW_MS = 2 * 60_000;

export type ProofRow = typeof deliveryProofs.$inferSelect;
export type ProofKind = "photo" | "signature";

export const proofSummary = (row: Pick<ProofRow, "photo_key" | "signature_key" | "recipient" | "far_from_address" | "scan_match">): ProofSummary => ({
  photo: row.photo_key !== null,
  signature: row.signature_key !== null,
  recipient: row.recipient !== null,
  far_from_address: row.far_from_address,
  scan_match: row.scan_match,
});

export function presentProof(row: ProofRow, apiBase: string): DeliveryProof {
  const link = (kind: ProofKind) => `${apiBase}/delivery/${row.delivery_id}/proof/${row.id}/${kind}`;
  return {
    id: row.id,
    delivery_id: row.delivery_id,
    route_id: row.route_id,
    driver_id: row.driver_id,
    recipient: row.recipient,
    reported_at: row.reported_at,
    location: row.lat !== null && row.lng !== null ? { type: "Point", coordinates: [row.lng, row.lat], accuracy: row.accuracy } : null,
    position: row.lat !== null && row.lng !== null ? { lat: row.lat, lng: row.lng, accuracy: row.accuracy } : null,
    distance_m: row.distance_m === null ? null : Math.round(row.distance_m),
    far_from_address: row.far_from_address,
    scanned_code: row.scanned_code,
    scan_match: row.scan_match,
    photo: row.photo_key ? { url: link("photo"), type: row.photo_type as CheckedImage["type"], bytes: row.photo_bytes ?? 0, width: row.photo_width ?? 0, height: row.photo_height ?? 0 } : null,
    signature: row.signature_key ? { url: link("signature"), type: row.signature_type as CheckedImage["type"], bytes: row.signature_bytes ?? 0 } : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The delivery and its route's driver; 404 for another company's or an unknown delivery. */
async function loadDelivery(db: Db, companyId: number, deliveryId: number) {
  const [row] = await db
    .select({ delivery: deliveries, lat: addresses.lat, lng: addresses.lng, routeStatus: routes.status, routeDriver: routes.driver_id, routeAst: routes.ast })
    .from(deliveries)
    .leftJoin(addresses, eq(addresses.id, deliveries.deliverylocation_id))
    .leftJoin(routes, and(eq(routes.id, deliveries.route_id), eq(routes.company_id, companyId)))
    .where(and(eq(deliveries.company_id, companyId), eq(deliveries.id, deliveryId)));
  if (!row) throw notFound("Delivery");
  return row;
}

/**
 * The proofs of a delivery, newest first, as `actor` may see them: dispatchers
 * and watchers all; a driver only those of routes they drive (others: 403).
 */
export async function listProofs(db: Db, companyId: number, actor: AuthUser, deliveryId: number): Promise<ProofRow[]> {
  const { delivery } = await loadDelivery(db, companyId, deliveryId);
  const rows = await db
    .select({ proof: deliveryProofs, routeDriver: routes.driver_id })
    .from(deliveryProofs)
    .leftJoin(routes, and(eq(routes.id, deliveryProofs.route_id), eq(routes.company_id, companyId)))
    .where(and(eq(deliveryProofs.company_id, companyId), eq(deliveryProofs.delivery_id, delivery.id)))
    .orderBy(desc(deliveryProofs.id));
  if (actor.role !== "driver") return rows.map((r) => r.proof);
  const own = rows.filter((r) => r.routeDriver === actor.id);
  const onOwnRoute = delivery.route_id !== null && (await routeDriver(db, companyId, delivery.route_id)) === actor.id;
  if (!own.length && !onOwnRoute) throw forbidden("Drivers see proofs of their own routes' deliveries only");
  return own.map((r) => r.proof);
}

async function routeDriver(db: Db, companyId: number, routeId: number): Promise<number | null> {
  const [row] = await db.select({ driver: routes.driver_id }).from(routes).where(and(eq(routes.company_id, companyId), eq(routes.id, routeId)));
  return row?.driver ?? null;
}

/** One proof of a delivery as `actor` may see it (see `listProofs`). */
export async function findProof(db: Db, companyId: number, actor: AuthUser, deliveryId: number, proofId: number): Promise<ProofRow> {
  const [row] = await db
    .select({ proof: deliveryProofs, routeDriver: routes.driver_id })
    .from(deliveryProofs)
    .leftJoin(routes, and(eq(routes.id, deliveryProofs.route_id), eq(routes.company_id, companyId)))
    .where(and(eq(deliveryProofs.company_id, companyId), eq(deliveryProofs.delivery_id, deliveryId), eq(deliveryProofs.id, proofId)));
  if (!row) throw notFound("Proof of delivery");
  if (actor.role === "driver" && row.routeDriver !== actor.id) throw forbidden("Drivers see proofs of their own routes' deliveries only");
  return row.proof;
}

/** The image of a proof from R2, or null when it has none. */
export async function proofImage(env: Env, proof: ProofRow, kind: ProofKind): Promise<{ body: ReadableStream; type: string } | null> {
  const key = kind === "photo" ? proof.photo_key : proof.signature_key;
  if (!key) return null;
  const object = await env.UPLOADS.get(key);
  return object ? { body: object.body, type: (kind === "photo" ? proof.photo_type : proof.signature_type) ?? "application/octet-stream" } : null;
}

/** A file of the form checked as an image: 413 beyond its limit, 422 when its bytes are no JPEG/PNG/WebP (whatever type it declares). */
export async function checkedUpload(value: unknown, field: ProofKind): Promise<CheckedImage | undefined> {
  if (value === null || value === undefined || value === "") return undefined;
  if (typeof value !== "object" || !("arrayBuffer" in value)) throw unprocessable(`${field} must be a file`, field);
  const file = value as File;
  const limit = field === "photo" ? PROOF_LIMITS.photoBytes : PROOF_LIMITS.signatureBytes;
  if (file.size > limit) throw new ApiError(413, `${field} larger than ${limit / KiB} KiB (${Math.ceil(file.size / KiB)} KiB)`, field);
  if (file.size === 0) throw unprocessable(`${field} is empty`, field);
  try {
    return checkImage(new Uint8Array(await file.arrayBuffer()), field === "photo" ? PROOF_LIMITS.photoMaxSide : PROOF_LIMITS.signatureMaxSide);
  } catch (err) {
    if (err instanceof ImageError) throw unprocessable(`${field}: ${err.message}`, field);
    throw err;
  }
}

export interface ProofUpload {
  photo?: CheckedImage;
  signature?: CheckedImage;
  recipient?: string;
}

const objectKey = (companyId: number, deliveryId: number, nonce: string, kind: ProofKind, type: string) =>
  `proofs/${companyId}/${deliveryId}/${nonce}/${kind}.${type === "image/jpeg" ? "jpg" : type.slice(6)}`;

/** The proof record of the delivery's report on `routeId`, as a write guarded by `guard` would leave it. */
async function currentProof(db: Db, companyId: number, deliveryId: number, routeId: number): Promise<ProofRow | undefined> {
  const [row] = await db
    .select()
    .from(deliveryProofs)
    .where(and(eq(deliveryProofs.company_id, companyId), eq(deliveryProofs.delivery_id, deliveryId), eq(deliveryProofs.route_id, routeId)));
  return row;
}

/**
 * `POST /delivery/<id>/proof`: a photo, a signature and/or the recipient's
 * name for the delivery's report on its current route. Allowed while the
 * route is on the way (before or after the delivery's report: the driver app
 * sends the images first, a proof may follow later) and on a finished route
 * for a delivery it reported. Drivers only on their own routes. A new photo or
 * signature replaces the one before (its object is deleted). When the delivery
 * is already reported, a `delivery` event says that its proof changed.
 */
export async function saveProofUpload(env: Env, db: Db, company: Company, actor: AuthUser, deliveryId: number, upload: ProofUpload): Promise<{ proof: ProofRow; events: PublishedEvent[] }> {
  const row = await loadDelivery(db, company.id, deliveryId);
  const { delivery } = row;
  if (delivery.route_id === null || row.routeStatus === null) throw conflict("A proof belongs to a delivery on a route", "status");
  if (actor.role === "driver" && row.routeDriver !== actor.id) throw forbidden("Drivers may add proofs only to deliveries of their own routes");
  const reported = delivery.status === DeliveryStatus.delivered || delivery.status === DeliveryStatus.undelivered;
  const open = row.routeStatus === RouteStatus.ontheway && delivery.status === DeliveryStatus.routed;
  const after = reported && (row.routeStatus === RouteStatus.ontheway || row.routeStatus === RouteStatus.finished);
  if (!open && !after) throw conflict("Proofs are added while the route is on the way, or afterwards to a reported delivery of a finished route", "status");
  const routeId = delivery.route_id;
  const before = await currentProof(db, company.id, delivery.id, routeId);
  const nonce = crypto.randomUUID();
  const puts: { key: string; image: CheckedImage }[] = [];
  const set: Partial<typeof deliveryProofs.$inferInsert> = { updated_at: nowIso() };
  if (upload.photo) {
    const key = objectKey(company.id, delivery.id, nonce, "photo", upload.photo.type);
    puts.push({ key, image: upload.photo });
    Object.assign(set, { photo_key: key, photo_type: upload.photo.type, photo_bytes: upload.photo.bytes.length, photo_width: upload.photo.width, photo_height: upload.photo.height });
  }
  if (upload.signature) {
    const key = objectKey(company.id, delivery.id, nonce, "signature", upload.signature.type);
    puts.push({ key, image: upload.signature });
    Object.assign(set, { signature_key: key, signature_type: upload.signature.type, signature_bytes: upload.signature.bytes.length });
  }
  if (upload.recipient !== undefined) set.recipient = upload.recipient;
  // Objects first: a record never names an object that is not there; a failed write leaves an object the retention run never sees, so remove it.
  await Promise.all(puts.map((p) => env.UPLOADS.put(p.key, p.image.bytes, { httpMetadata: { contentType: p.image.type }, customMetadata: { company: String(company.id), delivery: String(delivery.id) } })));
  const stillThere = sql`exists (select 1 from ${deliveries} where ${deliveries.id} = ${delivery.id} and ${deliveries.company_id} = ${company.id} and ${deliveries.route_id} = ${routeId})`;
  const merged = { photo_key: null, signature_key: null, recipient: null, far_from_address: null, scan_match: null, ...before, ...set };
  try {
    const upsert = guardedProofUpsert(db, company.id, delivery.id, routeId, row.routeDriver, set, stillThere);
    const event = eventInsert(db, company.id, {
      event: { type: "delivery", id: delivery.id, status: delivery.status, route_id: routeId, proof: proofSummary(merged) },
      driverId: row.routeDriver,
      when: reported ? stillThere : sql`0`,
    });
    const [logged, , [proof]] = await db.batch([event, upsert, db.select().from(deliveryProofs).where(and(eq(deliveryProofs.company_id, company.id), eq(deliveryProofs.delivery_id, delivery.id), eq(deliveryProofs.route_id, routeId)))]);
    if (!proof || (upload.photo && proof.photo_key !== set.photo_key) || (upload.signature && proof.signature_key !== set.signature_key)) throw conflict("The delivery changed meanwhile; read it again", "route_id");
    const replaced = [upload.photo && before?.photo_key, upload.signature && before?.signature_key].filter((k): k is string => typeof k === "string" && k !== "");
    if (replaced.length) await env.UPLOADS.delete(replaced);
    return { proof, events: loggedEvents([logged]) };
  } catch (err) {
    if (puts.length) await env.UPLOADS.delete(puts.map((p) => p.key));
    throw err;
  }
}

/**
 * Inserts or merges (by delivery and route) the proof record, only when
 * `guard` holds where the statement stands in its batch: an INSERT … SELECT
 * … WHERE, so a refused change writes no proof either.
 */
export function guardedProofUpsert(db: Db, companyId: number, deliveryId: number, routeId: number, driverId: number | null, fields: Partial<typeof deliveryProofs.$inferInsert>, guard: SQL) {
  const update: Record<string, unknown> = { ...fields, updated_at: nowIso() };
  const values: Record<string, unknown> = { company_id: companyId, delivery_id: deliveryId, route_id: routeId, driver_id: driverId, ...update };
  const bind = (v: unknown) => (typeof v === "boolean" ? Number(v) : v === undefined ? null : v);
  // A raw SELECT inserts every column in the table's order: the given values, else the column's default.
  const row = Object.entries(getTableColumns(deliveryProofs)).map(([name]) => (name in values ? sql`${bind(values[name])}` : name === "created_at" || name === "updated_at" ? now : sql`null`));
  return db
    .insert(deliveryProofs)
    .select(sql`select ${sql.join(row, sql`, `)} where ${guard}`)
    .onConflictDoUpdate({
      target: [deliveryProofs.company_id, deliveryProofs.delivery_id, deliveryProofs.route_id],
      set: Object.fromEntries(Object.keys(update).map((name) => [name, sql.raw(`excluded."${name}"`)])),
    });
}

/** What `POST /deliverydone` may add to a report (beyond contract.md's `status` and `drivernotes`). */
/**
 * The report's time: the phone's (an offline report sent later keeps it),
 * not ahead of the server's clock by more than CLOCK_SKEW_MS and not before the
 * route went on the way; 422 naming `reported_at` otherwise.
 */
export function reportTime(extras: ReportExtras, routeStart: string | null, nowMs = Date.now()): string {
  if (extras.reported_at === undefined) return formatDateTime(nowMs);
  const ms = Date.parse(extras.reported_at);
  if (!Number.isFinite(ms)) throw unprocessable("reported_at must be an ISO 8601 date-time", "reported_at");
  if (ms > nowMs + CLOCK_SKEW_MS) throw unprocessable("reported_at lies in the future", "reported_at");
  if (routeStart && ms < Date.parse(routeStart) - CLOCK_SKEW_MS) throw unprocessable("reported_at lies before the route went on the way", "reported_at");
  return formatDateTime(Math.min(ms, nowMs));
}

/**
 * The proof fields a report carries (position, its distance from the address,
 * recipient, scanned code), or null when it carries none; `reportedAt` is
 * always recorded once there is a proof.
 */
export function reportProofFields(extras: ReportExtras, reportedAt: string, address: { lat: number | null; lng: number | null }, expectedCode: string | null) {
  const fields: Partial<typeof deliveryProofs.$inferInsert> = {};
  if (extras.position) {
    const { lat, lng, accuracy } = extras.position;
    Object.assign(fields, { lat, lng, accuracy: accuracy ?? null });
    if (address.lat !== null && address.lng !== null) {
      const distance = haversineMeters(lng, lat, address.lng, address.lat);
      Object.assign(fields, { distance_m: distance, far_from_address: distance > FAR_FROM_ADDRESS_METERS });
    }
  }
  if (extras.recipient !== undefined) fields.recipient = extras.recipient.trim() || null;
  if (extras.scancode !== undefined) {
    const scanned = extras.scancode.trim();
    fields.scanned_code = scanned || null;
    fields.scan_match = scanned && expectedCode?.trim() ? scanned === expectedCode.trim() : null;
  }
  return Object.keys(fields).length ? { ...fields, reported_at: reportedAt } : null;
}

/** The proof record a report on `routeId` finds (made by the images sent before it), if any. */
export const proofOfReport = currentProof;

/**
 * `DELETE /delivery/<id>/proof/<proof_id>` (dispatchers): the record and its
 * images go; the event log keeps who deleted which proof when (a `delivery`
 * event with `proof: null` and `proof_deleted`), and the structured log too.
 */
export async function deleteProof(env: Env, db: Db, company: Company, actor: AuthUser, deliveryId: number, proofId: number): Promise<PublishedEvent[]> {
  const proof = await findProof(db, company.id, actor, deliveryId, proofId);
  const [delivery] = await db.select({ status: deliveries.status, route_id: deliveries.route_id }).from(deliveries).where(and(eq(deliveries.company_id, company.id), eq(deliveries.id, deliveryId)));
  const exists = sql`exists (select 1 from ${deliveryProofs} where ${deliveryProofs.id} = ${proof.id} and ${deliveryProofs.company_id} = ${company.id})`;
  const [logged, gone] = await db.batch([
    eventInsert(db, company.id, {
      event: { type: "delivery", id: deliveryId, status: delivery?.status ?? 0, route_id: delivery?.route_id ?? null, proof: null, proof_deleted: { id: proof.id, by: actor.id, at: nowIso() } },
      driverId: proof.driver_id,
      when: exists,
    }),
    db.delete(deliveryProofs).where(and(eq(deliveryProofs.company_id, company.id), eq(deliveryProofs.id, proof.id))).returning({ id: deliveryProofs.id }),
  ]);
  if (!gone.length) throw notFound("Proof of delivery");
  const keys = [proof.photo_key, proof.signature_key].filter((k): k is string => k !== null);
  if (keys.length) await env.UPLOADS.delete(keys);
  log("info", "proof deleted", { company_slug: company.slug, delivery_id: deliveryId, proof_id: proof.id, user_id: actor.id });
  return loggedEvents([logged]);
}

/** The proofs of deliveries that were deleted (`DELETE /delivery`): images, then records. */
export async function deleteProofsOf(env: Env, db: Db, companyId: number, deliveryIds: number[]): Promise<void> {
  const scope = and(eq(deliveryProofs.company_id, companyId), sql`${deliveryProofs.delivery_id} in (select value from json_each(${JSON.stringify(deliveryIds)}))`);
  const rows = await db.select({ photo: deliveryProofs.photo_key, signature: deliveryProofs.signature_key }).from(deliveryProofs).where(scope);
  if (!rows.length) return;
  const keys = rows.flatMap((p) => [p.photo, p.signature]).filter((k): k is string => k !== null);
  for (let i = 0; i < keys.length; i += 1000) await env.UPLOADS.delete(keys.slice(i, i + 1000));
  await db.delete(deliveryProofs).where(scope);
}

const DAY_MS = 86_400_000;
const PRUNE_BATCH = 200;
const PRUNE_MAX_BATCHES = 20;

/**
 * Retention (`services/retention.ts`): proofs older than their company's
 * `proof_retention_days` (by `created_at`), images first, then the records,
 * PRUNE_BATCH at a time; idempotent (R2 deletes of absent keys are no-ops).
 */
export async function pruneProofs(env: Env, db: Db, nowMs = Date.now()): Promise<void> {
  const settings = await db.select({ id: companies.id, slug: companies.slug, days: companies.proof_retention_days }).from(companies);
  for (const company of settings) {
    const before = formatDateTime(nowMs - company.days * DAY_MS);
    let deleted = 0;
    let done = false;
    for (let batch = 0; batch < PRUNE_MAX_BATCHES && !done; batch++) {
      const old = await db
        .select({ id: deliveryProofs.id, photo: deliveryProofs.photo_key, signature: deliveryProofs.signature_key })
        .from(deliveryProofs)
        .where(and(eq(deliveryProofs.company_id, company.id), lt(deliveryProofs.created_at, before)))
        .orderBy(asc(deliveryProofs.created_at))
        .limit(PRUNE_BATCH);
      const keys = old.flatMap((p) => [p.photo, p.signature]).filter((k): k is string => k !== null);
      if (keys.length) await env.UPLOADS.delete(keys);
      if (old.length) await db.delete(deliveryProofs).where(and(eq(deliveryProofs.company_id, company.id), inArray(deliveryProofs.id, old.map((p) => p.id))));
      deleted += old.length;
      done = old.length < PRUNE_BATCH;
    }
    if (deleted) log("info", "retention", { table: "delivery_proofs", company_slug: company.slug, deleted, done });
  }
}

// ---- Signed links for the customer's tracking page ----

let linkKey: { secret: string; key: Promise<CryptoKey> } | undefined;
function signingKey(env: Env): Promise<CryptoKey> {
  if (linkKey?.secret !== env.JWT_SECRET) {
    linkKey = { secret: env.JWT_SECRET, key: crypto.subtle.importKey("raw", new TextEncoder().encode(env.JWT_SECRET), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]) };
  }
  return linkKey.key;
}

/** What a link signs: a prefix no JWT's signing input can have (those are base64url and a dot), then the proof, the image and the expiry. */
const signedText = (slug: string, proofId: number, kind: ProofKind, expires: number) => `proof-link\n${slug}\n${proofId}\n${kind}\n${expires}`;

const hex = (b: ArrayBuffer) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, "0")).join("");

/** An absolute link to a proof image that works without a login until `expires` (unix seconds). */
export async function signedProofUrl(env: Env, base: string, slug: string, proofId: number, kind: ProofKind, nowMs = Date.now()): Promise<string> {
  const expires = Math.floor(nowMs / 1000) + PROOF_LINK_SECONDS;
  const mac = await crypto.subtle.sign("HMAC", await signingKey(env), new TextEncoder().encode(signedText(slug, proofId, kind, expires)));
  return `${base.replace(/\/$/, "")}/${slug}/proofimage/${proofId}/${kind}?expires=${expires}&sig=${hex(mac)}`;
}

/** Whether a signed link's signature is right and it has not expired. */
export async function verifyProofLink(env: Env, slug: string, proofId: number, kind: ProofKind, expires: number, sig: string, nowMs = Date.now()): Promise<boolean> {
  if (!Number.isInteger(expires) || expires * 1000 < nowMs || !/^[0-9a-f]{64}$/.test(sig)) return false;
  const mac = new Uint8Array(sig.match(/../g)!.map((h) => parseInt(h, 16)));
  return crypto.subtle.verify("HMAC", await signingKey(env), mac, new TextEncoder().encode(signedText(slug, proofId, kind, expires)));
}

/** A proof the tracking page may show: of this company, which has the tracking page proofs on. */
export async function publicProof(db: Db, companyId: number, proofId: number): Promise<ProofRow | null> {
  const [row] = await db
    .select({ proof: deliveryProofs, enabled: companies.proof_on_tracking_page })
    .from(deliveryProofs)
    .innerJoin(companies, eq(companies.id, deliveryProofs.company_id))
    .where(and(eq(deliveryProofs.company_id, companyId), eq(deliveryProofs.id, proofId)));
  return row?.enabled ? row.proof : null;
}

/** The newest proof of a delivery, for its tracking page. */
export async function latestProof(db: Db, companyId: number, deliveryId: number): Promise<ProofRow | null> {
  const [row] = await db
    .select()
    .from(deliveryProofs)
    .where(and(eq(deliveryProofs.company_id, companyId), eq(deliveryProofs.delivery_id, deliveryId)))
    .orderBy(desc(deliveryProofs.id))
    .limit(1);
  return row ?? null;
}
