/**
 * The console's base map, chosen at runtime: the made-up demo region's PMTiles archive in the local
 * R2 bucket (vector tiles drawn on canvas); once it is deleted, the raster tile server of
 * MAP_RASTER_URL (a loopback server here) passed through the service; no base map (country
 * outlines, the config's answer stubbed: the service has a raster server) — every request from the
 * page to the service's own origin.
 * Screenshots at city zoom (1x and 2x pixel ratio) land in test-results/browser/.
 */
import { readFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_ATTRIBUTION } from "../../scripts/pmtiles-lib.mjs";
import { SHOTS, logIn, seedCompany, startServiceAndBrowser, takePicturesAndStop, tomorrow, watchErrors as watch } from "./fixtures";
import type { Service } from "./service";

const DISPATCHER = { email: "dispatcher@basemap.example", password: "dispatcher-password", firstname: "Mara", lastname: "Map" };
const DRIVER = { email: "driver@basemap.example", password: "driver-password", firstname: "Dana", lastname: "Driver" };

let service: Service;
let browser: Browser;
const pageErrors: string[] = [];
const watchErrors = (p: Page, name: string) => watch(p, name, pageErrors, () => false);

/** A console page of its own context; `requests` collects every URL the page asks for. */
async function openConsole(name: string, o: { deviceScaleFactor?: number; route?: (context: BrowserContext) => Promise<unknown> } = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: o.deviceScaleFactor ?? 1 });
  await o.route?.(context);
  const page = await context.newPage();
  watchErrors(page, name);
  const requests: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  await page.goto(`${service.base}/${service.slug}/console`);
  await logIn(page, DISPATCHER);
  await page.getByLabel("Day").fill(tomorrow);
  await expect.poll(() => page.locator("path.route-line").count()).toBe(2);
  return { context, page, requests };
}

/** Every request went to the service's origin (data: and blob: URLs are the page's own). */
const foreign = (requests: string[]) => requests.filter((u) => !u.startsWith("data:") && !u.startsWith("blob:") && new URL(u).origin !== service.base);

/**
 * Pixels of the drawn vector tiles: how many tiles, and how many of them show more than a flat fill.
 * A tile still loading has a canvas without a size yet (the renderer sizes it when it draws), so it counts as blank.
 */
const sampleCanvases = (page: Page) =>
  page.locator(".basemap-vector canvas.leaflet-tile").evaluateAll((canvases) =>
    canvases.map((c) => {
      const canvas = c as HTMLCanvasElement;
      if (canvas.width === 0 || canvas.height === 0) return { width: 0, colours: 0, white: 0, blank: true };
      const ctx = canvas.getContext("2d")!;
      const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
      const colours = new Set<string>();
      let white = 0;
      for (let i = 0; i < data.length; i += 4 * 7) {
        colours.add(`${data[i]},${data[i + 1]},${data[i + 2]},${data[i + 3]}`);
        if (data[i] === 255 && data[i + 1] === 255 && data[i + 2] === 255 && data[i + 3] === 255) white++;
      }
      return { width: canvas.width, colours: colours.size, white, blank: colours.size <= 1 };
    }),
  );

/** Zooms the map in by `steps` with its zoom control and waits for the zoom animation to end. */
async function zoomIn(page: Page, steps: number) {
  for (let i = 0; i < steps; i++) {
    await page.getByRole("button", { name: "Zoom in" }).click();
    // Leaflet marks the map while its zoom animation (250 ms) runs.
    await page.waitForTimeout(100);
    await expect.poll(() => page.locator(".leaflet-zoom-anim").count()).toBe(0);
  }
}

/** A raster tile server on the loopback: every tile the same picture; the paths it was asked for. */
const tileServerPaths: string[] = [];
let tileServer: Server;

beforeAll(async () => {
  const png = readFileSync("node_modules/leaflet/dist/images/layers.png");
  tileServer = createServer((req, res) => {
    tileServerPaths.push(req.url ?? "");
    res.writeHead(200, { "content-type": "image/png" }).end(png);
  });
  await new Promise<void>((resolve) => tileServer.listen(0, "127.0.0.1", resolve));
  const { port } = tileServer.address() as AddressInfo;
  [service, browser] = await startServiceAndBrowser("basemap", undefined, {
    basemap: true,
    vars: { MAP_RASTER_URL: `http://127.0.0.1:${port}/{z}/{x}/{y}.png`, MAP_RASTER_ATTRIBUTION: "© Example Maps", MAP_RASTER_ATTRIBUTION_URL: "https://example.org/copyright" },
  });
  await seedCompany(service, { companyname: "Basemap Logistics", dispatcher: DISPATCHER, driver: DRIVER, places: 6, tours: 2 });
}, 240_000);

takePicturesAndStop(() => ({ browser, service }));
afterAll(() => new Promise<void>((resolve) => (tileServer ? tileServer.close(() => resolve()) : resolve())));

describe("console base map", () => {
  it("draws the archive's streets, water and names under the tours, every tile from the service's own origin", async () => {
    const { context, page, requests } = await openConsole("vector");
    const map = page.locator(".map");
    await expect.poll(() => map.getAttribute("data-basemap")).toBe("vector");
    // City zoom around the tours: the view fitted to them, one step closer.
    await zoomIn(page, 1);
    await expect.poll(async () => (await sampleCanvases(page)).filter((t) => !t.blank).length).toBeGreaterThan(3);
    const tiles = await sampleCanvases(page);
    // Drawn, not blank: the ground, parks, water and casings give many colours; the streets are white.
    expect(tiles.filter((t) => t.colours > 5 && t.white > 50).length).toBeGreaterThan(3);
    expect(tiles.filter((t) => t.width > 0).every((t) => t.width === 256)).toBe(true);
    const tileRequests = requests.filter((u) => /\/tiles\/\d+\/\d+\/\d+\.mvt\?v=/.test(u));
    expect(tileRequests.length).toBeGreaterThan(0);
    expect(requests).toContain(`${service.base}/tiles/map.json`);
    expect(foreign(requests)).toEqual([]);
    // The licence's attribution, as text, and the tours still on top of the map.
    expect(await page.locator(".leaflet-control-attribution").textContent()).toContain(DEMO_ATTRIBUTION);
    expect(await page.locator(".stop-marker").count()).toBe(6);
    await page.screenshot({ path: `${SHOTS}/basemap-city-1x.png` });
    // Closer in: side streets with their names.
    await zoomIn(page, 2);
    await expect.poll(async () => (await sampleCanvases(page)).filter((t) => !t.blank).length).toBeGreaterThan(3);
    await page.screenshot({ path: `${SHOTS}/basemap-streets-1x.png` });
    expect(foreign(requests)).toEqual([]);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it("draws sharp tiles at a 2x pixel ratio (canvas at twice the size)", async () => {
    const { context, page, requests } = await openConsole("vector-2x", { deviceScaleFactor: 2 });
    await expect.poll(() => page.locator(".map").getAttribute("data-basemap")).toBe("vector");
    await zoomIn(page, 1);
    await expect.poll(async () => (await sampleCanvases(page)).filter((t) => !t.blank).length).toBeGreaterThan(3);
    expect((await sampleCanvases(page)).filter((t) => t.width > 0).every((t) => t.width === 512)).toBe(true);
    await page.screenshot({ path: `${SHOTS}/basemap-city-2x.png` });
    expect(foreign(requests)).toEqual([]);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it("once the archive is deleted, draws the configured raster tiles through the service, with their attribution", async () => {
    // The same running service: no rebuild, no restart; the next page load reads the new mode.
    service.removeBasemap();
    const { context, page, requests } = await openConsole("raster");
    await expect.poll(() => page.locator(".map").getAttribute("data-basemap")).toBe("raster");
    await expect.poll(() => page.locator("img.leaflet-tile.leaflet-tile-loaded").count()).toBeGreaterThan(3);
    const srcs = await page.locator("img.leaflet-tile").evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).src));
    expect(srcs.every((s) => s.startsWith(`${service.base}/tiles/raster/`))).toBe(true);
    // The Worker fetched them from the tile server; the browser never did.
    expect(tileServerPaths.length).toBeGreaterThan(3);
    expect(tileServerPaths.every((p) => /^\/\d+\/\d+\/\d+\.png$/.test(p))).toBe(true);
    const attribution = page.locator(".leaflet-control-attribution a");
    expect(await attribution.textContent()).toBe("© Example Maps");
    expect(await attribution.getAttribute("href")).toBe("https://example.org/copyright");
    // No country outlines and no vector renderer in this mode.
    expect(await page.locator("path.country-outline").count()).toBe(0);
    expect(requests.some((u) => u.includes("vector-basemap"))).toBe(false);
    expect(foreign(requests)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/basemap-raster.png` });
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it("with neither, draws the offline country outlines and loads no tiles", async () => {
    const { context, page, requests } = await openConsole("none", {
      route: (ctx) =>
        ctx.route(`${service.base}/tiles/map.json`, (r) =>
          r.fulfill({ json: { mode: "none", tiles: null, attribution: null, attribution_url: null, bounds: null, center: null, minzoom: null, maxzoom: null } }),
        ),
    });
    await expect.poll(() => page.locator(".map").getAttribute("data-basemap")).toBe("none");
    await expect.poll(() => page.locator("path.country-outline").count()).toBeGreaterThan(100);
    expect(await page.locator(".leaflet-tile").count()).toBe(0);
    expect(requests.filter((u) => /\/tiles\/(?!map\.json)/.test(u))).toEqual([]);
    expect(foreign(requests)).toEqual([]);
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
