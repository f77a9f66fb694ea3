/**
 * Times in the company's time zone (the service keeps UTC). Until GET /company
 * has answered, the service's default zone.
 */
let zone = "Europe/Berlin";
let timeFmt = new Intl.DateTimeFormat("de-DE", { timeZone: zone, hour: "2-digit", minute: "2-digit" });
let dayFmt = new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" });

/** Switches every time shown to the company's zone (from `GET /company`); the page re-renders afterwards. */
export function setTimeZone(timeZone: string) {
  try {
    timeFmt = new Intl.DateTimeFormat("de-DE", { timeZone, hour: "2-digit", minute: "2-digit" });
    dayFmt = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
    zone = timeZone;
  } catch {
    // A zone this browser does not know: keep the previous one.
  }
}

/** Loads the company's zone (the page refreshes afterwards). */
export async function loadCompanyTimeZone(api: { get<T>(path: string): Promise<T> }): Promise<void> {
  const company = await api.get<{ objects: { timezone?: string }[] }>("/company");
  const timeZone = company.objects[0]?.timezone;
  if (timeZone) setTimeZone(timeZone);
}

/** The zone times are shown in (IANA name). */
export const timeZone = () => zone;

export const time = (iso: string | null | undefined) => (iso ? timeFmt.format(new Date(iso)) : "–");
export const span = (from: string | null | undefined, to: string | null | undefined) => (from === to ? time(from) : `${time(from)}–${time(to)}`);
/** `YYYY-MM-DD` of an instant in the company's zone. */
export const dayOf = (iso: string | Date) => dayFmt.format(typeof iso === "string" ? new Date(iso) : iso);

/** Offset of the zone at an instant, as `+hh:mm`. */
function zoneOffset(at: Date): string {
  const parts = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" }).formatToParts(at);
  const name = parts.find((p) => p.type === "timeZoneName")?.value ?? "GMT";
  const m = /GMT([+-]\d{2}):?(\d{2})?/.exec(name);
  return m ? `${m[1]}:${m[2] ?? "00"}` : "+00:00";
}

/** ISO 8601 with the zone's offset for a day (`YYYY-MM-DD`) and a time of day (`hh:mm`) in the company's zone. */
export function zonedIso(day: string, hhmm: string): string {
  return `${day}T${hhmm}:00${zoneOffset(new Date(`${day}T12:00:00Z`))}`;
}

export const addressLine = (a: { street: string | null; housenumber: string | null; postalcode: string | null; city: string | null } | null) =>
  a ? [[a.street, a.housenumber].filter(Boolean).join(" "), [a.postalcode, a.city].filter(Boolean).join(" ")].filter(Boolean).join(", ") : "";

export const personName = (p: { firstname: string | null; lastname: string | null } | undefined) => (p ? [p.firstname, p.lastname].filter(Boolean).join(" ") : "");

/** What a driver and a dispatcher call a stop: the company, else the contact's name. */
export const placeName = (d: { id: number; address: { contactcompany: string | null; contactfirstname: string | null; contactlastname: string | null } | null }) =>
  d.address?.contactcompany || personName({ firstname: d.address?.contactfirstname ?? null, lastname: d.address?.contactlastname ?? null }) || `Delivery ${d.id}`;
