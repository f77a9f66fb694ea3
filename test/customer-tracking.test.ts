import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ORIGIN, OPERATOR, call, createCompany, insertAddress, routeAndStart, tomorrowAt } from "./helpers";

/** A started route of three deliveries whose customers want to hear; answers the tracking links in driving order. */
async function trackedRoute() {
  const co = await createCompany();
  await env.DB.prepare("UPDATE users SET firstname = 'Anna', lastname = 'Secret-Lastname' WHERE company_id = ?").bind(co.id).run();
  const ids: number[] = [];
  for (const [i, [lng, lat]] of [[13.42, 52.5], [13.45, 52.52], [13.4, 52.54]].entries()) {
    const address = await insertAddress(co.id, { lng, lat });
    await env.DB.prepare("UPDATE addresses SET email = ? WHERE id = ?").bind(`c${i}@example.com`, address).run();
    ids.push((await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: tomorrowAt(6), pdt_to: tomorrowAt(20), els: 5, notify_customer: true } })).body.id);
  }
  const { driver, routeId, started } = await routeAndStart(co, ids);
  await env.DB.prepare("UPDATE users SET firstname = 'Anna', lastname = 'Secret-Lastname' WHERE id = ?").bind(driver.id).run();
  const order: number[] = started.body.deliveries.map((d: { id: number }) => d.id);
  const q = encodeURIComponent(JSON.stringify({ filters: [{ name: "template", op: "==", val: "delivery_eta" }] }));
  const messages = (await call("GET", `/_operator/companies/${co.slug}/outbox?q=${q}`, { headers: OPERATOR })).body.objects as { data: { delivery_id: number; tracking_link: string } }[];
  const links = order.map((id) => messages.find((m) => m.data.delivery_id === id)!.data.tracking_link);
  return { co, driver, routeId, order, links };
}

const path = (link: string) => link.slice(ORIGIN.length);
const jsonOf = (link: string) => call("GET", path(link).replace("/t/", "/track/"));

describe("customer tracking page", () => {
  it("every customer message carries an absolute link that opens the delivery's page", async () => {
    const { co, links } = await trackedRoute();
    for (const link of links) expect(link).toMatch(new RegExp(`^${ORIGIN}/${co.slug}/t/[A-Za-z0-9_-]{32}$`));
    const page = await call("GET", path(links[0]));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.text).toContain(`Company ${co.slug}`);
    expect(page.text).toContain("Unterwegs zu Ihnen");
    expect(page.text).toContain("Voraussichtlich am");
    expect(page.text).toContain("Sie sind der nächste Stopp.");
    expect(page.text).toContain('http-equiv="refresh"');
    expect(page.text).not.toContain("<script");
  });

  it("shows the stops before, the driver's first name and approximate position only near the stop, and nothing else", async () => {
    const { driver, links } = await trackedRoute();
    const before = await jsonOf(links[2]);
    expect(before.status).toBe(200);
    expect(Object.keys(before.body).sort()).toEqual(["company", "destination", "driver", "eta", "proof", "state", "stops_before", "window"]);
    expect(before.body).toMatchObject({ state: "on_the_way", stops_before: 2, driver: { firstname: "Anna", position: null }, proof: null });
    expect(JSON.stringify(before.body)).not.toContain("Secret-Lastname");
    await call("POST", `${path(links[0]).split("/t/")[0]}/api/drivertracking`, { token: driver.token, body: { driver_id: driver.id, position: { type: "Point", coordinates: [13.4123, 52.5067] } } });
    const after = await jsonOf(links[2]);
    const { lat, lng } = after.body.driver.position;
    expect(Math.abs(lat - 52.5067)).toBeLessThanOrEqual(0.0025 + 1e-9);
    expect(Math.abs(lng - 13.4123)).toBeLessThanOrEqual(0.0025 + 1e-9);
    expect(Math.round(lat / 0.005) * 0.005).toBeCloseTo(lat, 9);
    const page = await call("GET", path(links[2]));
    expect(page.text).toContain('data-marker="driver"');
    expect(page.text).toContain("Noch 2 Stopps vor Ihnen.");
    expect(page.text).toContain("Ihr Fahrer: Anna");
  });

  it("shows the proof of delivery afterwards", async () => {
    const { co, driver, order, links } = await trackedRoute();
    expect((await co.api("POST", `/deliverydone/${order[0]}`, { token: driver.token, body: { status: "delivered", drivernotes: "Bei Nachbarin Müller <3>" } })).status).toBe(200);
    const view = await jsonOf(links[0]);
    expect(view.body).toMatchObject({ state: "delivered", eta: null, stops_before: null, driver: null, proof: { notes: "Bei Nachbarin Müller <3>" } });
    const page = await call("GET", path(links[0]));
    expect(page.text).toContain("Zugestellt um");
    expect(page.text).toContain("Bei Nachbarin Müller &lt;3&gt;");
    // The next customer is now first in line.
    expect((await jsonOf(links[1])).body.stops_before).toBe(0);
  });

  it("a revoked, replaced, wrong or foreign token shows a friendly 404 page", async () => {
    const { co, order, links } = await trackedRoute();
    expect((await co.api("DELETE", `/delivery/${order[0]}/trackinglink`)).status).toBe(204);
    const revoked = await call("GET", path(links[0]));
    expect(revoked.status).toBe(404);
    expect(revoked.text).toContain("Diese Sendungsverfolgung gibt es nicht");
    expect((await jsonOf(links[0])).status).toBe(404);
    // A new link works; the one it replaces stops working.
    const issued = await co.api("POST", `/delivery/${order[1]}/trackinglink`);
    expect(issued.status).toBe(201);
    expect(issued.body.link).toMatch(new RegExp(`^${ORIGIN}/${co.slug}/t/`));
    expect((await call("GET", path(issued.body.link))).status).toBe(200);
    expect((await call("GET", path(links[1]))).status).toBe(404);
    expect((await call("GET", `/${co.slug}/t/not-a-token`)).status).toBe(404);
    const other = await createCompany();
    expect((await call("GET", path(links[2]).replace(`/${co.slug}/`, `/${other.slug}/`))).status).toBe(404);
    expect((await other.api("POST", `/delivery/${order[2]}/trackinglink`)).status).toBe(404);
    const watcher = await co.user("watcher");
    expect((await co.api("POST", `/delivery/${order[2]}/trackinglink`, { token: watcher.token })).status).toBe(403);
  });
});
