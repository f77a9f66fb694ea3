/**
 * What the console shows, as the API has it: the routes (with their lines),
 * the open deliveries, the drivers and their last positions, the depot. Read
 * once the company's time zone is known, and again on `refresh` (events
 * schedule one: a burst of them causes one refetch).
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { DeliveryStatus, RouteStatus, type RouteStatusId } from "../../shared/contract/states";
import type { Api } from "../shared/api";
import { loadCompanyTimeZone } from "../shared/format";
import type { Address, Delivery, Driver, Point, Route } from "../shared/types";
import type { LngLat } from "./map";

/** The route states the console lists (and filters by). */
export const SHOWN_ROUTE_STATUSES: RouteStatusId[] = [RouteStatus.new, RouteStatus.assigned, RouteStatus.accepted, RouteStatus.ontheway, RouteStatus.finished];
const OPEN_DELIVERY_STATUSES = [DeliveryStatus.none, DeliveryStatus.undelivered];

export interface Position {
  at: LngLat;
  timestamp: string;
}

export const lngLat = (p: Point | null | undefined): LngLat | null => (p ? [p.coordinates[0], p.coordinates[1]] : null);

export function useDayData(api: Api) {
  const [routes, setRoutes] = useState<Route[]>([]);
  const [lines, setLines] = useState<Map<number, LngLat[]>>(new Map());
  const [open, setOpen] = useState<Delivery[]>([]);
  const [drivers, setDrivers] = useState<Map<number, Driver>>(new Map());
  const [positions, setPositions] = useState<Map<number, Position>>(new Map());
  const [depot, setDepot] = useState<Address | null>(null);
  const [error, setError] = useState("");

  const refresh = useCallback(async () => {
    try {
      const q = { filters: [{ name: "status", op: "in", val: SHOWN_ROUTE_STATUSES }], order_by: [{ field: "id", direction: "asc" }] };
      const [rs, metas, ds, drv, pos] = await Promise.all([
        api.list("/route", q),
        api.list("/routemetadata", q, { routestring: true }),
        api.list("/delivery", { filters: [{ name: "status", op: "in", val: OPEN_DELIVERY_STATUSES }], order_by: [{ field: "pdt_from", direction: "asc" }] }),
        api.list("/driver", {}),
        api.list("/driverposition", {}),
      ]);
      setRoutes(rs);
      // The line's positions are [longitude, latitude] pairs.
      setLines(new Map(metas.map((m) => [m.id, (m.routestring?.coordinates ?? []) as LngLat[]])));
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

  /** A driver's position as an event told it. */
  const movePosition = useCallback((driverId: number, at: LngLat, timestamp: string) => setPositions((prev) => new Map(prev).set(driverId, { at, timestamp })), []);

  useEffect(() => {
    // Times follow the company's zone: refresh once it is known.
    loadCompanyTimeZone(api).then(() => void refresh(), () => void refresh());
    api.get("/companyaddress").then(setDepot, () => setDepot(null));
  }, [api, refresh]);

  return { routes, lines, open, drivers, positions, depot, error, refresh, scheduleRefresh, movePosition };
}

export type DayData = ReturnType<typeof useDayData>;
