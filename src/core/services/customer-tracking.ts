/**
 * Customer tracking: an unguessable link per delivery and what its page may
 * show — this one delivery's status, ETA window, the stops before it, the
 * driver's first name and approximate position (only while the route is on
 * the way and the delivery is among the next stops), and the proof of
 * delivery. Nothing else of the company.
 */
import { and, count, desc, eq, isNull, lt, sql } from "drizzle-orm";
import { addresses, companies, deliveries, driverTracking, routes, trackingLinks, users } from "../db/schema";
import { DeliveryStatus, RouteStatus } from "../../shared/contract/states";
import type { Db } from "../context";
import { nowIso } from "../lib/time";
import type { Language } from "./company-settings";
import { latestProof } from "./proofs";
import { heldWindow } from "../../shared/contract/delivery-window";

/** The driver's position shows once the delivery is at most this many stops ahead. */
export const POSITION_VISIBLE_WITHIN_STOPS = 3;
/** Positions are rounded to 0.005° (about 500 m): near enough to follow, too coarse to tell which door. */
const POSITION_GRID = 0.005;

const newToken = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(24)))).replace(/\+/g, "-").replace(/\//g, "_");

export const trackingUrl = (base: string, slug: string, token: string) => `${base.replace(/\/$/, "")}/${slug}/t/${token}`;

/** A fresh link for a delivery; earlier links of it stop working. */
export async function rotateTrackingLink(db: Db, companyId: number, deliveryId: number): Promise<string> {
  const token = newToken();
  await db.batch([
    db.update(trackingLinks).set({ revoked_at: nowIso() }).where(and(eq(trackingLinks.company_id, companyId), eq(trackingLinks.delivery_id, deliveryId), isNull(trackingLinks.revoked_at))),
    db.insert(trackingLinks).values({ token, company_id: companyId, delivery_id: deliveryId }),
  ]);
  return token;
}

/** The working link of each delivery, made for those without one: one read and one batch, whatever the number. */
export async function trackingTokens(db: Db, companyId: number, deliveryIds: number[]): Promise<Map<number, string>> {
  if (!deliveryIds.length) return new Map();
  const live = await db
    .select({ delivery_id: trackingLinks.delivery_id, token: trackingLinks.token })
    .from(trackingLinks)
    // The ids travel as one JSON parameter: a route may have more deliveries than D1 binds values.
    .where(and(eq(trackingLinks.company_id, companyId), isNull(trackingLinks.revoked_at), sql`${trackingLinks.delivery_id} in (select value from json_each(${JSON.stringify(deliveryIds)}))`));
  const tokens = new Map(live.map((l) => [l.delivery_id, l.token]));
  const missing = deliveryIds.filter((id) => !tokens.has(id)).map((id) => ({ token: newToken(), company_id: companyId, delivery_id: id }));
  const [first, ...rest] = missing.map((row) => db.insert(trackingLinks).values(row));
  if (first) await db.batch([first, ...rest]);
  for (const row of missing) tokens.set(row.delivery_id, row.token);
  return tokens;
}

/** Revokes every link of a delivery. */
export async function revokeTrackingLinks(db: Db, companyId: number, deliveryId: number): Promise<void> {
  await db
    .update(trackingLinks)
    .set({ revoked_at: nowIso() })
    .where(and(eq(trackingLinks.company_id, companyId), eq(trackingLinks.delivery_id, deliveryId), isNull(trackingLinks.revoked_at)));
}

export type TrackingState = "open" | "scheduled" | "on_the_way" | "delivered" | "not_delivered" | "cancelled";

export interface TrackingView {
  company: { name: string; timezone: string; language: Language };
  state: TrackingState;
  window: { from: string | null; to: string | null };
  eta: { from: string; to: string } | null;
  /** Open stops before this one on a route that is on the way. */
  stops_before: number | null;
  driver: { firstname: string | null; position: { lat: number; lng: number; timestamp: string } | null } | null;
  destination: { lat: number; lng: number } | null;
  /** `recipient` and the image links only when the company shows proofs on the tracking page (`proof_on_tracking_page`). */
  proof: { time: string; notes: string | null; recipient?: string | null; photo_url?: string | null; signature_url?: string | null } | null;
}

/** Signs a link to a proof image (services/proofs.ts `signedProofUrl`, bound to the request's env and base). */
export type ProofLinkSigner = (proofId: number, kind: "photo" | "signature") => Promise<string>;

const stateOf = (deliveryStatus: number, routeStatus: number | null): TrackingState => {
  if (deliveryStatus === DeliveryStatus.delivered) return "delivered";
  if (deliveryStatus === DeliveryStatus.undelivered) return "not_delivered";
  if (deliveryStatus === DeliveryStatus.cancelled) return "cancelled";
  if (deliveryStatus === DeliveryStatus.routed) return routeStatus === RouteStatus.ontheway ? "on_the_way" : "scheduled";
  return "open";
};

const round = (v: number) => Math.round(v / POSITION_GRID) * POSITION_GRID;

/** What the page of a link shows, or null when the link is unknown, revoked, or of another company. */
export async function trackingView(db: Db, companyId: number, token: string, sign?: ProofLinkSigner): Promise<TrackingView | null> {
  const [row] = await db
    .select({
      company: { name: companies.companyname, timezone: companies.timezone, language: companies.language, showProof: companies.proof_on_tracking_page },
      delivery: deliveries,
      lat: addresses.lat,
      lng: addresses.lng,
      routeStatus: routes.status,
      driverId: routes.driver_id,
    })
    .from(trackingLinks)
    .innerJoin(companies, eq(companies.id, trackingLinks.company_id))
    .innerJoin(deliveries, and(eq(deliveries.id, trackingLinks.delivery_id), eq(deliveries.company_id, trackingLinks.company_id)))
    .leftJoin(addresses, eq(addresses.id, deliveries.deliverylocation_id))
    .leftJoin(routes, eq(routes.id, deliveries.route_id))
    .where(and(eq(trackingLinks.token, token), eq(trackingLinks.company_id, companyId), isNull(trackingLinks.revoked_at)));
  if (!row) return null;
  const { delivery } = row;
  const state = stateOf(delivery.status, row.routeStatus);
  let stopsBefore: number | null = null;
  let driver: TrackingView["driver"] = null;
  if (state === "on_the_way" && delivery.route_id !== null && delivery.orderindex !== null) {
    const [{ n }] = await db
      .select({ n: count() })
      .from(deliveries)
      .where(and(eq(deliveries.route_id, delivery.route_id), eq(deliveries.status, DeliveryStatus.routed), lt(deliveries.orderindex, delivery.orderindex)));
    stopsBefore = n;
    if (row.driverId !== null) {
      const [[person], [last]] = await Promise.all([
        db.select({ firstname: users.firstname }).from(users).where(and(eq(users.id, row.driverId), eq(users.company_id, companyId))),
        stopsBefore <= POSITION_VISIBLE_WITHIN_STOPS
          ? db
              .select({ lat: driverTracking.lat, lng: driverTracking.lng, timestamp: driverTracking.timestamp })
              .from(driverTracking)
              .where(and(eq(driverTracking.company_id, companyId), eq(driverTracking.driver_id, row.driverId)))
              .orderBy(desc(driverTracking.timestamp))
              .limit(1)
          : Promise.resolve([]),
      ]);
      driver = { firstname: person?.firstname ?? null, position: last ? { lat: round(last.lat), lng: round(last.lng), timestamp: last.timestamp } : null };
    }
  }
  let proof: TrackingView["proof"] = null;
  if (state === "delivered" || state === "not_delivered") {
    proof = { time: delivery.atd ?? delivery.ata ?? "", notes: delivery.drivernotes };
    const record = row.company.showProof && sign ? await latestProof(db, companyId, delivery.id) : null;
    if (record && sign) {
      proof.recipient = record.recipient;
      proof.photo_url = record.photo_key ? await sign(record.id, "photo") : null;
      proof.signature_url = record.signature_key ? await sign(record.id, "signature") : null;
    }
  }
  return {
    company: { name: row.company.name, timezone: row.company.timezone, language: row.company.language as Language },
    state,
    window: heldWindow(delivery),
    eta: (state === "on_the_way" || state === "scheduled") && delivery.eta_from && delivery.eta_to ? { from: delivery.eta_from, to: delivery.eta_to } : null,
    stops_before: stopsBefore,
    driver,
    destination: row.lat !== null && row.lng !== null ? { lat: row.lat, lng: row.lng } : null,
    proof,
  };
}
