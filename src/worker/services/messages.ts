/** Wording of outgoing messages, in one place. */
import type { OutgoingMessage } from "./outbox";

const link = (base: string, slug: string, path: string, code: string) => `${base.replace(/\/$/, "")}/${slug}/${path}?code=${encodeURIComponent(code)}`;

export function invitationEmail(opts: { base: string; slug: string; companyname: string; email: string; usertype: string; code: string }): OutgoingMessage {
  const url = link(opts.base, opts.slug, "register", opts.code);
  return {
    channel: "email",
    to: opts.email,
    subject: `Your ${opts.usertype} account at ${opts.companyname}`,
    body: `You have been invited as ${opts.usertype} of ${opts.companyname}.\nChoose your password here: ${url}\nYour code: ${opts.code}`,
    template: "invitation",
    data: { usertype: opts.usertype, code: opts.code, link: url },
  };
}

export function driverActivationEmail(opts: { base: string; slug: string; companyname: string; email: string; firstname: string | null; code: string }): OutgoingMessage {
  const url = link(opts.base, opts.slug, "register", opts.code);
  return {
    channel: "email",
    to: opts.email,
    subject: `Driver account at ${opts.companyname}`,
    body:
      `Hello ${opts.firstname ?? ""},\n${opts.companyname} registered you as a driver.\n` +
      `Register and activate your device with this link: ${url}\nActivation code: ${opts.code}`,
    template: "driver_activation",
    data: { code: opts.code, link: url },
  };
}

export function driverCreatedNotice(opts: { to: string; companyname: string; driverEmail: string; template: "driver_created_dispatcher" | "driver_created_operator" }): OutgoingMessage {
  return {
    channel: "email",
    to: opts.to,
    subject: `New driver at ${opts.companyname}: ${opts.driverEmail}`,
    body: `A driver account for ${opts.driverEmail} was created at ${opts.companyname}; the activation email was sent.`,
    template: opts.template,
    data: { driver_email: opts.driverEmail },
  };
}
