/**
 * Planning from the dispatcher console in a real browser (headless Chromium,
 * playwright-core) against a local `wrangler dev`: tour names, creating and
 * editing a delivery with address search, routing variants, changing a
 * route (stops, driver) with a refusal shown, a cancelled optimisation, and
 * a spreadsheet upload. Screenshots land in test-results/browser/.
 */
import type { Browser, Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { PLACES, SHOTS, at, logIn, startServiceAndBrowser, takePicturesAndStop, tomorrow, watchErrors } from "./fixtures";
import type { Service } from "./service";

const DISPATCHER = { email: "planner@browser.example", password: "planner-password" };
const DRIVERS = [
  { email: "anna@browser.example", password: "anna-password", firstname: "Anna", lastname: "Alt" },
  { email: "ben@browser.example", password: "ben-password", firstname: "Ben", lastname: "Berg" },
];


let service: Service;
let browser: Browser;
let token: string;
let page: Page;
let addressIds: number[];
/** Deliveries routed by two separate calculations (each names its tour "Tour 1"), and the open ones. */
let routeIds: number[];
let openIds: number[];
/** A delivery picked up at another depot: no route of the company depot may take it. */
let elsewhereId: number;
const pageErrors: string[] = [];

const api = <T = any>(method: string, path: string, body?: unknown) => service.call<T>(method, `/api${path}`, body, token);

async function delivery(i: number, extra: Record<string, unknown> = {}) {
  const d = await api("POST", "/delivery", { deliverylocation_id: addressIds[i], custom_id: `P-${i + 1}`, pdt_from: at(8 + (i % 3) * 2), pdt_to: at(11 + (i % 3) * 2), els: 5, load: 1, ...extra });
  return d.id as number;
}

beforeAll(async () => {
  [service, browser] = await startServiceAndBrowser("planning");
  await service.operator("POST", "/companies", {
    slug: service.slug,
    companyname: "Planning Logistics",
    depot: { city: "Berlin", country: "DE", lat: 52.5317, lng: 13.3849 },
    dispatcher: { ...DISPATCHER, firstname: "Pia", lastname: "Planner" },
  });
  for (const d of DRIVERS) {
    const { code } = await service.operator("POST", `/companies/${service.slug}/users`, { usertype: "driver", ...d });
    const driverToken = (await service.call("POST", "/auth", { email: d.email, password: d.password })).access_token;
    await service.call("POST", "/api/activatedriver", { code, imei: `phone-${d.firstname}` }, driverToken);
  }
  token = (await service.call("POST", "/auth", DISPATCHER)).access_token;
  addressIds = [];
  for (const [name, lng, lat] of PLACES) addressIds.push((await api("POST", "/address", { contactcompany: name, city: "Berlin", country: "DE", lat, lng })).id);
  const ids: number[] = [];
  for (let i = 0; i < 8; i++) ids.push(await delivery(i));
  routeIds = [];
  for (const part of [ids.slice(0, 2), ids.slice(2, 4)]) {
    const result = await api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", { deliveryids: part });
    routeIds.push(result.objects[0].id);
  }
  openIds = ids.slice(4);
  const lager = await api("POST", "/address", { contactcompany: "Lager Süd", city: "Berlin", country: "DE", lat: 52.42, lng: 13.38 });
  elsewhereId = await delivery(8, { custom_id: "P-elsewhere", supplierlocation_id: lager.id });
}, 300_000);

takePicturesAndStop(() => ({ browser, service }));

const notReloaded = () => page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded === true);

describe("planning in the console", () => {
  it("logs in and lists the tours of two calculations of the day by start time, named on through the day", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    // The browser logs refused calls (the 422s these tests provoke) as console errors: only other errors count.
    watchErrors(page, "console", pageErrors, (text) => /status of 422/.test(text));
    await page.goto(`${service.base}/${service.slug}/console`);
    await logIn(page, DISPATCHER);
    await page.getByLabel("Day", { exact: true }).fill(tomorrow);
    await expect.poll(() => page.locator("button.route-item").count()).toBe(2);
    // Set once: a reload would lose it, so a test still seeing it knows the page was never reloaded.
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    const routes = await Promise.all(routeIds.map((id) => api("GET", `/route/${id}`)));
    // The second calculation of the day numbers on from the first.
    expect(routes.map((r) => r.custom_id)).toEqual(["Tour 1", "Tour 2"]);
    // Listed by start time under the service's names.
    const byStart = [...routes].sort((a, b) => a.tst_from.localeCompare(b.tst_from) || a.id - b.id).map((r) => r.custom_id);
    const names = (await page.locator("button.route-item .route-name").allTextContents()).map((n) => n.replace(/\s*#\d+$/, ""));
    expect(names).toEqual(byStart);
    await page.locator("button.route-item").last().click();
    expect((await page.locator("#route-title").textContent())!.replace(/\s*#\d+$/, "").trim()).toBe(names[1]);
    await page.getByRole("button", { name: "← All routes" }).click();
  });

  it("creates a delivery with address search by keyboard, shows the service's refusal next to the window, and the delivery appears without reload", async () => {
    await page.getByRole("button", { name: "New delivery…" }).click();
    const form = page.getByTestId("delivery-form");
    const search = form.getByRole("combobox", { name: /Address/ });
    await search.fill("lindn");
    const option = form.getByRole("option", { name: /Café Lindner/ });
    await expect.poll(() => option.count()).toBe(1);
    expect(await search.getAttribute("aria-expanded")).toBe("true");
    await search.press("ArrowDown");
    await search.press("ArrowUp");
    expect(await search.getAttribute("aria-activedescendant")).toBe(await option.getAttribute("id"));
    await search.press("Enter");
    expect(await search.getAttribute("aria-expanded")).toBe("false");
    expect(await form.locator(".picked").textContent()).toContain("Café Lindner");

    // A window ending before it starts: the service refuses, the form says so beside the window.
    await form.getByLabel("From", { exact: true }).fill("14:00");
    await form.getByLabel("To", { exact: true }).fill("12:00");
    await form.getByLabel("Reference").fill("P-new");
    await form.getByLabel("Notes for the driver").fill("Klingel defekt");
    await form.getByLabel(/Needs skills/).fill("Refrigerated, tail-lift");
    await form.getByLabel("Notify the customer of the arrival time").check();
    await form.getByLabel("by email").uncheck();
    await form.getByLabel("by SMS").check();
    await form.getByRole("button", { name: "Create delivery" }).click();
    const windowError = form.locator("fieldset.window .field-error");
    await expect.poll(() => windowError.textContent()).toContain("pdt_from must not be after pdt_to");
    expect(await form.getByLabel("From", { exact: true }).getAttribute("aria-invalid")).toBe("true");
    expect(await form.getByRole("alert").textContent()).toContain("Not saved");
    await page.screenshot({ path: `${SHOTS}/console-delivery-refused.png` });

    await form.getByLabel("To", { exact: true }).fill("16:00");
    await form.getByRole("button", { name: "Create delivery" }).click();
    await expect.poll(() => form.count()).toBe(0);
    const created = (await api("GET", `/delivery?q=${encodeURIComponent(JSON.stringify({ filters: [{ name: "custom_id", op: "==", val: "P-new" }] }))}`)).objects;
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({
      deliverylocation_id: addressIds[0],
      pdt_from: `${tomorrow}T13:00:00Z`,
      pdt_to: `${tomorrow}T15:00:00Z`,
      notes: "Klingel defekt",
      required_skills: ["refrigerated", "tail-lift"],
      notify_customer: true,
      notify_customer_email: false,
      notify_customer_sms: true,
    });
    // The delivery event brought it into the open list.
    await expect.poll(() => page.locator(`[data-testid=open-deliveries] input[data-delivery-id="${created[0].id}"]`).count()).toBe(1);
    // Its skills show beside it as tags.
    const row = page.locator("[data-testid=open-deliveries] li").filter({ has: page.locator(`input[data-delivery-id="${created[0].id}"]`) });
    expect(await row.locator(".skill").allTextContents()).toEqual(["refrigerated", "tail-lift"]);
    await row.screenshot({ path: `${SHOTS}/console-delivery-skills.png` });
    expect(await notReloaded()).toBe(true);
    openIds.push(created[0].id);

    // Editing: the form opens with the stored values (times in the company's zone).
    await page.getByRole("button", { name: "Edit Café Lindner" }).last().click();
    const edit = page.getByTestId("delivery-form");
    expect(await edit.getByLabel("From", { exact: true }).inputValue()).toBe("14:00");
    expect(await edit.getByLabel("Reference").inputValue()).toBe("P-new");
    expect(await edit.getByLabel(/Needs skills/).inputValue()).toBe("refrigerated, tail-lift");
    await edit.getByLabel("Notes for the driver").fill("Bitte beim Nachbarn");
    await edit.getByRole("button", { name: "Save delivery" }).click();
    await expect.poll(() => edit.count()).toBe(0);
    expect((await api("GET", `/delivery/${created[0].id}`)).notes).toBe("Bitte beim Nachbarn");
  });

  it("shows an address the service cannot geocode as refused beside the new address", async () => {
    await page.getByRole("button", { name: "New delivery…" }).click();
    const form = page.getByTestId("delivery-form");
    await form.getByRole("button", { name: "New address…" }).click();
    await form.getByLabel("Company or name").fill("Nirgendwo GmbH");
    await form.getByLabel("Postal code").fill("00000");
    await form.getByLabel("City").fill("Nowhereville");
    await form.getByRole("button", { name: "Create delivery" }).click();
    await expect.poll(() => form.locator("fieldset.new-address .field-error").textContent()).toContain("could not be geocoded");
    expect(await form.getByLabel("Postal code").getAttribute("aria-invalid")).toBe("true");
    await form.getByRole("button", { name: "Close" }).click();
  });

  it("compares routing variants of the selected deliveries side by side and creates the one picked", async () => {
    const picked = openIds.slice(0, 3);
    for (const id of picked) await page.locator(`[data-testid=open-deliveries] input[data-delivery-id="${id}"]`).check();
    await page.getByRole("button", { name: "Compare variants" }).click();
    const table = page.getByTestId("variants");
    await expect.poll(() => table.count(), { timeout: 30_000 }).toBe(1);
    const columns = await table.locator("thead th").allTextContents();
    expect(columns[0]).toBe("Fewest tours");
    expect(columns.length).toBeGreaterThanOrEqual(2);
    const cells = (row: string) => table.locator("tbody tr", { has: page.getByRole("rowheader", { name: row, exact: true }) }).locator("td").allTextContents();
    expect((await cells("Distance")).every((c) => /^\d+\.\d km$/.test(c))).toBe(true);
    expect((await cells("Duration (all tours)")).every((c) => /^\d+:\d\d h$/.test(c))).toBe(true);
    const tours = Number((await cells("Tours"))[0]);
    expect(tours).toBeGreaterThanOrEqual(1);
    await page.screenshot({ path: `${SHOTS}/console-variants.png` });

    await table.getByRole("button", { name: /^Create Fewest tours/ }).click();
    await expect.poll(() => page.getByRole("status").filter({ hasText: /Created \d+ tours? of "Fewest tours"/ }).count(), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => page.locator("button.route-item").count()).toBe(2 + tours);
    for (const id of picked) await expect.poll(() => page.locator(`[data-testid=open-deliveries] input[data-delivery-id="${id}"]`).count()).toBe(0);
    const routed = await Promise.all(picked.map((id) => api("GET", `/delivery/${id}`)));
    expect(new Set(routed.map((d) => d.route_id)).size).toBe(tours);
    openIds = openIds.filter((id) => !picked.includes(id));
    // The new tours are numbered on from the day's others, never a second "Tour 1".
    const names = (await page.locator("button.route-item .route-name").allTextContents()).map((n) => n.replace(/\s*#\d+$/, ""));
    expect(new Set(names).size).toBe(names.length);
  });

  it("adds an open delivery to a route and removes it again through the update, shows a refusal, and changes the driver", async () => {
    const [first] = routeIds;
    await page.locator(`button.route-item[data-route-id="${first}"]`).click();
    const detail = page.locator("section.route-detail");
    const stops = detail.locator("[data-testid=route-stops] li[data-delivery-id]");
    expect(await stops.count()).toBe(2);

    // Refused: the delivery starts from another depot. The reason is shown; the route is unchanged.
    await detail.getByText("Add or remove stops…").click();
    await detail.locator(`input[data-add-id="${elsewhereId}"]`).check();
    await detail.getByRole("button", { name: "Update route (1 added, 0 removed)" }).click();
    const refusal = detail.getByRole("alert");
    await expect.poll(() => refusal.textContent()).toContain("another depot");
    expect(await refusal.textContent()).toContain("Nothing was changed");
    expect(await detail.getAttribute("data-route-id")).toBe(String(first));
    expect((await api("GET", `/route/${first}`)).status).toBe(0);
    await page.screenshot({ path: `${SHOTS}/console-route-refused.png` });
    await detail.locator(`input[data-add-id="${elsewhereId}"]`).uncheck();

    // Added: the route is replaced by a new one with three stops, shown in its place.
    const added = openIds[0];
    await detail.locator(`input[data-add-id="${added}"]`).check();
    await detail.getByRole("button", { name: "Update route (1 added, 0 removed)" }).click();
    await expect.poll(() => detail.getAttribute("data-route-id"), { timeout: 30_000 }).not.toBe(String(first));
    const replacement = Number(await detail.getAttribute("data-route-id"));
    expect((await api("GET", `/route/${first}`)).replaced_by).toBe(replacement);
    await expect.poll(() => stops.count()).toBe(3);
    expect(await stops.evaluateAll((lis) => lis.map((li) => Number((li as HTMLElement).dataset.deliveryId)))).toContain(added);
    await expect.poll(() => page.locator(`[data-testid=open-deliveries] input[data-delivery-id="${added}"]`).count()).toBe(0);

    // Removed again: back to two stops, the delivery open again.
    await detail.getByText("Add or remove stops…").click();
    await detail.locator(`input[data-remove-id="${added}"]`).check();
    await detail.getByRole("button", { name: "Update route (0 added, 1 removed)" }).click();
    await expect.poll(() => detail.getAttribute("data-route-id"), { timeout: 30_000 }).not.toBe(String(replacement));
    await expect.poll(() => stops.count()).toBe(2);
    await expect.poll(() => page.locator(`[data-testid=open-deliveries] input[data-delivery-id="${added}"]`).count()).toBe(1);
    routeIds[0] = Number(await detail.getAttribute("data-route-id"));

    // The driver: assigned, changed, removed.
    const driverSelect = detail.getByRole("combobox", { name: "Driver" });
    await driverSelect.selectOption({ label: "Anna Alt" });
    await detail.getByRole("button", { name: "Assign driver" }).click();
    await expect.poll(() => detail.textContent()).toContain("assigned · Anna Alt");
    await driverSelect.selectOption({ label: "Ben Berg" });
    await detail.getByRole("button", { name: "Change driver" }).click();
    await expect.poll(() => detail.textContent()).toContain("assigned · Ben Berg");
    const route = await api("GET", `/route/${routeIds[0]}`);
    expect(route.status).toBe(1);
    expect(route.previous_drivers).toHaveLength(1);
    await driverSelect.selectOption({ label: "no driver (remove)" });
    await detail.getByRole("button", { name: "Change driver" }).click();
    await expect.poll(() => detail.getAttribute("data-status")).toBe("0");
    expect(await detail.textContent()).toContain("new · no driver");
    expect(await notReloaded()).toBe(true);
    await page.getByRole("button", { name: "← All routes" }).click();
  });

  it("shows an optimisation as cancelled once the tour it made is cancelled, even while it reads which tours it made", async () => {
    const id = openIds[0];
    // The console reads the finished process's tours; that answer is held back (read before the
    // cancellation, delivered after its event), as on a slow line.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const tours = "**/process/status/*/final*";
    await page.route(tours, async (route) => {
      const response = await route.fetch();
      await held;
      await route.fulfill({ response });
    });
    await page.locator(`[data-testid=open-deliveries] input[data-delivery-id="${id}"]`).check();
    await page.getByLabel("Vehicles", { exact: true }).fill("1");
    await page.getByRole("button", { name: "Optimise 1 delivery" }).click();
    const progress = page.locator(`section[aria-labelledby="open-title"] .process`);
    await expect.poll(() => progress.getAttribute("data-status"), { timeout: 30_000 }).toBe("finished");
    const routeId = (await api("GET", `/delivery/${id}`)).route_id;
    await api("POST", `/cancelroute/${routeId}`);
    // The route event has arrived once the delivery is open again in the console.
    await expect.poll(() => page.locator(`[data-testid=open-deliveries] input[data-delivery-id="${id}"]`).count()).toBe(1);
    release();
    await expect.poll(() => progress.getAttribute("data-status")).toBe("cancelled");
    expect(await progress.textContent()).toContain("Optimisation finished, its tour was cancelled since");
    await page.unroute(tours);
  });

  it("cancels a running optimisation from its progress bar: no tour is made, the deliveries stay open", async () => {
    const ids = openIds.slice(1, 3);
    for (const id of ids) await page.locator(`[data-testid=open-deliveries] input[data-delivery-id="${id}"]`).check();
    // The test service searches 1 s; this optimisation searches a minute, so it is surely running when cancelled.
    const slow = "**/calcroute/optimized/timewindow*";
    await page.route(slow, (route) => route.continue({ url: `${route.request().url()}&time_budget_seconds=60` }));
    await page.getByRole("button", { name: /^Optimise \d+ deliver/ }).click();
    await page.unroute(slow);
    const progress = page.locator(`section[aria-labelledby="open-title"] .process`);
    const cancel = progress.getByRole("button", { name: "Cancel optimisation" });
    await cancel.click({ timeout: 10_000 });
    await expect.poll(() => progress.getAttribute("data-status"), { timeout: 30_000 }).toBe("stopped");
    expect(await progress.textContent()).toContain("Optimisation cancelled: no routes were written");
    expect(await cancel.count()).toBe(0);
    for (const id of ids) expect((await api("GET", `/delivery/${id}`)).route_id).toBeNull();
  });

  it("uploads a spreadsheet with progress, lists the skipped row and shows the absolute result link", async () => {
    const before = await page.locator("button.route-item").count();
    const csv = [
      "custom_id;contactcompany;lat;lng;pdt_from;pdt_to;els;load",
      `UP-1;Kiosk Nord;52.55;13.40;${at(9)};${at(12)};5;1`,
      `UP-2;Kiosk Ost;52.51;13.46;${at(9)};${at(12)};5;1`,
      `UP-3;Kiosk West;52.50;13.30;${at(10)};${at(13)};5;many`,
    ].join("\n");
    await page.getByLabel("Spreadsheet (CSV or XLSX, first row the column names)").setInputFiles({ name: "orders.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
    await page.getByLabel("Tours at most (empty: one per active driver)").fill("1");
    await page.getByRole("button", { name: "Upload and plan" }).click();
    const section = page.locator("section.upload");
    const progress = section.locator(".process");
    await expect.poll(() => progress.count()).toBe(1);
    await expect.poll(() => progress.getAttribute("data-status"), { timeout: 60_000 }).toBe("finished");
    const link = section.locator(".result-link");
    await expect.poll(() => link.count(), { timeout: 30_000 }).toBe(1);
    const processId = await progress.getAttribute("data-process-id");
    expect(await link.textContent()).toBe(`${service.base}/${service.slug}/api/process/result/${processId}`);
    expect(await section.locator(".skipped summary").textContent()).toBe("1 row skipped");
    expect(await section.locator(".skipped li").textContent()).toContain("row 4: load is not a number");
    await expect.poll(() => page.locator("button.route-item").count()).toBe(before + 1);
    await section.locator(".result").scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/console-upload.png` });

    const res = await fetch((await link.textContent())!, { headers: { authorization: `JWT ${token}` } });
    const lines = (await res.text()).trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines.slice(1).map((l) => l.split(",")[4]).sort()).toEqual(["UP-1", "UP-2"]);

    const [download] = await Promise.all([page.waitForEvent("download"), section.getByRole("button", { name: "Download result" }).click()]);
    expect(download.suggestedFilename()).toBe(`routes-${processId}.csv`);
    expect(await notReloaded()).toBe(true);
  });

  it("puts an open delivery into the best running tour: the prices of the day's running tours first, then the one picked", async () => {
    // Both calculated tours get a driver (assigned: running tours an insertion considers).
    const drivers = (await api("GET", "/driver")).objects as { id: number }[];
    for (const [i, routeId] of routeIds.entries()) await api("PATCH", `/route/${routeId}`, { driver_id: drivers[i].id });
    const id = openIds[0];
    const item = page.locator("[data-testid=open-deliveries] li", { has: page.locator(`input[data-delivery-id="${id}"]`) });
    await item.getByRole("button", { name: /^Best tour for / }).click();
    const panel = item.getByRole("region", { name: /^Best running tour for / });
    const priced = panel.locator("li");
    await expect.poll(() => priced.count(), { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    expect(await priced.first().textContent()).toMatch(/^Tour \d+ \+\d+\.\d km, stop \d+ at \d\d:\d\d/);
    await page.screenshot({ path: `${SHOTS}/console-best-tour.png` });
    const chosen = await api("POST", "/calcroute/insert", { deliveryids: [id], dry_run: true });
    await priced.first().getByRole("button", { name: "Insert" }).click();
    await expect.poll(() => page.getByText(/joined Tour \d+ as stop \d+/).count(), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => page.locator(`[data-testid=open-deliveries] input[data-delivery-id="${id}"]`).count()).toBe(0);
    const placed = await api("GET", `/delivery/${id}`);
    expect((await api("GET", `/route/${chosen.insertions[0].route_id}`)).replaced_by).toBe(placed.route_id);
    expect(await notReloaded()).toBe(true);
  });

  it("hands a broken-down route's stops to the other running route from its actions: it is cancelled, the other replaced", async () => {
    const running = ((await api("GET", "/route")).objects as { id: number; status: number; deliveries: { id: number; status: number }[] }[]).filter((r) => r.status === 1);
    expect(running.length).toBeGreaterThanOrEqual(2);
    const [broken] = running;
    const handed = broken.deliveries.filter((d) => d.status === 1).map((d) => d.id);
    await page.locator(`button.route-item[data-route-id="${broken.id}"]`).click();
    const detail = page.locator("section.route-detail");
    await detail.getByRole("button", { name: "Hand over stops (breakdown)…" }).click();
    await detail.getByRole("button", { name: "Yes, hand over" }).click();
    // Back on the list, the re-plan's progress; then the route is cancelled and its stops are on another route.
    const progress = page.locator("section.replan .process");
    await expect.poll(() => progress.getAttribute("data-status"), { timeout: 60_000 }).toBe("finished");
    expect(await progress.textContent()).toContain("Re-plan finished");
    await page.screenshot({ path: `${SHOTS}/console-handover.png` });
    expect((await api("GET", `/route/${broken.id}`)).status).toBe(5);
    // Each of its stops is on another route now, or open again and listed with the reason under the progress.
    const leftOpen = progress.getByTestId("left-open");
    const left = (await leftOpen.count()) ? ((await leftOpen.textContent()) ?? "") : "";
    for (const id of handed) {
      const d = await api("GET", `/delivery/${id}`);
      if (d.status === 0) expect(left).toContain(`#${id} (`);
      else {
        expect(d.status).toBe(1);
        expect(d.route_id).not.toBe(broken.id);
      }
    }
    expect(await notReloaded()).toBe(true);
  });

  it("ran without script errors or Content-Security-Policy violations", () => {
    expect(pageErrors).toEqual([]);
  });
});
