/**
 * Moving a delivery onto a route, between routes or out of one, through
 * `PATCH /calcroute/update/timewindow/<route_id>`, so the service checks the
 * constraints (windows, capacity, one tour, same depot) and recomputes order
 * and times. Every update replaces the route by a new one (new id).
 *
 * The API has no single call for a move between two routes, and a delivery
 * still on a route is not open for another: it leaves its route first, then
 * joins the target. When the target refuses, it is put back on (the
 * replacement of) its old route, so a refusal leaves the plan as it was.
 */
import type { Api } from "../shared/api";
import type { Route } from "../shared/types";

/** A refusal, in words for the dispatcher. */
export class MoveRefused extends Error {}

const update = (api: Api, route: Route | { id: number }, change: { add_deliveryids?: number[]; del_deliveryids?: number[] }) =>
  api.send<Route>("PATCH", `/calcroute/update/timewindow/${route.id}`, change);

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** `from` null: an open delivery; `to` null: back to the open deliveries. `routeLabel` names a route in refusals as the console shows it. */
export async function moveDelivery(api: Api, deliveryId: number, from: Route | null, to: Route | null, routeLabel: (r: Route) => string): Promise<void> {
  if (from?.id === to?.id) return;
  let left: Route | null = null;
  if (from) {
    try {
      left = await update(api, from, { del_deliveryids: [deliveryId] });
    } catch (err) {
      throw new MoveRefused(`${routeLabel(from)} cannot give the delivery away: ${reason(err)}. Nothing was moved.`);
    }
  }
  if (!to) return;
  try {
    await update(api, to, { add_deliveryids: [deliveryId] });
  } catch (err) {
    const refusal = `${routeLabel(to)} refused the delivery: ${reason(err)}.`;
    if (!from || !left) throw new MoveRefused(`${refusal} Nothing was moved.`);
    try {
      await update(api, left, { add_deliveryids: [deliveryId] });
    } catch (again) {
      throw new MoveRefused(`${refusal} Putting it back on ${routeLabel(from)} failed too (${reason(again)}): it is now among the open deliveries.`);
    }
    throw new MoveRefused(`${refusal} It stays on ${routeLabel(from)}.`);
  }
}
