/** Security headers on every response of the Worker: API, errors, operator, server-rendered pages, /docs. */
import { describe, expect, it } from "vitest";
import { OPERATOR, call, createCompany } from "./helpers";

describe("security headers", () => {
  it("every kind of response carries HSTS, nosniff, no-referrer, DENY framing and a CSP with frame-ancestors 'none'", async () => {
    const co = await createCompany();
    const responses = {
      health: await call("GET", "/health"),
      openapi: await call("GET", "/openapi.json"),
      docs: await call("GET", "/docs"),
      api: await co.api("GET", "/company"),
      "api error": await co.api("GET", "/delivery/999999"),
      "no token": await call("GET", `/${co.slug}/api/company`),
      "unknown path": await call("GET", "/nowhere/at/all"),
      auth: await call("POST", `/${co.slug}/auth`, { body: { email: co.dispatcher.email, password: co.dispatcher.password } }),
      "registration page": await call("GET", `/${co.slug}/register?code=X`),
      "tracking page": await call("GET", `/${co.slug}/t/unknown-token`),
      operator: await call("GET", `/_operator/companies/${co.slug}/outbox`, { headers: OPERATOR }),
    };
    for (const [what, res] of Object.entries(responses)) {
      const h = res.headers;
      expect(h.get("strict-transport-security"), what).toBe("max-age=63072000; includeSubDomains");
      expect(h.get("x-content-type-options"), what).toBe("nosniff");
      expect(h.get("referrer-policy"), what).toBe("no-referrer");
      expect(h.get("x-frame-options"), what).toBe("DENY");
      expect(h.get("content-security-policy"), what).toContain("frame-ancestors 'none'");
      expect(h.get("content-security-policy"), what).toContain("default-src 'none'");
    }
    expect(responses.docs.status).toBe(200);
    expect(responses.api.status).toBe(200);
  });
});
