/**
 * The parts of the API's records the pages read (see /openapi.json for the full shapes), and what the
 * pages call the status ids. The wire shapes the worker shares (status ids, live events, proofs, the
 * day report) are in src/shared/contract.
 */
import type { AddressOut } from "../../shared/contract/address";
import type { components } from "../../shared/contract/openapi";
import type { Point } from "../../shared/contract/geo";

export type { Point };

/** What the pages read of an address record. */
export type Address = Pick<AddressOut, "id" | "contactcompany" | "contactfirstname" | "contactlastname" | "street" | "housenumber" | "postalcode" | "city" | "location">;

type Schemas = components["schemas"];

/** A delivery as the API answers it (its `status` one of DeliveryStatus). */
export type Delivery = Schemas["Delivery"];
/** A route as the API answers it, with its deliveries in driving order. */
export type Route = Schemas["Route"];
export type RouteMetadata = Schemas["RouteMetadata"];
export type Driver = Schemas["Driver"];

export interface ListEnvelope<T> {
  num_results: number;
  objects: T[];
  page: number;
  total_pages: number;
}

/** What the pages call each route status (the ids and their interface names: src/shared/contract/states.ts). */
export const ROUTE_STATUS_LABEL: Record<number, string> = { 0: "new", 1: "assigned", 2: "accepted", 3: "on the way", 4: "finished", 5: "cancelled", 6: "replaced" };
/** What the pages call each delivery status. */
export const DELIVERY_STATUS_LABEL: Record<number, string> = { 0: "open", 1: "planned", 2: "delivered", 3: "not delivered", 4: "cancelled" };
/** A symbol per delivery status, so that status never depends on colour alone. */
export const DELIVERY_STATUS_SYMBOL: Record<number, string> = { 0: "○", 1: "●", 2: "✓", 3: "✗", 4: "–" };
