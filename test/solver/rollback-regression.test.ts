import { describe, expect, it } from "vitest";
import { check, solve } from "../../src/solver";
import type { Problem } from "../../src/solver";

describe("search with jobs left over", () => {
  it("a rolled-back move does not leave jobs pointing at discarded tours", async () => {
    // One small vehicle for six jobs: most stay unassigned, so ruin-and-recreate keeps opening and
    // discarding tours; a stale tour reference used to crash the search ("units[u] is not iterable").
    const problem: Problem = {
      depot: { lat: 52.53, lon: 13.38 },
      jobs: Array.from({ length: 6 }, (_, i) => ({
        id: String(i + 1),
        location: { lat: 52.45 + i * 0.02, lon: 13.3 + i * 0.03 },
        service: 300,
        timeWindow: { start: 3600 * (8 + i), end: 3600 * (10 + i) },
        load: [1 + (i % 4)],
      })),
      vehicles: [{ id: "only", capacity: [5] }],
      numVehicles: 1,
    };
    const solution = await solve(problem, { maxIterations: 3000, seed: 3 });
    expect(solution.tours).toHaveLength(1);
    expect(solution.unassigned.length).toBeGreaterThan(0);
    expect(solution.unassigned.every((u) => u.reason === "FLEET" || u.reason === "CAPACITY")).toBe(true);
    expect(check(problem, solution)).toEqual([]);
  });
});
