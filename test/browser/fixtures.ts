/**
 * What the browser test files share: the browser, the Berlin places and the
 * day their deliveries are planned for, seeding a company with its first
 * routes through the operator and public API, logging in, collecting
 * script errors and CSP violations, pictures of failures and stopping.
 */
import { mkdirSync } from "node:fs";
import { type Browser, type Page, chromium } from "playwright-core";
import { afterAll, afterEach, inject } from "vitest";
import { addDays, dayAt, instantOf } from "../../src/shared/wall-clock";
import { formatDateTime } from "../../src/core/lib/time";
import type { BrowserChoice } from "./chromium";
import { type Service, type ServiceOptions, startService } from "./service";

export const SHOTS = "test-results/browser";
/** The seeded companies' time zone: the console shows their days and hours in it. */
export const ZONE = "Europe/Berlin";
/** Today in Berlin. */
export const today = dayAt(Date.now(), ZONE);
/**
 * The day after Berlin's today. Not UTC's tomorrow: between midnight in
 * Berlin and midnight UTC that is Berlin's today, whose timeline then holds
 * the seeded stops.
 */
export const tomorrow = addDays(today, 1);
/** An hour of tomorrow on Berlin's wall clock (summer or winter time), as the UTC instant. */
export const at = (h: number) => formatDateTime(instantOf(tomorrow, `${String(h).padStart(2, "0")}:00`, ZONE));
export const PLACES: [string, number, number][] = [
  ["Café Lindner", 13.4188, 52.4986], ["Buchhandlung Kiez", 13.4326, 52.5451], ["Praxis Dr. Weber", 13.3298, 52.5047], ["Blumen Schulz", 13.4541, 52.5127],
  ["Bäckerei Hoffmann", 13.3777, 52.4871], ["Apotheke am Markt", 13.2871, 52.5368], ["Weinhandel Vogel", 13.4699, 52.4795], ["Atelier Braun", 13.4102, 52.5298],
  ["Schreinerei Koch", 13.3501, 52.5593], ["Feinkost Richter", 13.3142, 52.4788],
];

export interface Person {
  email: string;
  password: string;
  firstname: string;
  lastname: string;
}

/**
 * A fresh local service (company `slug`) and headless Chromium (the one test/browser/chromium.ts
 * found), started side by side. When either fails to start, the other is stopped before the
 * error is passed on: a file whose start failed leaves nothing running.
 */
export async function startServiceAndBrowser(slug: string, browser: BrowserChoice = inject("chromium"), options: ServiceOptions = {}): Promise<[Service, Browser]> {
  mkdirSync(SHOTS, { recursive: true });
  const [service, launched] = await Promise.allSettled([
    startService(slug, options),
    chromium.launch({ executablePath: browser.executablePath, env: { ...process.env, ...browser.env }, args: ["--no-sandbox"] }),
  ]);
  if (service.status === "fulfilled" && launched.status === "fulfilled") return [service.value, launched.value];
  await Promise.allSettled([service.status === "fulfilled" && service.value.stop(), launched.status === "fulfilled" && launched.value.close()]);
  const errors = [service, launched].flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
  throw errors.length === 1 ? errors[0] : new AggregateError(errors, "neither the service nor the browser started");
}

/**
 * The company with a Berlin depot, its dispatcher and an (inactive) driver; one delivery per place
 * (windows 08–11, 10–13, 12–15 in turn), the first `tours` groups of three routed into one tour each (on `vehicles` when given).
 */
export async function seedCompany(service: Service, o: { companyname: string; dispatcher: Person; driver: Person; places: number; tours: number; vehicles?: Record<string, unknown>[] }) {
  await service.operator("POST", "/companies", {
    slug: service.slug,
    companyname: o.companyname,
    depot: { city: "Berlin", country: "DE", lat: 52.5317, lng: 13.3849 },
    dispatcher: o.dispatcher,
  });
  const driver = await service.operator("POST", `/companies/${service.slug}/users`, { usertype: "driver", ...o.driver });
  const token: string = (await service.call("POST", "/auth", { email: o.dispatcher.email, password: o.dispatcher.password })).access_token;
  const ids: number[] = [];
  for (const [i, [name, lng, lat]] of PLACES.slice(0, o.places).entries()) {
    const address = await service.call("POST", "/api/address", { contactcompany: name, city: "Berlin", country: "DE", lat, lng }, token);
    const d = await service.call("POST", "/api/delivery", { deliverylocation_id: address.id, custom_id: `B-${i + 1}`, pdt_from: at(8 + (i % 3) * 2), pdt_to: at(11 + (i % 3) * 2), els: 5, load: 1 }, token);
    ids.push(d.id);
  }
  const routes = [];
  for (let t = 0; t < o.tours; t++) {
    const result = await service.call("POST", "/api/calcroute/optimized/timewindow?async=false&num_vehicles=1", { deliveryids: ids.slice(t * 3, t * 3 + 3), ...(o.vehicles ? { vehicles: o.vehicles } : {}) }, token);
    routes.push(await service.call("GET", `/api/route/${result.objects[0].id}`, undefined, token));
  }
  return { token, driver: driver as { id: number; code: string }, routes, openIds: ids.slice(o.tours * 3) };
}

export async function logIn(page: Page, who: { email: string; password: string }) {
  await page.getByLabel("Email").fill(who.email);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Log in" }).click();
}

/** Collects script errors and CSP violations into `sink`, except console errors `expected` says a test provoked. */
export function watchErrors(page: Page, name: string, sink: string[], expected: (text: string) => boolean) {
  page.on("pageerror", (e) => sink.push(`${name}: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && !expected(m.text())) sink.push(`${name}: ${m.text()}`);
  });
}

/** Registers the hooks every browser test file needs: a picture of every open page after a failed test; the browser and the service stopped at the end. */
export function takePicturesAndStop(running: () => { browser: Browser | undefined; service: Service | undefined }) {
  afterEach(async (ctx) => {
    const { browser } = running();
    if (ctx.task.result?.state !== "fail" || !browser) return;
    for (const [i, page] of browser.contexts().flatMap((c) => c.pages()).entries()) await page.screenshot({ path: `${SHOTS}/failed-${ctx.task.name.slice(0, 30).replace(/\W+/g, "-")}-${i}.png` });
  });
  afterAll(async () => {
    const { browser, service } = running();
    await Promise.all([browser?.close(), service?.stop()]);
  });
}
