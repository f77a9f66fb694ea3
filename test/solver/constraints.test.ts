import { describe, expect, it } from "vitest";
import { check, type Problem, type Solution, solveSync } from "../../src/solver";
import { planar, routes, vehicles } from "./helpers";

const opts = { maxIterations: 400, seed: 5 };
const codes = (p: Problem, s: Solution) => check(p, s).map((v) => v.code);

/**
 * Each case: without the constraint the solver's best answer breaks it (so
 * breaking it is cheaper); with it, the answer is feasible.
 */
describe("every constraint binds and is respected", () => {
  it("capacity per dimension", () => {
    const jobs = [
      { id: "a", x: 10, y: 0, load: [1, 5] },
      { id: "b", x: 11, y: 0, load: [1, 5] },
    ];
    const loose = planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(2, { capacity: [10, 100] }) });
    const tight = planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(2, { capacity: [10, 6] }) });
    expect(codes(tight, solveSync(loose, opts))).toContain("CAPACITY");
    const s = solveSync(tight, opts);
    expect(codes(tight, s)).toEqual([]);
    expect(s.tours.length).toBe(2);
  });

  it("a tour may be filled to exactly its capacity", () => {
    // Two vehicles of 15 for six jobs of 5: every job is served only if both tours are full to the unit.
    const jobs = [0, 1, 2, 3, 4, 5].map((i) => ({ id: `j${i}`, x: 10 + i, y: i % 2 === 0 ? 5 : -5, load: [5] }));
    const p = planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(2, { capacity: [15] }) });
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(s.unassigned).toEqual([]);
    expect(s.tours.map((t) => t.stops.length).sort()).toEqual([3, 3]);
  });

  it("time windows", () => {
    const jobs = (end: number) => [
      { id: "a", x: 10, y: 0, timeWindow: { start: 0, end } },
      { id: "b", x: -10, y: 0, timeWindow: { start: 0, end } },
    ];
    const loose = planar({ x: 0, y: 0 }, jobs(1000), { vehicles: vehicles(2) });
    const tight = planar({ x: 0, y: 0 }, jobs(15), { vehicles: vehicles(2) });
    expect(codes(tight, solveSync(loose, opts))).toContain("TIME_WINDOW");
    const s = solveSync(tight, opts);
    expect(codes(tight, s)).toEqual([]);
    expect(s.tours.length).toBe(2);
  });

  it("shift end and maximum tour duration", () => {
    const jobs = [
      { id: "a", x: 10, y: 0 },
      { id: "b", x: -10, y: 0 },
    ];
    const loose = planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(2) });
    const shift = planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(2, { shift: { earliestStart: 0, latestEnd: 35 } }) });
    const duration = planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(2, { maxTourDuration: 35 }) });
    const free = solveSync(loose, opts);
    expect(codes(shift, free)).toContain("SHIFT_END");
    expect(codes(duration, free)).toContain("MAX_DURATION");
    for (const p of [shift, duration]) {
      const s = solveSync(p, opts);
      expect(codes(p, s)).toEqual([]);
      expect(s.tours.length).toBe(2);
    }
  });

  it("maximum tour duration counts waiting but not the wait before departure", () => {
    // The job opens at 100; departing at 90 instead of 0 keeps the tour at 20.
    const p = planar({ x: 0, y: 0 }, [{ id: "a", x: 10, y: 0, timeWindow: { start: 100, end: 120 } }], {
      vehicles: vehicles(1, { maxTourDuration: 20 }),
    });
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(s.tours[0].start).toBe(90);
    expect(s.tours[0].duration).toBe(20);
  });

  it("shift start: a window closing before any vehicle can arrive is explained", () => {
    const p = planar({ x: 0, y: 0 }, [{ id: "a", x: 10, y: 0, timeWindow: { start: 0, end: 50 } }], {
      vehicles: vehicles(1, { shift: { earliestStart: 880 } }),
    });
    const s = solveSync(p, opts);
    expect(s.tours).toEqual([]);
    expect(s.unassigned).toEqual([{ jobId: "a", reason: "TIME_WINDOW", remedy: expect.stringMatching(/^window closes 14 min before earliest arrival/) }]);
  });

  it("pickup before delivery on the same tour", () => {
    // Open tours: visiting the delivery (nearer) first would be shorter.
    const jobs = (paired: boolean) => [
      { id: "p", x: 20, y: 0, load: [5] },
      { id: "d", x: 10, y: 0, ...(paired ? { pickup: "p" } : {}) },
    ];
    const rest = { vehicles: vehicles(2, { roundtrip: false, capacity: [5] }) };
    const loose = planar({ x: 0, y: 0 }, jobs(false), rest);
    const tight = planar({ x: 0, y: 0 }, jobs(true), rest);
    expect(codes(tight, solveSync(loose, opts))).toContain("PICKUP_DELIVERY");
    const s = solveSync(tight, opts);
    expect(codes(tight, s)).toEqual([]);
    expect(routes(s)).toEqual([["p", "d"]]);
    expect(s.summary.distance).toBe(30);
    expect(s.tours[0].stops.map((x) => x.load)).toEqual([[5], [0]]);
  });

  it("groups stay on one tour", () => {
    const jobs = (grouped: boolean) => [
      { id: "g1", x: 10, y: 0, load: [5], ...(grouped ? { group: "G" } : {}) },
      { id: "g2", x: -10, y: 0, load: [5], ...(grouped ? { group: "G" } : {}) },
      { id: "a", x: 10, y: 1, load: [5] },
      { id: "b", x: -10, y: 1, load: [5] },
    ];
    const rest = { vehicles: vehicles(3, { capacity: [10] }) };
    const loose = planar({ x: 0, y: 0 }, jobs(false), rest);
    const tight = planar({ x: 0, y: 0 }, jobs(true), rest);
    expect(codes(tight, solveSync(loose, opts))).toContain("GROUP");
    const s = solveSync(tight, opts);
    expect(codes(tight, s)).toEqual([]);
    expect(routes(s).map((r) => r.slice().sort())).toContainEqual(["g1", "g2"]);
  });

  it("tour areas (groups of several jobs among single ones) stay whole whatever move runs", () => {
    // usearea: each area's deliveries form a group. With windows spread over the day, route
    // minimisation's perturbations and squeeze (2-opt* included) and the local search all get
    // to move jobs between tours that hold area members.
    const areaPlan = (seed: number) => {
      let s = seed * 97 + 10;
      const rand = () => ((s = (s * 16807) % 2147483647) / 2147483647);
      const job = (id: string, cx: number, cy: number, side: number, minWidth: number, group?: string) => {
        const open = Math.floor(rand() * 300);
        const x = cx + rand() * side;
        const y = cy + rand() * side;
        const load = [1 + Math.floor(rand() * 5)];
        return { id, x, y, service: 5, load, timeWindow: { start: open, end: open + minWidth + Math.floor(rand() * 100) }, ...(group ? { group } : {}) };
      };
      const jobs = [];
      for (let a = 0; a < 10; a++) {
        const cx = rand() * 200 - 100;
        const cy = rand() * 200 - 100;
        for (let k = 0; k < 4; k++) jobs.push(job(`a${a}-${k}`, cx, cy, 30, 80, `area:${a}`));
      }
      for (let k = 0; k < 60; k++) jobs.push(job(`f${k}`, -100, -100, 200, 60));
      return planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(30, { capacity: [40], shift: { earliestStart: 0, latestEnd: 800 } }) });
    };
    for (const seed of [1, 2, 3, 4]) {
      const p = areaPlan(seed);
      const s = solveSync(p, { maxIterations: 2_000, seed });
      expect(codes(p, s), `seed ${seed}`).toEqual([]);
    }
  });

  it("open tours end at the last stop", () => {
    const p = planar({ x: 0, y: 0 }, [{ id: "a", x: 10, y: 0, service: 5 }], { vehicles: vehicles(1, { roundtrip: false }) });
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(s.tours[0].distance).toBe(10);
    expect(s.tours[0].end).toBe(15);
  });

  it("fix_order keeps the given order", () => {
    const jobs = [
      { id: "a", x: 10, y: 0 },
      { id: "b", x: -10, y: 0 },
      { id: "c", x: 11, y: 0 },
    ];
    const free = solveSync(planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(1) }), opts);
    expect(free.summary.distance).toBe(42);
    const p = planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(1), fixOrder: true });
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(routes(s)).toEqual([["a", "b", "c"]]);
    expect(s.summary.distance).toBe(62);
  });

  it("num_vehicles limits the tours", () => {
    const jobs = [
      { id: "a", x: 10, y: 0, load: [6] },
      { id: "b", x: -10, y: 0, load: [6], priority: 5 },
    ];
    const two = planar({ x: 0, y: 0 }, jobs, { numVehicles: 2, vehicleCapacity: [10] });
    const one = planar({ x: 0, y: 0 }, jobs, { numVehicles: 1, vehicleCapacity: [10] });
    expect(codes(one, solveSync(two, opts))).toContain("TOO_MANY_TOURS");
    const s = solveSync(one, opts);
    expect(codes(one, s)).toEqual([]);
    // The high-priority job is kept.
    expect(routes(s)).toEqual([["b"]]);
    expect(s.unassigned).toEqual([{ jobId: "a", reason: "FLEET", remedy: expect.stringContaining("more tours") }]);
  });

  it("capacity that no vehicle has is explained", () => {
    const p = planar({ x: 0, y: 0 }, [{ id: "a", x: 10, y: 0, load: [3, 12] }], { vehicleCapacity: [5, 10], numVehicles: 2 });
    const s = solveSync(p, opts);
    expect(s.unassigned).toEqual([{ jobId: "a", reason: "CAPACITY", remedy: expect.stringContaining("by 2 on dimension 2") }]);
  });

  it("relax widens windows in 30-minute steps only when jobs would stay unassigned", () => {
    const jobs = [
      { id: "a", x: 1000, y: 0, timeWindow: { start: 0, end: 200 } },
      { id: "b", x: 10, y: 0, timeWindow: { start: 0, end: 100 } },
    ];
    const strict = planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(2) });
    expect(solveSync(strict, opts).unassigned.map((u) => u.jobId)).toEqual(["a"]);
    const relaxed = { ...strict, relax: { maxMinutes: 60 } };
    const s = solveSync(relaxed, opts);
    expect(s.unassigned).toEqual([]);
    // Arrival at 1000 is 800 s late: one 30-minute step suffices; b is untouched.
    expect(s.relaxed).toEqual([{ jobId: "a", minutes: 30, lateness: 800 }]);
    expect(codes(relaxed, s)).toEqual([]);
    expect(codes(strict, s)).toContain("TIME_WINDOW");
    // Windows closing before relax_after_time stay strict.
    const late = solveSync({ ...strict, relax: { maxMinutes: 60, afterTime: 300 } }, opts);
    expect(late.relaxed).toEqual([]);
    expect(late.unassigned.map((u) => u.jobId)).toEqual(["a"]);
  });

  it("heterogeneous fleet: the cheap slow vehicle only where it is on time", () => {
    const fleet = [
      { id: "slow", travelTimeFactor: 2 },
      { id: "fast", costs: { fixed: 50 } },
    ];
    const loose = planar({ x: 0, y: 0 }, [{ id: "a", x: 10, y: 0 }], { vehicles: fleet });
    const tight = planar({ x: 0, y: 0 }, [{ id: "a", x: 10, y: 0, timeWindow: { start: 0, end: 15 } }], { vehicles: fleet });
    const cheap = solveSync(loose, opts);
    expect(cheap.tours.map((t) => t.vehicleId)).toEqual(["slow"]);
    expect(codes(tight, cheap)).toContain("TIME_WINDOW");
    const s = solveSync(tight, opts);
    expect(codes(tight, s)).toEqual([]);
    expect(s.tours.map((t) => t.vehicleId)).toEqual(["fast"]);
    expect(s.summary.cost).toBeCloseTo(50.02, 9);
  });

  it("no jobs, or no vehicles, end at once with an explanation", () => {
    const empty = solveSync({ depot: { lat: 52.5, lon: 13.4 }, jobs: [] }, { timeLimitMs: 60_000 });
    expect(empty.tours).toEqual([]);
    expect(empty.stats.stoppedBy).toBe("complete");
    const p = planar({ x: 0, y: 0 }, [{ id: "a", x: 1, y: 0 }], { numVehicles: 0 });
    const s = solveSync(p, opts);
    expect(s.unassigned).toEqual([{ jobId: "a", reason: "FLEET", remedy: expect.stringContaining("no vehicle is available") }]);
    expect(codes(p, s)).toEqual([]);
  });
});
