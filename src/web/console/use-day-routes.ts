/**
 * The day's routes as the console shows them: those of the chosen day that
 * pass the filters, numbered over the whole day (a filter does not renumber
 * the tours) and listed in that order, each in its colour; the day's open
 * deliveries; and the route the dispatcher focused.
 */
import { useMemo, useState } from "preact/hooks";
import { dayOf, personName } from "../shared/format";
import type { Route } from "../shared/types";
import { PALETTE } from "./palette";
import { tourNames } from "./route-names";
import type { DayData } from "./use-day-data";

const routeDay = (r: Route) => r.tst_from ?? r.deliveries.find((d) => d.pdt_from)?.pdt_from ?? null;

export function useDayRoutes({ routes, open, drivers }: Pick<DayData, "routes" | "open" | "drivers">, day: string) {
  const [statusFilter, setStatusFilter] = useState("all");
  const [driverFilter, setDriverFilter] = useState("all");
  const [focused, setFocused] = useState<number | null>(null);

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

  return {
    filters: { status: statusFilter, setStatus: setStatusFilter, driver: driverFilter, setDriver: setDriverFilter },
    dayRoutes,
    dayOpen,
    names,
    listed,
    colour,
    driverName,
    focused,
    setFocused,
    focusedRoute: dayRoutes.find((r) => r.id === focused) ?? null,
  };
}

export type DayRoutes = ReturnType<typeof useDayRoutes>;
export type RouteFilters = DayRoutes["filters"];
