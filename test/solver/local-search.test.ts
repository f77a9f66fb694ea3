import { describe, expect, it } from "vitest";
import { check, improvePlan, type PlannedTour, type Problem, solveSync } from "../../src/solver";
import { planar, routes, seededPlanar, vehicles } from "./helpers";

/** 60 seeded jobs with windows on the plane. */
function medium(): Problem {
  return seededPlanar({ jobs: 60, seed: 4242, side: 100, opens: 600, minWidth: 60, extraWidth: 120, fleet: 60, latestEnd: 1000 });
}

/** Distance of a plan on a planar problem. */
const distance = (p: Problem, plan: PlannedTour[]) => {
  const n = p.jobs.length + 1;
  const m = p.matrices!.default!.distances;
  const index = new Map(p.jobs.map((j, i) => [j.id, i + 1]));
  let total = 0;
  for (const t of plan) {
    let prev = 0;
    for (const id of t.jobIds) (total += m[prev * n + index.get(id)!]), (prev = index.get(id)!);
    total += m[prev * n];
  }
  return total;
};

describe("local search (improvePlan)", () => {
  it("uncrosses two tours that each serve half of two clusters", () => {
    // West cluster w0..w3, east cluster e0..e3; each tour crosses between them.
    const west = [0, 1, 2, 3].map((i) => ({ id: `w${i}`, x: 10, y: 40 + 5 * i, load: [1] }));
    const east = [0, 1, 2, 3].map((i) => ({ id: `e${i}`, x: 90, y: 40 + 5 * i, load: [1] }));
    const p = planar({ x: 50, y: 50 }, [...west, ...east], { vehicles: vehicles(2, { capacity: [4] }) });
    const plan = [
      { vehicleId: "v1", jobIds: ["w0", "w1", "e0", "e1"] },
      { vehicleId: "v2", jobIds: ["e2", "e3", "w2", "w3"] },
    ];
    const s = improvePlan(p, plan);
    expect(check(p, s)).toEqual([]);
    expect(s.summary.distance).toBeLessThan(distance(p, plan) - 1);
    // Each tour now serves one side only.
    for (const tour of routes(s)) expect(new Set(tour.map((id) => id[0])).size).toBe(1);
  });

  it("SWAP*: exchanges two jobs that are not neighbours, each into its best place in the other tour", () => {
    // 40 jobs on a circle; each tour is one half plus, first, the job opposite its own
    // half (load 3; capacity 22 is full). Relocating either is over capacity, and the
    // two are far apart, so swap and 2-opt* between neighbours leave them stuck.
    const pts = Array.from({ length: 40 }, (_, k) => {
      const a = ((4.5 + 9 * k) * Math.PI) / 180;
      return { id: `${Math.cos(a) > 0 ? "e" : "w"}${k}`, x: 50 * Math.cos(a), y: 50 * Math.sin(a), load: [1] };
    });
    const angle = (q: { x: number; y: number }) => (Math.atan2(q.y, q.x) + 2 * Math.PI) % (2 * Math.PI);
    const side = (c: string) => pts.filter((q) => q.id[0] === c).sort((a, b) => ((angle(a) + Math.PI / 2) % (2 * Math.PI)) - ((angle(b) + Math.PI / 2) % (2 * Math.PI)));
    const [east, west] = [side("e"), side("w")];
    const [strayWest, strayEast] = [west[10], east[10]];
    strayWest.load = [3];
    strayEast.load = [3];
    const p = planar({ x: 0, y: 0 }, pts, { vehicles: vehicles(2, { capacity: [22] }) });
    const plan = [
      { vehicleId: "v1", jobIds: [strayWest, ...east.filter((q) => q !== strayEast)].map((q) => q.id) },
      { vehicleId: "v2", jobIds: [strayEast, ...west.filter((q) => q !== strayWest)].map((q) => q.id) },
    ];
    const s = improvePlan(p, plan);
    expect(check(p, s)).toEqual([]);
    for (const tour of routes(s)) expect(new Set(tour.map((id) => id[0])).size).toBe(1);
  });

  it("never makes a plan worse or infeasible, and merges one-job tours under windows and capacity", () => {
    const p = medium();
    const plan = p.jobs.map((j, i) => ({ vehicleId: `v${i + 1}`, jobIds: [j.id] }));
    const s = improvePlan(p, plan);
    expect(check(p, s)).toEqual([]);
    expect(s.unassigned).toEqual([]);
    expect(s.tours.length).toBeLessThan(plan.length / 2);
    expect(s.summary.distance).toBeLessThan(distance(p, plan));
    // A plan from the full search is a local optimum already or gets better, never worse.
    const solved = solveSync(p, { maxIterations: 200 });
    const again = improvePlan(p, solved.tours.map((t) => ({ vehicleId: t.vehicleId, jobIds: t.stops.map((x) => x.jobId) })));
    expect(check(p, again)).toEqual([]);
    expect(again.summary.distance).toBeLessThanOrEqual(solved.summary.distance + 1e-6);
  });

  it("is deterministic for a seed", () => {
    const p = medium();
    const plan = p.jobs.map((j, i) => ({ vehicleId: `v${i + 1}`, jobIds: [j.id] }));
    expect(routes(improvePlan(p, plan, { seed: 3 }))).toEqual(routes(improvePlan(p, plan, { seed: 3 })));
  });

  it("keeps pickups before their deliveries on one tour, groups on one tour, and capacities", () => {
    const p = planar(
      { x: 50, y: 50 },
      [
        { id: "p1", x: 10, y: 10, load: [3] },
        { id: "d1", x: 90, y: 90, load: [3], pickup: "p1" },
        { id: "g1", x: 12, y: 88, load: [1], group: "G" },
        { id: "g2", x: 88, y: 12, load: [1], group: "G" },
        ...Array.from({ length: 12 }, (_, i) => ({ id: `j${i}`, x: (i * 37) % 100, y: (i * 53) % 100, load: [1] })),
      ],
      { vehicles: vehicles(4, { capacity: [6] }) },
    );
    const ids = p.jobs.map((j) => j.id).filter((id) => id.startsWith("j"));
    const plan = [
      { vehicleId: "v1", jobIds: ["p1", ids[0], ids[5], "d1"] },
      { vehicleId: "v2", jobIds: ["g1", ids[1], ids[6], ids[9], "g2"] },
      { vehicleId: "v3", jobIds: [ids[2], ids[7], ids[10], ids[3]] },
      { vehicleId: "v4", jobIds: [ids[4], ids[8], ids[11]] },
    ];
    const s = improvePlan(p, plan);
    expect(check(p, s)).toEqual([]);
    expect(s.summary.distance).toBeLessThan(distance(p, plan));
    const tourOf = (id: string) => routes(s).findIndex((t) => t.includes(id));
    expect(tourOf("p1")).toBe(tourOf("d1"));
    expect(tourOf("g1")).toBe(tourOf("g2"));
    const t = routes(s)[tourOf("p1")];
    expect(t.indexOf("p1")).toBeLessThan(t.indexOf("d1"));
  });
});
