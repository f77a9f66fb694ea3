/**
 * Names of a day's tours, in the order of their start (then id). The service
 * names generated tours uniquely within the company's day ("Tour 1",
 * "Tour 2", … on through the day's runs; a `nameprefix` likewise), so a
 * route's `custom_id` is its name; a route without one gets "Tour <its place
 * in the day>".
 */
import type { Route } from "../shared/types";

/** Route id -> name, for the routes of one day, in the order of their start. */
export function tourNames(dayRoutes: Route[]): Map<number, string> {
  const ordered = [...dayRoutes].sort((a, b) => (a.tst_from ?? "").localeCompare(b.tst_from ?? "") || a.id - b.id);
  return new Map(ordered.map((r, i) => [r.id, r.custom_id || `Tour ${i + 1}`]));
}
