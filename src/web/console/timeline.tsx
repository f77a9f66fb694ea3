/**
 * The day as a timeline: one row per route (and one for the open
 * deliveries), each stop a block at its planned time (service start to
 * departure, in the company's zone), its time window shaded below, late stops
 * marked by symbol and border, the planned breaks as hatched blocks between
 * them, a line at the current time. A stop moves to
 * another route or out of its route by drag and drop onto a row, or without
 * dragging through its "Assign to…" menu (WCAG 2.2 SC 2.5.7); see move.ts.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { Api } from "../shared/api";
import { dayHours, dayOf, placeName, span, time } from "../shared/format";
import { DELIVERY_STATUS_LABEL, type Delivery, ROUTE_STATUS_LABEL, type Route } from "../shared/types";
import { DeliveryStatus, RouteStatus } from "../../shared/contract/states";
import { MoveRefused, moveDelivery } from "./move";
import { STATUS_CLASS, isLate } from "./stops";
import { breakText } from "../shared/breaks";

const HOUR_MS = 3_600_000;
/** Pixels per hour to choose from; 0 fits the day's hours into the width shown (at least `MIN_FIT` px per hour). */
const SCALES = [0, 60, 120, 240, 480];
const MIN_FIT = 60;
/** Hours shown when the day has nothing with a time. */
const DEFAULT_HOURS: [number, number] = [6, 18];
/** Narrowest stop block (room for its number and marks); lane heights of blocks and windows. */
const MIN_BLOCK_PX = 30;
const BLOCK_REM = 2;
const WINDOW_REM = 0.95;

/** One row: a route, or (route null) the open deliveries. */
interface Row {
  key: string;
  route: Route | null;
  stops: Delivery[];
}

/** A delivery as the timeline places it: planned stay (or, when open, its window start) and window, in epoch ms. */
interface Placed {
  d: Delivery;
  n: number;
  start: number | null;
  end: number | null;
  windowFrom: number | null;
  windowTo: number | null;
}

const ms = (iso: string | null | undefined) => (iso ? Date.parse(iso) : null);

function place(d: Delivery, n: number): Placed {
  const windowFrom = ms(d.pdt_from);
  const windowTo = ms(d.pdt_to);
  const start = ms(d.tdt_from) ?? ms(d.eta_from) ?? windowFrom;
  const end = ms(d.tdt_to) ?? ms(d.eta_to) ?? start;
  return { d, n, start, end, windowFrom, windowTo };
}

/** Intervals into as few lanes as possible without overlap (interval partitioning): lane per id. */
function lanes(items: { id: number; from: number; to: number }[]): { lane: Map<number, number>; count: number } {
  const ends: number[] = [];
  const lane = new Map<number, number>();
  for (const it of [...items].sort((a, b) => a.from - b.from)) {
    let i = ends.findIndex((end) => end <= it.from);
    if (i < 0) i = ends.push(0) - 1;
    ends[i] = it.to;
    lane.set(it.id, i);
  }
  return { lane, count: ends.length };
}

/** Whether a stop can move: planned on an unfinished route, or open. */
const movable = (d: Delivery, route: Route | null) =>
  route ? d.status === DeliveryStatus.routed && route.status < RouteStatus.finished : d.status === DeliveryStatus.none || d.status === DeliveryStatus.undelivered;
const accepts = (route: Route | null) => !route || route.status < RouteStatus.finished;

export function Timeline({
  api,
  day,
  routes,
  open,
  names,
  colour,
  driverName,
  onChanged,
}: {
  api: Api;
  day: string;
  routes: Route[];
  open: Delivery[];
  /** The day's tour names (`tourNames`), as the side panel shows them. */
  names: Map<number, string>;
  colour: (r: Route) => string;
  driverName: (id: number | null) => string;
  onChanged: () => void;
}) {
  const [scale, setScale] = useState(0);
  const scroller = useRef<HTMLDivElement>(null);
  /** Width the hours may take without scrolling (the box less the route names). */
  const [room, setRoom] = useState(0);
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const measure = () => setRoom(el.clientWidth - (el.querySelector(".tl-label")?.getBoundingClientRect().width ?? 0));
    const watch = new ResizeObserver(measure);
    watch.observe(el);
    return () => watch.disconnect();
  }, []);
  const [now, setNow] = useState(() => Date.now());
  const [selected, setSelected] = useState<number | null>(null);
  const [dragging, setDragging] = useState<{ id: number; from: string } | null>(null);
  const [over, setOver] = useState<string | null>(null);
  const [busy, setBusy] = useState("");
  const [error, setError] = useState("");
  const menu = useRef<HTMLDetailsElement>(null);
  const toMenu = useRef(false);
  useEffect(() => {
    if (!toMenu.current) return;
    toMenu.current = false;
    menu.current?.querySelector("summary")?.focus();
  }, [selected]);

  useEffect(() => {
    const t = window.setInterval(() => setNow(Date.now()), 30_000);
    return () => window.clearInterval(t);
  }, []);

  const rows: Row[] = useMemo(() => [...routes.map((r) => ({ key: `route-${r.id}`, route: r, stops: r.deliveries })), { key: "open", route: null, stops: open }], [routes, open]);
  const placed = useMemo(() => new Map(rows.map((row) => [row.key, row.stops.map((d, i) => place(d, i + 1))])), [rows]);

  // Hours counted from the day's midnight: a daylight-saving changeover day has 23 or 25, labelled by the wall clock.
  const { start: dayStart, hours: dayLength, labels } = useMemo(() => dayHours(day), [day]);
  const [first, last] = useMemo(() => {
    const pauses = routes.flatMap((r) => (r.breaks ?? []).flatMap((b) => [Date.parse(b.start), Date.parse(b.end)]));
    const hours = [...[...placed.values()].flat().flatMap((p) => [p.start, p.end, p.windowFrom, p.windowTo]), ...pauses].filter((t): t is number => t !== null).map((t) => (t - dayStart) / HOUR_MS);
    if (!hours.length) return DEFAULT_HOURS;
    const from = Math.min(dayLength - 1, Math.max(0, Math.floor(Math.min(...hours))));
    return [from, Math.min(dayLength, Math.max(from + 1, Math.ceil(Math.max(...hours))))];
  }, [placed, routes, dayStart, dayLength]);
  const perHour = scale || Math.max(MIN_FIT, Math.floor(room / (last - first)));
  const x = (t: number) => ((t - dayStart) / HOUR_MS - first) * perHour;
  const width = (last - first) * perHour;
  const hours = Array.from({ length: last - first + 1 }, (_, i) => first + i);
  const nowShown = dayOf(new Date(now)) === day && x(now) >= 0 && x(now) <= width;

  // Once per day shown: scroll to the first planned stop (else now), so a narrow screen starts where the day does.
  const scrolledFor = useRef("");
  useEffect(() => {
    const starts = rows.flatMap((row) => (row.route ? placed.get(row.key)!.map((p) => p.start) : [])).filter((t): t is number => t !== null);
    if (!scroller.current || scrolledFor.current === day || (!starts.length && !nowShown)) return;
    scrolledFor.current = day;
    scroller.current.scrollLeft = Math.max(0, x(starts.length ? Math.min(...starts) : now) - 2 * MIN_BLOCK_PX);
  });

  const rowOf = (key: string) => rows.find((r) => r.key === key)!;
  const selectedRow = rows.find((r) => r.stops.some((d) => d.id === selected)) ?? null;
  const selectedStop = selectedRow ? placed.get(selectedRow.key)!.find((p) => p.d.id === selected)! : null;
  const routeLabel = (r: Route) => `${names.get(r.id) ?? "Route"} #${r.id}`;
  const rowName = (row: Row) => (row.route ? routeLabel(row.route) : "Open deliveries");

  const move = async (deliveryId: number, from: Row, to: Row) => {
    if (from.key === to.key || busy) return;
    const d = from.stops.find((s) => s.id === deliveryId);
    if (!d || !movable(d, from.route) || !accepts(to.route)) return;
    if (menu.current) menu.current.open = false;
    setError("");
    setBusy(`Moving ${placeName(d)} to ${rowName(to)}…`);
    try {
      await moveDelivery(api, deliveryId, from.route, to.route, routeLabel);
      setSelected(null);
      onChanged();
    } catch (err) {
      setError(err instanceof MoveRefused ? err.message : `The move failed: ${err instanceof Error ? err.message : String(err)}`);
      onChanged();
    } finally {
      setBusy("");
    }
  };

  const describe = (p: Placed, row: Row) =>
    [
      row.route ? `Stop ${p.n}: ${placeName(p.d)}` : placeName(p.d),
      row.route ? `on ${routeLabel(row.route)}` : "not on a route",
      p.start !== null && row.route ? `planned ${span(new Date(p.start).toISOString(), new Date(p.end ?? p.start).toISOString())}` : null,
      `window ${span(p.d.pdt_from, p.d.pdt_to)}`,
      DELIVERY_STATUS_LABEL[p.d.status],
      isLate(p.d) ? "late: expected after its window closes" : null,
    ]
      .filter(Boolean)
      .join(", ");

  return (
    <section class="timeline" aria-labelledby="timeline-title" data-testid="timeline">
      <div class="tl-bar">
        <h2 id="timeline-title">Timeline {day}</h2>
        {/* Labelled by "for", not by wrapping: the chosen option's text ("fit the day") must not join the name. */}
        <span class="inline tl-scale">
          <label for="tl-scale">Scale</label>
          <select id="tl-scale" value={String(scale)} onChange={(e) => setScale(Number(e.currentTarget.value))} name="scale">
            {SCALES.map((s) => (
              <option value={String(s)}>{s ? `${s} px per hour` : "fit the day"}</option>
            ))}
          </select>
        </span>
        <p class="muted tl-help">Drag a stop onto another row, or select it and use “Assign to…”.</p>
      </div>
      <div class="tl-scroll" ref={scroller}>
        <div class="tl-grid" style={{ width: `calc(var(--tl-label) + ${width}px)` }}>
          <div class="tl-row tl-head" aria-hidden="true">
            <div class="tl-label">Route</div>
            <div class="tl-track" style={{ width: `${width}px` }}>
              {hours.map((h) => (
                <span class="tl-hour" style={{ left: `${(h - first) * perHour}px` }}>
                  {labels[h]}
                </span>
              ))}
            </div>
          </div>
          {rows.map((row) => {
            const stops = placed.get(row.key)!;
            const blockX = (p: Placed) => (p.start === null ? 0 : x(p.start));
            const blockWidth = (p: Placed) => Math.max(MIN_BLOCK_PX, p.start === null ? 0 : x(p.end ?? p.start) - x(p.start));
            const blocks = lanes(stops.map((p) => ({ id: p.d.id, from: blockX(p), to: blockX(p) + blockWidth(p) })));
            const windows = lanes(stops.filter((p) => p.windowFrom !== null).map((p) => ({ id: p.d.id, from: p.windowFrom!, to: p.windowTo ?? p.windowFrom! })));
            const windowTop = 0.3 + Math.max(1, blocks.count) * BLOCK_REM;
            const target = dragging !== null && dragging.from !== row.key && accepts(row.route);
            return (
              <div
                key={row.key}
                class={`tl-row${row.route ? "" : " tl-open"}${target ? " drop-ok" : ""}${over === row.key && target ? " drop-over" : ""}`}
                role="group"
                aria-label={row.route ? `${routeLabel(row.route)}, ${ROUTE_STATUS_LABEL[row.route.status]}, ${driverName(row.route.driver_id)}` : "Open deliveries"}
                data-row={row.key}
                data-route-id={row.route?.id}
                onDragOver={(e) => {
                  if (!target) return;
                  e.preventDefault();
                  e.dataTransfer!.dropEffect = "move";
                  setOver(row.key);
                }}
                onDragLeave={() => setOver((o) => (o === row.key ? null : o))}
                onDrop={(e) => {
                  e.preventDefault();
                  setOver(null);
                  if (dragging && target) void move(dragging.id, rowOf(dragging.from), row);
                }}
              >
                <div class="tl-label">
                  {row.route && <span class="swatch" style={{ background: colour(row.route) }} aria-hidden="true" />}
                  <span class="tl-name">{rowName(row)}</span>
                  <span class="muted">{row.route ? `${ROUTE_STATUS_LABEL[row.route.status]} · ${driverName(row.route.driver_id)}` : `${row.stops.length} not on a route`}</span>
                </div>
                <div class="tl-track" style={{ width: `${width}px`, height: `${windowTop + windows.count * WINDOW_REM + 0.3}rem` }}>
                  {hours.map((h) => (
                    <span class="tl-gridline" style={{ left: `${(h - first) * perHour}px` }} aria-hidden="true" />
                  ))}
                  {(row.route?.breaks ?? []).map((b) => (
                    <span
                      class="tl-break"
                      role="img"
                      aria-label={breakText(b)}
                      title={breakText(b)}
                      data-testid="timeline-break"
                      style={{ left: `${x(Date.parse(b.start))}px`, width: `${Math.max(6, x(Date.parse(b.end)) - x(Date.parse(b.start)))}px`, height: `${Math.max(1, blocks.count) * BLOCK_REM - 0.3}rem` }}
                    >
                      <span aria-hidden="true">☕</span>
                    </span>
                  ))}
                  {stops.map((p) =>
                    p.windowFrom === null ? null : (
                      <span
                        class="tl-window"
                        aria-hidden="true"
                        data-delivery-id={p.d.id}
                        title={`Stop ${p.n} window ${span(p.d.pdt_from, p.d.pdt_to)}`}
                        style={{ left: `${x(p.windowFrom)}px`, width: `${Math.max(2, x(p.windowTo ?? p.windowFrom) - x(p.windowFrom))}px`, top: `${windowTop + windows.lane.get(p.d.id)! * WINDOW_REM}rem` }}
                      >
                        <span class="tl-window-n">{row.route ? p.n : "○"}</span>
                      </span>
                    ),
                  )}
                  {stops.map((p) => {
                    const late = isLate(p.d);
                    const canMove = movable(p.d, row.route) && !busy;
                    return (
                      <button
                        type="button"
                        key={p.d.id}
                        class={`tl-stop status-${STATUS_CLASS[p.d.status]}${late ? " late" : ""}${selected === p.d.id ? " selected" : ""}${p.start === null ? " untimed" : ""}`}
                        data-delivery-id={p.d.id}
                        data-status={p.d.status}
                        draggable={canMove}
                        aria-label={describe(p, row)}
                        aria-pressed={selected === p.d.id}
                        title={describe(p, row)}
                        style={{
                          left: `${blockX(p)}px`,
                          width: `${blockWidth(p)}px`,
                          top: `${0.3 + blocks.lane.get(p.d.id)! * BLOCK_REM}rem`,
                          borderColor: row.route ? colour(row.route) : undefined,
                        }}
                        onClick={(e) => {
                          // Chosen by keyboard (a click without pointer): the menu is next, not the rest of the grid.
                          toMenu.current = e.detail === 0 && selected !== p.d.id;
                          setSelected((s) => (s === p.d.id ? null : p.d.id));
                        }}
                        onDragStart={(e) => {
                          e.dataTransfer!.setData("text/plain", String(p.d.id));
                          e.dataTransfer!.effectAllowed = "move";
                          setDragging({ id: p.d.id, from: row.key });
                        }}
                        onDragEnd={() => {
                          setDragging(null);
                          setOver(null);
                        }}
                      >
                        {late && <span aria-hidden="true">⚠</span>}
                        {row.route ? p.n : "○"}
                      </button>
                    );
                  })}
                  {nowShown && (
                    <span class="tl-now" style={{ left: `${x(now)}px` }} role="img" aria-label={`Now ${time(new Date(now).toISOString())}`} data-testid="now-line">
                      <span class="tl-now-label" aria-hidden="true">
                        now
                      </span>
                    </span>
                  )}
                </div>
              </div>
            );
          })}
        </div>
      </div>
      <p role="status" class="tl-busy">
        {busy}
      </p>
      {error && (
        <p role="alert" class="error tl-error">
          ⚠ {error}
        </p>
      )}
      {selectedStop && selectedRow && (
        <div class="tl-selected" data-delivery-id={selectedStop.d.id}>
          <p>
            <strong>{describe(selectedStop, selectedRow)}</strong>
          </p>
          {movable(selectedStop.d, selectedRow.route) ? (
            <AssignMenu
              menu={menu}
              disabled={!!busy}
              targets={rows.filter((r) => r.key !== selectedRow.key && accepts(r.route)).map((r) => ({ key: r.key, label: r.route ? `${routeLabel(r.route)} (${driverName(r.route.driver_id)})` : "Out of its route (open deliveries)" }))}
              onPick={(key) => void move(selectedStop.d.id, selectedRow, rowOf(key))}
            />
          ) : (
            <p class="muted">This stop cannot move: it is reported or its route is finished.</p>
          )}
        </div>
      )}
    </section>
  );
}

/** The non-drag way to move a stop: a disclosure listing the rows it can go to. */
function AssignMenu({ targets, onPick, disabled, menu }: { targets: { key: string; label: string }[]; onPick: (key: string) => void; disabled: boolean; menu: { current: HTMLDetailsElement | null } }) {
  return (
    <details
      class="assign-menu"
      ref={menu}
      onKeyDown={(e) => {
        if (e.key !== "Escape" || !menu.current?.open) return;
        menu.current.open = false;
        menu.current.querySelector("summary")?.focus();
      }}
    >
      <summary>Assign to…</summary>
      <ul aria-label="Assign to">
        {targets.map((t) => (
          <li key={t.key}>
            <button type="button" class="secondary" disabled={disabled} data-target={t.key} onClick={() => onPick(t.key)}>
              {t.label}
            </button>
          </li>
        ))}
      </ul>
    </details>
  );
}
