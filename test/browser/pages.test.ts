/**
 * The dispatcher console and the driver app in a real browser (headless
 * Chromium, see chromium.ts, driven by playwright-core) against a local `wrangler dev`
 * serving the built static assets and the Worker. Screenshots land in
 * test-results/browser/.
 */
import type { Browser, BrowserContext, Page, WebSocketRoute } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { PLACES, SHOTS, at, logIn, seedCompany, startServiceAndBrowser, takePicturesAndStop, tomorrow, watchErrors as watch } from "./fixtures";
import type { Service } from "./service";

const DISPATCHER = { email: "dispatcher@browser.example", password: "dispatcher-password", firstname: "Dora", lastname: "Dispatcher" };
const DRIVER = { email: "driver@browser.example", password: "driver-password", firstname: "Dana", lastname: "Driver" };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, permissions: ["geolocation"], geolocation: { latitude: 52.51, longitude: 13.39 } };

let service: Service;
let browser: Browser;
let token: string;
let driverId: number;
let activationCode: string;
let routed: { id: number; driver_id: number | null; deliveries: { id: number }[]; breaks: { after_orderindex: number }[] }[];
let openIds: number[];
let consoleContext: BrowserContext;
let consolePage: Page;
const pageErrors: string[] = [];
/** The console's websocket, passed through Playwright so a test can close it as the server would. */
let liveSocket: WebSocketRoute | null = null;
let refuseSockets = false;

/** Collects script errors and CSP violations: a page the policy breaks must fail the test. */
// The browser logs failed answers: 404 of GET /currentdriverroute (no next route) and the 403 the expiry test fakes.
const watchErrors = (page: Page, name: string) => watch(page, name, pageErrors, (text) => /status of (403|404)/.test(text));

const LUNCH_VAN = { name: "Lunch van", breaks: [{ from: "10:30", to: "11:30", minutes: 20 }] };

/** The driver app on an emulated phone (with a position), logged in. */
async function driverOnPhone() {
  const context = await browser.newContext(PHONE);
  const page = await context.newPage();
  watchErrors(page, "driver");
  await page.goto(`${service.base}/${service.slug}/driver`);
  await logIn(page, DRIVER);
  return { context, page };
}

beforeAll(async () => {
  [service, browser] = await startServiceAndBrowser("browser");
  // Two tours of three deliveries each (the driver is not active yet, so neither gets a driver); the other four stay open.
  // The van's fixed break falls in the waiting before each tour's third stop (window 12-15).
  const seeded = await seedCompany(service, { companyname: "Browser Logistics", dispatcher: DISPATCHER, driver: DRIVER, places: 10, tours: 2, vehicles: [LUNCH_VAN] });
  ({ token, routes: routed, openIds } = seeded);
  driverId = seeded.driver.id;
  activationCode = seeded.driver.code;
}, 240_000);

// A failing step leaves a picture of every open page.
takePicturesAndStop(() => ({ browser, service }));

describe("driver activation", () => {
  it("activates the driver's phone with the code from the invitation", async () => {
    const { context, page } = await driverOnPhone();
    await page.getByLabel("Activation code").fill(activationCode);
    await page.getByRole("button", { name: "Activate" }).click();
    await expect.poll(() => page.getByTestId("no-route").count()).toBe(1);
    expect((await service.call("GET", `/api/driver/${driverId}`, undefined, token)).active).toBe(true);
    await context.close();
  });
});

describe("dispatcher console", () => {
  it("logs in, draws the seeded routes with numbered stops, lists a route's stops in order and assigns its driver", async () => {
    consoleContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    consolePage = await consoleContext.newPage();
    watchErrors(consolePage, "console");
    await consolePage.routeWebSocket(/\/api\/ws/, (ws) => {
      if (refuseSockets) return ws.close({ code: 1012, reason: "service restarting" });
      liveSocket = ws;
      ws.connectToServer();
    });
    // Every API call after the login sends back the newest D1 bookmark (no answer older than what the page saw).
    const bookmarks: (string | undefined)[] = [];
    consolePage.on("request", (r) => {
      if (r.url().includes(`/${service.slug}/api/`) && !r.url().includes("/api/ws")) bookmarks.push(r.headers()["x-d1-bookmark"]);
    });
    await consolePage.goto(`${service.base}/${service.slug}/console`);
    await logIn(consolePage, DISPATCHER);
    await consolePage.getByLabel("Day").fill(tomorrow);

    const items = consolePage.locator("button.route-item");
    await expect.poll(() => items.count()).toBe(2);
    // The day is in the address: a link to it (here a second tab, with a login of its own) opens on that day.
    expect(new URL(consolePage.url()).searchParams.get("day")).toBe(tomorrow);
    const linked = await consoleContext.newPage();
    await linked.goto(consolePage.url());
    await logIn(linked, DISPATCHER);
    await expect.poll(() => linked.getByLabel("Day").inputValue()).toBe(tomorrow);
    await expect.poll(() => linked.locator("button.route-item").count()).toBe(2);
    await linked.close();
    expect(bookmarks.length).toBeGreaterThan(0);
    for (const bookmark of bookmarks) expect(bookmark).toMatch(/^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32,64}$/);
    // Each route drawn as an SVG line, its stops as numbered markers, the depot as one.
    await expect.poll(() => consolePage.locator("path.route-line").count()).toBe(2);
    await expect.poll(() => consolePage.locator(".stop-marker").count()).toBe(6);
    expect(await consolePage.locator(".depot-marker").count()).toBe(1);
    // The offline background: the world-atlas country outlines (about 170 shapes).
    await expect.poll(() => consolePage.locator("path.country-outline").count()).toBeGreaterThan(100);
    await expect.poll(() => consolePage.getByRole("status").filter({ hasText: "Live" }).count()).toBe(1);
    expect(await items.first().textContent()).toContain("no driver");
    expect(await items.first().textContent()).toContain("0/3");

    await items.first().click();
    const stops = consolePage.locator("[data-testid=route-stops] li[data-delivery-id]");
    const order = await stops.evaluateAll((lis) => lis.map((li) => Number((li as HTMLElement).dataset.deliveryId)));
    expect(order).toEqual(routed[0].deliveries.map((d) => d.id));
    expect(await stops.first().textContent()).toMatch(/window \d\d:\d\d–\d\d:\d\d/);
    // The planned break stands between the stops it lies between, in the company's time.
    const pause = consolePage.locator("[data-testid=route-stops] [data-testid=route-break]");
    expect(await pause.textContent()).toMatch(/Break 20 min, (10:[3-5]\d|11:[0-3]\d)–\d\d:\d\d, fixed break/);
    const listed = await consolePage.locator("[data-testid=route-stops] li").evaluateAll((lis) => lis.map((li) => ((li as HTMLElement).dataset.testid === "route-break" ? "break" : "stop")));
    expect(listed.indexOf("break")).toBe(routed[0].breaks[0].after_orderindex);

    await consolePage.getByRole("combobox", { name: /^Driver/ }).selectOption({ label: "Dana Driver" });
    await consolePage.getByRole("button", { name: "Assign driver" }).click();
    const detail = consolePage.locator(`section.route-detail[data-route-id="${routed[0].id}"]`);
    await expect.poll(() => detail.getAttribute("data-status")).toBe("1");
    expect(await detail.textContent()).toContain("assigned · Dana Driver");
    await consolePage.screenshot({ path: `${SHOTS}/console-route.png` });

    await consolePage.getByRole("button", { name: "← All routes" }).click();
    await consolePage.getByLabel("Status").selectOption({ label: "assigned" });
    await expect.poll(() => items.count()).toBe(1);
    expect(await items.first().getAttribute("data-route-id")).toBe(String(routed[0].id));
    await consolePage.getByLabel("Status").selectOption({ label: "all" });
    await expect.poll(() => items.count()).toBe(2);
  });

  it("moves the driver's marker when a position is posted through the API, without reload", async () => {
    const marker = consolePage.locator(`.driver-marker[data-driver-id="${driverId}"]`);
    await service.call("POST", "/api/drivertracking", { driver_id: driverId, position: { type: "Point", coordinates: [13.4, 52.52] } }, token);
    await expect.poll(() => marker.getAttribute("data-lnglat")).toBe("13.40000,52.52000");
    const before = await marker.boundingBox();
    await service.call("POST", "/api/drivertracking", { driver_id: driverId, position: { type: "Point", coordinates: [13.43, 52.5] } }, token);
    await expect.poll(() => marker.getAttribute("data-lnglat")).toBe("13.43000,52.50000");
    // The marker is drawn a frame after its data changed: wait for the picture, not only the attribute.
    await expect.poll(async () => (await marker.boundingBox())!.x).toBeGreaterThan(before!.x);
    expect((await marker.boundingBox())!.y).toBeGreaterThan(before!.y);
  });

  it("optimises selected open deliveries with a progress bar, the new tour appears without reload and can be cancelled", async () => {
    const open = consolePage.locator("[data-testid=open-deliveries] input[type=checkbox]");
    await expect.poll(() => open.count()).toBe(openIds.length);
    await consolePage.getByLabel("Select all").check();
    await consolePage.getByLabel("Vehicles").fill("1");
    await consolePage.getByRole("button", { name: `Optimise ${openIds.length} deliveries` }).click();
    const progress = consolePage.locator(".process progress");
    await expect.poll(() => progress.count()).toBe(1);
    await expect.poll(() => consolePage.locator(".process").getAttribute("data-status"), { timeout: 30_000 }).toBe("finished");
    expect(await progress.evaluate((p) => (p as HTMLProgressElement).value)).toBe(1);
    await expect.poll(() => consolePage.locator("button.route-item").count()).toBe(3);
    await expect.poll(() => consolePage.locator("path.route-line").count()).toBe(3);
    await expect.poll(() => open.count()).toBe(0);
    await consolePage.screenshot({ path: `${SHOTS}/console-optimised.png` });

    // Cancelling the new tour (after a confirmation) returns its deliveries to the open list.
    // The list is ordered by tour number (start time), so the new tour is found by its id, not its place.
    await consolePage.locator(`button.route-item${routed.map((r) => `:not([data-route-id="${r.id}"])`).join("")}`).click();
    await consolePage.getByRole("button", { name: "Cancel route…" }).click();
    await consolePage.getByRole("button", { name: "Yes, cancel route" }).click();
    await expect.poll(() => open.count()).toBe(openIds.length);
    await expect.poll(() => consolePage.locator("button.route-item").count()).toBe(2);
    await expect.poll(() => consolePage.locator("path.route-line").count()).toBe(2);
  });
  it("recovers from a websocket the server closed and shows the change it missed", async () => {
    const badge = consolePage.locator(".conn");
    await expect.poll(() => badge.getAttribute("data-state")).toBe("online");
    refuseSockets = true;
    liveSocket!.close({ code: 1001, reason: "going away" });
    await expect.poll(() => badge.getAttribute("data-state")).not.toBe("online");
    expect(await badge.textContent()).toMatch(/Offline|Connecting/);

    // A change while the console is cut off: no event can reach it.
    const address = await service.call("POST", "/api/address", { contactcompany: "Kiosk am Park", city: "Berlin", country: "DE", lat: 52.52, lng: 13.41 }, token);
    await service.call("POST", "/api/delivery", { deliverylocation_id: address.id, custom_id: "B-missed", pdt_from: at(9), pdt_to: at(12), els: 5, load: 1 }, token);
    const missed = consolePage.locator("[data-testid=open-deliveries]", { hasText: "Kiosk am Park" });
    expect(await missed.count()).toBe(0);

    refuseSockets = false;
    await expect.poll(() => badge.getAttribute("data-state"), { timeout: 30_000 }).toBe("online");
    await expect.poll(() => missed.count()).toBe(1);
  });

  it("asks for a new login when the service rejects the token, keeping what was typed", async () => {
    const first = consolePage.locator("[data-testid=open-deliveries] input[type=checkbox]").first();
    await first.check();
    await consolePage.getByLabel("Vehicles").fill("3");
    await consolePage.route(/\/calcroute\//, (r) => r.fulfill({ status: 403, contentType: "application/json", body: JSON.stringify({ code: 403, message: "Invalid or expired token", fields: "" }) }), { times: 1 });
    await consolePage.getByRole("button", { name: "Optimise 1 delivery" }).click();
    const dialog = consolePage.locator(".overlay");
    await expect.poll(() => dialog.count()).toBe(1);
    expect(await dialog.textContent()).toContain("Your session has expired");
    await consolePage.screenshot({ path: `${SHOTS}/console-session-expired.png` });
    await logIn(consolePage, DISPATCHER);
    await expect.poll(() => dialog.count()).toBe(0);
    expect(await consolePage.getByLabel("Vehicles").inputValue()).toBe("3");
    expect(await first.isChecked()).toBe(true);
    await first.uncheck();
  });
});

describe("driver app", () => {
  it("accepts, starts, shares positions and reports every stop; the console shows the route finished", async () => {
    const { context, page } = await driverOnPhone();
    const route = page.locator(`section[data-route-id="${routed[0].id}"]`);
    await expect.poll(() => route.getAttribute("data-status")).toBe("1");
    await page.screenshot({ path: `${SHOTS}/driver-assigned.png`, fullPage: true });
    // The driver reads the planned break between the two stops it lies between.
    expect(await route.getByTestId("route-break").textContent()).toMatch(/Break 20 min, .*fixed break/);
    const listed = await route.locator("ol.stops > li").evaluateAll((lis) => lis.map((li) => ((li as HTMLElement).dataset.testid === "route-break" ? "break" : "stop")));
    expect(listed.indexOf("break")).toBe(routed[0].breaks[0].after_orderindex);

    await page.getByRole("button", { name: "Accept route" }).click();
    await expect.poll(() => route.getAttribute("data-status")).toBe("2");
    await page.getByRole("button", { name: "Start route" }).click();
    await expect.poll(() => route.getAttribute("data-status")).toBe("3");

    // The emulated phone position reaches the console through /drivertracking and the websocket.
    await expect.poll(() => page.locator(".sharing").getAttribute("data-state")).toBe("sharing");
    const marker = consolePage.locator(`.driver-marker[data-driver-id="${driverId}"]`);
    await expect.poll(() => marker.getAttribute("data-lnglat")).toBe("13.39000,52.51000");
    expect(await page.locator("a.navigate").first().getAttribute("href")).toMatch(/^geo:52\.\d+,13\.\d+\?q=/);
    await page.screenshot({ path: `${SHOTS}/driver-on-the-way.png`, fullPage: true });

    const stops = routed[0].deliveries.length;
    for (let i = 0; i < stops; i++) {
      const delivered = page.getByRole("button", { name: "✓ Delivered" }).first();
      await delivered.click();
      await expect.poll(() => page.locator('li.stop[data-status="2"]').count()).toBe(i + 1);
    }
    await expect.poll(() => route.getAttribute("data-status")).toBe("4");
    expect(await page.locator(".done").textContent()).toContain("Route finished");
    await page.screenshot({ path: `${SHOTS}/driver-finished.png`, fullPage: true });

    // The console, never reloaded, shows the route finished with every stop reported.
    const item = consolePage.locator(`button.route-item[data-route-id="${routed[0].id}"]`);
    await expect.poll(() => item.getAttribute("data-status")).toBe("4");
    expect(await item.textContent()).toContain(`${stops}/${stops}`);
    expect(await item.textContent()).toContain("finished");
    expect(await consolePage.locator(".stop-marker.status-delivered").count()).toBe(stops);
    await consolePage.screenshot({ path: `${SHOTS}/console-finished.png` });

    await page.getByRole("button", { name: "Log out" }).click();
    await expect.poll(() => page.getByRole("button", { name: "Log in" }).count()).toBe(1);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await context.close();
  });

  it("asks the driver to log in again as soon as a dispatcher deactivates them (the service closes the socket with 4403)", async () => {
    const { context, page } = await driverOnPhone();
    await expect.poll(() => page.locator(".conn").getAttribute("data-state")).toBe("online");
    await service.call("PATCH", `/api/driver/${driverId}`, { active: false }, token);
    const dialog = page.locator(".overlay");
    // No request of the page's own is needed: the closed socket makes it ask.
    await expect.poll(() => dialog.count()).toBe(1);
    expect(await dialog.textContent()).toContain("Your session has expired");
    await page.screenshot({ path: `${SHOTS}/driver-deactivated.png` });
    await context.close();
    await service.call("PATCH", `/api/driver/${driverId}`, { active: true }, token);
    // Tokens carry whole-second issue times, so one issued in the second of the deactivation is refused too:
    // the tests after this one log the driver in again, from the next second on.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
  });

  it("ran without script errors or Content-Security-Policy violations", () => {
    expect(pageErrors).toEqual([]);
  });
});

describe("customer tracking page", () => {
  it("shows a phone the ETA, the driver's position after it was posted, the proof after delivery, and a friendly page for a wrong link", async () => {
    const route = routed[1];
    const driverToken = (await service.call("POST", "/auth", DRIVER)).access_token;
    await service.call("PATCH", `/api/route/${route.id}`, { driver_id: driverId }, token);
    await service.call("POST", `/api/setroutestatus/${route.id}`, { status: 2 }, driverToken);
    const started = await service.call("PATCH", `/api/route/${route.id}`, { status: 3 }, driverToken);
    const stops: { id: number }[] = started.deliveries;
    const target = stops[stops.length - 1];
    const { link } = await service.call("POST", `/api/delivery/${target.id}/trackinglink`, undefined, token);
    expect(link).toMatch(new RegExp(`^${service.base}/${service.slug}/t/[A-Za-z0-9_-]{32}$`));

    const context = await browser.newContext({ viewport: PHONE.viewport, isMobile: true });
    const page = await context.newPage();
    watchErrors(page, "tracking");
    const position = (lng: number, lat: number) => service.call("POST", "/api/drivertracking", { driver_id: driverId, position: { type: "Point", coordinates: [lng, lat] } }, driverToken);
    await position(13.3, 52.45);
    await page.goto(link);
    expect(await page.locator("[data-state]").getAttribute("data-state")).toBe("on_the_way");
    expect(await page.locator("[data-eta]").textContent()).toMatch(/^Voraussichtlich am .+ zwischen \d\d:\d\d und \d\d:\d\d Uhr$/);
    expect(await page.locator("[data-stops]").getAttribute("data-stops")).toBe(String(stops.length - 1));
    expect(await page.locator('meta[http-equiv="refresh"]').getAttribute("content")).toBe("30");
    const marker = page.locator('[data-marker="driver"]');
    const far = { x: await marker.getAttribute("x"), y: await marker.getAttribute("y") };
    await page.screenshot({ path: `${SHOTS}/tracking-on-the-way.png`, fullPage: true });

    // The driver comes closer: the next refresh (every 30 s; reloaded here instead of waiting) shows it.
    const destination = PLACES.find(([name]) => started.deliveries[stops.length - 1].address?.contactcompany === name);
    await position(destination ? destination[1] + 0.02 : 13.4, destination ? destination[2] + 0.01 : 52.5);
    await page.reload();
    expect({ x: await marker.getAttribute("x"), y: await marker.getAttribute("y") }).not.toEqual(far);

    for (const stop of stops) await service.call("POST", `/api/deliverydone/${stop.id}`, { status: "delivered", drivernotes: stop.id === target.id ? "Beim Nachbarn abgegeben" : undefined }, driverToken);
    await page.reload();
    expect(await page.locator("[data-state]").getAttribute("data-state")).toBe("delivered");
    expect(await page.locator("[data-proof]").textContent()).toMatch(/^Zugestellt um \d\d:\d\d Uhr\.$/);
    expect(await page.textContent("body")).toContain("Beim Nachbarn abgegeben");
    expect(await marker.count()).toBe(0);
    await page.screenshot({ path: `${SHOTS}/tracking-delivered.png`, fullPage: true });

    const wrong = await page.goto(`${service.base}/${service.slug}/t/not-a-real-token`);
    expect(wrong?.status()).toBe(404);
    expect(await page.textContent("h1")).toContain("Diese Sendungsverfolgung gibt es nicht");
    await context.close();
    expect(pageErrors.filter((e) => e.startsWith("tracking:") && !/status of 404/.test(e))).toEqual([]);
  });
});

describe("re-planning during the day", () => {
  it("tells the driver what a re-plan changed: a stop put into the running route, then the day re-planned from the console", async () => {
    // A tour of two open deliveries, on the way with the driver.
    const planned = await service.call("POST", "/api/calcroute/optimized/timewindow?async=false&num_vehicles=1", { deliveryids: openIds.slice(0, 2) }, token);
    const second = planned.objects[0].id as number;
    const driverToken = (await service.call("POST", "/auth", DRIVER)).access_token;
    await service.call("PATCH", `/api/route/${second}`, { driver_id: driverId }, token);
    await service.call("POST", `/api/setroutestatus/${second}`, { status: 2 }, driverToken);
    await service.call("PATCH", `/api/route/${second}`, { status: 3 }, driverToken);
    const { context, page } = await driverOnPhone();
    const route = page.locator(`section[data-route-id="${second}"]`);
    await expect.poll(() => route.getAttribute("data-status")).toBe("3");
    // A new order into this running route: the phone shows the new route and says what changed.
    const inserted = await service.call("POST", "/api/calcroute/insert", { deliveryids: [openIds[3]], route_ids: [second] }, token);
    const replacing = inserted.insertions[0].new_route_id as number;
    await expect.poll(() => page.locator(`section[data-route-id="${replacing}"]`).count(), { timeout: 30_000 }).toBe(1);
    const change = page.getByTestId("route-change");
    await expect.poll(() => change.textContent()).toMatch(/^Your route was re-planned: 1 stop added \(.+\)/);
    await page.screenshot({ path: `${SHOTS}/driver-route-changed.png`, fullPage: true });
    await change.getByRole("button", { name: "OK" }).click();
    expect(await change.count()).toBe(0);
    // The dispatcher re-plans the rest of the day from the console (once it lists the new route): progress, then the route replaced again.
    await expect.poll(() => consolePage.locator(`button.route-item[data-route-id="${replacing}"]`).count(), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => consolePage.locator(`button.route-item[data-route-id="${second}"]`).count()).toBe(0);
    const back = consolePage.getByRole("button", { name: "← All routes" });
    if (await back.count()) await back.click();
    await consolePage.getByRole("button", { name: /^Re-plan the rest of the day \(1 running route\)/ }).click();
    const progress = consolePage.locator("section.replan .process");
    await expect.poll(() => progress.getAttribute("data-status"), { timeout: 60_000 }).toBe("finished");
    await consolePage.screenshot({ path: `${SHOTS}/console-replanned.png` });
    const latest = (await service.call("GET", `/api/currentdriverroute/${driverId}`, undefined, token)).route_id as number;
    expect(latest).not.toBe(replacing);
    await expect.poll(() => page.locator(`section[data-route-id="${latest}"]`).count(), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => change.textContent()).toMatch(/^Your route was re-planned/);
    await context.close();
  });
});
