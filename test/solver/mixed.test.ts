import { describe, expect, it } from "vitest";
import { check, type Job, type Problem, solveSync } from "../../src/solver";

/**
 * Every feature at once on a city instance (embedded great-circle travel,
 * traffic): pairs, groups, three load dimensions, open and round trips,
 * shifts, max duration, a mixed fleet. The full search must stay feasible.
 */
function city(seed: number): Problem {
  let s = seed;
  const rand = () => ((s = (s * 16807) % 2147483647) / 2147483647);
  const depot = { lat: 48.137, lon: 11.575 };
  const at = () => ({ lat: depot.lat + (rand() - 0.5) * 0.1, lon: depot.lon + (rand() - 0.5) * 0.15 });
  const jobs: Job[] = [];
  for (let i = 0; i < 40; i++) {
    const open = 8 * 3600 + rand() * 6 * 3600;
    jobs.push({
      id: `j${i}`,
      location: at(),
      service: 300,
      timeWindow: { start: open, end: open + 7200 },
      load: [1 + Math.floor(rand() * 5), Math.floor(rand() * 3), 1],
      priority: i % 3,
      ...(i < 6 ? { group: `g${i % 2}` } : {}),
    });
  }
  for (let i = 0; i < 5; i++) {
    jobs.push({ id: `p${i}`, location: at(), service: 120, load: [3, 1, 1] });
    jobs.push({ id: `d${i}`, location: at(), service: 120, pickup: `p${i}` });
  }
  return {
    depot,
    jobs,
    vehicles: [
      ...Array.from({ length: 4 }, (_, i) => ({
        id: `van${i}`,
        capacity: [40, 15, 20],
        shift: { earliestStart: 7 * 3600, latestEnd: 19 * 3600 },
        maxTourDuration: 9 * 3600,
      })),
      { id: "truck", vehicleClass: "truck" as const, capacity: [80, 30, 40], roundtrip: false, shift: { earliestStart: 7 * 3600 } },
      { id: "bike", vehicleClass: "bicycle" as const, capacity: [10, 5, 5], travelTimeFactor: 1.2, costs: { fixed: 0, perKm: 0.5 } },
    ],
    traffic: { weekday: 2 },
  };
}

describe("mixed constraints", () => {
  for (const seed of [1, 2]) {
    it(`stays feasible through the whole search (seed ${seed})`, () => {
      const p = city(seed);
      const s = solveSync(p, { maxIterations: 400, seed });
      expect(check(p, s)).toEqual([]);
      expect(s.unassigned).toEqual([]);
      const tourOf = new Map(s.tours.flatMap((t, i) => t.stops.map((x) => [x.jobId, i] as const)));
      for (let i = 0; i < 5; i++) expect(tourOf.get(`p${i}`)).toBe(tourOf.get(`d${i}`));
    });
  }
});
