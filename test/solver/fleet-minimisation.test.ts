import { describe, expect, it } from "vitest";
import type { Problem } from "../../src/solver";
import { Budget } from "../../src/solver/budget";
import { regretInsertion } from "../../src/solver/construction";
import { minimiseFleet } from "../../src/solver/fleet-minimisation";
import { compile } from "../../src/solver/model";
import { Random } from "../../src/solver/random";
import type { SolutionState } from "../../src/solver/state";
import { planar, vehicles } from "./helpers";

/**
 * SISR's fleet minimisation (fleet-minimisation.ts) on its own, without the
 * ejection search that runs before it in `solve`: from the plan a plain
 * construction leaves it must reach the planted fleet, with every job on a
 * tour and no tour breaking a window or the capacity.
 */
function planted(tours: number, perTour: number, slack: number): Problem {
  let s = 11;
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
  for (let i = jobs.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [jobs[i], jobs[j]] = [jobs[j], jobs[i]];
  }
  const end = Math.max(...jobs.map((j) => j.timeWindow!.end)) + 200;
  return planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(2 * tours, { capacity: [perTour], shift: { earliestStart: -slack, latestEnd: end } }) });
}

function run(start: SolutionState, seed: number, iterations: number): { best: SolutionState; improved: number[] } {
  const budget = new Budget({ maxIterations: iterations });
  const improved: number[] = [];
  const search = minimiseFleet({ best: start, current: start.clone(), bound: 1, near: null, until: 1, stallShare: 1 }, new Random(seed), budget, (s) =>
    improved.push(s.routes.length),
  );
  for (;;) {
    const step = search.next();
    if (step.done) return { best: step.value, improved };
  }
}

describe("fleet minimisation (SISR)", () => {
  it("empties the tours a plain construction leaves beyond the planted fleet, feasibly", () => {
    const inst = compile(planted(5, 12, 30));
    const start = regretInsertion(inst);
    expect(start.routes.length).toBeGreaterThan(5);
    const { best, improved } = run(start, 1, 20_000);
    expect(best.unassigned).toEqual([]);
    expect(best.routes.length).toBe(5);
    expect(best.routes.every((r) => r.penalty <= 1e-6)).toBe(true);
    expect(best.routes.reduce((a, r) => a + r.nodes.length, 0)).toBe(60);
    // Every plan reported was a tour fewer than the one before.
    expect(improved).toEqual(Array.from({ length: start.routes.length - 5 }, (_, i) => start.routes.length - 1 - i));
  });

  it("stops at the bound and leaves a plan there as it is", () => {
    const inst = compile(planted(5, 12, 30));
    const start = regretInsertion(inst);
    const budget = new Budget({ maxIterations: 1_000 });
    const search = minimiseFleet({ best: start, current: start.clone(), bound: start.routes.length, near: null, until: 1, stallShare: 1 }, new Random(1), budget, () => {});
    let step = search.next();
    while (!step.done) step = search.next();
    expect(step.value).toBe(start);
    expect(budget.iterations).toBe(0);
  });
});
