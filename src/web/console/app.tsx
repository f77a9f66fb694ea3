/**
 * The dispatcher console: the day's routes on a map and in a list, the open
 * deliveries, optimisation with live progress, live driver positions. Only
 * the public API and the websocket are used.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { type Api, errorText } from "../shared/api";
import { LiveSocket, type LiveState } from "../shared/live";
import { ProofDetails } from "./proof";
import { ConnectionBadge } from "../shared/shell";
import { addressLine, placeName, dayOf, loadCompanyTimeZone, personName, span, time, zonedIso } from "../shared/format";
import { type Address, DELIVERY_STATUS_LABEL, DELIVERY_STATUS_SYMBOL, type Delivery, type Driver, type Point, ROUTE_STATUS_LABEL, type Route, type RouteMetadata } from "../shared/types";
import type { LiveMessage } from "../../shared/contract/live";
import type { ProofSummary } from "../../shared/contract/proof";
import { DeliveryStatus, RouteStatus, type RouteStatusId } from "../../shared/contract/states";
import { DeliveryForm } from "./delivery-form";
import { DispatchMap, type LngLat, type MapRoute } from "./map";
import { ProcessProgress, type ProcessView, processUpdate, resyncProcess, routeCancelled, startedProcess, withProcessRoutes } from "./process";
import { RouteActions, type RouteActionsProps } from "./route-edit";
import { tourNames } from "./route-names";
import { Upload } from "./upload";
import { Variants } from "./variants";
import { STATUS_CLASS, isLate, reported } from "./stops";
import { AreaLayer } from "./areas";
import { Timeline } from "./timeline";
import { PALETTE } from "./palette";
import { DayReportView } from "./report";

export { PALETTE };

const SHOWN_ROUTE_STATUSES: RouteStatusId[] = [RouteStatus.new, RouteStatus.assigned, RouteStatus.accepted, RouteStatus.ontheway, RouteStatus.finished];
const OPEN_DELIVERY_STATUSES = [DeliveryStatus.none, DeliveryStatus.undelivered];

interface Position {
  at: LngLat;
  timestamp: string;
}

/** The summary line of a proof from its event. */
const proofHint = (p: ProofSummary | null) =>
  p ? [p.photo && "photo", p.signature && "signature", p.recipient && "recipient", p.far_from_address && "⚠ far from address", p.scan_match === false && "⚠ wrong parcel scanned"].filter(Boolean).join(", ") : "deleted";

const routeDay = (r: Route) => r.tst_from ?? r.deliveries.find((d) => d.pdt_from)?.pdt_from ?? null;
const lngLat = (p: Point | null | undefined): LngLat | null => (p ? [p.coordinates[0], p.coordinates[1]] : null);

/** The day the address names (`?day=YYYY-MM-DD`, so a link or a reload opens that day), if a real one. */
function dayInAddress(): string | null {
  const day = new URLSearchParams(location.search).get("day");
  return day && /^\d{4}-\d{2}-\d{2}$/.test(day) && !Number.isNaN(Date.parse(day)) ? day : null;
}

export function ConsoleApp({ api, logout }: { api: Api; logout: () => void }) {
  const [day, setDay] = useState(() => dayInAddress() ?? dayOf(new Date()));
  useEffect(() => {
    // Any day but today goes into the address; today stays implicit, so a bookmark opens on the day it is used.
    if (!day) return;
    const url = new URL(location.href);
    if (day === dayOf(new Date())) url.searchParams.delete("day");
    else url.searchParams.set("day", day);
    if (url.href !== location.href) history.replaceState(history.state, "", url);
  }, [day]);
  const [routes, setRoutes] = useState<Route[]>([]);
  const [lines, setLines] = useState<Map<number, LngLat[]>>(new Map());
  const [open, setOpen] = useState<Delivery[]>([]);
  const [drivers, setDrivers] = useState<Map<number, Driver>>(new Map());
  const [positions, setPositions] = useState<Map<number, Position>>(new Map());
  const [depot, setDepot] = useState<Address | null>(null);
  const [focused, setFocused] = useState<number | null>(null);
  const [statusFilter, setStatusFilter] = useState("all");
  const [driverFilter, setDriverFilter] = useState("all");
  const [live, setLive] = useState<LiveState>("connecting");
  const [error, setError] = useState("");
  const [processes, setProcesses] = useState<Map<string, ProcessView>>(new Map());
  const [view, setView] = useState<"map" | "timeline" | "report">("map");
  const mapEl = useRef<HTMLDivElement>(null);
  const map = useRef<DispatchMap | null>(null);

  const refresh = useCallback(async () => {
    try {
      const q = { filters: [{ name: "status", op: "in", val: SHOWN_ROUTE_STATUSES }], order_by: [{ field: "id", direction: "asc" }] };
      const [rs, metas, ds, drv, pos] = await Promise.all([
        api.list<Route>("/route", q),
        api.list<RouteMetadata>("/routemetadata", q, { routestring: true }),
        api.list<Delivery>("/delivery", { filters: [{ name: "status", op: "in", val: OPEN_DELIVERY_STATUSES }], order_by: [{ field: "pdt_from", direction: "asc" }] }),
        api.list<Driver>("/driver", {}),
        api.list<{ driver_id: number; position: Point; timestamp: string }>("/driverposition", {}),
      ]);
      setRoutes(rs);
      setLines(new Map(metas.map((m) => [m.id, m.routestring?.coordinates ?? []])));
      setOpen(ds);
      setDrivers(new Map(drv.map((d) => [d.id, d])));
      // A position that arrived by event while this refetch was under way is newer than what the refetch read: keep it.
      setPositions((prev) => {
        const next = new Map(pos.map((p) => [p.driver_id, { at: lngLat(p.position)!, timestamp: p.timestamp }]));
        for (const [id, live] of prev) if ((next.get(id)?.timestamp ?? "") < live.timestamp) next.set(id, live);
        return next;
      });
      setError("");
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  }, [api]);

  // Several events in a burst (a routing result, a finished route) cause one refetch.
  const pending = useRef<number | undefined>(undefined);
  const scheduleRefresh = useCallback(() => {
    window.clearTimeout(pending.current);
    pending.current = window.setTimeout(() => void refresh(), 250);
  }, [refresh]);

  // What the live events said of proofs (the route view's summary line; the proof itself is read when opened).
  const [proofHints, setProofHints] = useState<Record<number, string>>({});
  const onEvent = useCallback(
    (e: LiveMessage) => {
      if (e.type === "driverposition") {
        const at = lngLat(e.position);
        if (at) setPositions((prev) => new Map(prev).set(e.driver_id, { at, timestamp: e.timestamp }));
      } else if (e.type === "process") {
        setProcesses((prev) => (prev.has(e.process_id) ? new Map(prev).set(e.process_id, processUpdate(prev.get(e.process_id)!, e)) : prev));
        if (e.action === "final" && e.status === "finished") scheduleRefresh();
      } else if (e.type === "route" || e.type === "delivery" || e.type === "eta") {
        if (e.type === "route" && e.status === RouteStatus.cancelled) setProcesses((prev) => new Map([...prev].map(([id, p]) => [id, routeCancelled(p, e.id)])));
        if (e.type === "delivery" && e.proof !== undefined) setProofHints((prev) => ({ ...prev, [e.id]: proofHint(e.proof ?? null) }));
        scheduleRefresh();
      }
    },
    [scheduleRefresh],
  );

  // A finished process: which tours it made (to tell when they are all cancelled).
  const asked = useRef(new Set<string>());
  useEffect(() => {
    for (const p of processes.values()) {
      if (p.status !== "finished" || p.routeIds || asked.current.has(p.id)) continue;
      asked.current.add(p.id);
      withProcessRoutes(api, p).then(
        (update) => setProcesses((prev) => (prev.has(p.id) ? new Map(prev).set(p.id, update(prev.get(p.id)!)) : prev)),
        () => undefined,
      );
    }
  }, [api, processes]);
  const track = useCallback((p: ProcessView) => setProcesses((prev) => new Map(prev).set(p.id, p)), []);
  const latest = (kind: ProcessView["kind"]) => [...processes.values()].reverse().find((p) => p.kind === kind) ?? null;

  // After a reconnect: everything refetched, and running processes read again (their events may have been missed).
  const running = useRef(processes);
  running.current = processes;
  const resync = useCallback(() => {
    void refresh();
    for (const p of running.current.values()) {
      if (p.status !== "running") continue;
      resyncProcess(api, p).then((next) => setProcesses((prev) => new Map(prev).set(p.id, next)), () => undefined);
    }
  }, [api, refresh]);

  useEffect(() => {
    // Times follow the company's zone: refresh once it is known.
    loadCompanyTimeZone(api).then(() => void refresh(), () => void refresh());
    api.get<Address>("/companyaddress").then(setDepot, () => setDepot(null));
    const socket = new LiveSocket(api.token, onEvent, setLive, resync);
    return () => socket.close();
  }, [api, refresh, onEvent, resync]);

  useEffect(() => {
    if (mapEl.current && !map.current) map.current = new DispatchMap(mapEl.current);
  }, []);

  const dayRoutes = useMemo(
    () =>
      routes.filter(
        (r) =>
          (!routeDay(r) || dayOf(routeDay(r)!) === day) &&
          (statusFilter === "all" || String(r.status) === statusFilter) &&
          (driverFilter === "all" || String(r.driver_id ?? "none") === driverFilter),
      ),
    [routes, day, statusFilter, driverFilter],
  );
  const dayOpen = useMemo(() => open.filter((d) => !d.pdt_from || dayOf(d.pdt_from) === day), [open, day]);
  // Numbered over the whole day, so a filter does not renumber the tours.
  const names = useMemo(() => tourNames(routes.filter((r) => !routeDay(r) || dayOf(routeDay(r)!) === day)), [routes, day]);
  // The list follows the numbering (by start time), so "Tour 1" is always listed first.
  const listed = useMemo(() => {
    const rank = new Map([...names.keys()].map((id, i) => [id, i]));
    return [...dayRoutes].sort((a, b) => (rank.get(a.id) ?? 0) - (rank.get(b.id) ?? 0));
  }, [dayRoutes, names]);
  const colour = (r: Route) => PALETTE[routes.indexOf(r) % PALETTE.length];
  const driverName = (id: number | null) => (id === null ? "no driver" : personName(drivers.get(id)) || drivers.get(id)?.email || `driver ${id}`);

  useEffect(() => {
    const depotAt = lngLat(depot?.location);
    map.current?.setDepot(depotAt);
    const mapRoutes: MapRoute[] = dayRoutes.map((r) => {
      const stops = r.deliveries
        .map((d, i) => ({ d, n: i + 1, at: lngLat(d.delivery_address ?? d.address?.location) }))
        .filter((s): s is { d: Delivery; n: number; at: LngLat } => s.at !== null)
        .map(({ d, n, at }) => ({ id: d.id, n, at, status: STATUS_CLASS[d.status] ?? "open", label: `Stop ${n}: ${placeName(d)} (${DELIVERY_STATUS_LABEL[d.status]})` }));
      const line = lines.get(r.id);
      return { id: r.id, color: colour(r), stops, line: line?.length ? line : [...(depotAt ? [depotAt] : []), ...stops.map((s) => s.at)] };
    });
    map.current?.setRoutes(mapRoutes, focused);
  }, [dayRoutes, lines, focused, depot]);

  useEffect(() => {
    if (view === "map") map.current?.resize();
  }, [view]);

  useEffect(() => {
    for (const [id, p] of positions) map.current?.setDriver(id, driverName(id), p.at, p.timestamp);
  }, [positions, drivers]);

  const focus = (id: number | null) => {
    setFocused(id);
    if (id !== null) map.current?.focus(id);
    else map.current?.fitAll();
  };
  const focusedRoute = dayRoutes.find((r) => r.id === focused) ?? null;

  return (
    <div class="console">
      <header class="topbar">
        <h1>Dispatch console</h1>
        <label class="inline">
          Day <input type="date" value={day} onInput={(e) => setDay(e.currentTarget.value)} name="day" />
        </label>
        <ConnectionBadge state={live} />
        <button type="button" class="secondary" onClick={logout}>
          Log out
        </button>
      </header>
      {error && (
        <p role="alert" class="error banner">
          {error}
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
              drivers={drivers}
              driverName={driverName}
              open={dayOpen}
              onChanged={scheduleRefresh}
              onReplaced={setFocused}
              onBack={() => focus(null)}
              proofHints={proofHints}
            />
          ) : (
            <>
              <div class="filters" role="group" aria-label="Filter routes">
                <label>
                  Status
                  <select value={statusFilter} onChange={(e) => setStatusFilter(e.currentTarget.value)}>
                    <option value="all">all</option>
                    {SHOWN_ROUTE_STATUSES.map((s) => (
                      <option value={String(s)}>{ROUTE_STATUS_LABEL[s]}</option>
                    ))}
                  </select>
                </label>
                <label>
                  Driver
                  <select value={driverFilter} onChange={(e) => setDriverFilter(e.currentTarget.value)}>
                    <option value="all">all</option>
                    <option value="none">no driver</option>
                    {[...drivers.values()].map((d) => (
                      <option value={String(d.id)}>{driverName(d.id)}</option>
                    ))}
                  </select>
                </label>
              </div>
              <RouteList routes={listed} names={names} colour={colour} driverName={driverName} onFocus={focus} />
            </>
          )}
          <OpenDeliveries api={api} day={day} deliveries={dayOpen} process={latest("optimisation")} onProcess={track} />
          <Upload api={api} process={latest("upload")} onProcess={track} />
        </aside>
        <div class="main-view">
          <div class="view-bar">
            <div role="group" aria-label="View" class="view-switch">
              {(["map", "timeline", "report"] as const).map((v) => (
                <button type="button" class="secondary" aria-pressed={view === v} onClick={() => setView(v)}>
                  {v === "map" ? "Map" : v === "timeline" ? "Timeline" : "Report"}
                </button>
              ))}
            </div>
            <div hidden={view !== "map"}>
              <AreaLayer api={api} map={map} drivers={drivers} />
            </div>
          </div>
          <div class="map" ref={mapEl} role="region" aria-label="Map of routes, stops and drivers" hidden={view !== "map"} />
          {view === "report" && <DayReportView api={api} day={day} />}
          {view === "timeline" && <Timeline api={api} day={day} routes={dayRoutes} open={dayOpen} names={names} colour={colour} driverName={driverName} onChanged={scheduleRefresh} />}
        </div>
      </div>
    </div>
  );
}

function RouteList({
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

function RouteDetail({ name, colour, onBack, proofHints, ...actions }: RouteActionsProps & { name: string; colour: string; onBack: () => void; proofHints: Record<number, string> }) {
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
      </p>
      <RouteActions {...actions} />
      <ol class="stops" data-testid="route-stops">
        {route.deliveries.map((d, i) => {
          const late = isLate(d);
          return (
            <li key={d.id} data-delivery-id={d.id} data-status={d.status}>
              <span class="stop-name">
                {i + 1}. {placeName(d)}
              </span>
              <span class="muted">{addressLine(d.address)}</span>
              <span>
                window {span(d.pdt_from, d.pdt_to)} · ETA {time(d.eta_from)}
                {late && <strong class="error"> · late</strong>}
              </span>
              <span class={`delivery-status status-${STATUS_CLASS[d.status]}`}>
                {DELIVERY_STATUS_SYMBOL[d.status]} {DELIVERY_STATUS_LABEL[d.status]}
                {d.atd && ` ${time(d.atd)}`}
              </span>
              {d.drivernotes && <span class="notes">Driver: {d.drivernotes}</span>}
              {(d.status === DeliveryStatus.delivered || d.status === DeliveryStatus.undelivered) && <ProofDetails api={actions.api} deliveryId={d.id} hint={proofHints[d.id]} />}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

function OpenDeliveries({ api, day, deliveries, process, onProcess }: { api: Api; day: string; deliveries: Delivery[]; process: ProcessView | null; onProcess: (p: ProcessView) => void }) {
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [editing, setEditing] = useState<Delivery | "new" | null>(null);
  const [saved, setSaved] = useState("");
  const [vehicles, setVehicles] = useState(2);
  const [start, setStart] = useState("08:00");
  const [roundtrip, setRoundtrip] = useState(true);
  const [error, setError] = useState("");
  const ids = deliveries.map((d) => d.id).filter((id) => selected.has(id));
  const toggle = (id: number) => setSelected((prev) => (prev.has(id) ? new Set([...prev].filter((x) => x !== id)) : new Set(prev).add(id)));
  const allSelected = deliveries.length > 0 && ids.length === deliveries.length;
  const running = process?.status === "running";
  // A refusal of the old session is no news once the dispatcher has logged in again.
  useEffect(() => setError(""), [api]);

  const optimise = async (e: Event) => {
    e.preventDefault();
    setError("");
    try {
      const res = await api.send<{ process_id: string }>(
        "POST",
        "/calcroute/optimized/timewindow",
        { deliveryids: ids, start_time: zonedIso(day, start) },
        { num_vehicles: vehicles, roundtrip },
      );
      onProcess(startedProcess(res.process_id, "optimisation"));
      setSelected(new Set());
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <section aria-labelledby="open-title">
      <h2 id="open-title">Open deliveries ({deliveries.length})</h2>
      {editing ? (
        <DeliveryForm
          key={editing === "new" ? "new" : editing.id}
          api={api}
          day={day}
          delivery={editing === "new" ? undefined : editing}
          onDone={(d) => {
            setEditing(null);
            setSaved(`Delivery ${d.custom_id ?? d.id} saved.`);
          }}
          onCancel={() => setEditing(null)}
        />
      ) : (
        <button type="button" class="secondary" onClick={() => (setSaved(""), setEditing("new"))}>
          New delivery…
        </button>
      )}
      {saved && <p role="status">{saved}</p>}
      {deliveries.length > 0 && (
        <label class="inline">
          <input type="checkbox" checked={allSelected} onChange={() => setSelected(allSelected ? new Set() : new Set(deliveries.map((d) => d.id)))} /> Select all
        </label>
      )}
      <ul class="open-deliveries" data-testid="open-deliveries">
        {deliveries.map((d) => (
          <li key={d.id}>
            <label class="inline">
              <input type="checkbox" checked={selected.has(d.id)} onChange={() => toggle(d.id)} data-delivery-id={d.id} />
              <span>
                {placeName(d)} <span class="muted">{span(d.pdt_from, d.pdt_to)}</span>
                {d.status === DeliveryStatus.undelivered && <span class="error"> ✗ not delivered before</span>}
              </span>
            </label>
            <button type="button" class="link" onClick={() => (setSaved(""), setEditing(d))} aria-label={`Edit ${placeName(d)}`}>
              Edit
            </button>
          </li>
        ))}
      </ul>
      <form class="optimise" onSubmit={optimise} aria-label="Optimise the selected deliveries">
        <label>
          Vehicles
          <input type="number" min={1} max={50} value={vehicles} onInput={(e) => setVehicles(Number(e.currentTarget.value))} name="num_vehicles" />
        </label>
        <label>
          Start time
          <input type="time" value={start} onInput={(e) => setStart(e.currentTarget.value)} name="start_time" />
        </label>
        <label class="inline">
          <input type="checkbox" checked={roundtrip} onChange={(e) => setRoundtrip(e.currentTarget.checked)} name="roundtrip" /> Round trip
        </label>
        <button type="submit" disabled={ids.length === 0 || running}>
          Optimise {ids.length} {ids.length === 1 ? "delivery" : "deliveries"}
        </button>
      </form>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <Variants api={api} ids={ids} onCreated={() => setSelected(new Set())} />
      {process && <ProcessProgress process={process} api={api} onProcess={onProcess} />}
    </section>
  );
}
