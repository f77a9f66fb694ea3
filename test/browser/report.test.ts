/**
 * The console's day report in headless Chromium: a day driven through the
 * public API (two tours, two drivers, stops on time, early, late and not
 * delivered, a tracked path), then the Report view: totals, the three charts
 * with their sortable tables, and the XLSX download. The figures themselves
 * are checked against hand computation in test/day-report.test.ts; here the
 * page must show what the API answers. Screenshots in test-results/browser/.
 */
import type { Browser, Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { dayAt } from "../../src/shared/wall-clock";
import { PLACES, SHOTS, ZONE, at, logIn, startServiceAndBrowser, takePicturesAndStop, watchErrors } from "./fixtures";
import type { Service } from "./service";

const DISPATCHER = { email: "reporter@browser.example", password: "reporter-password" };
const DRIVERS = [
  { email: "rita@browser.example", password: "rita-password", firstname: "Rita", lastname: "Runner" },
  { email: "sam@browser.example", password: "sam-password", firstname: "Sam", lastname: "Speedy" },
];
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
const HOUR = 3_600_000;

let service: Service;
let browser: Browser;
let token: string;
let page: Page;
let report: any;
const pageErrors: string[] = [];

beforeAll(async () => {
  [service, browser] = await startServiceAndBrowser("report");
  await service.operator("POST", "/companies", {
    slug: service.slug,
    companyname: "Report Logistics",
    depot: { city: "Berlin", country: "DE", lat: 52.5317, lng: 13.3849 },
    dispatcher: { ...DISPATCHER, firstname: "Rea", lastname: "Porter" },
  });
  const drivers: { id: number; token: string }[] = [];
  for (const d of DRIVERS) {
    const { id, code } = await service.operator("POST", `/companies/${service.slug}/users`, { usertype: "driver", ...d });
    const driverToken = (await service.call("POST", "/auth", { email: d.email, password: d.password })).access_token;
    await service.call("POST", "/api/activatedriver", { code, imei: `phone-${d.firstname}` }, driverToken);
    drivers.push({ id, token: driverToken });
  }
  token = (await service.call("POST", "/auth", DISPATCHER)).access_token;
  const api = (method: string, path: string, body?: unknown, as = token) => service.call(method, `/api${path}`, body, as);
  await api("POST", "/vehicle", { name: "Cargo bike", vehicle_class: "bicycle", driver_id: drivers[1].id });

  // Six deliveries for tomorrow, routed into two tours of three.
  const ids: number[] = [];
  for (const [i, [name, lng, lat]] of PLACES.slice(0, 6).entries()) {
    const address = await api("POST", "/address", { contactcompany: name, city: "Berlin", country: "DE", lat, lng });
    ids.push((await api("POST", "/delivery", { deliverylocation_id: address.id, custom_id: `R-${i + 1}`, pdt_from: at(8), pdt_to: at(18), els: 5, load: 1 })).id);
  }
  const tours: { routeId: number; stops: number[] }[] = [];
  for (let t = 0; t < 2; t++) {
    const result = await api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { deliveryids: ids.slice(t * 3, t * 3 + 3) });
    const routeId = result.objects[0].id;
    tours.push({ routeId, stops: (await api("GET", `/route/${routeId}`)).deliveries.map((d: { id: number }) => d.id) });
  }
  // The windows as the day had them, around now (set while the routes are not on the way yet): on time, two hours late,
  // early; on time, 35 minutes late, on time.
  const now = Date.now();
  const windows = [
    [now - HOUR, now + 2 * HOUR], [now - 3 * HOUR, now - 2 * HOUR], [now + HOUR, now + 3 * HOUR],
    [now - HOUR, now + HOUR], [now - 2 * HOUR, now - 35 * 60_000], [now - HOUR, now + HOUR],
  ];
  for (const [i, id] of [...tours[0].stops, ...tours[1].stops].entries()) await api("PATCH", "/delivery", { id, pdt_from: iso(windows[i][0]), pdt_to: iso(windows[i][1]) });
  let ast = 0;
  for (const [t, driver] of drivers.entries()) {
    const { routeId } = tours[t];
    await api("PATCH", `/route/${routeId}`, { driver_id: driver.id });
    await api("POST", `/setroutestatus/${routeId}`, { status: 2 }, driver.token);
    ast = Math.max(ast, Date.parse((await api("PATCH", `/route/${routeId}`, { status: 3 }, driver.token)).ast));
  }

  // Rita's phone tracks her path after the start: five positions 2 s and about 80 m apart.
  for (let i = 1; i <= 5; i++) {
    await api("POST", "/drivertracking", { driver_id: drivers[0].id, timestamp: iso(ast + i * 2000), position: { type: "Point", coordinates: [13.3849, 52.5317 + i * 0.0007] } }, drivers[0].token);
  }
  // Her last report comes after her last position.
  while (Date.now() < ast + 11_000) await new Promise((r) => setTimeout(r, 250));
  const report1 = (id: number, status: string, driver: { token: string }, drivernotes?: string) => api("POST", `/deliverydone/${id}`, { status, ...(drivernotes ? { drivernotes } : {}) }, driver.token);
  for (const id of tours[0].stops) await report1(id, "delivered", drivers[0]);
  await report1(tours[1].stops[0], "delivered", drivers[1]);
  await report1(tours[1].stops[1], "delivered", drivers[1]);
  await report1(tours[1].stops[2], "undelivered", drivers[1], "shop closed");
  report = await api("GET", `/report/day?date=${dayAt(ast, ZONE)}`);

  const context = await browser.newContext({ viewport: { width: 1400, height: 1100 }, acceptDownloads: true });
  page = await context.newPage();
  watchErrors(page, "console", pageErrors, () => false);
  await page.goto(`${service.base}/${service.slug}/console`);
  await logIn(page, DISPATCHER);
}, 240_000);

takePicturesAndStop(() => ({ browser, service }));

describe("the console's day report", () => {
  it("the API's figures for the driven day are the expected ones", () => {
    expect(report.incomplete).toBe(false);
    expect(report.routes).toHaveLength(2);
    expect(report.totals).toMatchObject({ routes: 2, stops: 6, delivered: 5, not_delivered: 1, with_window: 6, on_time: 3, on_time_share: 0.5, early: 1, late: 2, routes_tracked: 1 });
    expect(report.totals.reasons).toEqual([{ reason: "no reason given", count: 1 }]);
    expect(report.lateness_histogram.map((b: { count: number }) => b.count)).toEqual([4, 0, 0, 0, 1, 1]);
    // Five positions about 78 m apart: 4 steps, about 0.3 km.
    expect(report.routes[0].actual_km).toBe(0.3);
    expect(report.routes[1]).toMatchObject({ vehicle_class: "bicycle", co2e_factor: 8, co2e_basis: "planned" });
  });

  it("shows totals, three charts with tables, sorts a table, and downloads XLSX", async () => {
    await page.getByRole("button", { name: "Report" }).click();
    const totals = page.getByTestId("report-totals");
    await expect.poll(() => totals.textContent()).toContain("5 of 6");
    expect(await totals.textContent()).toContain("50 %");
    expect(await totals.textContent()).toContain(`${report.totals.co2e_kg.toLocaleString("en-GB")} kg`);

    const onTime = page.getByTestId("chart-ontime");
    expect(await onTime.locator("svg[role=img]").count()).toBe(1);
    expect(await onTime.locator("svg text").allTextContents()).toEqual(expect.arrayContaining([report.routes[0].name, "33.3 %", report.routes[1].name, "66.7 %"]));
    const km = page.getByTestId("chart-km");
    expect(await km.locator("svg text").allTextContents()).toEqual(expect.arrayContaining(["Rita Runner", "Sam Speedy", "0.3", "no track"]));
    const lateness = page.getByTestId("chart-lateness");
    expect(await lateness.locator("svg text").allTextContents()).toEqual(expect.arrayContaining(["on time or early", "4", "60+ min", "30–60 min"]));
    expect(await page.getByRole("table", { name: "Reasons" }).locator("tbody tr").allTextContents()).toEqual(["no reason given1"]);
    // The stop not delivered, with the driver's notes.
    const missed = page.getByRole("table", { name: "Stops not delivered" }).locator("tbody tr");
    expect(await missed.count()).toBe(1);
    expect(await missed.textContent()).toContain("shop closed");

    // The table behind a chart: open, sort by on-time share (ascending, then descending).
    await onTime.locator("summary").click();
    const table = onTime.getByRole("table", { name: "Routes" });
    const firstColumn = () => table.locator("tbody th[scope=row]").allTextContents();
    const header = table.getByRole("columnheader", { name: /On time/ });
    await header.getByRole("button").click();
    expect(await header.getAttribute("aria-sort")).toBe("ascending");
    expect(await firstColumn()).toEqual([report.routes[0].name, report.routes[1].name]);
    await header.getByRole("button").click();
    expect(await header.getAttribute("aria-sort")).toBe("descending");
    expect(await firstColumn()).toEqual([report.routes[1].name, report.routes[0].name]);
    await km.locator("summary").click();
    await lateness.locator("summary").click();
    await page.screenshot({ path: `${SHOTS}/console-day-report.png`, fullPage: true });

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("group", { name: "Download" }).getByRole("button", { name: "XLSX" }).click()]);
    expect(download.suggestedFilename()).toBe(`day-report-${service.slug}-${report.from}.xlsx`);
    expect(pageErrors).toEqual([]);
  });

  it("reads as a phone would show it", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    // Charts and totals fit the phone's width (the tables scroll inside their own box).
    const report = page.locator("section.report");
    await page.getByTestId("chart-km").scrollIntoViewIfNeeded();
    expect(await report.evaluate((el) => el.scrollWidth - el.clientWidth)).toBe(0);
    await page.screenshot({ path: `${SHOTS}/console-day-report-phone.png`, fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});
