/**
 * Where outgoing messages go, selected by configuration. Email: Cloudflare
 * Email Service (`send_email` binding `EMAIL`; under wrangler dev the binding
 * writes each message to disk and logs the path), an HTTP mail API in the
 * Resend style, or `log`. SMS: a Twilio-compatible HTTP API, or `log`.
 * Every provider answers the provider's message id or throws.
 */
import type { Env } from "../env";
import { log } from "../lib/log";

export interface Envelope {
  to: string;
  /** Sender name shown to the recipient: the company's name. */
  fromName: string;
  subject: string;
  text: string;
  html: string;
  /** Stable per outbox row, so an HTTP API that honours it never sends twice. */
  idempotencyKey: string;
}

export interface Provider {
  readonly name: string;
  send(message: Envelope): Promise<{ messageId: string }>;
}

const TIMEOUT_MS = 10_000;

/** POSTs to a provider's API; answers its JSON, or throws with the status and the start of its answer. */
async function postToApi<T>(what: string, url: string, headers: Record<string, string>, body: string): Promise<Partial<T>> {
  const response = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!response.ok) {
    const detail = (await response.text().catch(() => "")).slice(0, 300);
    throw new Error(`${what} answered ${response.status}${detail ? `: ${detail}` : ""}`);
  }
  return (await response.json().catch(() => ({}))) as Partial<T>;
}

const logProvider = (channel: string): Provider => ({
  name: "log",
  async send(message) {
    log("info", "outbox message", { channel, to: message.to, subject: message.subject });
    return { messageId: `log-${message.idempotencyKey}` };
  },
});

export function emailProvider(env: Env): Provider {
  const from = env.MAIL_FROM ?? "dispatch@localhost";
  switch (env.MAIL_PROVIDER ?? "log") {
    case "cloudflare": {
      const binding = env.EMAIL;
      if (!binding) throw new Error("MAIL_PROVIDER=cloudflare needs the send_email binding EMAIL");
      return {
        name: "cloudflare",
        async send(m) {
          const { messageId } = await binding.send({ from: { name: m.fromName, email: from }, to: m.to, subject: m.subject, text: m.text, html: m.html });
          return { messageId };
        },
      };
    }
    case "http": {
      const url = env.MAIL_HTTP_URL ?? "https://api.resend.com/emails";
      return {
        name: "http",
        async send(m) {
          // Resend's request shape.
          const body = await postToApi<{ id: string }>(
            "mail API",
            url,
            { "content-type": "application/json", authorization: `Bearer ${env.MAIL_HTTP_KEY ?? ""}`, "idempotency-key": m.idempotencyKey },
            JSON.stringify({ from: `${quoteName(m.fromName)} <${from}>`, to: [m.to], subject: m.subject, text: m.text, html: m.html }),
          );
          return { messageId: body.id ?? "" };
        },
      };
    }
    case "log":
      return logProvider("email");
    default:
      throw new Error(`Unknown MAIL_PROVIDER ${env.MAIL_PROVIDER}`);
  }
}

export function smsProvider(env: Env): Provider {
  switch (env.SMS_PROVIDER ?? "log") {
    case "twilio": {
      const sid = env.SMS_ACCOUNT_SID ?? "";
      const url = `${(env.SMS_API_URL ?? "https://api.twilio.com").replace(/\/$/, "")}/2010-04-01/Accounts/${encodeURIComponent(sid)}/Messages.json`;
      return {
        name: "twilio",
        async send(m) {
          const body = await postToApi<{ sid: string }>(
            "SMS API",
            url,
            { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${btoa(`${sid}:${env.SMS_AUTH_TOKEN ?? ""}`)}` },
            new URLSearchParams({ To: m.to, From: env.SMS_FROM ?? "", Body: m.text }).toString(),
          );
          return { messageId: body.sid ?? "" };
        },
      };
    }
    case "log":
      return logProvider("sms");
    default:
      throw new Error(`Unknown SMS_PROVIDER ${env.SMS_PROVIDER}`);
  }
}

/** A display name as an RFC 5322 quoted string. */
const quoteName = (name: string) => `"${name.replace(/["\\]/g, "\\$&").replace(/[\r\n]/g, " ")}"`;
