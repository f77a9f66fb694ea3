/**
 * Proof of delivery and parcel scanning in a real browser: the driver reports
 * a stop from an emulated phone with a camera picture (a file set on the
 * photo input, as a phone's camera hands it over), a signature drawn with the
 * mouse and a typed parcel code (headless Chromium has no BarcodeDetector:
 * the typed fallback and its wrong-parcel warning); a report made offline
 * waits and goes out with its own time; the dispatcher sees the proof in the
 * console, the customer on the tracking page. Screenshots: test-results/browser/proof-*.png.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { SHOTS, at, logIn, startServiceAndBrowser, takePicturesAndStop, tomorrow, watchErrors as watch } from "./fixtures";
import type { Service } from "./service";

const DISPATCHER = { email: "dispatcher@proof.example", password: "dispatcher-password", firstname: "Dora", lastname: "Dispatcher" };
const DRIVER = { email: "driver@proof.example", password: "driver-password", firstname: "Dana", lastname: "Driver" };
/** The phone stands at the first stop's door. */
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, permissions: ["geolocation"], geolocation: { latitude: 52.4986, longitude: 13.4188 } };
const STOPS: [string, number, number, string][] = [
  ["Café Lindner", 13.4188, 52.4986, "PARCEL-0001"],
  ["Buchhandlung Kiez", 13.4326, 52.5451, "PARCEL-0002"],
];

let service: Service;
let browser: Browser;
let token: string;
let routeId: number;
let deliveryIds: number[];
let phone: { context: BrowserContext; page: Page };
const pageErrors: string[] = [];
// Failed answers the tests provoke, and the network errors of the offline phone.
const watchErrors = (page: Page, name: string) => watch(page, name, pageErrors, (text) => /status of (403|404)|ERR_INTERNET_DISCONNECTED|ERR_CONNECTION_RESET|Failed to fetch|WebSocket/.test(text));

beforeAll(async () => {
  [service, browser] = await startServiceAndBrowser("proof");
  await service.operator("POST", "/companies", { slug: service.slug, companyname: "Proof Logistics", language: "en", depot: { city: "Berlin", country: "DE", lat: 52.5317, lng: 13.3849 }, dispatcher: DISPATCHER });
  await service.operator("PATCH", `/companies/${service.slug}`, { proof_on_tracking_page: true });
  const driver = await service.operator("POST", `/companies/${service.slug}/users`, { usertype: "driver", ...DRIVER });
  token = (await service.call("POST", "/auth", { email: DISPATCHER.email, password: DISPATCHER.password })).access_token;
  const driverToken = (await service.call("POST", "/auth", { email: DRIVER.email, password: DRIVER.password })).access_token;
  await service.call("POST", "/api/activatedriver", { code: driver.code, imei: "browser-test-phone" }, driverToken);
  deliveryIds = [];
  for (const [i, [name, lng, lat, code]] of STOPS.entries()) {
    const address = await service.call("POST", "/api/address", { contactcompany: name, city: "Berlin", country: "DE", lat, lng }, token);
    deliveryIds.push((await service.call("POST", "/api/delivery", { deliverylocation_id: address.id, custom_id: `P-${i + 1}`, pdt_from: at(8), pdt_to: at(18), els: 5, scancode: code }, token)).id);
  }
  const planned = await service.call("POST", "/api/calcroute/optimized/timewindow?async=false&num_vehicles=1", { deliveryids: deliveryIds }, token);
  routeId = planned.objects[0].id;
  await service.call("PATCH", `/api/route/${routeId}`, { driver_id: driver.id }, token);
  await service.call("PATCH", `/api/route/${routeId}`, { status: 2 }, driverToken);
  await service.call("PATCH", `/api/route/${routeId}`, { status: 3 }, driverToken);
}, 240_000);

takePicturesAndStop(() => ({ browser, service }));

/** A picture as a phone camera hands it over: a PNG of 1,200 x 2,000 px (it must come back scaled and as JPEG). */
async function cameraPicture(page: Page): Promise<Buffer> {
  const shot = await page.evaluate(() => {
    const c = document.createElement("canvas");
    c.width = 1200;
    c.height = 2000;
    const g = c.getContext("2d")!;
    g.fillStyle = "#c8a165";
    g.fillRect(0, 0, c.width, c.height);
    g.fillStyle = "#7a5230";
    g.fillRect(300, 700, 600, 500);
    g.fillStyle = "#fff";
    g.font = "80px sans-serif";
    g.fillText("PARCEL-0001", 330, 980);
    return c.toDataURL("image/png");
  });
  return Buffer.from(shot.split(",")[1], "base64");
}

/** Draws a signature with mouse strokes on the stop's canvas. */
async function sign(page: Page, stop: ReturnType<Page["locator"]>) {
  const pad = stop.getByTestId("signature");
  await pad.scrollIntoViewIfNeeded();
  const box = (await pad.boundingBox())!;
  await page.mouse.move(box.x + 20, box.y + box.height * 0.7);
  await page.mouse.down();
  for (let k = 1; k <= 12; k++) await page.mouse.move(box.x + 20 + k * (box.width - 40) / 12, box.y + box.height * (0.7 - 0.4 * Math.sin((k / 12) * Math.PI * 2)), { steps: 2 });
  await page.mouse.up();
  await expect.poll(() => pad.getAttribute("data-signed")).toBe("true");
}

describe("proof of delivery from a phone browser", () => {
  it("reports a stop with photo, signature, recipient and a scanned code; a wrong parcel is warned about", async () => {
    const context = await browser.newContext(PHONE);
    const page = await context.newPage();
    phone = { context, page };
    watchErrors(page, "driver");
    await page.goto(`${service.base}/${service.slug}/driver`);
    await logIn(page, DRIVER);
    const stop = page.locator(`li.stop[data-delivery-id="${deliveryIds[0]}"]`);
    await expect.poll(() => stop.getAttribute("data-status")).toBe("1");
    await expect.poll(() => page.locator(".sharing").getAttribute("data-state")).toBe("sharing");

    // No BarcodeDetector in headless Chromium: the code is typed. Another parcel's code is warned about.
    expect(await page.evaluate(() => "BarcodeDetector" in globalThis)).toBe(false);
    await stop.getByTestId("scancode").fill("PARCEL-0002");
    await expect.poll(() => stop.getByTestId("scan-mismatch").textContent()).toContain("Wrong parcel?");
    await page.screenshot({ path: `${SHOTS}/proof-driver-wrong-parcel.png`, fullPage: true });
    await stop.getByTestId("scancode").fill("PARCEL-0001");
    await expect.poll(() => stop.getByTestId("scan-match").count()).toBe(1);
    expect(await stop.getByTestId("scan-mismatch").count()).toBe(0);

    await stop.getByLabel(/^Received by/).fill("Ms Neighbour");
    await stop.getByTestId("photo").setInputFiles({ name: "IMG_0001.png", mimeType: "image/png", buffer: await cameraPicture(page) });
    await expect.poll(() => stop.getByTestId("photo-preview").evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
    await sign(page, stop);
    await page.screenshot({ path: `${SHOTS}/proof-driver-filled.png`, fullPage: true });
    await stop.getByRole("button", { name: "✓ Delivered" }).click();
    await expect.poll(() => stop.getAttribute("data-status")).toBe("2");
    await expect.poll(() => page.getByTestId("waiting-reports").count()).toBe(0);

    const [proof] = (await service.call("GET", `/api/delivery/${deliveryIds[0]}/proof`, undefined, token)).objects;
    expect(proof).toMatchObject({ recipient: "Ms Neighbour", scanned_code: "PARCEL-0001", scan_match: true, far_from_address: false, photo: { type: "image/jpeg", width: 960, height: 1600 }, signature: { type: "image/png" } });
    expect(proof.distance_m).toBeLessThan(50);
  });

  it("keeps a report made offline, shows it waiting, and sends it with its own time once online", async () => {
    const { context, page } = phone;
    const stop = page.locator(`li.stop[data-delivery-id="${deliveryIds[1]}"]`);
    await context.setOffline(true);
    await stop.getByTestId("photo").setInputFiles({ name: "IMG_0002.png", mimeType: "image/png", buffer: await cameraPicture(page) });
    await expect.poll(() => stop.getByTestId("photo-preview").count()).toBe(1);
    await stop.getByLabel(/^Notes for stop/).fill("Left with the shop next door");
    const before = Date.now();
    await stop.getByRole("button", { name: "✗ Not delivered" }).click();
    await expect.poll(() => page.getByTestId("waiting-reports").textContent()).toContain("1 stop report waiting to be sent");
    expect(await page.getByTestId("stop-waiting").count()).toBe(1);
    await page.screenshot({ path: `${SHOTS}/proof-driver-offline.png`, fullPage: true });
    // Wait a little so that sending later is told apart from the report's own time.
    await new Promise((r) => setTimeout(r, 2500));
    // Back online, the first report's answer is lost on the way (the service got it): the next try repeats it
    // with the same Idempotency-Key and gets the first answer back, marked replayed, instead of a second report.
    let tries = 0;
    await context.route("**/api/deliverydone/**", async (route) => {
      if (tries++ > 0) return route.continue();
      await route.fetch();
      await route.abort("connectionreset");
    });
    const answers: { status: number; replayed: string | undefined }[] = [];
    page.on("response", (res) => {
      if (res.url().includes("/api/deliverydone/")) answers.push({ status: res.status(), replayed: res.headers()["idempotent-replayed"] });
    });
    await context.setOffline(false);
    await expect.poll(() => answers, { timeout: 40_000 }).toContainEqual({ status: 200, replayed: "true" });
    await context.unrouteAll();
    expect(tries).toBe(2);
    await expect.poll(() => stop.getAttribute("data-status"), { timeout: 30_000 }).toBe("3");
    await expect.poll(() => page.getByTestId("waiting-reports").count()).toBe(0);
    expect(await page.getByText(/not accepted/).count()).toBe(0);
    const delivery = await service.call("GET", `/api/delivery/${deliveryIds[1]}`, undefined, token);
    expect(Date.parse(delivery.atd)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(Date.parse(delivery.atd)).toBeLessThan(before + 2000);
    const [proof] = (await service.call("GET", `/api/delivery/${deliveryIds[1]}/proof`, undefined, token)).objects;
    expect(proof.photo).not.toBeNull();
    // The phone stood at stop 1, some 5 km away.
    expect(proof.far_from_address).toBe(true);
    await page.screenshot({ path: `${SHOTS}/proof-driver-finished.png`, fullPage: true });
    await context.close();
  });

  it("the dispatcher sees the proof in the console: photo, signature, recipient, scan and the far-away flag", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    watchErrors(page, "console");
    await page.goto(`${service.base}/${service.slug}/console`);
    await logIn(page, DISPATCHER);
    await page.getByLabel("Day").fill(tomorrow);
    await page.locator(`button.route-item[data-route-id="${routeId}"]`).click();
    const first = page.locator(`[data-testid=route-stops] li[data-delivery-id="${deliveryIds[0]}"]`);
    await first.getByText("Proof of delivery").click();
    await expect.poll(() => first.getByTestId("proof-photo").evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBe(960);
    await expect.poll(() => first.getByTestId("proof-signature").evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
    expect(await first.getByTestId("proof-recipient").textContent()).toBe("Ms Neighbour");
    expect(await first.getByTestId("proof-scan").textContent()).toContain("✓ matches");
    const second = page.locator(`[data-testid=route-stops] li[data-delivery-id="${deliveryIds[1]}"]`);
    await second.getByText("Proof of delivery").click();
    await expect.poll(() => second.getByTestId("proof-far").count()).toBe(1);
    await expect.poll(() => second.getByTestId("proof-photo").count()).toBe(1);
    await first.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/proof-console.png` });
    await context.close();
  });

  it("the customer's tracking page shows the photo and signature through signed links (enabled for this company)", async () => {
    const { link } = await service.call("POST", `/api/delivery/${deliveryIds[0]}/trackinglink`, undefined, token);
    const context = await browser.newContext(PHONE);
    const page = await context.newPage();
    watchErrors(page, "tracking");
    await page.goto(link);
    expect(await page.locator("[data-state]").getAttribute("data-state")).toBe("delivered");
    expect(await page.locator("[data-recipient]").textContent()).toBe("Received by Ms Neighbour");
    await expect.poll(() => page.locator("img[data-proof-photo]").evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBe(960);
    await expect.poll(() => page.locator("img[data-proof-signature]").evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
    await page.screenshot({ path: `${SHOTS}/proof-tracking-page.png`, fullPage: true });
    await context.close();
    expect(pageErrors).toEqual([]);
  });
});
