/**
 * The console's timeline (stops at their planned times, windows, late
 * marks, the now line), moving deliveries by drag and drop and by the
 * "Assign to…" menu (onto a route through the route update endpoint, off
 * or between routes through the atomic move; refusals included, seen by a
 * second console), the tour-area layer, the tablet layout, and the
 * driver app as an installable PWA — in headless Chromium against a local
 * `wrangler dev`. Screenshots land in test-results/browser/.
 */
import type { Browser, Locator, Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { SHOTS, ZONE, at, logIn, seedCompany, startServiceAndBrowser, takePicturesAndStop, today, tomorrow, watchErrors as watch } from "./fixtures";
import type { Service } from "./service";

const DISPATCHER = { email: "dispatcher@timeline.example", password: "dispatcher-password", firstname: "Tara", lastname: "Timeline" };
const DRIVER = { email: "driver@timeline.example", password: "driver-password", firstname: "Dana", lastname: "Driver" };
const hhmm = (iso: string) => new Intl.DateTimeFormat("de-DE", { timeZone: ZONE, hour: "2-digit", minute: "2-digit" }).format(new Date(iso));

interface ApiDelivery {
  id: number;
  status: number;
  route_id: number | null;
  pdt_from: string;
  pdt_to: string;
  tdt_from: string;
  tdt_to: string;
}
interface ApiRoute {
  id: number;
  status: number;
  replaced_by: number | null;
  deliveries: ApiDelivery[];
}

let service: Service;
let browser: Browser;
let token: string;
let routes: ApiRoute[];
let openIds: number[];
/** A delivery that starts from another depot: every route must refuse it. */
let foreignId: number;
let page: Page;
const pageErrors: string[] = [];

/** Set once a test cuts the network: what fails then is expected. */
let offline = false;

// The browser logs failed answers: the refusals these tests provoke (409, 422) and GET /currentdriverroute's 404 (no route); offline, everything fails.
const watchErrors = (p: Page, name: string) => watch(p, name, pageErrors, (text) => offline || /status of (404|409|422)/.test(text));

async function consoleOn(viewport: { width: number; height: number }, name: string) {
  const context = await browser.newContext({ viewport });
  const p = await context.newPage();
  watchErrors(p, name);
  await p.goto(`${service.base}/${service.slug}/console`);
  await logIn(p, DISPATCHER);
  await p.getByLabel("Day").fill(tomorrow);
  await expect.poll(() => p.locator("button.route-item").count()).toBe(2);
  return p;
}

const rowWith = (p: Page, deliveryId: number) => p.locator(".tl-row", { has: p.locator(`.tl-stop[data-delivery-id="${deliveryId}"]`) });
const stop = (p: Page, deliveryId: number) => p.locator(`.tl-stop[data-delivery-id="${deliveryId}"]`);
const delivery = (id: number) => service.call<ApiDelivery>("GET", `/api/delivery/${id}`, undefined, token);
/** The route now holding what `route` held (updates replace routes by new ones). */
async function current(route: { id: number }): Promise<ApiRoute> {
  const r = await service.call<ApiRoute>("GET", `/api/route/${route.id}`, undefined, token);
  return r.replaced_by ? current({ id: r.replaced_by }) : r;
}
/** Delivery ids of a timeline row, left to right in DOM order. */
const rowStops = (row: Locator) => row.locator(".tl-stop").evaluateAll((els) => els.map((e) => Number((e as HTMLElement).dataset.deliveryId)));

beforeAll(async () => {
  [service, browser] = await startServiceAndBrowser("timeline");
  // Two tours of three deliveries each, two open ones.
  ({ token, routes, openIds } = await seedCompany(service, { companyname: "Timeline Logistics", dispatcher: DISPATCHER, driver: DRIVER, places: 8, tours: 2, vehicles: [{ name: "Lunch van", breaks: [{ from: "10:30", to: "11:30", minutes: 20 }] }] }));
  const elsewhere = await service.call("POST", "/api/address", { contactcompany: "Lager Potsdam", city: "Potsdam", country: "DE", lat: 52.39, lng: 13.06 }, token);
  const foreignAddress = await service.call("POST", "/api/address", { contactcompany: "Kiosk Fremd", city: "Berlin", country: "DE", lat: 52.51, lng: 13.4 }, token);
  foreignId = (await service.call("POST", "/api/delivery", { deliverylocation_id: foreignAddress.id, supplierlocation_id: elsewhere.id, pdt_from: at(9), pdt_to: at(12), els: 5, load: 1 }, token)).id;
  openIds.push(foreignId);
  await service.call("POST", "/api/areafromplz", { plz_list: ["10115", "10117", "10119"], areaname: "Mitte" }, token);
}, 240_000);

// A failing step leaves a picture of every open page.
takePicturesAndStop(() => ({ browser, service }));

describe("timeline", () => {
  it("shows one row per route and one of open deliveries, stops at their planned times with their windows, in the company's zone", async () => {
    page = await consoleOn({ width: 1280, height: 800 }, "console");
    await page.getByRole("button", { name: "Timeline" }).click();
    expect(await page.getByRole("button", { name: "Timeline" }).getAttribute("aria-pressed")).toBe("true");
    expect(await page.locator(".map").isHidden()).toBe(true);
    const timeline = page.getByTestId("timeline");
    await expect.poll(() => timeline.locator(".tl-row[data-row]").count()).toBe(3);

    // The day fits the width at first (08:00–15:00 in about 640 px); the distance of two hour ticks is the scale.
    await expect.poll(() => timeline.locator(".tl-scroll").evaluate((e) => e.scrollWidth <= e.clientWidth)).toBe(true);
    const ticks = await timeline.locator(".tl-hour").evaluateAll((els) => els.map((e) => ({ text: e.textContent, x: e.getBoundingClientRect().left })));
    const perHour = ticks[1].x - ticks[0].x;
    expect(ticks.map((t) => t.text)).toEqual(["08:00", "09:00", "10:00", "11:00", "12:00", "13:00", "14:00", "15:00"]);
    expect(perHour).toBeGreaterThan(60);
    for (const route of routes) {
      const row = page.locator(`.tl-row[data-route-id="${route.id}"]`);
      expect(await rowStops(row)).toEqual(route.deliveries.map((d) => d.id));
      // Left to right in driving order, each block labelled with its planned stay and window in Berlin time.
      const xs: number[] = [];
      for (const [i, d] of route.deliveries.entries()) {
        const block = stop(page, d.id);
        expect(await block.getAttribute("aria-label")).toContain(`Stop ${i + 1}: `);
        expect(await block.getAttribute("aria-label")).toContain(`planned ${hhmm(d.tdt_from)}–${hhmm(d.tdt_to)}, window ${hhmm(d.pdt_from)}–${hhmm(d.pdt_to)}`);
        xs.push((await block.boundingBox())!.x);
        // The window's shading spans its times: starts where the window opens, on the same scale as the blocks.
        const band = (await row.locator(`.tl-window[data-delivery-id="${d.id}"]`).boundingBox())!;
        const hours = (Date.parse(d.pdt_to) - Date.parse(d.pdt_from)) / 3_600_000;
        expect(Math.abs(band.width - hours * perHour)).toBeLessThan(3);
      }
      expect(xs).toEqual([...xs].sort((a, b) => a - b));
    }
    // Each route's planned break: a labelled block at its times, on the same scale.
    for (const route of routes) {
      const pause = page.locator(`.tl-row[data-route-id="${route.id}"] [data-testid=timeline-break]`);
      expect(await pause.getAttribute("aria-label")).toMatch(/^Break 20 min, \d\d:\d\d–\d\d:\d\d, fixed break$/);
      expect(Math.abs((await pause.boundingBox())!.width - perHour / 3)).toBeLessThan(3);
    }
    const openRow = page.locator('.tl-row[data-row="open"]');
    expect((await rowStops(openRow)).sort()).toEqual([...openIds].sort());
    // The now line belongs to today only.
    expect(await page.getByTestId("now-line").count()).toBe(0);
    await page.screenshot({ path: `${SHOTS}/console-timeline.png` });
  });

  it("marks a stop expected after its window closes as late, by symbol, border and words", async () => {
    const late = routes[1].deliveries[2];
    await page.route(/\/api\/route\?/, async (r) => {
      const res = await r.fetch();
      const body = await res.json();
      for (const route of body.objects) for (const d of route.deliveries) if (d.id === late.id) d.eta_from = new Date(Date.parse(d.pdt_to) + 20 * 60_000).toISOString();
      await r.fulfill({ response: res, json: body });
    });
    // The session survives a reload (sessionStorage); the page reads the routes through the faked answer.
    await page.reload();
    await page.getByLabel("Day").fill(tomorrow);
    await page.getByRole("button", { name: "Timeline" }).click();
    const block = stop(page, late.id);
    await expect.poll(() => block.getAttribute("class")).toContain("late");
    expect(await block.textContent()).toContain("⚠");
    expect(await block.getAttribute("aria-label")).toContain("late: expected after its window closes");
    expect(await page.locator(".tl-stop.late").count()).toBe(1);
    await page.unroute(/\/api\/route\?/);
  });

  it("draws a now line on today's timeline when now lies within its hours", async () => {
    await page.getByLabel("Day").fill(today);
    // Today has nothing with a time: the default hours 06:00–18:00.
    const hour = Number(new Intl.DateTimeFormat("en-GB", { timeZone: ZONE, hour: "2-digit", hourCycle: "h23" }).format(new Date()));
    await expect.poll(() => page.locator(".tl-hour").first().textContent()).toBe("06:00");
    expect(await page.getByTestId("now-line").count()).toBe(hour >= 6 && hour < 18 ? 1 : 0);
    if (hour >= 6 && hour < 18) expect(await page.getByTestId("now-line").getAttribute("aria-label")).toMatch(/^Now \d\d:\d\d$/);
    await page.getByLabel("Day").fill(tomorrow);
  });
});

describe("moving deliveries", () => {
  let watcher: Page;

  it("drags a stop onto another route: the service recomputes both and a second console shows it without reload", async () => {
    watcher = await consoleOn({ width: 1280, height: 800 }, "second console");
    await watcher.getByRole("button", { name: "Timeline" }).click();
    const moved = routes[0].deliveries[1].id;
    const target = page.locator(`.tl-row[data-route-id="${routes[1].id}"]`);
    await stop(page, moved).dragTo(target.locator(".tl-label"));
    await expect.poll(() => rowWith(page, moved).getAttribute("data-route-id"), { timeout: 30_000 }).not.toBe(String(routes[0].id));
    // One request (POST /calcroute/move) replaces both routes.
    await expect.poll(async () => (await current(routes[1])).id, { timeout: 30_000 }).not.toBe(routes[1].id);

    const [from, to] = [await current(routes[0]), await current(routes[1])];
    expect(from.id).not.toBe(routes[0].id);
    expect(to.id).not.toBe(routes[1].id);
    expect(to.deliveries.map((d) => d.id).sort()).toEqual([...routes[1].deliveries.map((d) => d.id), moved].sort());
    expect(from.deliveries.map((d) => d.id)).not.toContain(moved);
    expect((await delivery(moved)).route_id).toBe(to.id);
    // Both consoles show the service's new order.
    await expect.poll(() => rowStops(page.locator(`.tl-row[data-route-id="${to.id}"]`))).toEqual(to.deliveries.map((d) => d.id));
    await expect.poll(() => rowStops(watcher.locator(`.tl-row[data-route-id="${to.id}"]`))).toEqual(to.deliveries.map((d) => d.id));
    await expect.poll(() => rowStops(watcher.locator(`.tl-row[data-route-id="${from.id}"]`))).toEqual(from.deliveries.map((d) => d.id));
  });

  it("assigns an open delivery to a route with the keyboard through the Assign to… menu", async () => {
    const moved = openIds[0];
    const target = await current(routes[0]);
    await stop(page, moved).focus();
    await page.keyboard.press("Enter");
    expect(await stop(page, moved).getAttribute("aria-pressed")).toBe("true");
    // Focus goes to the stop's menu; Escape closes it again.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Assign to…");
    await page.keyboard.press("Enter");
    expect(await page.locator(".assign-menu").getAttribute("open")).toBe("");
    await page.keyboard.press("Escape");
    expect(await page.locator(".assign-menu").getAttribute("open")).toBe(null);
    await page.keyboard.press("Enter");
    const choice = page.locator(`.assign-menu button[data-target="route-${target.id}"]`);
    await choice.focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => rowWith(page, moved).getAttribute("data-row"), { timeout: 30_000 }).not.toBe("open");
    const now = await current(target);
    expect(now.deliveries.map((d) => d.id)).toContain(moved);
    expect((await delivery(moved)).status).toBe(1);
    await expect.poll(() => rowWith(watcher, moved).getAttribute("data-route-id")).toBe(String(now.id));
  });

  it("takes a stop out of its route to the open deliveries", async () => {
    const route = await current(routes[1]);
    const moved = route.deliveries[0].id;
    await stop(page, moved).click();
    await page.getByText("Assign to…", { exact: true }).click();
    await page.getByRole("button", { name: "Out of its route (open deliveries)" }).click();
    await expect.poll(() => rowWith(page, moved).getAttribute("data-row"), { timeout: 30_000 }).toBe("open");
    expect(await delivery(moved)).toMatchObject({ status: 0, route_id: null });
    expect((await current(route)).deliveries.map((d) => d.id)).not.toContain(moved);
    await expect.poll(() => rowWith(watcher, moved).getAttribute("data-row")).toBe("open");
  });

  it("shows the service's refusal and moves nothing", async () => {
    const route = await current(routes[0]);
    await stop(page, foreignId).click();
    await page.getByText("Assign to…", { exact: true }).click();
    await page.locator(`.assign-menu button[data-target="route-${route.id}"]`).click();
    const alert = page.getByRole("alert").filter({ hasText: "refused" });
    await expect.poll(() => alert.count()).toBe(1);
    expect(await alert.textContent()).toMatch(/refused the delivery: Deliveries starting from another depot: \d+\. Nothing was moved\./);
    expect(await delivery(foreignId)).toMatchObject({ status: 0, route_id: null });
    expect((await current(route)).id).toBe(route.id);
    expect(await rowWith(page, foreignId).getAttribute("data-row")).toBe("open");
    await page.screenshot({ path: `${SHOTS}/console-timeline-refused.png` });
  });

  it("a move the target refuses leaves both routes as they were, and says so", async () => {
    const [from, to] = [await current(routes[0]), await current(routes[1])];
    const moved = from.deliveries[0].id;
    // The target's refusal, faked: the real constraints that refuse, and the move's all-or-nothing, are covered by the worker's tests.
    const moveCall = /\/calcroute\/move$/;
    const sent: unknown[] = [];
    await page.route(moveCall, (r) => {
      sent.push(r.request().postDataJSON());
      return r.fulfill({ status: 422, contentType: "application/json", body: JSON.stringify({ code: 422, message: "1 deliveries cannot be routed in one tour", fields: String(moved) }) });
    });
    await stop(page, moved).dragTo(page.locator(`.tl-row[data-route-id="${to.id}"] .tl-label`));
    const alert = page.getByRole("alert").filter({ hasText: "refused" });
    await expect.poll(() => alert.textContent(), { timeout: 30_000 }).toContain(`Nothing was moved: it stays on`);
    // One request, nothing else: the routes are the same ones (no update was sent).
    expect(sent).toEqual([{ delivery_id: moved, from_route_id: from.id, to_route_id: to.id }]);
    expect((await current(from)).id).toBe(from.id);
    expect((await current(to)).id).toBe(to.id);
    expect((await delivery(moved)).route_id).toBe(from.id);
    expect(await rowWith(page, moved).getAttribute("data-route-id")).toBe(String(from.id));
    await page.unroute(moveCall);
    await watcher.context().close();
  });
});

describe("tour areas", () => {
  it("draws the company's tour areas and their postal-code areas as an optional layer, listed for keyboard users", async () => {
    await page.getByRole("button", { name: "Map" }).click();
    expect(await page.locator("path.tour-area").count()).toBe(0);
    await page.getByLabel("Tour areas").check();
    await expect.poll(() => page.locator("path.tour-area").count()).toBe(1);
    expect(await page.locator("path.plz-area").count()).toBe(3);
    expect(await page.locator(".area-label").textContent()).toBe("Mitte");
    await page.getByText("1 tour area").click();
    expect(await page.getByTestId("area-list").textContent()).toContain("Mitte: 10115, 10117, 10119");
    await page.screenshot({ path: `${SHOTS}/console-areas.png` });
    await page.getByLabel("Tour areas").uncheck();
    await expect.poll(() => page.locator("path.tour-area").count()).toBe(0);
  });
});

describe("tablet", () => {
  it("fits a 768×1024 tablet: panel, map and timeline without the page scrolling sideways", async () => {
    const tablet = await consoleOn({ width: 768, height: 1024 }, "tablet");
    const fits = () => tablet.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    const box = async (sel: string) => (await tablet.locator(sel).boundingBox())!;
    expect(await fits()).toBe(true);
    expect((await box(".map")).width).toBeGreaterThan(400);
    expect((await box(".map")).height).toBeGreaterThan(300);
    await tablet.screenshot({ path: `${SHOTS}/tablet-console-map.png` });
    await tablet.getByRole("button", { name: "Timeline" }).click();
    await expect.poll(() => tablet.locator(".tl-stop").count()).toBeGreaterThan(0);
    expect(await fits()).toBe(true);
    // The timeline scrolls inside its own box; the route names stay in view.
    expect((await box(".timeline")).width).toBeGreaterThan(400);
    const scroller = tablet.locator(".tl-scroll");
    expect(await scroller.evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(true);
    // It opens scrolled to where the day starts: the earliest planned stop is in view.
    const starts = await tablet.locator(".tl-row[data-route-id] .tl-stop").evaluateAll((els) => els.map((e) => e.getBoundingClientRect().left));
    const view = await box(".tl-scroll");
    expect(Math.min(...starts)).toBeGreaterThan(view.x);
    expect(Math.min(...starts)).toBeLessThan(view.x + view.width);
    await tablet.screenshot({ path: `${SHOTS}/tablet-console-timeline.png` });
    await tablet.context().close();
  });
});

describe("driver app as a PWA", () => {
  it("links a valid manifest, registers a service worker that keeps the app shell but never the API, and opens offline", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const driver = await context.newPage();
    watchErrors(driver, "driver");
    await driver.goto(`${service.base}/${service.slug}/driver`);
    const href = await driver.locator('link[rel="manifest"]').evaluate((l) => (l as HTMLLinkElement).href);
    expect(href).toBe(`${service.base}/${service.slug}/driver.webmanifest`);
    const res = await fetch(href);
    expect(res.headers.get("content-type")).toMatch(/^application\/manifest\+json/);
    const manifest = await res.json();
    expect(manifest).toMatchObject({ name: "Dispatch – Driver", short_name: "Driver", display: "standalone" });
    expect(new URL(manifest.start_url, href).href).toBe(`${service.base}/${service.slug}/driver`);

    // Chromium's own reading of the manifest and its installability verdict.
    const cdp = await context.newCDPSession(driver);
    const read = await cdp.send("Page.getAppManifest");
    expect(read.errors).toEqual([]);
    const worker = await driver.evaluate(async () => {
      const reg = await navigator.serviceWorker.ready;
      return { scope: reg.scope, script: reg.active?.scriptURL };
    });
    expect(worker).toEqual({ scope: `${service.base}/${service.slug}/driver`, script: `${service.base}/${service.slug}/driver-sw.js` });
    const sw = await fetch(worker.script!);
    expect(sw.headers.get("content-type")).toMatch(/javascript/);
    expect(sw.headers.get("content-security-policy")).toContain("default-src 'none'");
    // Playwright's contexts are incognito, which alone may keep Chromium from offering the install
    // (the full browser says so; the headless shell npm brings does not check incognito).
    const { installabilityErrors } = await cdp.send("Page.getInstallabilityErrors");
    expect(installabilityErrors.map((e) => e.errorId).filter((id) => id !== "in-incognito")).toEqual([]);

    // Once the worker controls the page, an API call passes it untouched: the cache holds the shell only.
    await driver.reload();
    await expect.poll(() => driver.evaluate(() => !!navigator.serviceWorker.controller)).toBe(true);
    await logIn(driver, DRIVER);
    await expect.poll(() => driver.getByLabel("Activation code").count()).toBe(1);
    const cached = await driver.evaluate(async () => (await Promise.all((await caches.keys()).map(async (k) => (await (await caches.open(k)).keys()).map((r) => new URL(r.url).pathname)))).flat().sort());
    expect(cached).toEqual(["/assets/driver-icon.svg", "/assets/driver.css", "/assets/driver.js", `/${service.slug}/driver`, `/${service.slug}/driver.webmanifest`].sort());

    offline = true;
    await context.setOffline(true);
    await driver.reload();
    expect(await driver.locator("#app").count()).toBe(1);
    await expect.poll(() => driver.locator(".topbar h1, .login-form h1").first().textContent()).toMatch(/Driver|My route/);
    // The route cannot load: the driver reads why in words, not the browser's "Failed to fetch".
    await expect.poll(() => driver.getByRole("alert").first().textContent(), { timeout: 10_000 }).toBe("No connection to the service. Check the network and try again.");
    await driver.screenshot({ path: `${SHOTS}/driver-offline-shell.png`, fullPage: true });
    await context.close();
  });

  it("ran without script errors or Content-Security-Policy violations", () => {
    expect(pageErrors).toEqual([]);
  });
});
