/**
 * Status ids of routes and deliveries (contract.md §5), as the interface
 * names them in `GET /routestatus` and `GET /deliverystatus`. The worker
 * serves and checks them; the pages show them.
 */

export const RouteStatus = { new: 0, assigned: 1, accepted: 2, ontheway: 3, finished: 4, cancelled: 5, route_replaced: 6 } as const;
export type RouteStatusId = (typeof RouteStatus)[keyof typeof RouteStatus];

/** Routes a driver has or drives: what an insertion prices and a re-plan takes (not new ones without a driver). */
export const RUNNING_ROUTE_STATUSES: readonly number[] = [RouteStatus.assigned, RouteStatus.accepted, RouteStatus.ontheway];

export const DeliveryStatus = { none: 0, routed: 1, delivered: 2, undelivered: 3, cancelled: 4 } as const;
export type DeliveryStatusId = (typeof DeliveryStatus)[keyof typeof DeliveryStatus];
