/**
 * What a dispatcher does to one route: assign, change or remove its driver
 * (`PATCH /route/<id>`), add open deliveries and remove stops
 * (`PATCH /calcroute/update/timewindow/<id>`: the service re-plans the tour
 * and checks its constraints; the route is replaced by a new one), cancel it
 * (`POST /cancelroute/<id>`, after a confirmation), or hand its stops to the
 * other running routes when its van breaks down (a re-plan, replan.tsx). A
 * refusal is shown with the service's reason, and nothing changed.
 */
import { useState } from "preact/hooks";
import { Alert } from "../shared/shell";
import { type Api, errorText } from "../shared/api";
import { placeName, span } from "../shared/format";
import type { Delivery, Driver, Route } from "../shared/types";
import { DeliveryStatus, RouteStatus } from "../../shared/contract/states";
import type { ProcessView } from "./process";
import { startReplan } from "./replan";

export interface RouteActionsProps {
  api: Api;
  route: Route;
  drivers: Map<number, Driver>;
  driverName: (id: number | null) => string;
  /** The day's open deliveries, candidates to add. */
  open: Delivery[];
  onChanged: () => void;
  /** The update replaced the route: the new one's id. */
  onReplaced: (routeId: number) => void;
  /** A hand-over started: its process, to follow (the route will be cancelled). */
  onProcess: (p: ProcessView) => void;
}

export function RouteActions({ api, route, drivers, driverName, open, onChanged, onReplaced, onProcess }: RouteActionsProps) {
  const [driver, setDriver] = useState(route.driver_id === null ? "" : String(route.driver_id));
  const [confirming, setConfirming] = useState<"cancel" | "handover" | null>(null);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const act = async (run: () => Promise<unknown>) => {
    setError("");
    setBusy(true);
    try {
      await run();
      onChanged();
    } catch (err) {
      const reason = errorText(err);
      setError(`Refused: ${reason}${/[.!?]$/.test(reason) ? "" : "."} Nothing was changed.`);
    } finally {
      setBusy(false);
    }
  };
  if (route.status >= RouteStatus.finished) return null;
  // The driver can be set on a new route and changed or removed while it is assigned (contract §5).
  const driverEditable = route.status <= RouteStatus.assigned;
  const assign = (e: Event) => {
    e.preventDefault();
    void act(() => api.send("PATCH", "/route/{route_id}", { path: { route_id: route.id }, body: { driver_id: driver === "none" ? null : Number(driver) } }));
  };
  return (
    <div class="route-actions">
      {driverEditable && (
        <form onSubmit={assign} class="assign">
          <label>
            Driver
            <select value={driver} onChange={(e) => setDriver(e.currentTarget.value)} name="driver_id">
              <option value="" disabled>
                choose a driver
              </option>
              {route.driver_id !== null && <option value="none">no driver (remove)</option>}
              {[...drivers.values()]
                .filter((d) => d.active)
                .map((d) => (
                  <option value={String(d.id)}>{driverName(d.id)}</option>
                ))}
            </select>
          </label>
          <button type="submit" disabled={busy || !driver || driver === String(route.driver_id)}>
            {route.driver_id === null ? "Assign driver" : "Change driver"}
          </button>
        </form>
      )}
      <StopChanges api={api} route={route} open={open} busy={busy} act={act} onReplaced={onReplaced} />
      {confirming === "cancel" && (
        <p class="confirm" role="group" aria-label="Confirm cancelling the route">
          Cancel this route? Its open deliveries go back to the list.{" "}
          <button type="button" disabled={busy} onClick={() => act(() => api.send("POST", "/cancelroute/{route_id}", { path: { route_id: route.id } }))}>
            Yes, cancel route
          </button>{" "}
          <button type="button" class="secondary" onClick={() => setConfirming(null)}>
            Keep route
          </button>
        </p>
      )}
      {confirming === "handover" && (
        <p class="confirm" role="group" aria-label="Confirm handing the stops over">
          Hand this route's open stops to the other running routes? They are re-planned from where their drivers are; this route is cancelled.{" "}
          <button type="button" disabled={busy} onClick={() => act(async () => onProcess(await startReplan(api, { handover_route_id: route.id })))}>
            Yes, hand over
          </button>{" "}
          <button type="button" class="secondary" onClick={() => setConfirming(null)}>
            Keep route
          </button>
        </p>
      )}
      {confirming === null && (
        <span class="route-buttons">
          {route.status >= RouteStatus.assigned && (
            <button type="button" class="secondary" onClick={() => setConfirming("handover")}>
              Hand over stops (breakdown)…
            </button>
          )}{" "}
          <button type="button" class="secondary danger" onClick={() => setConfirming("cancel")}>
            Cancel route…
          </button>
        </span>
      )}
      <Alert text={error} class="refusal" />
    </div>
  );
}

/** Add open deliveries to the route, remove its unreported stops: one update of the route. */
function StopChanges({
  api,
  route,
  open,
  busy,
  act,
  onReplaced,
}: {
  api: Api;
  route: Route;
  open: Delivery[];
  busy: boolean;
  act: (run: () => Promise<unknown>) => Promise<void>;
  onReplaced: (routeId: number) => void;
}) {
  const [add, setAdd] = useState<Set<number>>(new Set());
  const [del, setDel] = useState<Set<number>>(new Set());
  const removable = route.deliveries.filter((d) => d.status === DeliveryStatus.routed);
  const toggle = (set: Set<number>, id: number) => (set.has(id) ? new Set([...set].filter((x) => x !== id)) : new Set(set).add(id));
  const addIds = open.map((d) => d.id).filter((id) => add.has(id));
  const delIds = removable.map((d) => d.id).filter((id) => del.has(id));
  const update = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const replacement = await api.send("PATCH", "/calcroute/update/timewindow/{route_id}", { path: { route_id: route.id }, body: { add_deliveryids: addIds, del_deliveryids: delIds } });
      setAdd(new Set());
      setDel(new Set());
      onReplaced(replacement.id);
    });
  };
  return (
    <details class="stop-changes">
      <summary>Add or remove stops…</summary>
      <form onSubmit={update} aria-label="Add or remove stops of this route">
        <fieldset>
          <legend>Remove from this route</legend>
          {removable.length === 0 && <p class="muted">No stop left to remove.</p>}
          {removable.map((d) => (
            <label class="inline" key={d.id}>
              <input type="checkbox" checked={del.has(d.id)} onChange={() => setDel(toggle(del, d.id))} data-remove-id={d.id} /> {placeName(d)}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Add open deliveries</legend>
          {open.length === 0 && <p class="muted">No open delivery on this day.</p>}
          {open.map((d) => (
            <label class="inline" key={d.id}>
              <input type="checkbox" checked={add.has(d.id)} onChange={() => setAdd(toggle(add, d.id))} data-add-id={d.id} /> {placeName(d)}{" "}
              <span class="muted">{span(d.pdt_from, d.pdt_to)}</span>
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={busy || addIds.length + delIds.length === 0}>
          Update route ({addIds.length} added, {delIds.length} removed)
        </button>
      </form>
    </details>
  );
}
