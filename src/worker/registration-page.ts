/**
 * The page behind the emailed registration link (`/<slug>/register?code=`):
 * a plain form (no script) that sets the password with the code, then points
 * to the app the user works in (the driver app or the dispatcher console).
 */
import { serverPage } from "./html-page";
import { escapeHtml } from "../core/lib/html";
import { PASSWORD_MIN_LENGTH } from "../core/lib/password-rules";
import type { Language } from "../core/services/company-settings";

const WORDS = {
  de: {
    title: "Zugang einrichten",
    intro: "Legen Sie mit dem Code aus der E-Mail Ihr Passwort fest.",
    email: "E-Mail",
    code: "Code",
    password: `Neues Passwort (mindestens ${PASSWORD_MIN_LENGTH} Zeichen)`,
    submit: "Passwort festlegen",
    done: "Ihr Zugang ist eingerichtet.",
    open: { driver: "Fahrer-App öffnen", staff: "Dispositions-Konsole öffnen" },
  },
  en: {
    title: "Set up your account",
    intro: "Choose your password with the code from the email.",
    email: "Email",
    code: "Code",
    password: `New password (at least ${PASSWORD_MIN_LENGTH} characters)`,
    submit: "Set password",
    done: "Your account is ready.",
    open: { driver: "Open the driver app", staff: "Open the dispatch console" },
  },
} satisfies Record<Language, unknown>;

export function renderRegistrationForm(opts: { lang: Language; companyname: string; action: string; code: string; email?: string; error?: string }): string {
  const t = WORDS[opts.lang];
  const error = opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : "";
  const field = (name: string, label: string, type: string, value: string, autocomplete: string) =>
    `<label for="${name}">${escapeHtml(label)}</label><input id="${name}" name="${name}" type="${type}" value="${escapeHtml(value)}" autocomplete="${autocomplete}" required>`;
  return serverPage(
    opts.lang,
    `${t.title} · ${opts.companyname}`,
    `<header><p>${escapeHtml(opts.companyname)}</p><h1>${escapeHtml(t.title)}</h1></header><section class="card"><p>${escapeHtml(t.intro)}</p>${error}` +
      `<form method="post" action="${escapeHtml(opts.action)}">${field("email", t.email, "email", opts.email ?? "", "username")}${field("code", t.code, "text", opts.code, "one-time-code")}${field("password", t.password, "password", "", "new-password")}` +
      `<button type="submit">${escapeHtml(t.submit)}</button></form></section>`,
  );
}

export function renderRegistrationDone(opts: { lang: Language; companyname: string; appLink: string; driver: boolean }): string {
  const t = WORDS[opts.lang];
  return serverPage(
    opts.lang,
    `${t.title} · ${opts.companyname}`,
    `<header><p>${escapeHtml(opts.companyname)}</p><h1>${escapeHtml(t.done)}</h1></header><section class="card"><a class="button" href="${escapeHtml(opts.appLink)}">${escapeHtml(opts.driver ? t.open.driver : t.open.staff)}</a></section>`,
  );
}
