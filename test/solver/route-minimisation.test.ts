import { describe, expect, it } from "vitest";
import { check, type Problem, solveSync } from "../../src/solver";
import { Budget } from "../../src/solver/budget";
import { regretInsertion } from "../../src/solver/construction";
import { compile } from "../../src/solver/model";
import { Random } from "../../src/solver/random";
import { minimiseRoutes, RETRY_SHARE, tourLowerBound } from "../../src/solver/route-minimisation";
import { planar, vehicles } from "./helpers";

/**
 * A planted plan: `tours` tours of `perTour` jobs (load 1, capacity
 * `perTour`), each a walk out of the depot through its own sector with
 * windows of +-`slack` around the planted arrival. The fleet of the plan is
 * the capacity bound, so it is the optimum.
 */
function planted(tours: number, perTour: number, slack: number): Problem {
  let s = 7;
  const rand = () => ((s = (s * 16807) % 2147483647) / 2147483647);
  const jobs: Parameters<typeof planar>[1] = [];
  for (let t = 0; t < tours; t++) {
    let x = 0;
    let y = 0;
    let time = 0;
    for (let k = 0; k < perTour; k++) {
      const angle = ((t + rand()) / tours) * 2 * Math.PI;
      const radius = 20 + 80 * rand();
      const nx = radius * Math.cos(angle);
      const ny = radius * Math.sin(angle);
      time += Math.hypot(nx - x, ny - y);
      jobs.push({ id: `t${t}-${k}`, x: nx, y: ny, service: 5, load: [1], timeWindow: { start: time - slack, end: time + slack } });
      time += 5;
      x = nx;
      y = ny;
    }
  }
  // Job order must not give the plan away.
  for (let i = jobs.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [jobs[i], jobs[j]] = [jobs[j], jobs[i]];
  }
  const end = Math.max(...jobs.map((j) => j.timeWindow!.end)) + 200;
  return planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(2 * tours, { capacity: [perTour], shift: { earliestStart: -slack, latestEnd: end } }) });
}

describe("route minimisation", () => {
  it("brings a 320-job plan down to its planted fleet, the capacity bound", () => {
    const p = planted(10, 32, 60);
    const first = solveSync(p, { maxIterations: 1, seed: 1 });
    const s = solveSync(p, { maxIterations: 1_000, seed: 1 });
    expect(first.tours.length).toBeGreaterThan(10);
    expect(check(p, s)).toEqual([]);
    expect(s.unassigned).toEqual([]);
    expect(s.tours.length).toBe(10);
  });
});

/**
 * Two clusters far apart on either side of the depot, every window the same
 * hour: one vehicle cannot serve both, though the capacity bound says one
 * tour would carry all. No tour can go.
 */
function twoClusters(): Problem {
  const jobs: Parameters<typeof planar>[1] = [];
  for (const side of [-1, 1])
    for (let k = 0; k < 8; k++) {
      jobs.push({ id: `${side}-${k}`, x: side * (100 + (k % 3)), y: k, service: 5, load: [1], timeWindow: { start: 200, end: 260 } });
    }
  return planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(4, { capacity: [100], shift: { earliestStart: 0, latestEnd: 1_000 } }) });
}

describe("route minimisation where no tour can go", () => {
  it("gives the plan back unchanged within its retry share of the budget, leaving the rest to the cost search", () => {
    const inst = compile(twoClusters());
    const start = regretInsertion(inst);
    expect(start.routes.length).toBe(2);
    expect(tourLowerBound(start)).toBe(1);
    const budget = new Budget({ maxIterations: 20_000 });
    const search = minimiseRoutes(start, new Random(1), budget, 1, () => {});
    let step = search.next();
    while (!step.done) step = search.next();
    const plan = step.value;
    expect(plan.routes.length).toBe(2);
    expect(plan.unassigned).toEqual([]);
    // Before the retry share applied below 300 jobs, the failing attempt ran to the end of the budget.
    expect(budget.fraction()).toBeLessThanOrEqual(RETRY_SHARE);
  });
});
