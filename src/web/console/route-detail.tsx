/** One route in the side panel: its state, driver and times, what the dispatcher can do to it (route-edit.tsx), and its stops with their proofs. */
import { DeliveryStatus } from "../../shared/contract/states";
import { addressLine, placeName, span, time, windowsText } from "../shared/format";
import { heldWindow } from "../../shared/contract/delivery-window";
import { DELIVERY_STATUS_LABEL, DELIVERY_STATUS_SYMBOL, ROUTE_STATUS_LABEL } from "../shared/types";
import { ProofDetails } from "./proof";
import { RouteActions, type RouteActionsProps } from "./route-edit";
import { STATUS_CLASS, isLate } from "./stops";
import { SkillTags } from "../shared/skills";
import { BreakItems } from "../shared/breaks";

export function RouteDetail({ name, colour, onBack, proofHints, ...actions }: RouteActionsProps & { name: string; colour: string; onBack: () => void; proofHints: Record<number, string> }) {
  const { route, driverName } = actions;
  return (
    <section aria-labelledby="route-title" class="route-detail" data-route-id={route.id} data-status={route.status}>
      <button type="button" class="secondary" onClick={onBack}>
        ← All routes
      </button>
      <h2 id="route-title">
        <span class="swatch" style={{ background: colour }} aria-hidden="true" /> {name} <span class="muted">#{route.id}</span>
      </h2>
      <p>
        <span class="route-status">{ROUTE_STATUS_LABEL[route.status]}</span> · {driverName(route.driver_id)} · start {span(route.tst_from, route.tst_to)}
        {route.distance ? ` · ${(route.distance / 1000).toFixed(1)} km` : ""}
        {route.vehicle ? ` · ${route.vehicle}` : ""}
      </p>
      <RouteActions {...actions} />
      <ol class="stops" data-testid="route-stops">
        <BreakItems breaks={route.breaks} after={0} />
        {route.deliveries.map((d, i) => {
          const late = isLate(d);
          return [
            <li key={d.id} data-delivery-id={d.id} data-status={d.status}>
              <span class="stop-name">
                {i + 1}. {placeName(d)}
                <SkillTags skills={d.required_skills} />
              </span>
              <span class="muted">{addressLine(d.address)}</span>
              <span>
                window {span(heldWindow(d).from, heldWindow(d).to)}
                {!!d.time_windows?.length && <span class="muted"> (of {windowsText(d)})</span>} · ETA {time(d.eta_from)}
                {late && <strong class="error"> · late</strong>}
              </span>
              <span class={`delivery-status status-${STATUS_CLASS[d.status]}`}>
                {DELIVERY_STATUS_SYMBOL[d.status]} {DELIVERY_STATUS_LABEL[d.status]}
                {d.atd && ` ${time(d.atd)}`}
              </span>
              {d.drivernotes && <span class="notes">Driver: {d.drivernotes}</span>}
              {(d.status === DeliveryStatus.delivered || d.status === DeliveryStatus.undelivered) && <ProofDetails api={actions.api} deliveryId={d.id} hint={proofHints[d.id]} />}
            </li>,
            <BreakItems key={`breaks-${d.id}`} breaks={route.breaks} after={d.orderindex ?? i + 1} />,
          ];
        })}
      </ol>
    </section>
  );
}
