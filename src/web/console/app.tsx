/**
 * The dispatcher console: the day's routes on a map and in a list, the open
 * deliveries, optimisation with live progress, live driver positions. Only
 * the public API and the websocket are used. This is the layout; the data
 * lives in the use-* hooks (the day, what the API has of it, the processes,
 * the live channel, the routes as shown, the map), the panels in their own
 * modules.
 */
import { useState } from "preact/hooks";
import type { Api } from "../shared/api";
import { AreaLayer } from "./areas";
import { TopBar, type View, ViewSwitch } from "./console-bars";
import { OpenDeliveries } from "./open-deliveries";
import { DayReportView } from "./report";
import { RouteDetail } from "./route-detail";
import { RouteFilters, RouteList } from "./route-list";
import { Timeline } from "./timeline";
import { Upload } from "./upload";
import { Replan } from "./replan";
import { useDay } from "./use-day";
import { useDayData } from "./use-day-data";
import { useDayRoutes } from "./use-day-routes";
import { useDispatchMap } from "./use-dispatch-map";
import { useLiveUpdates } from "./use-live-updates";
import { useProcesses } from "./use-processes";

export function ConsoleApp({ api, logout }: { api: Api; logout: () => void }) {
  const [day, setDay] = useDay();
  const data = useDayData(api);
  const processes = useProcesses(api);
  const { live, proofHints } = useLiveUpdates(api, { ...data, processes });
  const shown = useDayRoutes(data, day);
  const { dayRoutes, dayOpen, names, colour, driverName, focusedRoute } = shown;
  const [view, setView] = useState<View>("map");
  const map = useDispatchMap({ ...data, ...shown, visible: view === "map" });
  const focus = (id: number | null) => {
    shown.setFocused(id);
    map.show(id);
  };

  return (
    <div class="console">
      <TopBar day={day} onDay={setDay} live={live} logout={logout} />
      {data.error && (
        <p role="alert" class="error banner">
          {data.error}
        </p>
      )}
      <div class="layout">
        <aside class="panel" aria-label="Routes and deliveries">
          {focusedRoute ? (
            <RouteDetail
              key={focusedRoute.id}
              api={api}
              route={focusedRoute}
              name={names.get(focusedRoute.id)!}
              colour={colour(focusedRoute)}
              drivers={data.drivers}
              driverName={driverName}
              open={dayOpen}
              onChanged={data.scheduleRefresh}
              onReplaced={shown.setFocused}
              onProcess={(p) => (processes.track(p), focus(null))}
              onBack={() => focus(null)}
              proofHints={proofHints}
            />
          ) : (
            <>
              <RouteFilters filters={shown.filters} drivers={data.drivers} driverName={driverName} />
              <RouteList routes={shown.listed} names={names} colour={colour} driverName={driverName} onFocus={focus} />
              <Replan api={api} routes={dayRoutes} process={processes.latest("replan")} onProcess={processes.track} />
            </>
          )}
          <OpenDeliveries api={api} day={day} deliveries={dayOpen} process={processes.latest("optimisation")} onProcess={processes.track} />
          <Upload api={api} process={processes.latest("upload")} onProcess={processes.track} />
        </aside>
        <div class="main-view">
          <div class="view-bar">
            <ViewSwitch view={view} onView={setView} />
            <div hidden={view !== "map"}>
              <AreaLayer api={api} map={map.map} drivers={data.drivers} />
            </div>
          </div>
          <div class="map" ref={map.mapEl} role="region" aria-label="Map of routes, stops and drivers" hidden={view !== "map"} />
          {view === "report" && <DayReportView api={api} day={day} />}
          {view === "timeline" && (
            <Timeline api={api} day={day} routes={dayRoutes} open={dayOpen} names={names} colour={colour} driverName={driverName} onChanged={data.scheduleRefresh} />
          )}
        </div>
      </div>
    </div>
  );
}
