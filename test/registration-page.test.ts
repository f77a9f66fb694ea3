import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ORIGIN, OPERATOR, call, createCompany, login } from "./helpers";

/** The emailed link of the newest message of a kind. */
async function emailedLink(slug: string, template: string): Promise<string> {
  const q = encodeURIComponent(JSON.stringify({ filters: [{ name: "template", op: "==", val: template }], order_by: [{ field: "id", direction: "desc" }] }));
  return (await call("GET", `/_operator/companies/${slug}/outbox?q=${q}`, { headers: OPERATOR })).body.objects[0].data.link;
}

/** What the browser sends when the form is submitted. */
async function postForm(path: string, fields: Record<string, string>) {
  const response = await exports.default.fetch(new Request(`${ORIGIN}${path}`, { method: "POST", body: new URLSearchParams(fields) }));
  return { status: response.status, text: await response.text() };
}

describe("registration page behind the emailed link", () => {
  it("lets an invited dispatcher set a password with the code and points to the console", async () => {
    const co = await createCompany();
    expect((await co.api("POST", "/adduser/dispatcher", { body: { email: "new@example.com" } })).status).toBe(201);
    const link = await emailedLink(co.slug, "invitation");
    expect(link.startsWith(`${ORIGIN}/${co.slug}/register?code=`)).toBe(true);
    const code = new URL(link).searchParams.get("code")!;
    const form = await call("GET", link.slice(ORIGIN.length));
    expect(form.status).toBe(200);
    expect(form.headers.get("content-type")).toContain("text/html");
    expect(form.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(form.text).toContain(`value="${code}"`);
    expect(form.text).not.toContain("<script");

    const short = await postForm(`/${co.slug}/register/form`, { email: "new@example.com", code, password: "short" });
    expect(short.status).toBe(422);
    expect(short.text).toContain("mindestens 10 Zeichen");
    expect(short.text).toContain('value="new@example.com"');
    const wrong = await postForm(`/${co.slug}/register/form`, { email: "new@example.com", code: "WRONG", password: "a long password" });
    expect(wrong.status).toBe(403);

    const done = await postForm(`/${co.slug}/register/form`, { email: "new@example.com", code, password: "a long password" });
    expect(done.status).toBe(200);
    expect(done.text).toContain(`href="/${co.slug}/console"`);
    expect(await login(co.slug, "new@example.com", "a long password")).toBeTruthy();
    // Once only.
    expect((await postForm(`/${co.slug}/register/form`, { email: "new@example.com", code, password: "another long password" })).status).toBe(403);
  });

  it("points a driver who registered to the driver app", async () => {
    const co = await createCompany();
    expect((await co.api("POST", "/driver", { body: { email: "fahrer@example.com", firstname: "Fritz" } })).status).toBe(201);
    const link = await emailedLink(co.slug, "driver_activation");
    const code = new URL(link).searchParams.get("code")!;
    expect((await call("GET", link.slice(ORIGIN.length))).status).toBe(200);
    const done = await postForm(`/${co.slug}/register/form`, { email: "fahrer@example.com", code, password: "a long password" });
    expect(done.status).toBe(200);
    expect(done.text).toContain(`href="/${co.slug}/driver"`);
  });
});
