/**
 * The company's wall clock: instants <-> dates and times of day in an IANA
 * time zone, through Intl (the runtime's zone data, none of our own). Shared
 * by the worker and the pages (pure: nothing but Intl and Date).
 *
 * Daylight saving: the offset is read at the instant itself, never at some
 * other hour of the day, so a changeover day is 23 or 25 hours long and
 * the hours before the change keep the offset they really have.
 */

export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 = Monday ... 6 = Sunday. */
  weekday: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** What the clock on the wall in `timeZone` shows at the instant `ms`. */
export function wallClockAt(ms: number, timeZone: string): WallClock {
  const parts = formatter(timeZone).formatToParts(new Date(ms));
  const get = (type: string) => +(parts.find((p) => p.type === type)?.value ?? 0);
  const year = get("year"), month = get("month"), day = get("day");
  return { year, month, day, hour: get("hour"), minute: get("minute"), second: get("second"), weekday: (new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 6) % 7 };
}

/** Offset in minutes of `timeZone` at the instant `ms` (e.g. +60 for Berlin in winter, +120 in summer). */
function zoneOffsetMinutes(timeZone: string, ms: number): number {
  const c = wallClockAt(ms, timeZone);
  const local = Date.UTC(c.year, c.month - 1, c.day, c.hour, c.minute, c.second);
  return Math.round((local - Math.floor(ms / 1000) * 1000) / 60_000);
}

const pad = (n: number) => String(n).padStart(2, "0");

/** The date (`YYYY-MM-DD`) on the wall in `timeZone` at the instant `ms`. */
export function dayAt(ms: number, timeZone: string): string {
  const c = wallClockAt(ms, timeZone);
  return `${c.year}-${pad(c.month)}-${pad(c.day)}`;
}

/** The date `days` after `day` (both `YYYY-MM-DD`). */
export function addDays(day: string, days: number): string {
  const [y, m, d] = day.split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

/**
 * The instant a date (`YYYY-MM-DD`) and time of day (`hh:mm[:ss]`) on the wall
 * in `timeZone` name, epoch ms. A time the clock skips (02:30 on the spring
 * changeover in Berlin) is read on the clock before the change, so it lands
 * as much later (03:30); a time the clock shows twice (02:30 on the autumn
 * changeover) is the first of the two. (Temporal calls this "compatible".)
 */
export function instantOf(day: string, time: string, timeZone: string): number {
  const [y, mo, d] = day.split("-").map(Number);
  const [h, mi, s = 0] = time.split(":").map(Number);
  const local = Date.UTC(y, mo - 1, d, h, mi, s);
  // Changeovers are months apart: the offsets a day before and after bracket at most one.
  const before = zoneOffsetMinutes(timeZone, local - DAY_MS);
  const after = zoneOffsetMinutes(timeZone, local + DAY_MS);
  const valid = [local - before * 60_000, local - after * 60_000].filter((t) => wallClockIs(t, timeZone, local));
  return valid.length ? Math.min(...valid) : local - before * 60_000;
}

const wallClockIs = (ms: number, timeZone: string, local: number) => ms + zoneOffsetMinutes(timeZone, ms) * 60_000 === local;

/** The first and the next day's first instant of a date in `timeZone`, epoch ms: 23, 24 or 25 hours apart. */
export function dayBounds(day: string, timeZone: string): { start: number; end: number } {
  return { start: instantOf(day, "00:00", timeZone), end: instantOf(addDays(day, 1), "00:00", timeZone) };
}

/** The day (in `timeZone`) that holds the instant `ms`: its bounds as `dayBounds` gives them. */
export const dayAround = (ms: number, timeZone: string) => dayBounds(dayAt(ms, timeZone), timeZone);
