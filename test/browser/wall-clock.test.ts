/**
 * The console's wall clock on daylight-saving changeover days in Berlin
 * (2026-03-29: 02:00 -> 03:00, a 23-hour day; 2026-10-25: 03:00 -> 02:00, a
 * 25-hour day): the pure functions the timeline, the delivery form and the
 * optimise form use (src/web/shared/format.ts over src/shared/wall-clock.ts),
 * under Node, no page needed.
 */
import { describe, expect, it } from "vitest";
import { dayBounds, instantOf, wallClockAt } from "../../src/shared/wall-clock";
import { dayHours, dayOf, setTimeZone, zonedIso } from "../../src/web/shared/format";

const BERLIN = "Europe/Berlin";
const instant = (iso: string) => Date.parse(iso);

describe("the console's wall clock on changeover days", () => {
  setTimeZone(BERLIN);

  it("turns a time of day into the instant it names, before and after the change", () => {
    // Spring: before 02:00 Berlin is still on +01:00, afterwards on +02:00.
    expect(Date.parse(zonedIso("2026-03-29", "00:30"))).toBe(instant("2026-03-28T23:30:00Z"));
    expect(Date.parse(zonedIso("2026-03-29", "01:59"))).toBe(instant("2026-03-29T00:59:00Z"));
    expect(Date.parse(zonedIso("2026-03-29", "03:00"))).toBe(instant("2026-03-29T01:00:00Z"));
    expect(Date.parse(zonedIso("2026-03-29", "08:00"))).toBe(instant("2026-03-29T06:00:00Z"));
    // Autumn: until 03:00 summer time (+02:00), then winter time.
    expect(Date.parse(zonedIso("2026-10-25", "00:30"))).toBe(instant("2026-10-24T22:30:00Z"));
    expect(Date.parse(zonedIso("2026-10-25", "08:00"))).toBe(instant("2026-10-25T07:00:00Z"));
  });

  it("reads a skipped time after the change and a repeated time as its first occurrence", () => {
    // 02:30 does not exist on 2026-03-29: read on the clock before the change, it is 03:30 summer time.
    expect(instantOf("2026-03-29", "02:30", BERLIN)).toBe(instant("2026-03-29T01:30:00Z"));
    // 02:30 happens twice on 2026-10-25: the first, still summer time.
    expect(instantOf("2026-10-25", "02:30", BERLIN)).toBe(instant("2026-10-25T00:30:00Z"));
    expect(wallClockAt(instant("2026-10-25T01:30:00Z"), BERLIN)).toMatchObject({ hour: 2, minute: 30, weekday: 6 });
    // A zone without daylight saving and one with a half-hour offset.
    expect(instantOf("2026-03-29", "02:30", "UTC")).toBe(instant("2026-03-29T02:30:00Z"));
    expect(instantOf("2026-03-29", "00:00", "Asia/Kolkata")).toBe(instant("2026-03-28T18:30:00Z"));
  });

  it("gives the changeover days 23 and 25 hours, each hour labelled by the wall clock", () => {
    const spring = dayHours("2026-03-29");
    expect(spring.start).toBe(instant("2026-03-28T23:00:00Z"));
    expect(spring.hours).toBe(23);
    expect(spring.labels.slice(0, 4)).toEqual(["00:00", "01:00", "03:00", "04:00"]);
    expect(spring.labels.at(-1)).toBe("00:00");
    const autumn = dayHours("2026-10-25");
    expect(autumn.start).toBe(instant("2026-10-24T22:00:00Z"));
    expect(autumn.hours).toBe(25);
    expect(autumn.labels.slice(0, 5)).toEqual(["00:00", "01:00", "02:00", "02:00", "03:00"]);
    expect(dayHours("2026-06-01").hours).toBe(24);
    expect(dayBounds("2026-03-29", BERLIN).end).toBe(instant("2026-03-29T22:00:00Z"));
  });

  it("files instants under the day of the wall clock", () => {
    expect(dayOf("2026-03-28T23:30:00Z")).toBe("2026-03-29");
    expect(dayOf("2026-03-28T22:59:00Z")).toBe("2026-03-28");
    expect(dayOf("2026-10-25T22:59:00Z")).toBe("2026-10-25");
    expect(dayOf("2026-10-25T23:00:00Z")).toBe("2026-10-26");
  });
});
