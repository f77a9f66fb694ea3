/**
 * Times in the company's time zone (the service keeps UTC). Until GET /company
 * has answered, the service's default zone. Wall clock <-> instant: the
 * module the worker uses too (src/shared/wall-clock.ts).
 */
import { dayAt, dayBounds, instantOf } from "../../shared/wall-clock";
import type { Api } from "./api";

let zone = "Europe/Berlin";
let timeFmt = new Intl.DateTimeFormat("de-DE", { timeZone: zone, hour: "2-digit", minute: "2-digit" });

/** Switches every time shown to the company's zone (from `GET /company`); the page re-renders afterwards. */
export function setTimeZone(timeZone: string) {
  try {
    timeFmt = new Intl.DateTimeFormat("de-DE", { timeZone, hour: "2-digit", minute: "2-digit" });
    zone = timeZone;
  } catch {
    // A zone this browser does not know: keep the previous one.
  }
}

/** Loads the company's zone (the page refreshes afterwards). */
export async function loadCompanyTimeZone(api: Api): Promise<void> {
  const company = await api.get("/company");
  const timeZone = company.objects[0]?.timezone;
  if (timeZone) setTimeZone(timeZone);
}

/** The zone times are shown in (IANA name). */
export const timeZone = () => zone;

export const time = (iso: string | null | undefined) => (iso ? timeFmt.format(new Date(iso)) : "–");
export const span = (from: string | null | undefined, to: string | null | undefined) => (from === to ? time(from) : `${time(from)}–${time(to)}`);
/** A delivery's windows as people read them: its several (`08:00–12:00, 14:00–18:00`), else its one. */
export const windowsText = (d: { pdt_from: string | null; pdt_to: string | null; time_windows?: { from: string; to: string }[] }) =>
  d.time_windows?.length ? d.time_windows.map((w) => span(w.from, w.to)).join(", ") : span(d.pdt_from, d.pdt_to);
/** `YYYY-MM-DD` of an instant in the company's zone. */
export const dayOf = (iso: string | Date) => dayAt((typeof iso === "string" ? new Date(iso) : iso).getTime(), zone);

/** The instant (ISO 8601, UTC) of a day (`YYYY-MM-DD`) and a time of day (`hh:mm`) on the company's wall clock. */
export const zonedIso = (day: string, hhmm: string) => new Date(instantOf(day, hhmm, zone)).toISOString();

const HOUR_MS = 3_600_000;

/**
 * A day in the company's zone as the timeline draws it: its first instant,
 * its length in hours (23 or 25 on daylight-saving changeovers) and the
 * wall-clock label of each hour from its start, the next midnight included.
 */
export function dayHours(day: string): { start: number; hours: number; labels: string[] } {
  const { start, end } = dayBounds(day, zone);
  const hours = Math.round((end - start) / HOUR_MS);
  return { start, hours, labels: Array.from({ length: hours + 1 }, (_, h) => timeFmt.format(start + h * HOUR_MS)) };
}

export const addressLine = (a: { street: string | null; housenumber: string | null; postalcode: string | null; city: string | null } | null) =>
  a ? [[a.street, a.housenumber].filter(Boolean).join(" "), [a.postalcode, a.city].filter(Boolean).join(" ")].filter(Boolean).join(", ") : "";

export const personName = (p: { firstname: string | null; lastname: string | null } | undefined) => (p ? [p.firstname, p.lastname].filter(Boolean).join(" ") : "");

/** What a driver and a dispatcher call a stop: the company, else the contact's name. */
export const placeName = (d: { id: number; address: { contactcompany: string | null; contactfirstname: string | null; contactlastname: string | null } | null }) =>
  d.address?.contactcompany || personName({ firstname: d.address?.contactfirstname ?? null, lastname: d.address?.contactlastname ?? null }) || `Delivery ${d.id}`;
