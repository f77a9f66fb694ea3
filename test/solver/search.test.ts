import { describe, expect, it } from "vitest";
import { check, type Problem, parseSolomon, solomonProblem, solve, solveSync, VEHICLE_CLASSES } from "../../src/solver";
import { routes, seededPlanar } from "./helpers";

/** 60 seeded jobs with windows on the plane. */
function medium(): Problem {
  return seededPlanar({ jobs: 60, seed: 12345, side: 100, opens: 600, minWidth: 60, extraWidth: 120, fleet: 25, latestEnd: 1000 });
}

describe("search control", () => {
  it("is deterministic for a seed under an iteration budget", () => {
    const p = medium();
    const a = solveSync(p, { maxIterations: 600, seed: 7 });
    const b = solveSync(p, { maxIterations: 600, seed: 7 });
    expect(check(p, a)).toEqual([]);
    expect(routes(a)).toEqual(routes(b));
    expect(a.summary.distance).toBe(b.summary.distance);
    expect(a.stats.iterations).toBe(600);
  });

  it("stops at the iteration budget", () => {
    const s = solveSync(medium(), { maxIterations: 50 });
    expect(s.stats.iterations).toBe(50);
    expect(s.stats.stoppedBy).toBe("budget");
  });

  it("stops at the time budget", () => {
    const s = solveSync(medium(), { timeLimitMs: 200 });
    expect(s.stats.stoppedBy).toBe("budget");
    expect(s.unassigned).toEqual([]);
  });

  it("measures the time budget on the clock it is given", () => {
    // A clock that moves a second per reading spends a one-hour budget long before the wall clock would.
    let now = 0;
    const s = solveSync(medium(), { timeLimitMs: 3_600_000, clock: () => (now += 1000) });
    expect(s.stats.stoppedBy).toBe("budget");
    expect(s.stats.iterations).toBeLessThan(3_600);
    expect(s.unassigned).toEqual([]);
  });

  it("returns a feasible solution when cancelled by callback", () => {
    const p = medium();
    let calls = 0;
    const s = solveSync(p, { timeLimitMs: 60_000, shouldStop: () => ++calls > 20 });
    expect(s.stats.stoppedBy).toBe("cancelled");
    expect(s.stats.iterations).toBeLessThan(25);
    expect(check(p, s)).toEqual([]);
    expect(s.unassigned).toEqual([]);
  });

  it("honours an AbortSignal while running asynchronously", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const progress: number[] = [];
    const s = await solve(medium(), { timeLimitMs: 60_000, signal: controller.signal, onProgress: (x) => progress.push(x.tours) });
    expect(s.stats.stoppedBy).toBe("cancelled");
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toBeGreaterThan(0);
  });
});

describe("travel model", () => {
  const berlin = { lat: 52.52, lon: 13.405 };
  const job = { id: "a", location: { lat: 52.53, lon: 13.405 }, service: 0 };

  it("exports the vehicle class table", () => {
    expect(VEHICLE_CLASSES.map((c) => c.id)).toEqual(["car", "truck", "bicycle"]);
    expect(VEHICLE_CLASSES.every((c) => c.speedKmh > 0 && c.restrictions.length > 0)).toBe(true);
  });

  it("uses great-circle x circuity at the class speed", () => {
    const p: Problem = { depot: berlin, jobs: [job], vehicles: [{ id: "bike", vehicleClass: "bicycle", roundtrip: false }] };
    const s = solveSync(p, { maxIterations: 10 });
    // 0.01 degree of latitude is about 1,112 m; x 1.3 circuity; 15 km/h.
    expect(s.tours[0].distance).toBeGreaterThan(1440);
    expect(s.tours[0].distance).toBeLessThan(1450);
    expect(s.tours[0].stops[0].arrival).toBeCloseTo((s.tours[0].distance / 15) * 3.6, 3);
    expect(check(p, s)).toEqual([]);
  });

  it("slows down in rush hour with traffic on, and stays feasible", () => {
    const at = (hour: number): Problem => ({
      depot: berlin,
      jobs: [{ ...job, timeWindow: { start: hour * 3600, end: hour * 3600 + 7200 } }],
      vehicles: [{ id: "car", shift: { earliestStart: hour * 3600 - 600 } }],
      traffic: true,
    });
    const night = solveSync(at(3), { maxIterations: 10 });
    const rush = solveSync(at(8), { maxIterations: 10 });
    const leg = (s: typeof night) => s.tours[0].stops[0].arrival - s.tours[0].start;
    expect(leg(rush)).toBeGreaterThan(leg(night) * 1.5);
    expect(check(at(8), rush)).toEqual([]);
  });
});

describe("Solomon format", () => {
  const text = [
    "TINY1",
    "",
    "VEHICLE",
    "NUMBER     CAPACITY",
    "  2         10",
    "",
    "CUSTOMER",
    "CUST NO.  XCOORD.   YCOORD.    DEMAND   READY TIME  DUE DATE   SERVICE   TIME",
    " ",
    "    0      0         0          0          0       1000          0",
    "    1      3         4          6          0       100          10",
    "    2      -3        -4         6          0       100          10",
    "",
  ].join("\r\n");

  it("parses by whitespace tokens and builds a Euclidean problem", () => {
    const inst = parseSolomon(text);
    expect(inst.name).toBe("TINY1");
    expect(inst.vehicles).toBe(2);
    expect(inst.capacity).toBe(10);
    expect(inst.customers).toHaveLength(3);
    expect(inst.customers[2]).toEqual({ id: 2, x: -3, y: -4, demand: 6, ready: 0, due: 100, service: 10 });
    const p = solomonProblem(inst);
    const s = solveSync(p, { maxIterations: 50 });
    expect(routes(s).sort()).toEqual([["1"], ["2"]]);
    expect(s.summary.distance).toBe(20);
    expect(s.summary.cost).toBeCloseTo(20, 9);
    expect(check(p, s)).toEqual([]);
  });
});
