import { describe, expect, it } from "vitest";
import { check, type Problem, solve } from "../../src/solver";
import { planar, routes, vehicles } from "./helpers";

/** Total distance of a solution's tours on a planar problem. */
const distanceOf = (s: { summary: { distance: number } }) => s.summary.distance;

/** Four pickup-and-delivery pairs in a west cluster and four in an east one, depot between them. */
function twoClusters(): Problem {
  const jobs = [];
  for (const [side, x] of [["w", 10], ["e", 90]] as const) {
    for (let i = 0; i < 4; i++) {
      jobs.push({ id: `${side}p${i}`, x, y: 40 + 5 * i, load: [1] });
      jobs.push({ id: `${side}d${i}`, x: x + 2, y: 41 + 5 * i, pickup: `${side}p${i}` });
    }
  }
  return planar({ x: 50, y: 50 }, jobs, { vehicles: vehicles(2, { capacity: [4] }) });
}

describe("pickup-and-delivery pairs that move", () => {
  it("moves whole pairs out of crossing tours into one tour that serves both clusters in turn", async () => {
    const p = twoClusters();
    // Each starting tour crosses between the clusters with two pairs of each side.
    const initial = [
      { vehicleId: "v1", jobIds: ["wp0", "wd0", "wp1", "wd1", "ep0", "ed0", "ep1", "ed1"] },
      { vehicleId: "v2", jobIds: ["ep2", "ed2", "ep3", "ed3", "wp2", "wd2", "wp3", "wd3"] },
    ];
    const start = await solve(p, { initial, maxIterations: 0, seed: 1 });
    const s = await solve(p, { initial, maxIterations: 300, seed: 1 });
    expect(check(p, s)).toEqual([]);
    expect(s.unassigned).toEqual([]);
    // Fewest tours first: one tour, each cluster's pairs one after the other (208.0 found; the crossing start is 358.1).
    expect(s.tours.length).toBe(1);
    const sides = routes(s)[0].map((id) => id[0]);
    expect(sides.filter((side, i) => i > 0 && side !== sides[i - 1]).length).toBe(1);
    expect(distanceOf(s)).toBeLessThan(distanceOf(start) - 100);
  });

  it("route minimisation dissolves tours of pairs into the one tour that holds them all", async () => {
    // Six pairs along a line from the depot, one pair on board at a time: one tour serves them all.
    const jobs = [];
    for (let i = 0; i < 6; i++) {
      jobs.push({ id: `p${i}`, x: 10 + 10 * i, y: 50, load: [2], timeWindow: { start: 0, end: 10_000 } });
      jobs.push({ id: `d${i}`, x: 15 + 10 * i, y: 50, pickup: `p${i}`, timeWindow: { start: 0, end: 10_000 } });
    }
    const p = planar({ x: 0, y: 50 }, jobs, { vehicles: vehicles(6, { capacity: [2] }) });
    const initial = Array.from({ length: 6 }, (_, i) => ({ vehicleId: `v${i + 1}`, jobIds: [`p${i}`, `d${i}`] }));
    for (const seed of [1, 2, 3]) {
      const s = await solve(p, { initial, maxIterations: 500, seed });
      expect(check(p, s)).toEqual([]);
      expect(s.unassigned).toEqual([]);
      expect(s.tours.length).toBe(1);
      // The line out and back: 2 x 65.
      expect(distanceOf(s)).toBeLessThan(130 + 1e-6);
    }
  });
});
