import { describe, expect, it } from "vitest";
import { ETA_WINDOW, estimateArrivals, trafficFactorAt } from "../src/core/domain/eta";
import { localTrafficProfile } from "../src/core/domain/routing-plan";

const at = (iso: string) => Date.parse(iso) / 1000;

describe("ETA estimation", () => {
  it("reads rush hour on the company's wall clock, not on UTC", () => {
    // Tuesday 2030-07-16 05:30 UTC is 07:30 in Berlin (summer time): morning rush hour there.
    expect(trafficFactorAt(at("2030-07-16T05:30:00Z"), "Europe/Berlin")).toBe(0.6);
    expect(trafficFactorAt(at("2030-07-16T05:30:00Z"), "UTC")).toBe(0.95);
    // In winter Berlin is one hour ahead: 06:30 UTC is 07:30 local.
    expect(trafficFactorAt(at("2030-01-15T06:30:00Z"), "Europe/Berlin")).toBe(0.6);
  });

  it("keeps the customer's window at most an hour wide however far ahead the stop lies", () => {
    const now = at("2030-06-01T08:00:00Z");
    const stops = [0, 1, 2, 3].map((i) => ({ lng: 13.4 + i * 0.05, lat: 52.5, windowStart: at("2030-08-20T08:00:00Z"), service: 600 }));
    const etas = estimateArrivals({ lng: 13.38, lat: 52.5 }, now, stops, { timeZone: "Europe/Berlin" });
    for (const eta of etas) {
      expect(eta.etaTo - eta.etaFrom).toBeGreaterThanOrEqual(ETA_WINDOW.baseSeconds);
      expect(eta.etaTo - eta.etaFrom).toBeLessThanOrEqual(ETA_WINDOW.maxSeconds);
      // The window starts when the driver can be at the door: not before the delivery window opens.
      expect(eta.etaFrom).toBeGreaterThanOrEqual(at("2030-08-20T08:00:00Z"));
    }
    // Waiting weeks for the window does not widen it: only time under way does.
    expect(etas[0].etaTo - etas[0].etaFrom).toBeLessThan(ETA_WINDOW.baseSeconds + 120);
  });

  it("widens the window with the time under way, up to the cap", () => {
    const now = at("2030-06-01T08:00:00Z");
    // 30 stops 20 km apart with an hour of service each: a long day under way.
    const stops = Array.from({ length: 30 }, (_, i) => ({ lng: 13 + ((i + 1) * 0.3) % 3, lat: 52.5, windowStart: null, service: 3600 }));
    const etas = estimateArrivals({ lng: 13, lat: 52.5 }, now, stops, { timeZone: "Europe/Berlin" });
    const widths = etas.map((e) => e.etaTo - e.etaFrom);
    for (let i = 1; i < widths.length; i++) expect(widths[i]).toBeGreaterThanOrEqual(widths[i - 1]);
    expect(widths[0]).toBeLessThan(widths[10]);
    expect(widths.at(-1)).toBe(ETA_WINDOW.maxSeconds);
  });
});

describe("traffic profile of a plan", () => {
  it("shifts the local profile onto the solver's UTC clock by the zone's offset", () => {
    // Monday 2030-07-15, UTC midnight: Berlin is UTC+2, so local 07:00 is 05:00 on the solver's clock.
    const summer = localTrafficProfile(at("2030-07-15T00:00:00Z"), "Europe/Berlin");
    expect(summer.weekday).toBe(0);
    expect(summer.speedFactors[0][5]).toBe(0.6);
    expect(summer.speedFactors[0][7]).toBe(0.75);
    // 22:00 UTC on Friday is already midnight into Saturday in Berlin: the weekend profile.
    expect(summer.speedFactors[4][22]).toBe(1);
    const utc = localTrafficProfile(at("2030-07-15T00:00:00Z"), "UTC");
    expect(utc.speedFactors[0][7]).toBe(0.6);
    // Winter: one hour.
    expect(localTrafficProfile(at("2030-01-14T00:00:00Z"), "Europe/Berlin").speedFactors[0][6]).toBe(0.6);
  });
});
