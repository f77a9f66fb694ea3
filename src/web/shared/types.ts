/** The parts of the API's records the pages read (see /openapi.json for the full shapes). */

export type Point = { type: "Point"; coordinates: [number, number] };

export interface Address {
  id: number;
  contactcompany: string | null;
  contactfirstname: string | null;
  contactlastname: string | null;
  street: string | null;
  housenumber: string | null;
  postalcode: string | null;
  city: string | null;
  location: Point | null;
}

export interface Delivery {
  id: number;
  custom_id: string | null;
  status: number;
  route_id: number | null;
  orderindex: number | null;
  pdt_from: string | null;
  pdt_to: string | null;
  eta_from: string | null;
  eta_to: string | null;
  els: number | null;
  load: number | null;
  /** Planned stay (service start to departure) of a routed delivery. */
  tdt_from: string | null;
  tdt_to: string | null;
  notes: string | null;
  drivernotes: string | null;
  /** The parcel's barcode or QR code, checked at the door. */
  scancode: string | null;
  ata: string | null;
  atd: string | null;
  notify_customer: boolean;
  notify_customer_email: boolean | null;
  notify_customer_sms: boolean | null;
  deliverylocation_id: number | null;
  address: Address | null;
  delivery_address: Point | null;
}

export interface Route {
  id: number;
  status: number;
  driver_id: number | null;
  custom_id: string | null;
  tst_from: string | null;
  tst_to: string | null;
  ast: string | null;
  distance: number | null;
  /** Minutes, stops included. */
  gross_duration: number | null;
  /** The route this one replaced by an update (`PATCH /calcroute/update/timewindow`). */
  replaces: number | null;
  deliveries: Delivery[];
  routebase_address: Address | null;
}

export interface RouteMetadata {
  id: number;
  routestring?: { type: "LineString"; coordinates: [number, number][] } | null;
}

export interface Driver {
  id: number;
  firstname: string | null;
  lastname: string | null;
  email: string;
  active: boolean;
}

export interface ListEnvelope<T> {
  num_results: number;
  objects: T[];
  page: number;
  total_pages: number;
}

/** Route status ids (GET /routestatus). */
export const RouteStatus = { new: 0, assigned: 1, accepted: 2, ontheway: 3, finished: 4, cancelled: 5, replaced: 6 } as const;
export const ROUTE_STATUS_LABEL: Record<number, string> = { 0: "new", 1: "assigned", 2: "accepted", 3: "on the way", 4: "finished", 5: "cancelled", 6: "replaced" };

/** Delivery status ids (GET /deliverystatus). */
export const DeliveryStatus = { none: 0, routed: 1, delivered: 2, undelivered: 3, cancelled: 4 } as const;
export const DELIVERY_STATUS_LABEL: Record<number, string> = { 0: "open", 1: "planned", 2: "delivered", 3: "not delivered", 4: "cancelled" };
/** A symbol per delivery status, so that status never depends on colour alone. */
export const DELIVERY_STATUS_SYMBOL: Record<number, string> = { 0: "○", 1: "●", 2: "✓", 3: "✗", 4: "–" };

/** What an event says of a delivery's proof (src/core/services/proofs.ts `ProofSummary`). */
export interface ProofSummary {
  photo: boolean;
  signature: boolean;
  recipient: boolean;
  far_from_address: boolean | null;
  scan_match: boolean | null;
}

/** A proof of delivery (`GET /delivery/<id>/proof`). */
export interface DeliveryProof {
  id: number;
  delivery_id: number;
  route_id: number;
  driver_id: number | null;
  recipient: string | null;
  reported_at: string | null;
  position: { lat: number; lng: number; accuracy: number | null } | null;
  distance_m: number | null;
  far_from_address: boolean | null;
  scanned_code: string | null;
  scan_match: boolean | null;
  photo: { url: string; type: string; bytes: number; width: number; height: number } | null;
  signature: { url: string; type: string; bytes: number } | null;
}

/** Websocket events (src/durable/live.ts `LiveEvent`). */
export type LiveEvent =
  | { type: "process"; process_id: string; action: string; status: string; meta: string; link?: string }
  | { type: "route"; id: number; status: number; driver_id: number | null }
  | { type: "delivery"; id: number; status: number; route_id: number | null; proof?: ProofSummary | null }
  | { type: "driverposition"; driver_id: number; position: Point; timestamp: string }
  | { type: "eta"; route_id: number }
  | { type: "pong" };
