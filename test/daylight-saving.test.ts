/**
 * Daylight-saving changeover days in Europe/Berlin, through the public
 * interface: 2026-03-29 (02:00 -> 03:00, 23 hours) and 2026-10-25
 * (03:00 -> 02:00, 25 hours). The service's clock is moved to the eve of
 * each day (Date.now only, so the solver's time budget still runs).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { speedFactorAt } from "../src/solver/matrix";
import { trafficFactorAt } from "../src/core/domain/eta";
import { excelSerialToIso } from "../src/core/lib/spreadsheet";
import { renderMessage } from "../src/core/services/message-templates";
import { renderTrackingPage } from "../src/worker/tracking-page";
import { localTrafficProfile } from "../src/core/domain/routing-plan";
import { createCompany, insertAddress } from "./helpers";

const realNow = Date.now;
/** Runs the service's clock from `iso` on (it keeps ticking). */
function clockFrom(iso: string) {
  const shift = Date.parse(iso) - realNow.call(Date);
  vi.spyOn(Date, "now").mockImplementation(() => realNow.call(Date) + shift);
}
afterEach(() => {
  vi.restoreAllMocks();
});

const berlin = (iso: string) =>
  new Intl.DateTimeFormat("sv-SE", { timeZone: "Europe/Berlin", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" }).format(Date.parse(iso));

describe("routing on a changeover day", () => {
  // One delivery in the first hours of the day and a vehicle on the night shift, times of day with their offsets.
  const cases = [
    { day: "2026-03-29", eve: "2026-03-28T18:00:00Z", window: ["2026-03-29T00:30:00+01:00", "2026-03-29T01:30:00+01:00"], shift: ["00:15:00+01:00", "05:00:00+02:00"] },
    { day: "2026-10-25", eve: "2026-10-24T18:00:00Z", window: ["2026-10-25T00:30:00+02:00", "2026-10-25T02:30:00+02:00"], shift: ["00:00:00+02:00", "03:00:00+01:00"] },
  ];
  for (const c of cases) {
    it(`plans the night of ${c.day} on that day: vehicle times of day are read on the company's date`, async () => {
      clockFrom(c.eve);
      const co = await createCompany();
      const address = await insertAddress(co.id, { lng: 13.42, lat: 52.51 });
      const delivery = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: c.window[0], pdt_to: c.window[1], els: 5 } });
      expect(delivery.status, delivery.text).toBe(201);
      const routed = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", {
        body: { deliveryids: [delivery.body.id], vehicles: [{ name: "Night van", departure_time_from: c.shift[0], return_time_to: c.shift[1] }] },
      });
      expect(routed.status, routed.text).toBe(200);
      const [route] = routed.body.objects;
      expect(berlin(route.tst_from).slice(0, 10)).toBe(c.day);
      const [stop] = route.deliveries;
      expect(Date.parse(stop.tdt_from)).toBeGreaterThanOrEqual(Date.parse(c.window[0]));
      expect(Date.parse(stop.tdt_from)).toBeLessThanOrEqual(Date.parse(c.window[1]));
      // The van leaves no earlier than its shift starts on that date.
      expect(Date.parse(route.tst_from)).toBeGreaterThanOrEqual(Date.parse(`${c.day}T${c.shift[0]}`));
    });
  }
});

describe("a vehicle's time of day without offset", () => {
  it("is the company's wall clock on the day planned: 08:00 in summer as in winter", async () => {
    const co = await createCompany(); // now (whatever the season) is not the day planned
    const address = await insertAddress(co.id, { lng: 13.42, lat: 52.51 });
    for (const [day, utc] of [["2027-07-15", "06:00"], ["2027-01-14", "07:00"]]) {
      const delivery = await co.api("POST", "/delivery", { body: { deliverylocation_id: address, pdt_from: `${day}T05:00:00+01:00`, pdt_to: `${day}T12:00:00+01:00`, els: 5 } });
      const routed = await co.api("POST", "/calcroute/optimized/timewindow?async=false&num_vehicles=1", {
        body: { deliveryids: [delivery.body.id], vehicles: [{ name: "Early van", departure_time_from: "08:00:00" }] },
      });
      expect(routed.status, routed.text).toBe(200);
      const [route] = routed.body.objects;
      expect(Date.parse(route.tst_from), day).toBeGreaterThanOrEqual(Date.parse(`${day}T${utc}:00Z`));
      // Leaving at 08:00 on the wall clock, the van is at the door a few minutes later, not an hour.
      expect(Date.parse(route.deliveries[0].tdt_from), day).toBeLessThan(Date.parse(`${day}T${utc}:00Z`) + 30 * 60_000);
    }
  });
});

describe("traffic profile of a plan across a changeover", () => {
  // Plans for the Saturday and the Friday before each change: their week runs across it.
  for (const origin of ["2026-03-27T23:00:00Z", "2026-03-28T23:00:00Z", "2026-10-23T22:00:00Z", "2026-10-24T22:00:00Z"]) {
    it(`slows the solver down exactly in the wall clock's rush hours (plan from ${origin})`, () => {
      const start = Date.parse(origin) / 1000;
      const profile = localTrafficProfile(start, "Europe/Berlin");
      for (let t = 1800; t < 7 * 86_400; t += 3600) {
        expect(speedFactorAt(profile, t), `${t / 3600} h after ${origin}`).toBe(trafficFactorAt(start + t, "Europe/Berlin"));
      }
    });
  }
});

describe("a driver's trace of today", () => {
  it("starts at midnight on the company's wall clock, also on a 25-hour day", async () => {
    // 01:30 on 2026-10-25 in Berlin, summer time still: midnight was 22:00 UTC.
    clockFrom("2026-10-24T23:30:00Z");
    const co = await createCompany();
    const driver = await co.user("driver");
    const post = (timestamp: string, lng: number) =>
      co.api("POST", "/drivertracking", { token: driver.token, body: { driver_id: driver.id, timestamp, position: { type: "Point", coordinates: [lng, 52.5] } } });
    expect((await post("2026-10-24T21:30:00Z", 13.1)).status).toBe(200); // 23:30 the evening before
    expect((await post("2026-10-24T22:30:00Z", 13.2)).status).toBe(200); // 00:30 today
    expect((await post("2026-10-24T23:15:00Z", 13.3)).status).toBe(200); // 01:15 today
    const trace = await co.api("GET", `/drivertrace/${driver.id}`);
    expect(trace.status).toBe(200);
    expect(trace.body.coordinates.map((p: number[]) => p[0])).toEqual([13.2, 13.3]);
  });
});

describe("date cells of an uploaded spreadsheet", () => {
  it("are the company's wall clock, also in the night of a changeover", () => {
    // Excel serials count days since 1899-12-30 with no zone: what the dispatcher typed.
    const serial = (wall: string) => Date.parse(`${wall}Z`) / 86_400_000 + 25569;
    expect(excelSerialToIso(serial("2026-03-29T01:30:00"), "Europe/Berlin")).toBe("2026-03-29T00:30:00Z");
    expect(excelSerialToIso(serial("2026-03-29T08:00:00"), "Europe/Berlin")).toBe("2026-03-29T06:00:00Z");
    expect(excelSerialToIso(serial("2026-10-25T01:30:00"), "Europe/Berlin")).toBe("2026-10-24T23:30:00Z");
    expect(excelSerialToIso(serial("2026-10-25T08:00:00"), "Europe/Berlin")).toBe("2026-10-25T07:00:00Z");
  });
});

describe("what a customer reads in the night of a changeover", () => {
  // 00:30 and 01:30 UTC: 01:30 and 03:30 on 2026-03-29; 02:30 twice on 2026-10-25 (summer, then winter time).
  const nights = [
    { eta: { from: "2026-03-29T00:30:00Z", to: "2026-03-29T01:30:00Z" }, read: ["01:30", "03:30"] },
    { eta: { from: "2026-10-25T00:30:00Z", to: "2026-10-25T01:30:00Z" }, read: ["02:30", "02:30"] },
  ];
  for (const { eta, read } of nights) {
    it(`the ETA message and the tracking page say ${read.join("–")} for ${eta.from}–${eta.to}`, () => {
      const message = renderMessage("delivery_eta", { delivery_id: 1, route_id: 1, eta_from: eta.from, eta_to: eta.to }, { companyname: "Nachtkurier", timezone: "Europe/Berlin", language: "de" })!;
      expect(message.text).toContain(`zwischen ${read[0]} und ${read[1]} Uhr`);
      const page = renderTrackingPage({
        company: { name: "Nachtkurier", timezone: "Europe/Berlin", language: "en" },
        state: "scheduled",
        window: { from: null, to: null },
        eta,
        stops_before: null,
        driver: null,
        destination: null,
        proof: null,
      });
      expect(page).toContain(read[0]);
      expect(page).toContain(read[1]);
    });
  }
});
