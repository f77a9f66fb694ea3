/** What the console's views (side panel, map, timeline) say about a route's stops. */
import type { Delivery } from "../shared/types";
import { DeliveryStatus } from "../../shared/contract/states";
import { heldWindow } from "../../shared/contract/delivery-window";

/** CSS class per delivery status (map markers, lists, timeline blocks). */
export const STATUS_CLASS: Record<number, string> = { 0: "open", 1: "planned", 2: "delivered", 3: "undelivered", 4: "cancelled" };

export const reported = (d: Delivery) => d.status === DeliveryStatus.delivered || d.status === DeliveryStatus.undelivered || d.status === DeliveryStatus.cancelled;

/** Expected after its window closes and not yet reported. */
export const isLate = (d: Delivery) => {
  const end = heldWindow(d).to;
  return !!(d.eta_from && end && d.eta_from > end && !reported(d));
};
