import { env } from "cloudflare:test";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { call, createCompany } from "./helpers";

// Verified tokens are remembered per isolate (lib/tokens.ts): remembering must never outlive the token.
describe("verified-token memory", () => {
  it("refuses a token once it expires, although it was accepted before", async () => {
    const co = await createCompany();
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = await new SignJWT({ cid: co.id, role: "dispatcher" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(String((await co.api("GET", "/dispatcher")).body.objects[0].id))
      .setIssuedAt()
      .setExpirationTime(exp)
      .sign(new TextEncoder().encode(env.JWT_SECRET));
    const get = () => call("GET", `/${co.slug}/api/company`, { token });
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(200);
    await new Promise((r) => setTimeout(r, exp * 1000 - Date.now() + 100));
    const late = await get();
    expect(late.status).toBe(403);
    expect(late.body).toMatchObject({ code: 403, message: "Invalid or expired token" });
  });
});
