/**
 * Several time windows per delivery (opening hours such as 08:00-12:00 and
 * 14:00-18:00) inside its outer window `pdt_from`..`pdt_to`. Pure: the
 * checks every write shares (POST/PATCH /delivery, deliverydata, uploads)
 * and the window a delivery is held to once a plan has chosen one.
 */
import { formatDateTime, normaliseDateTime, parseDateTime } from "../lib/time";
import { dayAt, instantOf } from "../../shared/wall-clock";

export interface DateTimeWindow {
  from: string;
  to: string;
}

/** At most this many windows per delivery. */
export const MAX_TIME_WINDOWS = 10;

/**
 * The windows as stored (UTC, sorted by start) and the outer window they
 * imply where `pdt_from`/`pdt_to` are not given; a problem as text naming
 * what is wrong. Overlapping windows are refused rather than merged: two
 * overlapping opening hours are more likely a typing error than meant.
 */
export function checkTimeWindows(
  windows: readonly DateTimeWindow[],
  outer: { from: string | null; to: string | null },
): { windows: DateTimeWindow[]; from: string | null; to: string | null } | { problem: string } {
  if (windows.length > MAX_TIME_WINDOWS) return { problem: `at most ${MAX_TIME_WINDOWS} time windows` };
  const parsed: { from: number; to: number }[] = [];
  for (const w of windows) {
    const from = parseDateTime(w.from);
    const to = parseDateTime(w.to);
    if (from === null || to === null) return { problem: "time window ends must be ISO 8601 date-times" };
    if (from >= to) return { problem: `a time window must start before it ends (${w.from} - ${w.to})` };
    parsed.push({ from, to });
  }
  parsed.sort((a, b) => a.from - b.from);
  for (let i = 1; i < parsed.length; i++) {
    if (parsed[i].from < parsed[i - 1].to) return { problem: "time windows must not overlap" };
  }
  const outerFrom = outer.from === null ? null : parseDateTime(outer.from);
  const outerTo = outer.to === null ? null : parseDateTime(outer.to);
  if (parsed.length && ((outerFrom !== null && parsed[0].from < outerFrom) || (outerTo !== null && parsed[parsed.length - 1].to > outerTo)))
    return { problem: "time windows must lie within pdt_from..pdt_to" };
  const stored = parsed.map((w) => ({ from: formatDateTime(w.from), to: formatDateTime(w.to) }));
  return {
    windows: stored,
    from: outer.from ?? stored[0]?.from ?? null,
    to: outer.to ?? stored[stored.length - 1]?.to ?? null,
  };
}

/**
 * An upload cell `08:00-12:00, 14:00-18:00` (times of day on the company's
 * wall clock on `day`, `YYYY-MM-DD`; commas or semicolons between windows;
 * ISO date-times are taken as they are). Null when the cell is not of that form.
 */
export function parseWindowCell(cell: string, day: string, timeZone: string): DateTimeWindow[] | null {
  const windows: DateTimeWindow[] = [];
  for (const part of cell.split(/[,;]/).map((p) => p.trim()).filter(Boolean)) {
    const clock = /^(\d{1,2}:\d{2})\s*[-–]\s*(\d{1,2}:\d{2})$/.exec(part);
    if (clock) {
      const at = (t: string) => formatDateTime(instantOf(day, t.padStart(5, "0"), timeZone));
      windows.push({ from: at(clock[1]), to: at(clock[2]) });
      continue;
    }
    const iso = /^(\S+)\s*\/\s*(\S+)$/.exec(part);
    const from = iso && normaliseDateTime(iso[1]);
    const to = iso && normaliseDateTime(iso[2]);
    if (!from || !to) return null;
    windows.push({ from, to });
  }
  return windows;
}

/** The day a row's windows are on: its outer window's, else tomorrow on the company's wall clock. */
export const windowDay = (from: string | null | undefined, timeZone: string, now = Date.now()) =>
  dayAt(from ? (parseDateTime(from) ?? now) : now + 86_400_000, timeZone);
