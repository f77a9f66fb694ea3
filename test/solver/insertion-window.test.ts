import { describe, expect, it } from "vitest";
import { check, type Problem, solveSync } from "../../src/solver";

describe("insertion restricted to a job's time window", () => {
  // Ten jobs whose windows are disjoint hours, listed out of order, and one vehicle: every job has
  // exactly one feasible position (first, middle or last) whenever it is inserted, so a window bound
  // that cut off a feasible position would leave a job out.
  const hours = [14, 8, 17, 11, 9, 16, 13, 10, 15, 12];
  const problem: Problem = {
    depot: { lat: 52.52, lon: 13.4 },
    jobs: hours.map((h, i) => ({
      id: `h${h}`,
      location: { lat: 52.5 + ((i * 7) % 10) * 0.004, lon: 13.38 + ((i * 3) % 10) * 0.004 },
      service: 600,
      timeWindow: { start: 3600 * h, end: 3600 * h + 900 },
      load: [1],
    })),
    vehicles: [{ id: "only", capacity: [20] }],
    numVehicles: 1,
  };

  it("serves every job on one tour in window order", () => {
    for (const seed of [1, 2, 3]) {
      const solution = solveSync(problem, { maxIterations: 300, seed });
      expect(solution.unassigned).toEqual([]);
      expect(check(problem, solution)).toEqual([]);
      const order = solution.tours[0].stops.map((s) => s.jobId);
      expect(order).toEqual([...hours].sort((a, b) => a - b).map((h) => `h${h}`));
    }
  });
});
