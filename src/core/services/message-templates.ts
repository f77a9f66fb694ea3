/**
 * Wording of every outgoing message, in one place: one template per message
 * kind, rendered when the message is sent, in the company's language
 * (German or English) and time zone, as a plain-text and an HTML part (SMS
 * use the text). Outbox rows carry the kind (`template`) and its `data`.
 */
import { escapeHtml } from "../lib/html";
import { localDateTimeText, parseDateTime } from "../lib/time";

import type { Language } from "./company-settings";

export interface RenderContext {
  companyname: string;
  timezone: string;
  language: Language;
}

export interface RenderedMessage {
  subject: string;
  text: string;
  html: string;
}

type Data = Record<string, unknown>;
/** Paragraphs of a message; a `{ link }` paragraph becomes a link in HTML and a bare URL in text. */
type Paragraph = string | { link: string; label: string };
type Template = (data: Data, ctx: RenderContext, t: Wording) => { subject: string; paragraphs: Paragraph[] };

const LOCALES: Record<Language, string> = { de: "de-DE", en: "en-GB" };

/** Words that differ by language, for templates that share their structure. */
interface Wording {
  lang: Language;
  /** A date-time in the company's zone and language. */
  when(iso: unknown): { date: string; time: string };
}

const str = (v: unknown) => (v === undefined || v === null ? "" : String(v));

const etaSentence = (data: Data, ctx: RenderContext, t: Wording) => {
  const from = t.when(data.eta_from);
  const to = t.when(data.eta_to);
  const later = to.date === from.date ? "" : ` (${to.date})`;
  return t.lang === "de"
    ? `Ihre Lieferung von ${ctx.companyname} kommt voraussichtlich am ${from.date} zwischen ${from.time} und ${to.time} Uhr${later}.`
    : `Your delivery from ${ctx.companyname} is expected on ${from.date} between ${from.time} and ${to.time}${later}.`;
};

const zoneNote = (ctx: RenderContext, t: Wording) => (t.lang === "de" ? `Alle Zeiten in Ortszeit (${ctx.timezone}).` : `All times are local time (${ctx.timezone}).`);

/** The customer's tracking page, when the message carries its link. */
const trackingParagraph = (data: Data, t: Wording): Paragraph[] =>
  data.tracking_link ? [{ link: str(data.tracking_link), label: t.lang === "de" ? "Lieferung live verfolgen" : "Follow your delivery live" }] : [];

const ROLE_DE: Record<string, string> = { dispatcher: "Disponent", watcher: "Beobachter", driver: "Fahrer" };

const TEMPLATES: Record<string, Template> = {
  invitation: (d, ctx, t) =>
    t.lang === "de"
      ? {
          subject: `Ihr Zugang bei ${ctx.companyname}`,
          paragraphs: [`Sie wurden als ${ROLE_DE[str(d.usertype)] ?? str(d.usertype)} bei ${ctx.companyname} eingeladen.`, { link: str(d.link), label: "Passwort festlegen" }, `Ihr Code: ${str(d.code)}`],
        }
      : {
          subject: `Your ${str(d.usertype)} account at ${ctx.companyname}`,
          paragraphs: [`You have been invited as ${str(d.usertype)} of ${ctx.companyname}.`, { link: str(d.link), label: "Choose your password" }, `Your code: ${str(d.code)}`],
        },
  driver_activation: (d, ctx, t) =>
    t.lang === "de"
      ? {
          subject: `Fahrerzugang bei ${ctx.companyname}`,
          paragraphs: [`Hallo ${str(d.firstname)},`.replace(" ,", ","), `${ctx.companyname} hat Sie als Fahrer registriert.`, { link: str(d.link), label: "Registrieren und Gerät aktivieren" }, `Aktivierungscode: ${str(d.code)}`],
        }
      : {
          subject: `Driver account at ${ctx.companyname}`,
          paragraphs: [`Hello ${str(d.firstname)},`.replace(" ,", ","), `${ctx.companyname} registered you as a driver.`, { link: str(d.link), label: "Register and activate your device" }, `Activation code: ${str(d.code)}`],
        },
  driver_created_dispatcher: (d, ctx, t) => driverCreated(d, ctx, t),
  driver_created_operator: (d, ctx, t) => driverCreated(d, ctx, t),
  delivery_eta: (d, ctx, t) => ({
    subject: t.lang === "de" ? `Ihre Lieferung von ${ctx.companyname}` : `Delivery from ${ctx.companyname}`,
    paragraphs: [etaSentence(d, ctx, t), ...trackingParagraph(d, t), zoneNote(ctx, t)],
  }),
  delivery_eta_update: (d, ctx, t) => ({
    subject: t.lang === "de" ? `Neue Ankunftszeit Ihrer Lieferung von ${ctx.companyname}` : `New arrival time of your delivery from ${ctx.companyname}`,
    paragraphs: [t.lang === "de" ? "Die erwartete Ankunftszeit hat sich geändert." : "The expected arrival time has changed.", etaSentence(d, ctx, t), ...trackingParagraph(d, t), zoneNote(ctx, t)],
  }),
  delivery_approaching: (d, ctx, t) => ({
    subject: t.lang === "de" ? `Ihre Lieferung von ${ctx.companyname} ist fast da` : `Your delivery from ${ctx.companyname} is almost there`,
    paragraphs: [
      t.lang === "de"
        ? `Der Fahrer ist nur noch ${str(d.stops_before)} Stopp von Ihnen entfernt.`
        : `The driver is ${str(d.stops_before)} stop away from you.`,
      etaSentence(d, ctx, t),
      ...trackingParagraph(d, t),
      zoneNote(ctx, t),
    ],
  }),
  webhook_disabled: (d, ctx, t) =>
    t.lang === "de"
      ? {
          subject: `Webhook bei ${ctx.companyname} abgeschaltet`,
          paragraphs: [`Der Webhook ${str(d.webhook_id)} (${str(d.url)}) wurde nach ${str(d.failures)} fehlgeschlagenen Zustellungen in Folge abgeschaltet.`, "Prüfen Sie den Empfänger, schalten Sie ihn wieder ein (PATCH /webhook mit enabled: true) und holen Sie Verpasstes mit POST /webhook/<id>/replay nach."],
        }
      : {
          subject: `Webhook at ${ctx.companyname} disabled`,
          paragraphs: [`Webhook ${str(d.webhook_id)} (${str(d.url)}) was disabled after ${str(d.failures)} failed deliveries in a row.`, "Check the receiver, enable it again (PATCH /webhook with enabled: true) and catch up with POST /webhook/<id>/replay."],
        },
  upload_result: (d, ctx, t) =>
    t.lang === "de"
      ? {
          subject: "Ihre Touren sind fertig",
          paragraphs: [`Der Upload ${str(d.files)} bei ${ctx.companyname} wurde geplant: ${str(d.tours)} Touren.`, { link: str(d.link), label: "Ergebnistabelle herunterladen" }],
        }
      : {
          subject: "Your routes are ready",
          paragraphs: [`The upload ${str(d.files)} at ${ctx.companyname} was routed: ${str(d.tours)} tours.`, { link: str(d.link), label: "Download the result spreadsheet" }],
        },
};

function driverCreated(d: Data, ctx: RenderContext, t: Wording) {
  return t.lang === "de"
    ? {
        subject: `Neuer Fahrer bei ${ctx.companyname}: ${str(d.driver_email)}`,
        paragraphs: [`Für ${str(d.driver_email)} wurde bei ${ctx.companyname} ein Fahrerzugang angelegt; die Aktivierungs-E-Mail ist unterwegs.`],
      }
    : {
        subject: `New driver at ${ctx.companyname}: ${str(d.driver_email)}`,
        paragraphs: [`A driver account for ${str(d.driver_email)} was created at ${ctx.companyname}; the activation email was sent.`],
      };
}

export const hasTemplate = (template: string) => Object.hasOwn(TEMPLATES, template);


/** Renders a message kind; null for a kind without a template (its stored text is sent as it is). */
export function renderMessage(template: string, data: Data, ctx: RenderContext): RenderedMessage | null {
  if (!hasTemplate(template)) return null;
  const wording: Wording = {
    lang: ctx.language,
    when: (iso) => localDateTimeText(parseDateTime(str(iso)) ?? 0, ctx.timezone, LOCALES[ctx.language]),
  };
  const { subject, paragraphs } = TEMPLATES[template](data, ctx, wording);
  const text = paragraphs.map((p) => (typeof p === "string" ? p : `${p.label}: ${p.link}`)).join("\n");
  const body = paragraphs
    .map((p) => (typeof p === "string" ? `<p>${escapeHtml(p)}</p>` : `<p><a href="${escapeHtml(p.link)}">${escapeHtml(p.label)}</a></p>`))
    .join("\n");
  const html = `<!doctype html><html lang="${ctx.language}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body style="font-family:sans-serif">\n${body}\n<p style="color:#666">${escapeHtml(ctx.companyname)}</p>\n</body></html>`;
  return { subject, text, html };
}
