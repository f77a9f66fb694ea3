/**
 * Moving a delivery onto a route, between routes or out of one. An open
 * delivery joins a route through `PATCH /calcroute/update/timewindow/<route_id>`;
 * a delivery on a route moves with `POST /calcroute/move`, one request in which
 * the service re-plans and replaces both routes or changes nothing, so a
 * refusal, a concurrent change or a closed laptop never leaves it off both
 * routes. Either way the service checks the constraints (windows, capacity,
 * one tour, same depot) and recomputes order and times; every changed route
 * is replaced by a new one (new id).
 */
import type { Api } from "../shared/api";
import type { Route } from "../shared/types";

/** A refusal, in words for the dispatcher. */
export class MoveRefused extends Error {}

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** `from` null: an open delivery; `to` null: back to the open deliveries. `routeLabel` names a route in refusals as the console shows it. */
export async function moveDelivery(api: Api, deliveryId: number, from: Route | null, to: Route | null, routeLabel: (r: Route) => string): Promise<void> {
  if (from?.id === to?.id) return;
  if (!from) {
    try {
      await api.send("PATCH", "/calcroute/update/timewindow/{route_id}", { path: { route_id: to!.id }, body: { add_deliveryids: [deliveryId] } });
    } catch (err) {
      throw new MoveRefused(`${routeLabel(to!)} refused the delivery: ${reason(err)}. Nothing was moved.`);
    }
    return;
  }
  try {
    await api.send("POST", "/calcroute/move", { body: { delivery_id: deliveryId, from_route_id: from.id, to_route_id: to ? to.id : "open" } });
  } catch (err) {
    const refusal = to ? `${routeLabel(to)} refused the delivery` : `${routeLabel(from)} cannot give the delivery away`;
    throw new MoveRefused(`${refusal}: ${reason(err)}. Nothing was moved: it stays on ${routeLabel(from)}.`);
  }
}
