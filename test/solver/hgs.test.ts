import { describe, expect, it } from "vitest";
import { check, type Job, type Problem, type Solution, solveSync } from "../../src/solver";
import { routes, seededPlanar } from "./helpers";

/**
 * The hybrid genetic search (hgs.ts, `search: "hgs"`): offspring made by
 * route exchange and searched through infeasible plans must come out as
 * complete, feasible plans, reproducibly for a seed.
 */

/** 50 jobs with narrow windows. */
function tight(): Problem {
  return seededPlanar({ jobs: 50, seed: 4242, side: 100, opens: 500, minWidth: 30, extraWidth: 60, fleet: 20, latestEnd: 800 });
}

/** Every job id on exactly one tour. */
function servedOnce(p: Problem, s: Solution): boolean {
  const ids = s.tours.flatMap((t) => t.stops.map((x) => x.jobId)).sort();
  return JSON.stringify(ids) === JSON.stringify(p.jobs.map((j) => j.id).sort());
}

/** One vehicle type with the product's features: shift, maximum duration, open tours, time-based costs, great-circle travel. */
function city(seed: number): Problem {
  let s = seed;
  const rand = () => ((s = (s * 16807) % 2147483647) / 2147483647);
  const depot = { lat: 52.52, lon: 13.405 };
  const jobs: Job[] = Array.from({ length: 40 }, (_, i) => {
    const open = 8 * 3600 + rand() * 5 * 3600;
    return {
      id: `j${i}`,
      location: { lat: depot.lat + (rand() - 0.5) * 0.12, lon: depot.lon + (rand() - 0.5) * 0.18 },
      service: 240,
      timeWindow: { start: open, end: open + 5400 },
      load: [1 + Math.floor(rand() * 4), 1],
    };
  });
  const vehicle = {
    capacity: [30, 12],
    roundtrip: false,
    shift: { earliestStart: 7 * 3600, latestEnd: 18 * 3600 },
    maxTourDuration: 8 * 3600,
    costs: { fixed: 20, perKm: 0.4, perHour: 25 },
  };
  return { depot, jobs, vehicles: Array.from({ length: 12 }, (_, i) => ({ id: `v${i}`, ...vehicle })) };
}

describe("hybrid genetic search", () => {
  it("returns a feasible plan that serves every job exactly once", () => {
    const p = tight();
    const s = solveSync(p, { maxIterations: 300, seed: 3, search: "hgs" });
    expect(check(p, s)).toEqual([]);
    expect(s.unassigned).toEqual([]);
    expect(servedOnce(p, s)).toBe(true);
  });

  it("is deterministic for a seed under an iteration budget", () => {
    const p = tight();
    const a = solveSync(p, { maxIterations: 200, seed: 9, search: "hgs" });
    const b = solveSync(p, { maxIterations: 200, seed: 9, search: "hgs" });
    expect(routes(a)).toEqual(routes(b));
    expect(a.summary.cost).toBe(b.summary.cost);
  });

  it("keeps shifts, maximum durations, open tours and both capacities (checked independently)", () => {
    for (const seed of [1, 2]) {
      const p = city(seed);
      const s = solveSync(p, { maxIterations: 300, seed, search: "hgs" });
      expect(check(p, s)).toEqual([]);
      expect(s.unassigned).toEqual([]);
      expect(servedOnce(p, s)).toBe(true);
    }
  });

  it("keeps pickup-and-delivery pairs valid (such problems stay on the ruin and recreate)", () => {
    const p = tight();
    p.jobs.push({ id: "p", location: { lat: 10, lon: 10 }, service: 5, load: [5] }, { id: "d", location: { lat: 80, lon: 90 }, service: 5, pickup: "p" });
    const n = p.jobs.length + 1;
    // Extend the planar matrix by the two new points.
    const pts = [{ x: 50, y: 50 }, ...p.jobs.map((j) => ({ x: j.location.lon, y: j.location.lat }))];
    const distances = new Float64Array(n * n);
    for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) distances[a * n + b] = Math.hypot(pts[a].x - pts[b].x, pts[a].y - pts[b].y);
    p.matrices = { default: { size: n, distances, durations: distances } };
    const s = solveSync(p, { maxIterations: 400, seed: 2, search: "hgs" });
    expect(check(p, s)).toEqual([]);
    const tour = s.tours.find((t) => t.stops.some((x) => x.jobId === "p"))!;
    const order = tour.stops.map((x) => x.jobId);
    expect(order.indexOf("p")).toBeLessThan(order.indexOf("d"));
  });

  it("never ends worse than the constructed plan it starts from", () => {
    // Not a benchmark: a guard that the population search keeps the best plan it was given.
    const p = tight();
    const hgs = solveSync(p, { maxIterations: 300, seed: 5, search: "hgs" });
    const first = solveSync(p, { maxIterations: 1, seed: 5 });
    expect(hgs.summary.tours).toBeLessThanOrEqual(first.summary.tours);
    expect(hgs.summary.tours < first.summary.tours || hgs.summary.cost <= first.summary.cost).toBe(true);
  });
});
