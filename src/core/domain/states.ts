/**
 * States of routes and deliveries (contract.md §5) and the lookup lists the
 * API serves. Pure: the transition table is checked here, the company's
 * Durable Object applies it so concurrent calls are serialised.
 */
import { DeliveryStatus, RouteStatus } from "../../shared/contract/states";

const lookup = (values: Record<string, number>) => Object.entries(values).map(([name, id]) => ({ id, name }));

export const ROUTE_STATUSES = lookup(RouteStatus);
export const DELIVERY_STATUSES = lookup(DeliveryStatus);

/** `deliverytype_id` values. */
export const DELIVERY_TYPES = [
  { id: 1, name: "delivery" },
  { id: 2, name: "pickup" },
  { id: 3, name: "service" },
  { id: 4, name: "return" },
];

/** `code` values: the outcome reported with a delivery. */
export const DELIVERY_CODES = [
  { id: 0, name: "ok" },
  { id: 1, name: "recipient_absent" },
  { id: 2, name: "refused" },
  { id: 3, name: "damaged" },
  { id: 4, name: "address_not_found" },
  { id: 5, name: "left_with_neighbour" },
  { id: 6, name: "left_at_safe_place" },
  { id: 9, name: "other" },
];

/** Deliveries that may be (re-)routed. */
export const OPEN_DELIVERY_STATUSES: readonly number[] = [DeliveryStatus.none, DeliveryStatus.undelivered];

/** Routes whose deliveries are still to be driven. */
export const UNFINISHED_ROUTE_STATUSES: readonly number[] = [RouteStatus.new, RouteStatus.assigned, RouteStatus.accepted, RouteStatus.ontheway];

/** Allowed route status changes (from -> to), besides cancel (0..3 -> 5) and update (0..3 -> 6). */
const ROUTE_TRANSITIONS: Record<number, readonly number[]> = {
  [RouteStatus.new]: [RouteStatus.assigned, RouteStatus.cancelled, RouteStatus.route_replaced],
  [RouteStatus.assigned]: [RouteStatus.assigned, RouteStatus.new, RouteStatus.accepted, RouteStatus.cancelled, RouteStatus.route_replaced],
  [RouteStatus.accepted]: [RouteStatus.ontheway, RouteStatus.cancelled, RouteStatus.route_replaced],
  [RouteStatus.ontheway]: [RouteStatus.finished, RouteStatus.cancelled, RouteStatus.route_replaced],
  [RouteStatus.finished]: [],
  [RouteStatus.cancelled]: [],
  [RouteStatus.route_replaced]: [],
};

export const canTransitionRoute = (from: number, to: number) => ROUTE_TRANSITIONS[from]?.includes(to) ?? false;
