import { describe, expect, it } from "vitest";
import { benchmarkFormat, benchmarkProblem, check, cordeauProblem, parseCordeau, solveSync } from "../../src/solver";

/** Two depots (ids 7, 8) with 2 vehicles each, six customers; depot 7 limits tours to 60, depot 8 to none. */
const SMALL = [
  "2 2 6 2",
  "60 10",
  "0 12",
  "  1   1   1  2  4 1 4 1 2 4 8",
  "  2   2  -1  2  5 1 4 1 2 4 8",
  "  3  -2   2  1  3 1 4 1 2 4 8",
  "  4  21   0  3  6 1 4 1 2 4 8",
  "  5  19   2  0  4 1 4 1 2 4 8",
  "  6  20  -3  1  5 1 4 1 2 4 8",
  "  7   0   0  0  0 0 0",
  "  8  20   0  0  0 0 0",
  "",
].join("\r\n");

describe("Cordeau MDVRP reader", () => {
  it("reads customers, depots with their limits, and the fleet per depot", () => {
    const inst = parseCordeau(SMALL);
    expect(inst.vehiclesPerDepot).toBe(2);
    expect(inst.customers.map((c) => [c.id, c.x, c.y, c.service, c.demand])[3]).toEqual([4, 21, 0, 3, 6]);
    expect(inst.depots).toEqual([
      { id: 7, x: 0, y: 0, service: 0, demand: 0, maxDuration: 60, capacity: 10 },
      { id: 8, x: 20, y: 0, service: 0, demand: 0, maxDuration: 0, capacity: 12 },
    ]);
    const problem = cordeauProblem(inst);
    expect(problem.depots!.map((d) => d.id)).toEqual(["7", "8"]);
    expect(problem.vehicles!.map((v) => [v.id, v.depot, v.capacity![0], v.maxTourDuration])).toEqual([
      ["7-1", "7", 10, 60],
      ["7-2", "7", 10, 60],
      ["8-1", "8", 12, undefined],
      ["8-2", "8", 12, undefined],
    ]);
    // The matrix index of a point is its file id (index 0: a copy of the first depot).
    const m = problem.matrices!.default!;
    expect(m.size).toBe(9);
    expect(m.distances[4 * 9 + 8]).toBeCloseTo(1, 12);
    expect(m.distances[0 * 9 + 8]).toBeCloseTo(20, 12);
    expect(benchmarkFormat(SMALL)).toBe("cordeau");
    expect(benchmarkProblem(SMALL).format).toBe("cordeau");
  });

  it("refuses malformed files with the line and the reason", () => {
    expect(() => parseCordeau(SMALL.replace("2 2 6 2", "4 2 6 2"))).toThrow(/line 1: problem type 4 is not the MDVRP \(type 2\)/);
    expect(() => parseCordeau(SMALL.replace("2 2 6 2", "2 0 6 2"))).toThrow(/line 1: m \(vehicles per depot\) must be a positive integer/);
    expect(() => parseCordeau(SMALL.replace("60 10", "60 10 5"))).toThrow(/line 2: a depot's limits must be "D Q"/);
    expect(() => parseCordeau(SMALL.replace("  3  -2", "  9  -2"))).toThrow(/line 6: id 9 where 3 was expected/);
    expect(() => parseCordeau(SMALL.replace("1 4 1 2 4 8\r\n  5", "1 4 1 2 4\r\n  5"))).toThrow(/line 7: row 4 announces 4 visit combinations but has 3/);
    expect(() => parseCordeau(SMALL.replace("  8  20   0  0  0", "  8  20   0  0  3"))).toThrow(/line 11: depot 8 has a demand/);
    expect(() => parseCordeau(SMALL.split("\r\n").slice(0, 10).join("\n"))).toThrow(/expected 11 lines/);
    expect(() => parseCordeau(SMALL + "9 1 1 0 0 0 0\n")).toThrow(/line 12: 1 more line after the last depot/);
    expect(() => parseCordeau(SMALL.replace("  2   2  -1", "  2   2  x"))).toThrow(/line 5: .* is not a row of numbers/);
  });

  it("solves with the cost objective into a plan the checker accepts, at most m tours per depot", () => {
    const problem = benchmarkProblem(SMALL).problem;
    const solution = solveSync(problem, { maxIterations: 300, objective: "cost" });
    expect(check(problem, solution)).toEqual([]);
    expect(solution.unassigned).toEqual([]);
    for (const depot of ["7", "8"]) expect(solution.tours.filter((t) => t.depot === depot).length).toBeLessThanOrEqual(2);
    // Customers 4-6 lie around depot 8, 1-3 around depot 7.
    for (const t of solution.tours) for (const s of t.stops) expect(t.depot).toBe(Number(s.jobId) >= 4 ? "8" : "7");
    for (const t of solution.tours.filter((t) => t.depot === "7")) expect(t.duration).toBeLessThanOrEqual(60);
  });
});
