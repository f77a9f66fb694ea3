/**
 * Date-time rules of the interface (contract.md §7): inputs are ISO 8601 and
 * mean UTC without a zone designator; responses are UTC with `Z`.
 * Stored form: `YYYY-MM-DDTHH:MM:SSZ` (sortable as text).
 */

import { instantOf } from "../../shared/wall-clock";

const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Parses an ISO 8601 date-time; no designator = UTC. Returns epoch ms or null. */
export function parseDateTime(input: string): number | null {
  const m = ISO_DATE_TIME.exec(input.trim());
  if (!m) return null;
  const [, y, mo, d, h = "00", mi = "00", s = "00", frac = "", zone] = m;
  const year = +y, month = +mo, day = +d, hour = +h, minute = +mi, second = +s;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  let ms = Date.UTC(year, month - 1, day, hour, minute, second, Math.round(+`0.${frac || "0"}` * 1000));
  // Reject dates that roll over (e.g. 2026-02-30).
  if (new Date(ms).getUTCDate() !== day) return null;
  if (zone && zone.toUpperCase() !== "Z") {
    const sign = zone[0] === "-" ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    const offset = sign * (+digits.slice(0, 2) * 60 + +digits.slice(2, 4));
    if (Math.abs(offset) > 18 * 60) return null;
    ms -= offset * 60_000;
  }
  return ms;
}

/** Epoch ms -> stored / response form. */
export function formatDateTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** Normalises an input date-time to the stored form, or null when invalid. */
export function normaliseDateTime(input: string): string | null {
  const ms = parseDateTime(input);
  return ms === null ? null : formatDateTime(ms);
}

export const nowIso = () => formatDateTime(Date.now());

const TIME_OF_DAY = /^(\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * A date-time as a person reads it: in the company's time zone, e.g.
 * `{ date: "Tue, 18 Jun 2030", time: "14:59" }` (en) or `{ date: "Di., 18. Juni 2030", time: "14:59" }` (de).
 */
export function localDateTimeText(ms: number, timeZone: string, locale = "en-GB"): { date: string; time: string } {
  const date = new Intl.DateTimeFormat(locale, { timeZone, weekday: "short", day: "numeric", month: "short", year: "numeric" }).format(ms);
  const time = new Intl.DateTimeFormat(locale, { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(ms);
  return { date, time };
}

function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

/**
 * Time-of-day fields accept `hh:mm:ss+hh:mm` or `hh:mm:ss` (the company's
 * wall clock). Stored with the offset when one is given, e.g.
 * `08:00:00+01:00`, else as `08:00:00`: a wall-clock time, read with the
 * offset of the day it is used on (summer or winter time).
 */
export function normaliseTimeOfDay(input: string): string | null {
  const m = TIME_OF_DAY.exec(input.trim());
  if (!m) return null;
  const [, h, mi, s = "00", zone] = m;
  if (+h > 23 || +mi > 59 || +s > 59) return null;
  if (!zone) return `${h}:${mi}:${s}`;
  let offset = 0;
  if (zone.toUpperCase() !== "Z") {
    const digits = zone.slice(1).replace(":", "");
    offset = (zone[0] === "-" ? -1 : 1) * (+digits.slice(0, 2) * 60 + +digits.slice(2, 4));
    if (Math.abs(offset) > 18 * 60) return null;
  }
  return `${h}:${mi}:${s}${formatOffset(offset)}`;
}

/** Seconds after UTC midnight of a stored time of day with its offset (may be negative or exceed a day). */
function timeOfDayUtcSeconds(stored: string): number {
  const [, h, mi, s, zone] = TIME_OF_DAY.exec(stored)!;
  const digits = (zone ?? "+00:00").slice(1).replace(":", "");
  const offset = zone && zone.toUpperCase() !== "Z" ? (zone[0] === "-" ? -1 : 1) * (+digits.slice(0, 2) * 60 + +digits.slice(2, 4)) : 0;
  return +h * 3600 + +mi * 60 + +s - offset * 60;
}

/**
 * The instant (epoch seconds) a stored time of day names on a date
 * (`YYYY-MM-DD`, the company's day): with its offset if it carries one,
 * else on the company's wall clock that day.
 */
export function timeOfDayOn(day: string, stored: string, timeZone: string): number {
  const [, h, mi, s, zone] = TIME_OF_DAY.exec(stored)!;
  if (!zone) return instantOf(day, `${h}:${mi}:${s}`, timeZone) / 1000;
  const [y, m, d] = day.split("-").map(Number);
  return Date.UTC(y, m - 1, d) / 1000 + timeOfDayUtcSeconds(stored);
}
