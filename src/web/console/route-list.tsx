/** The side panel's list of the day's routes, and the filters above it. */
import { span } from "../shared/format";
import { type Driver, ROUTE_STATUS_LABEL, type Route } from "../shared/types";
import { isLate, reported } from "./stops";
import { SHOWN_ROUTE_STATUSES } from "./use-day-data";
import type { RouteFilters as Filters } from "./use-day-routes";

export function RouteFilters({ filters, drivers, driverName }: { filters: Filters; drivers: Map<number, Driver>; driverName: (id: number | null) => string }) {
  return (
    <div class="filters" role="group" aria-label="Filter routes">
      <label>
        Status
        <select value={filters.status} onChange={(e) => filters.setStatus(e.currentTarget.value)}>
          <option value="all">all</option>
          {SHOWN_ROUTE_STATUSES.map((s) => (
            <option value={String(s)}>{ROUTE_STATUS_LABEL[s]}</option>
          ))}
        </select>
      </label>
      <label>
        Driver
        <select value={filters.driver} onChange={(e) => filters.setDriver(e.currentTarget.value)}>
          <option value="all">all</option>
          <option value="none">no driver</option>
          {[...drivers.values()].map((d) => (
            <option value={String(d.id)}>{driverName(d.id)}</option>
          ))}
        </select>
      </label>
    </div>
  );
}

export function RouteList({
  routes,
  names,
  colour,
  driverName,
  onFocus,
}: {
  routes: Route[];
  names: Map<number, string>;
  colour: (r: Route) => string;
  driverName: (id: number | null) => string;
  onFocus: (id: number) => void;
}) {
  return (
    <section aria-labelledby="routes-title">
      <h2 id="routes-title">Routes ({routes.length})</h2>
      {routes.length === 0 && <p class="muted">No routes on this day.</p>}
      <ul class="routes" data-testid="route-list">
        {routes.map((r) => {
          const done = r.deliveries.filter(reported).length;
          const late = r.deliveries.filter(isLate).length;
          return (
            <li key={r.id}>
              <button type="button" class="route-item" data-route-id={r.id} data-status={r.status} onClick={() => onFocus(r.id)}>
                <span class="swatch" style={{ background: colour(r) }} aria-hidden="true" />
                <span class="route-name">
                  {names.get(r.id)} <span class="muted">#{r.id}</span>
                </span>
                <span class="route-status">{ROUTE_STATUS_LABEL[r.status]}</span>
                <span class="route-driver">{driverName(r.driver_id)}</span>
                <span class="route-progress" aria-label={`${done} of ${r.deliveries.length} stops reported`}>
                  {done}/{r.deliveries.length}
                </span>
                <span class="route-time">
                  start {span(r.tst_from, r.tst_to)}
                  {late > 0 && <strong class="error"> · ⚠ {late} late</strong>}
                </span>
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
