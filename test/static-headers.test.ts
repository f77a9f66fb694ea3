/**
 * The `_headers` file of the static pages (console, driver app): the rules
 * that reach their URLs carry the Worker's security headers and the pages' CSP.
 */
import { describe, expect, it } from "vitest";
import { staticHeaders } from "../scripts/static-headers.mjs";

/** `_headers` as Cloudflare reads it: a URL pattern (`*` matches anything) followed by indented `Name: value` lines. */
function parse(text: string): { pattern: RegExp; headers: Record<string, string> }[] {
  const rules: { pattern: RegExp; headers: Record<string, string> }[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim() || line.trim().startsWith("#")) continue;
    if (!/^\s/.test(line)) {
      const escaped = line.trim().replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
      rules.push({ pattern: new RegExp(`^${escaped}$`), headers: {} });
      continue;
    }
    const colon = line.indexOf(":");
    expect(colon, line).toBeGreaterThan(0);
    expect(rules.length, "a header line before any URL pattern").toBeGreaterThan(0);
    rules.at(-1)!.headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return rules;
}

/** The headers a path gets: those of every rule that matches it. */
const headersFor = (rules: ReturnType<typeof parse>, path: string) => Object.assign({}, ...rules.filter((r) => r.pattern.test(path)).map((r) => r.headers)) as Record<string, string>;

// The pages' URLs (`_redirects` serves /<slug>/... from /app/...), their scripts and the driver app's service worker.
const PAGES = ["/acme/console", "/acme/driver", "/app/console", "/app/driver", "/app/console.html", "/app/driver.html", "/acme/driver-sw.js", "/assets/console.js"];

describe("static pages' _headers", () => {
  it("every page gets HSTS, nosniff, no-referrer, DENY framing and a CSP that loads only its own scripts", () => {
    const rules = parse(staticHeaders());
    for (const path of PAGES) {
      const h = headersFor(rules, path);
      expect(h["strict-transport-security"], path).toBe("max-age=63072000; includeSubDomains");
      expect(h["x-content-type-options"], path).toBe("nosniff");
      expect(h["referrer-policy"], path).toBe("no-referrer");
      expect(h["x-frame-options"], path).toBe("DENY");
      expect(h["permissions-policy"], path).toBe("geolocation=(self), camera=(), microphone=()");
      const csp = h["content-security-policy"]?.split(";").map((d) => d.trim());
      expect(csp, path).toEqual(expect.arrayContaining(["default-src 'none'", "script-src 'self'", "connect-src 'self'", "base-uri 'none'", "frame-ancestors 'none'", "img-src 'self' data: blob:"]));
    }
  });

  it("images, map tiles included, come from the own origin only (the Worker serves the base map)", () => {
    const csp = headersFor(parse(staticHeaders()), "/acme/console")["content-security-policy"];
    expect(csp).toContain("img-src 'self' data: blob:;");
    expect(csp).not.toMatch(/https?:/);
  });
});
