/**
 * The `_headers` file of the static pages (Workers static assets): the same
 * security headers the Worker puts on its own answers
 * (src/worker/middleware/security-headers.ts), with the pages' CSP. Used by
 * build-web.mjs; test/static-headers.test.ts checks what it produces.
 * Images (map tiles included) come from the service's own origin only: the Worker serves the base
 * map's vector tiles and passes raster tiles on (src/worker/routes/map.ts); `blob:` is for the
 * proof-of-delivery images the pages fetch with their token and the driver app's photo previews.
 * @returns {string}
 */
export function staticHeaders() {
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "manifest-src 'self'",
    "worker-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
  return `/*\n  Content-Security-Policy: ${csp}\n  Strict-Transport-Security: max-age=63072000; includeSubDomains\n  X-Content-Type-Options: nosniff\n  Referrer-Policy: no-referrer\n  X-Frame-Options: DENY\n  Permissions-Policy: geolocation=(self), camera=(), microphone=()\n`;
}
