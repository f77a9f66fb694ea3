/**
 * The parts of the API's records the pages read (see /openapi.json for the full shapes), and what the
 * pages call the status ids. The wire shapes the worker shares (status ids, live events, proofs, the
 * day report) are in src/shared/contract.
 */
import type { AddressOut } from "../../shared/contract/address";
import type { RouteBreak } from "../../shared/contract/breaks";
import type { LineString, Point } from "../../shared/contract/geo";
import type { DeliveryStatusId, RouteStatusId } from "../../shared/contract/states";

export type { Point };

/** What the pages read of an address record. */
export type Address = Pick<AddressOut, "id" | "contactcompany" | "contactfirstname" | "contactlastname" | "street" | "housenumber" | "postalcode" | "city" | "location">;

export interface Delivery {
  id: number;
  custom_id: string | null;
  status: DeliveryStatusId;
  route_id: number | null;
  orderindex: number | null;
  pdt_from: string | null;
  pdt_to: string | null;
  /** Several windows inside pdt_from..pdt_to (opening hours). */
  time_windows?: { from: string; to: string }[];
  /** The one of them the plan chose. */
  window_from?: string | null;
  window_to?: string | null;
  eta_from: string | null;
  eta_to: string | null;
  els: number | null;
  load: number | null;
  load_2?: number | null;
  load_3?: number | null;
  /** Skills its vehicle or driver must have. */
  required_skills?: string[];
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
  status: RouteStatusId;
  driver_id: number | null;
  custom_id: string | null;
  tst_from: string | null;
  tst_to: string | null;
  ast: string | null;
  distance: number | null;
  /** The vehicle the tour was planned for (its name). */
  vehicle?: string | null;
  /** The breaks the plan placed, in time order. */
  breaks?: RouteBreak[];
  /** Minutes, stops included. */
  gross_duration: number | null;
  /** The route this one replaced by an update (`PATCH /calcroute/update/timewindow`). */
  replaces: number | null;
  deliveries: Delivery[];
  routebase_address: Address | null;
}

export interface RouteMetadata {
  id: number;
  routestring?: LineString | null;
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

/** What the pages call each route status (the ids and their interface names: src/shared/contract/states.ts). */
export const ROUTE_STATUS_LABEL: Record<RouteStatusId, string> = { 0: "new", 1: "assigned", 2: "accepted", 3: "on the way", 4: "finished", 5: "cancelled", 6: "replaced" };
/** What the pages call each delivery status. */
export const DELIVERY_STATUS_LABEL: Record<DeliveryStatusId, string> = { 0: "open", 1: "planned", 2: "delivered", 3: "not delivered", 4: "cancelled" };
/** A symbol per delivery status, so that status never depends on colour alone. */
export const DELIVERY_STATUS_SYMBOL: Record<DeliveryStatusId, string> = { 0: "○", 1: "●", 2: "✓", 3: "✗", 4: "–" };
