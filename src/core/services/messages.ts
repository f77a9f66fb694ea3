/** Outgoing messages about accounts: who gets which kind, with the data its template (message-templates.ts) words. */
import type { OutgoingMessage } from "./outbox";

const link = (base: string, slug: string, path: string, code: string) => `${base.replace(/\/$/, "")}/${slug}/${path}?code=${encodeURIComponent(code)}`;

export function invitationEmail(opts: { base: string; slug: string; email: string; usertype: string; code: string }): OutgoingMessage {
  const url = link(opts.base, opts.slug, "register", opts.code);
  return {
    channel: "email",
    to: opts.email,
    template: "invitation",
    data: { usertype: opts.usertype, code: opts.code, link: url },
  };
}

export function driverActivationEmail(opts: { base: string; slug: string; email: string; firstname: string | null; code: string }): OutgoingMessage {
  const url = link(opts.base, opts.slug, "register", opts.code);
  return {
    channel: "email",
    to: opts.email,
    template: "driver_activation",
    data: { code: opts.code, link: url, firstname: opts.firstname },
  };
}

export function driverCreatedNotice(opts: { to: string; driverEmail: string; template: "driver_created_dispatcher" | "driver_created_operator" }): OutgoingMessage {
  return {
    channel: "email",
    to: opts.to,
    template: opts.template,
    data: { driver_email: opts.driverEmail },
  };
}
