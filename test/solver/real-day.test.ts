import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Job, check, solveSync } from "../../src/solver";
import { planar } from "./helpers";

/**
 * A carrier's day in miniature: every constraint the solver knows at once
 * (skills, stop limits, three loads, several windows, pickup-and-delivery
 * pairs, shifts), random, and every plan replayed by the independent checker.
 */
describe("random days with every constraint at once (property)", () => {
  it("every plan passes the checker, and every job left out has a reason and a remedy", () => {
    const skill = fc.constantFrom("refrigerated", "tail-lift", "adr");
    const job = fc.record({
      x: fc.integer({ min: -60, max: 60 }),
      y: fc.integer({ min: -60, max: 60 }),
      service: fc.integer({ min: 0, max: 15 }),
      load: fc.tuple(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 2 })),
      skills: fc.array(skill, { maxLength: 2 }),
      // 0: no window, 1: one, 2-3: that many opening hours.
      windows: fc.integer({ min: 0, max: 3 }),
      open: fc.integer({ min: 0, max: 300 }),
      width: fc.integer({ min: 20, max: 120 }),
      gap: fc.integer({ min: 0, max: 90 }),
      paired: fc.boolean(),
    });
    const day = fc.record({
      jobs: fc.array(job, { minLength: 1, maxLength: 22 }),
      fleet: fc.array(
        fc.record({
          skills: fc.array(skill, { maxLength: 3 }),
          maxStops: fc.option(fc.integer({ min: 2, max: 10 }), { nil: undefined }),
          capacity: fc.tuple(fc.integer({ min: 10, max: 40 }), fc.integer({ min: 4, max: 16 }), fc.integer({ min: 2, max: 6 })),
          latestEnd: fc.option(fc.integer({ min: 400, max: 1500 }), { nil: undefined }),
        }),
        { minLength: 1, maxLength: 5 },
      ),
      seed: fc.integer({ min: 1, max: 1000 }),
    });
    fc.assert(
      fc.property(day, ({ jobs, fleet, seed }) => {
        const built: (Omit<Job, "location"> & { x: number; y: number })[] = jobs.map((j, i) => {
          const windows = Array.from({ length: j.windows }, (_, k) => ({ start: j.open + k * (j.width + j.gap), end: j.open + k * (j.width + j.gap) + j.width }));
          return {
            id: `j${i}`,
            x: j.x,
            y: j.y,
            service: j.service,
            load: [...j.load],
            ...(j.skills.length ? { skills: [...new Set(j.skills)] } : {}),
            ...(windows.length === 1 ? { timeWindow: windows[0] } : windows.length > 1 ? { timeWindows: windows } : {}),
          };
        });
        // Pairs: a job marked paired becomes the delivery of the job before it, when that one is free.
        const taken = new Set<number>();
        jobs.forEach((j, i) => {
          if (j.paired && i > 0 && !taken.has(i - 1) && !taken.has(i)) {
            built[i].pickup = `j${i - 1}`;
            taken.add(i - 1).add(i);
          }
        });
        const p = planar({ x: 0, y: 0 }, built, {
          vehicles: fleet.map((v, i) => ({
            id: `v${i}`,
            capacity: [...v.capacity],
            skills: v.skills,
            ...(v.maxStops === undefined ? {} : { maxStops: v.maxStops }),
            ...(v.latestEnd === undefined ? {} : { shift: { latestEnd: v.latestEnd } }),
          })),
        });
        const s = solveSync(p, { maxIterations: 120, seed });
        expect(check(p, s)).toEqual([]);
        for (const u of s.unassigned) expect(u.remedy.length).toBeGreaterThan(10);
        const served = s.tours.flatMap((t) => t.stops.map((x) => x.jobId));
        expect(new Set([...served, ...s.unassigned.map((u) => u.jobId)]).size).toBe(p.jobs.length);
      }),
      { numRuns: 80, seed: 45 },
    );
  });
});
