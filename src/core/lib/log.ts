/**
 * Structured logs: one JSON object per line (Workers Logs index the fields).
 * Every line written while a request is served carries its `request_id` and
 * the company's slug as `company` (null before the company is known, and outside
 * requests); every line written while a queue message is consumed carries the
 * company's slug and the message's `queue`, `message_id` and `process_id`.
 * Secrets never reach a line: fields named like credentials are
 * replaced, and anything shaped like a JWT is cut out of every string.
 */
import { AsyncLocalStorage } from "node:async_hooks";

interface LogContext {
  request_id: string | null;
  /** The company's slug. */
  company: string | null;
  /** What identifies a queue message's lines. */
  message?: QueueMessageContext;
}

export interface QueueMessageContext {
  queue: string;
  message_id: string;
  /** The routing process the message works for (null for jobs of no process). */
  process_id: string | null;
}

const current = new AsyncLocalStorage<LogContext>();

/** Runs `fn` (the rest of the request) with its log context. */
export const withRequestContext = <T>(requestId: string, fn: () => Promise<T>) => current.run({ request_id: requestId, company: null }, fn);

/** Runs `fn` (the consumption of one queue message) with its log context. */
export const withQueueMessageContext = <T>(company: string | null, message: QueueMessageContext, fn: () => Promise<T>) =>
  current.run({ request_id: null, company, message }, fn);

/** Names the company in every later line of the current request. */
export function setLogSlug(slug: string) {
  const context = current.getStore();
  if (context) context.company = slug;
}

const REDACTED = "[redacted]";
const SECRET_FIELD = /authorization|password|token|secret|cookie|api_?key/i;
const JWT_LIKE = /eyJ[\w-]*\.[\w-]+\.[\w-]*/g;
const BEARER = /\b(JWT|Bearer)\s+\S+/gi;

const scrubText = (text: string) => text.replace(JWT_LIKE, REDACTED).replace(BEARER, `$1 ${REDACTED}`);

function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return scrubText(value);
  if (value instanceof Error) return { name: value.name, message: scrubText(value.message), stack: value.stack && scrubText(value.stack) };
  if (value === null || typeof value !== "object") return value;
  if (depth > 4) return "[nested]";
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_FIELD.test(k) ? REDACTED : scrub(v, depth + 1)]));
}

type Level = "info" | "warn" | "error";
const sinks: Record<Level, (line: string) => void> = {
  info: (line) => console.log(line),
  warn: (line) => console.warn(line),
  error: (line) => console.error(line),
};

/** One log line: `{level, msg, request_id, company, ...fields}` (`company`: the slug), plus `queue`, `message_id`, `process_id` in a queue consumer. */
export function log(level: Level, msg: string, fields: Record<string, unknown> = {}) {
  const context = current.getStore();
  const line = { level, msg, request_id: context?.request_id ?? null, company: context?.company ?? null, ...context?.message, ...(scrub(fields) as object) };
  sinks[level](JSON.stringify(line));
}
