import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { SERVER_PAGE_CSP } from "../html-page";

/**
 * Headers of every response the Worker writes (API, operator, server-rendered
 * pages, /docs, errors): HTTPS only for two years (subdomains included), no
 * type sniffing, no referrer, never framed. A response without its own CSP
 * (JSON, /docs) gets the server pages' one: no script, nothing from elsewhere,
 * `frame-ancestors 'none'`. The static pages get the same from `_headers`
 * (scripts/static-headers.mjs). A websocket upgrade (101) carries no page.
 */
export const SECURITY_HEADERS = {
  "strict-transport-security": "max-age=63072000; includeSubDomains",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
} as const;

export const securityHeaders = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (c.res.status === 101) return;
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(name, value);
  if (!c.res.headers.has("content-security-policy")) c.res.headers.set("content-security-policy", SERVER_PAGE_CSP);
});
