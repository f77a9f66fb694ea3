/**
 * The customer's tracking page (`/<slug>/t/<token>`): rendered on the server
 * as one small HTML document, mobile first, no script, no external resource;
 * it reloads itself every 30 seconds. The map is an inline SVG of the
 * destination and the driver's approximate position (no tiles needed).
 */
import { haversineMeters } from "../core/geo/distance";
import { escapeHtml } from "../core/lib/html";
import { serverPage } from "./html-page";
import { localDateTimeText } from "../core/lib/time";
import type { Language } from "../core/services/company-settings";
import type { TrackingState, TrackingView } from "../core/services/customer-tracking";

export const REFRESH_SECONDS = 30;

const WORDS = {
  de: {
    title: "Ihre Lieferung",
    states: { open: "In Planung", scheduled: "Eingeplant", on_the_way: "Unterwegs zu Ihnen", delivered: "Zugestellt", not_delivered: "Nicht zugestellt", cancelled: "Storniert" },
    expected: (date: string, from: string, to: string) => `Voraussichtlich am ${date} zwischen ${from} und ${to} Uhr`,
    window: (date: string, from: string, to: string) => `Lieferfenster: ${date}, ${from}–${to} Uhr`,
    stops: (n: number) => (n === 0 ? "Sie sind der nächste Stopp." : n === 1 ? "Noch 1 Stopp vor Ihnen." : `Noch ${n} Stopps vor Ihnen.`),
    driver: (name: string) => `Ihr Fahrer: ${name}`,
    away: (km: string) => `Etwa ${km} km entfernt (ungefähre Position)`,
    proofDelivered: (time: string) => `Zugestellt um ${time} Uhr.`,
    proofNot: (time: string) => `Zustellversuch um ${time} Uhr.`,
    notes: "Notiz des Fahrers",
    recipient: (name: string) => `Entgegengenommen von ${name}`,
    photo: "Foto der Zustellung",
    signature: "Unterschrift",
    map: "Karte: Ihr Ziel und die ungefähre Position des Fahrers",
    updated: (time: string) => `Stand ${time} Uhr · aktualisiert sich alle ${REFRESH_SECONDS} Sekunden`,
    zone: (tz: string) => `Zeiten in Ortszeit (${tz}).`,
    notFound: "Diese Sendungsverfolgung gibt es nicht (mehr).",
    notFoundHint: "Der Link ist abgelaufen oder wurde ersetzt. Bitte nutzen Sie den Link aus der neuesten Nachricht.",
    you: "Ziel",
    vehicle: "Fahrer",
  },
  en: {
    title: "Your delivery",
    states: { open: "Being planned", scheduled: "Scheduled", on_the_way: "On the way to you", delivered: "Delivered", not_delivered: "Not delivered", cancelled: "Cancelled" },
    expected: (date: string, from: string, to: string) => `Expected on ${date} between ${from} and ${to}`,
    window: (date: string, from: string, to: string) => `Delivery window: ${date}, ${from}–${to}`,
    stops: (n: number) => (n === 0 ? "You are the next stop." : n === 1 ? "1 stop before yours." : `${n} stops before yours.`),
    driver: (name: string) => `Your driver: ${name}`,
    away: (km: string) => `About ${km} km away (approximate position)`,
    proofDelivered: (time: string) => `Delivered at ${time}.`,
    proofNot: (time: string) => `Delivery attempted at ${time}.`,
    notes: "Driver's note",
    recipient: (name: string) => `Received by ${name}`,
    photo: "Photo of the delivery",
    signature: "Signature",
    map: "Map: your destination and the driver's approximate position",
    updated: (time: string) => `As of ${time} · refreshes every ${REFRESH_SECONDS} seconds`,
    zone: (tz: string) => `Times are local time (${tz}).`,
    notFound: "This tracking link does not exist (any more).",
    notFoundHint: "The link has expired or was replaced. Please use the link from the latest message.",
    you: "Destination",
    vehicle: "Driver",
  },
} satisfies Record<Language, unknown>;

const LOCALE: Record<Language, string> = { de: "de-DE", en: "en-GB" };

const STATE_COLOUR: Record<TrackingState, string> = { open: "#56B4E9", scheduled: "#56B4E9", on_the_way: "#E69F00", delivered: "#009E73", not_delivered: "#D55E00", cancelled: "#666666" };

/** The page for a link that leads nowhere (unknown or revoked): friendly, and says what to do. */
export function renderTrackingNotFound(lang: Language = "de"): string {
  const t = WORDS[lang];
  return serverPage(lang, t.notFound, `<section class="card" role="alert"><h1>${escapeHtml(t.notFound)}</h1><p>${escapeHtml(t.notFoundHint)}</p></section>`);
}

/** A small map: destination and driver as points in a box scaled to contain both (equirectangular, north up). */
function mapSvg(destination: { lat: number; lng: number }, driver: { lat: number; lng: number }, t: (typeof WORDS)[Language]): string {
  const w = 320;
  const h = 180;
  const pad = 28;
  const kx = Math.cos((destination.lat * Math.PI) / 180);
  const xs = [destination.lng * kx, driver.lng * kx];
  const ys = [destination.lat, driver.lat];
  const span = Math.max(Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys), 0.002);
  const scale = Math.min((w - 2 * pad) / span, (h - 2 * pad) / span);
  const cx = (Math.max(...xs) + Math.min(...xs)) / 2;
  const cy = (Math.max(...ys) + Math.min(...ys)) / 2;
  const at = (lat: number, lng: number) => [w / 2 + (lng * kx - cx) * scale, h / 2 - (lat - cy) * scale].map((v) => v.toFixed(1));
  const [dx, dy] = at(destination.lat, destination.lng);
  const [vx, vy] = at(driver.lat, driver.lng);
  return `<svg viewBox="0 0 ${w} ${h}" role="img" aria-label="${escapeHtml(t.map)}"><line x1="${vx}" y1="${vy}" x2="${dx}" y2="${dy}" stroke="#999" stroke-dasharray="4 4"/><circle data-marker="destination" cx="${dx}" cy="${dy}" r="8" fill="#0072B2"/><text x="${dx}" y="${Number(dy) - 12}" text-anchor="middle" font-size="12">${escapeHtml(t.you)}</text><rect data-marker="driver" x="${Number(vx) - 7}" y="${Number(vy) - 7}" width="14" height="14" fill="#E69F00"/><text x="${vx}" y="${Number(vy) + 22}" text-anchor="middle" font-size="12">${escapeHtml(t.vehicle)}</text></svg>`;
}

export function renderTrackingPage(view: TrackingView, now = Date.now()): string {
  const { language: lang, timezone, name } = view.company;
  const t = WORDS[lang];
  const when = (iso: string) => localDateTimeText(Date.parse(iso), timezone, LOCALE[lang]);
  const parts: string[] = [];
  parts.push(`<header><p>${escapeHtml(name)}</p><h1>${escapeHtml(t.title)}</h1></header>`);
  const status = [`<p class="state" data-state="${view.state}"><span class="dot" style="background:${STATE_COLOUR[view.state]}" aria-hidden="true"></span>${escapeHtml(t.states[view.state])}</p>`];
  if (view.eta) {
    const from = when(view.eta.from);
    const to = when(view.eta.to);
    status.push(`<p data-eta>${escapeHtml(t.expected(from.date, from.time, to.time))}</p>`);
  } else if (view.window.from && view.window.to && (view.state === "open" || view.state === "scheduled")) {
    const from = when(view.window.from);
    status.push(`<p>${escapeHtml(t.window(from.date, from.time, when(view.window.to).time))}</p>`);
  }
  if (view.stops_before !== null) status.push(`<p data-stops="${view.stops_before}">${escapeHtml(t.stops(view.stops_before))}</p>`);
  if (view.driver?.firstname) status.push(`<p>${escapeHtml(t.driver(view.driver.firstname))}</p>`);
  if (view.proof) {
    const time = view.proof.time ? when(view.proof.time).time : "";
    status.push(`<p data-proof>${escapeHtml(view.state === "delivered" ? t.proofDelivered(time) : t.proofNot(time))}</p>`);
    if (view.proof.notes) status.push(`<p>${escapeHtml(t.notes)}: „${escapeHtml(view.proof.notes)}“</p>`);
    if (view.proof.recipient) status.push(`<p data-recipient>${escapeHtml(t.recipient(view.proof.recipient))}</p>`);
    if (view.proof.photo_url) status.push(`<figure class="proof"><img data-proof-photo src="${escapeHtml(view.proof.photo_url)}" alt="${escapeHtml(t.photo)}"><figcaption>${escapeHtml(t.photo)}</figcaption></figure>`);
    if (view.proof.signature_url) status.push(`<figure class="proof"><img data-proof-signature src="${escapeHtml(view.proof.signature_url)}" alt="${escapeHtml(t.signature)}"><figcaption>${escapeHtml(t.signature)}</figcaption></figure>`);
  }
  parts.push(`<section class="card">${status.join("")}</section>`);
  if (view.driver?.position && view.destination) {
    const km = (haversineMeters(view.destination.lng, view.destination.lat, view.driver.position.lng, view.driver.position.lat) / 1000).toLocaleString(LOCALE[lang], { maximumFractionDigits: 1 });
    parts.push(`<section class="card">${mapSvg(view.destination, view.driver.position, t)}<p>${escapeHtml(t.away(km))}</p></section>`);
  }
  parts.push(`<footer><p>${escapeHtml(t.updated(localDateTimeText(now, timezone, LOCALE[lang]).time))}</p><p>${escapeHtml(t.zone(timezone))}</p></footer>`);
  return serverPage(lang, `${t.title} · ${name}`, parts.join(""), { refreshSeconds: REFRESH_SECONDS });
}
