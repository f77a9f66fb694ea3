import { describe, expect, it } from "vitest";
import { check } from "../../src/solver";
import { planar, solutionOf, tourOf, vehicles } from "./helpers";

// Depot at the origin, four jobs on a line.
const base = planar(
  { x: 0, y: 0 },
  [
    { id: "a", x: 10, y: 0, load: [4, 1] },
    { id: "b", x: 20, y: 0, load: [4, 1] },
    { id: "c", x: 30, y: 0, load: [4, 1], timeWindow: { start: 0, end: 35 } },
    { id: "d", x: 0, y: 10, load: [1, 1] },
  ],
  { vehicles: vehicles(2, { capacity: [12, 3] }) },
);

const codes = (v: { code: string }[]) => v.map((x) => x.code).sort();

describe("check", () => {
  it("accepts a feasible solution", () => {
    const s = solutionOf([tourOf(base, "v1", ["a", "b", "c"]), tourOf(base, "v2", ["d"])]);
    expect(check(base, s)).toEqual([]);
  });

  it("reports capacity per dimension", () => {
    const p = { ...base, vehicles: vehicles(2, { capacity: [100, 2] }) };
    const s = solutionOf([tourOf(p, "v1", ["a", "b", "c"]), tourOf(p, "v2", ["d"])]);
    const v = check(p, s);
    expect(codes(v)).toEqual(["CAPACITY"]);
    expect(v[0].message).toContain("dimension 2");
  });

  it("reports a missed window", () => {
    const p = { ...base, vehicles: vehicles(2, { capacity: [100, 100] }) };
    const v = check(p, solutionOf([tourOf(p, "v1", ["a", "b", "d", "c"])]));
    expect(codes(v)).toEqual(["TIME_WINDOW"]);
    expect(v[0].jobId).toBe("c");
  });

  it("reports missing, duplicate and unknown jobs", () => {
    const s = solutionOf([tourOf(base, "v1", ["a", "b"]), tourOf(base, "v2", ["b"])], ["zz"]);
    expect(codes(check(base, s))).toEqual(["DUPLICATE_JOB", "MISSING_JOB", "MISSING_JOB", "UNKNOWN_JOB"]);
  });

  it("reports shift end, max duration, tour limit and reused vehicles", () => {
    const p = {
      ...base,
      numVehicles: 1,
      vehicles: vehicles(2, { capacity: [100, 100], shift: { latestEnd: 50 }, maxTourDuration: 40 }),
    };
    const s = solutionOf([tourOf(p, "v1", ["a", "b", "c"]), tourOf(p, "v1", ["d"])]);
    expect(codes(check(p, s))).toEqual(["MAX_DURATION", "SHIFT_END", "TOO_MANY_TOURS", "VEHICLE_REUSED"]);
  });

  it("reports pickup after delivery and split groups", () => {
    const p = planar(
      { x: 0, y: 0 },
      [
        { id: "p", x: 10, y: 0, load: [1] },
        { id: "q", x: 20, y: 0, pickup: "p" },
        { id: "g1", x: 0, y: 5, group: "G" },
        { id: "g2", x: 0, y: 6, group: "G" },
      ],
      { vehicles: vehicles(2) },
    );
    const s = solutionOf([tourOf(p, "v1", ["q", "p", "g1"]), tourOf(p, "v2", ["g2"])]);
    expect(codes(check(p, s))).toEqual(["GROUP", "PICKUP_DELIVERY"]);
  });

  it("reports impossible schedules and wrong totals", () => {
    const t = tourOf(base, "v1", ["a", "b", "c", "d"]);
    t.stops[1] = { ...t.stops[1], arrival: 5, serviceStart: 5, departure: 5 };
    t.distance += 3;
    const p = { ...base, vehicles: vehicles(2, { capacity: [100, 100] }) };
    // Arrival, service start and departure of b are all impossible.
    expect(codes(check(p, solutionOf([t])))).toEqual(["SCHEDULE", "SCHEDULE", "SCHEDULE", "TOTALS", "TOTALS"]);
  });
});
