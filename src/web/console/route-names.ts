/**
 * Names that tell a day's tours apart. Every routing run names its tours
 * "Tour 1", "Tour 2", … (`custom_id`), so two runs of a day both have a
 * "Tour 1". The console numbers the day's tours by start time (then id) and
 * shows a name the dispatcher gave (a `nameprefix` or an edited `custom_id`)
 * beside the number.
 */
import type { Route } from "../shared/types";

const GENERATED = /^Tour \d+$/;

/** Route id -> "Tour n" or "Tour n · <name>", for the routes of one day, in the order of their numbers. */
export function tourNames(dayRoutes: Route[]): Map<number, string> {
  const ordered = [...dayRoutes].sort((a, b) => (a.tst_from ?? "").localeCompare(b.tst_from ?? "") || a.id - b.id);
  return new Map(
    ordered.map((r, i) => {
      const given = r.custom_id && !GENERATED.test(r.custom_id) ? ` · ${r.custom_id}` : "";
      return [r.id, `Tour ${i + 1}${given}`];
    }),
  );
}
