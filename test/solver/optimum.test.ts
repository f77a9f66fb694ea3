import { describe, expect, it } from "vitest";
import { check, type Problem, solveSync } from "../../src/solver";
import { planar, vehicles } from "./helpers";

/** Tiny seeded instance: jobs with windows and loads so that tours must split. */
function instance(seed: number, jobs: number): Problem {
  let s = seed;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
  return planar(
    { x: 50, y: 50 },
    Array.from({ length: jobs }, (_, i) => {
      const open = Math.floor(rand() * 150);
      return {
        id: `j${i + 1}`,
        x: Math.floor(rand() * 100),
        y: Math.floor(rand() * 100),
        service: 10,
        load: [1 + Math.floor(rand() * 4)],
        timeWindow: { start: open, end: open + 40 + Math.floor(rand() * 80) },
      };
    }),
    { vehicles: vehicles(jobs, { capacity: [9], shift: { earliestStart: 0, latestEnd: 400 } }) },
  );
}

/** Exhaustive search: every permutation cut into tours; fewest tours, then least distance. */
function bruteForce(p: Problem): { tours: number; distance: number } {
  const n = p.jobs.length;
  const m = p.matrices!.default!;
  const size = n + 1;
  const cap = p.vehicles![0].capacity![0];
  const end = p.vehicles![0].shift!.latestEnd!;
  // Distance of one tour, or Infinity when infeasible.
  const tour = (seq: number[]): number => {
    let t = 0;
    let prev = 0;
    let dist = 0;
    let load = 0;
    for (const i of seq) {
      const j = p.jobs[i - 1];
      load += j.load![0];
      t = Math.max(t + m.durations[prev * size + i], j.timeWindow!.start);
      if (t > j.timeWindow!.end) return Infinity;
      t += j.service!;
      dist += m.distances[prev * size + i];
      prev = i;
    }
    t += m.durations[prev * size];
    if (load > cap || t > end) return Infinity;
    return dist + m.distances[prev * size];
  };
  let best = { tours: Infinity, distance: Infinity };
  const perm = Array.from({ length: n }, (_, i) => i + 1);
  const visit = (k: number) => {
    if (k === n) {
      for (let mask = 0; mask < 1 << (n - 1); mask++) {
        let tours = 1;
        let distance = 0;
        let start = 0;
        for (let i = 0; i < n && distance < Infinity; i++) {
          if (i === n - 1 || mask & (1 << i)) {
            distance += tour(perm.slice(start, i + 1));
            if (i < n - 1) tours++;
            start = i + 1;
          }
        }
        if (distance < Infinity && (tours < best.tours || (tours === best.tours && distance < best.distance - 1e-9))) {
          best = { tours, distance };
        }
      }
      return;
    }
    for (let i = k; i < n; i++) {
      [perm[k], perm[i]] = [perm[i], perm[k]];
      visit(k + 1);
      [perm[k], perm[i]] = [perm[i], perm[k]];
    }
  };
  visit(0);
  return best;
}

describe("tiny instances against brute force", () => {
  for (const seed of [3, 11, 29, 47]) {
    it(`finds the proven optimum (seed ${seed}, 7 jobs)`, () => {
      const p = instance(seed, 7);
      const optimum = bruteForce(p);
      expect(optimum.tours).toBeLessThan(Infinity);
      const s = solveSync(p, { maxIterations: 3000, seed: 1 });
      expect(check(p, s)).toEqual([]);
      expect(s.unassigned).toEqual([]);
      expect(s.tours.length).toBe(optimum.tours);
      expect(s.summary.distance).toBeCloseTo(optimum.distance, 6);
    });
  }
});
