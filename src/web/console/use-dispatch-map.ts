/** The console's map (map.ts) kept in step with the day: the depot, the shown routes with their stops, the focused one, the drivers' positions. */
import { useEffect, useRef } from "preact/hooks";
import { placeName } from "../shared/format";
import { DELIVERY_STATUS_LABEL, type Delivery } from "../shared/types";
import { DispatchMap, type LngLat, type MapRoute } from "./map";
import { STATUS_CLASS } from "./stops";
import { type DayData, lngLat } from "./use-day-data";
import type { DayRoutes } from "./use-day-routes";

type Shown = Pick<DayData, "lines" | "depot" | "positions" | "drivers"> & Pick<DayRoutes, "dayRoutes" | "focused" | "colour" | "driverName"> & { visible: boolean };

export function useDispatchMap({ dayRoutes, lines, depot, focused, positions, drivers, colour, driverName, visible }: Shown) {
  const mapEl = useRef<HTMLDivElement>(null);
  const map = useRef<DispatchMap | null>(null);

  useEffect(() => {
    if (mapEl.current && !map.current) map.current = new DispatchMap(mapEl.current);
  }, []);

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

  // A map shown again after another view had its place needs its size measured anew.
  useEffect(() => {
    if (visible) map.current?.resize();
  }, [visible]);

  useEffect(() => {
    for (const [id, p] of positions) map.current?.setDriver(id, driverName(id), p.at, p.timestamp);
  }, [positions, drivers]);

  /** Zooms to one route, or (null) to all of them. */
  const show = (id: number | null) => {
    if (id !== null) map.current?.focus(id);
    else map.current?.fitAll();
  };

  return { mapEl, map, show };
}
