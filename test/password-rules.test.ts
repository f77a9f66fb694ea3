/** Password rules through the API: minimum length and the common passwords, at registration and when the operator sets one. */
import { describe, expect, it } from "vitest";
import { PASSWORD_MIN_LENGTH } from "../src/core/lib/password-rules";
import { OPERATOR, call, createCompany } from "./helpers";

const REFUSED = ["short pw", "Summer2026!", "Passwort123456", "password1234", "1234567890", "qwertz123456", "aaaaaaaaaaaa", "abababababab", "!!!!!!!!!!!!", "Fussball2026"];
const ACCEPTED = ["a long password", "Sonne über Kiel 7", "tram-lindgren-oboe"];

describe("password rules", () => {
  it("registration refuses short and common passwords with a 422 naming the field, and takes good ones", async () => {
    const co = await createCompany();
    for (const [i, password] of [...REFUSED, ...ACCEPTED].entries()) {
      const invited = await co.api("POST", "/adduser/watcher", { body: { email: `w${i}@example.com` } });
      expect(invited.status).toBe(201);
      const outbox = await call("GET", `/_operator/companies/${co.slug}/outbox?results_per_page=100`, { headers: OPERATOR });
      const code = outbox.body.objects.find((m: { to: string }) => m.to === `w${i}@example.com`).data.code;
      const res = await call("POST", `/${co.slug}/register`, { body: { email: `w${i}@example.com`, code, password }, headers: { "CF-Connecting-IP": `192.0.2.${i}` } });
      if (ACCEPTED.includes(password)) expect(res.status, password).toBe(200);
      else {
        expect(res.status, password).toBe(422);
        expect(res.body.fields).toBe("password");
        expect(res.body.message).toMatch(new RegExp(`at least ${PASSWORD_MIN_LENGTH} characters|too common`));
      }
    }
  });

  it("the operator cannot set a common password either, and the OpenAPI document states the rule", async () => {
    const co = await createCompany();
    const res = await call("POST", `/_operator/companies/${co.slug}/users`, { headers: OPERATOR, body: { usertype: "watcher", email: "op@example.com", password: "Winter2025!!" } });
    expect(res.status).toBe(422);
    expect(res.body.fields).toContain("password");
    const doc = (await call("GET", "/openapi.json")).body;
    expect(JSON.stringify(doc)).toContain(`At least ${PASSWORD_MIN_LENGTH} characters; refused when it is one of the most common passwords`);
  });
});
