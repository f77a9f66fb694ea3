import { describe, expect, it } from "vitest";
import { check, type Problem, solveSync } from "../../src/solver";
import { seededPlanar, vehicles } from "./helpers";

/** Seeded jobs with windows on the plane (400: large enough for the search to work on subproblems). */
function large(jobs = 400): Problem {
  return seededPlanar({ jobs, seed: 4242, side: 200, opens: 800, minWidth: 100, extraWidth: 200, fleet: jobs / 4, latestEnd: 1400 });
}

describe("large plans (decomposition)", () => {
  // 400 jobs make fewer than five subproblems: only the warm-up works on them, the final phase on the whole plan; 800 make five and more.
  it.each([400, 800])("improves the first solution of %i jobs by subproblems and stays feasible", (jobs) => {
    const p = large(jobs);
    const first = solveSync(p, { maxIterations: 1, seed: 3 });
    const searched = solveSync(p, { maxIterations: 3000, seed: 3 });
    expect(check(p, searched)).toEqual([]);
    expect(searched.unassigned).toEqual([]);
    // Better by the objective: fewer tours, or as many and less distance (the first plan is already locally optimal).
    const fewerTours = searched.tours.length < first.tours.length;
    expect(fewerTours || (searched.tours.length === first.tours.length && searched.summary.distance < first.summary.distance)).toBe(true);
  });

  it("ends under an iteration budget when no job fits any vehicle", () => {
    const p = large();
    for (const job of p.jobs) job.load = [500];
    const s = solveSync(p, { maxIterations: 50, seed: 3 });
    expect(s.tours).toEqual([]);
    expect(s.unassigned).toHaveLength(400);
  });
});

describe("large plans (jobs renumbered along a curve)", () => {
  // From 500 jobs the search works on the jobs in Hilbert-curve order with permuted matrices; answers must be in the caller's terms.
  it("plans against the caller's own asymmetric durations and lists unassigned jobs in the caller's order", () => {
    const p = large(600);
    const { size, distances } = p.matrices!.default!;
    // Uphill one way: a few time units more from a lower to a higher index, so a transposed or unpermuted matrix shows in the timetable.
    const durations = new Float64Array(size * size);
    for (let a = 0; a < size; a++) for (let b = 0; b < size; b++) durations[a * size + b] = distances[a * size + b] + (a < b ? 7 : 0);
    p.matrices = { default: { size, distances, durations } };
    // Jobs no vehicle can carry, spread over the caller's order.
    const heavy = ["j5", "j90", "j211", "j599"];
    for (const job of p.jobs) if (heavy.includes(job.id)) job.load = [500];
    const s = solveSync(p, { maxIterations: 2000, seed: 5 });
    expect(check(p, s)).toEqual([]);
    expect(s.unassigned.map((u) => u.jobId)).toEqual(heavy);
    expect(s.tours.reduce((n, t) => n + t.stops.length, 0)).toBe(596);
  });
});

describe("large plans (construction)", () => {
  it("builds a feasible first plan for 1,000 jobs by regret insertion, with time-based costs too", () => {
    for (const costs of [undefined, { perKm: 1, perWaitingHour: 50, perTourHour: 20 }]) {
      const p = large(1000);
      for (const v of p.vehicles!) v.costs = costs;
      const first = solveSync(p, { maxIterations: 1, seed: 3 });
      expect(first.unassigned).toEqual([]);
      expect(check(p, first)).toEqual([]);
    }
  });

  it("builds a feasible first plan for 2,000 jobs from neighbourhoods", () => {
    const p = large(2000);
    const first = solveSync(p, { maxIterations: 1, seed: 3 });
    expect(first.unassigned).toEqual([]);
    expect(check(p, first)).toEqual([]);
  });
});

describe("large plans (memory)", () => {
  it("computes embedded distances on demand for 3,000 stops, matching the checker", () => {
    let s = 99;
    const rand = () => ((s = (s * 16807) % 2147483647) / 2147483647);
    const depot = { lat: 52.52, lon: 13.405 };
    const p: Problem = {
      depot,
      jobs: Array.from({ length: 3000 }, (_, i) => ({
        id: `j${i}`,
        location: { lat: depot.lat + 0.3 * (rand() - 0.5), lon: depot.lon + 0.5 * (rand() - 0.5) },
        service: 60,
      })),
      vehicles: vehicles(100, { shift: { earliestStart: 0, latestEnd: 86_400 } }),
      fixOrder: true,
    };
    const solution = solveSync(p);
    expect(solution.unassigned).toEqual([]);
    expect(solution.summary.distance).toBeGreaterThan(0);
    expect(check(p, solution)).toEqual([]);
  });
});
