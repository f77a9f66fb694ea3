import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { check, type Job, type Problem, type Solution, solveSync, type Vehicle } from "../../src/solver";

interface Point {
  x: number;
  y: number;
}

/**
 * A problem on the plane with further depots: Euclidean distances, travel
 * time = distance, the matrix over the depot, the jobs, then the further
 * depots (the documented index convention).
 */
function planarDepots(depot: Point, depots: (Point & { id: string })[], jobs: (Omit<Job, "location"> & Point)[], vehicles: Vehicle[]): Problem {
  const pts = [depot, ...jobs, ...depots];
  const n = pts.length;
  const distances = new Float64Array(n * n);
  for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) distances[a * n + b] = Math.hypot(pts[a].x - pts[b].x, pts[a].y - pts[b].y);
  return {
    depot: { lat: depot.y, lon: depot.x },
    depots: depots.map(({ id, x, y }) => ({ id, location: { lat: y, lon: x } })),
    jobs: jobs.map(({ x, y, ...j }) => ({ ...j, location: { lat: y, lon: x } })),
    vehicles,
    matrices: { default: { size: n, distances, durations: distances } },
  };
}

const vehicleOf = (problem: Problem, solution: Solution, jobId: string) => {
  const tour = solution.tours.find((t) => t.stops.some((s) => s.jobId === jobId))!;
  return problem.vehicles!.find((v) => v.id === tour.vehicleId)!;
};

/** Two hubs 1,000 apart, each with six jobs around it and two vehicles. */
function twoHubs(extra: Partial<Job> & { id?: string } = {}): Problem {
  const around = (hub: string, cx: number) =>
    [0, 1, 2, 3, 4, 5].map((k) => ({ id: `${hub}${k}`, x: cx + 10 * Math.cos(k), y: 10 * Math.sin(k), load: [1] }));
  const jobs: (Omit<Job, "location"> & Point)[] = [...around("w", 0), ...around("e", 1000)];
  if (extra.id) jobs.push({ id: extra.id, x: 5, y: 5, load: [1], ...extra });
  const fleet: Vehicle[] = [
    { id: "west-1", depot: "west", capacity: [10] },
    { id: "west-2", depot: "west", capacity: [10] },
    { id: "east-1", depot: "east", capacity: [10] },
    { id: "east-2", depot: "east", capacity: [10] },
  ];
  return planarDepots({ x: 500, y: 0 }, [{ id: "west", x: 0, y: 0 }, { id: "east", x: 1000, y: 0 }], jobs, fleet);
}

describe("several depots", () => {
  it("serves each job from the vehicles of its near depot, in tours that start and end there", () => {
    const problem = twoHubs();
    const solution = solveSync(problem, { maxIterations: 500 });
    expect(check(problem, solution)).toEqual([]);
    expect(solution.unassigned).toEqual([]);
    for (const job of problem.jobs) expect(vehicleOf(problem, solution, job.id).depot).toBe(job.id.startsWith("w") ? "west" : "east");
    // Two short round trips, one per hub, instead of a tour from the problem's depot in between.
    expect(solution.tours.map((t) => t.depot).sort()).toEqual(["east", "west"]);
    expect(solution.summary.distance).toBeLessThan(2 * 80);
    for (const t of solution.tours) {
      const home = t.depot === "west" ? { x: 0, y: 0 } : { x: 1000, y: 0 };
      const first = problem.jobs.find((j) => j.id === t.stops[0].jobId)!.location;
      // The first leg is measured from the tour's own depot.
      expect(t.stops[0].distance).toBeCloseTo(Math.hypot(first.lon - home.x, first.lat - home.y), 6);
    }
  });

  it("serves a job restricted to a depot from it, though the other is nearer", () => {
    const problem = twoHubs({ id: "bound-east", depot: "east" });
    const solution = solveSync(problem, { maxIterations: 500 });
    expect(check(problem, solution)).toEqual([]);
    expect(vehicleOf(problem, solution, "bound-east").depot).toBe("east");
  });

  it("leaves a job restricted to a depot without vehicles unassigned, with the reason", () => {
    const problem = twoHubs({ id: "bound-east", depot: "east" });
    problem.vehicles = problem.vehicles!.filter((v) => v.depot === "west");
    const solution = solveSync(problem, { maxIterations: 200 });
    expect(check(problem, solution)).toEqual([]);
    expect(solution.unassigned).toEqual([expect.objectContaining({ jobId: "bound-east", reason: "SKILLS", remedy: expect.stringMatching(/depot east, where no vehicle starts/) })]);
  });

  it("refuses unknown depot ids and matrices without the depots' points", () => {
    const problem = twoHubs();
    expect(() => solveSync({ ...problem, vehicles: [{ id: "v", depot: "south" }] }, { maxIterations: 10 })).toThrow(/vehicle v names depot "south"/);
    expect(() => solveSync({ ...problem, jobs: [{ ...problem.jobs[0], depot: "south" }] }, { maxIterations: 10 })).toThrow(/job w0 names depot "south"/);
    const m = problem.matrices!.default!;
    const size = m.size - 1;
    const cut = new Float64Array(size * size);
    expect(() => solveSync({ ...problem, matrices: { default: { size, distances: cut, durations: cut } } }, { maxIterations: 10 })).toThrow(/must be 15 x 15 \(depot \+ jobs \+ depots\)/);
  });

  it("flags in the checker a tour that names the wrong depot or serves a job from another", () => {
    const problem = twoHubs({ id: "bound-east", depot: "east" });
    const solution = solveSync(problem, { maxIterations: 300 });
    const tours = solution.tours.map((t) => (t.depot === "east" ? { ...t, depot: "west" } : t));
    expect(check(problem, { ...solution, tours }).map((v) => v.code)).toContain("DEPOT");
    // The same stops on an unused west vehicle: the restricted job is served from the wrong depot.
    const east = solution.tours.find((t) => t.stops.some((st) => st.jobId === "bound-east"))!;
    const spare = problem.vehicles!.find((v) => v.depot === "west" && !solution.tours.some((t) => t.vehicleId === v.id))!;
    const moved = solution.tours.map((t) => (t === east ? { ...t, vehicleId: spare.id, depot: "west" } : t));
    const codes = check(problem, { ...solution, tours: moved }).map((v) => v.code);
    expect(codes).toContain("DEPOT");
  });

  it("plans as before when the vehicles all share the problem's depot, whatever depots are listed", () => {
    const base = twoHubs();
    const single: Problem = { ...base, vehicles: base.vehicles!.map(({ depot: _, ...v }) => v) };
    const without: Problem = {
      ...single,
      depots: undefined,
      // The same matrix without the further depots' rows and columns.
      matrices: (() => {
        const m = single.matrices!.default!;
        const size = m.size - 2;
        const d = new Float64Array(size * size);
        for (let a = 0; a < size; a++) for (let b = 0; b < size; b++) d[a * size + b] = m.distances[a * m.size + b];
        return { default: { size, distances: d, durations: d } };
      })(),
    };
    const a = solveSync(single, { maxIterations: 400, seed: 3 });
    const b = solveSync(without, { maxIterations: 400, seed: 3 });
    expect(a.tours).toEqual(b.tours);
    expect(a.tours.every((t) => t.depot === undefined)).toBe(true);
  });

  it("plans with the embedded model over the depots' points too (no matrices given)", () => {
    const problem: Problem = {
      depot: { lat: 52.52, lon: 13.4 },
      depots: [{ id: "spandau", location: { lat: 52.535, lon: 13.2 } }, { id: "koepenick", location: { lat: 52.445, lon: 13.575 } }],
      jobs: [
        { id: "s1", location: { lat: 52.54, lon: 13.21 } },
        { id: "s2", location: { lat: 52.53, lon: 13.19 } },
        { id: "k1", location: { lat: 52.44, lon: 13.58 } },
        { id: "k2", location: { lat: 52.45, lon: 13.57 } },
      ],
      vehicles: [
        { id: "spandau-1", depot: "spandau" },
        { id: "koepenick-1", depot: "koepenick" },
      ],
    };
    const solution = solveSync(problem, { maxIterations: 200, objective: "cost" });
    expect(check(problem, solution)).toEqual([]);
    expect(vehicleOf(problem, solution, "s1").id).toBe("spandau-1");
    expect(vehicleOf(problem, solution, "k2").id).toBe("koepenick-1");
  });

  it("keeps the depots' points after the jobs when large plans renumber their jobs (from 500 jobs)", () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const jobs = Array.from({ length: 520 }, (_, i) => ({ id: `j${i}`, x: rand() * 1000, y: rand() * 1000, load: [1] }));
    const hubs = [
      { id: "a", x: 100, y: 100 },
      { id: "b", x: 900, y: 900 },
    ];
    const fleet: Vehicle[] = Array.from({ length: 40 }, (_, i) => ({ id: `v${i}`, depot: hubs[i % 2].id, capacity: [30] }));
    const problem = planarDepots({ x: 500, y: 500 }, hubs, jobs, fleet);
    const solution = solveSync(problem, { maxIterations: 30, objective: "cost" });
    expect(solution.unassigned).toEqual([]);
    expect(check(problem, solution)).toEqual([]);
  });

  it("gives every random multi-depot plan that the checker accepts, under either objective", () => {
    const point = fc.record({ x: fc.integer({ min: -100, max: 100 }), y: fc.integer({ min: -100, max: 100 }) });
    const arb = fc.record({
      depots: fc.array(point, { minLength: 1, maxLength: 3 }),
      jobs: fc.array(
        fc.record({
          at: point,
          load: fc.integer({ min: 0, max: 5 }),
          service: fc.integer({ min: 0, max: 10 }),
          open: fc.integer({ min: 0, max: 300 }),
          width: fc.option(fc.integer({ min: 30, max: 400 }), { nil: undefined }),
          depot: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
        }),
        { minLength: 1, maxLength: 25 },
      ),
      fleet: fc.array(
        fc.record({
          depot: fc.integer({ min: -1, max: 2 }),
          capacity: fc.integer({ min: 5, max: 20 }),
          roundtrip: fc.boolean(),
          maxTourDuration: fc.option(fc.integer({ min: 200, max: 800 }), { nil: undefined }),
        }),
        { minLength: 1, maxLength: 6 },
      ),
      objective: fc.constantFrom("fleet" as const, "cost" as const),
      seed: fc.integer({ min: 1, max: 1000 }),
    });
    fc.assert(
      fc.property(arb, ({ depots, jobs, fleet, objective, seed }) => {
        const ids = depots.map((_, k) => `d${k}`);
        const problem = planarDepots(
          { x: 0, y: 0 },
          depots.map((p, k) => ({ ...p, id: ids[k] })),
          jobs.map((j, i) => ({
            id: `j${i}`,
            x: j.at.x,
            y: j.at.y,
            load: [j.load],
            service: j.service,
            ...(j.width !== undefined ? { timeWindow: { start: j.open, end: j.open + j.width } } : {}),
            ...(j.depot !== undefined && j.depot < ids.length ? { depot: ids[j.depot] } : {}),
          })),
          fleet.map((v, i) => ({
            id: `v${i}`,
            ...(v.depot >= 0 && v.depot < ids.length ? { depot: ids[v.depot] } : {}),
            capacity: [v.capacity],
            roundtrip: v.roundtrip,
            ...(v.maxTourDuration !== undefined ? { maxTourDuration: v.maxTourDuration } : {}),
          })),
        );
        const solution = solveSync(problem, { maxIterations: 150, seed, objective });
        expect(check(problem, solution)).toEqual([]);
        const vehicleById = new Map(problem.vehicles!.map((v) => [v.id, v]));
        for (const t of solution.tours) expect(t.depot).toBe(vehicleById.get(t.vehicleId)!.depot);
      }),
      { numRuns: 120, seed: 45 },
    );
  });
});

describe('objective "cost"', () => {
  // Two jobs whose windows lie far apart: one vehicle serves both but waits; two vehicles are cheaper by the hour.
  const problem: Problem = (() => {
    const jobs = [
      { id: "early", x: 10, y: 0, timeWindow: { start: 0, end: 100 } },
      { id: "late", x: -10, y: 0, timeWindow: { start: 20_000, end: 20_100 } },
    ];
    const vehicle = (id: string): Vehicle => ({ id, costs: { perKm: 1000, perTourHour: 100 } });
    return planarDepots({ x: 0, y: 0 }, [], jobs, [vehicle("a"), vehicle("b"), vehicle("c")]);
  })();

  it("fleet first (the default) takes one tour; cost takes two that cost less, within the fleet given", () => {
    const fleet = solveSync(problem, { maxIterations: 200 });
    const cost = solveSync(problem, { maxIterations: 200, objective: "cost" });
    expect(check(problem, fleet)).toEqual([]);
    expect(check(problem, cost)).toEqual([]);
    expect(fleet.tours).toHaveLength(1);
    expect(cost.tours).toHaveLength(2);
    expect(cost.summary.cost).toBeLessThan(fleet.summary.cost);
  });

  it("refuses an unknown objective", () => {
    expect(() => solveSync(problem, { maxIterations: 10, objective: "tours" as "cost" })).toThrow(/unknown objective "tours"/);
  });
});

describe("a tour that starts where its vehicle is (Vehicle.startAt)", () => {
  // Jobs on a line east of the depot at 100, 200, ..., 500; the driver is now at 450, on the way.
  const line = (startAt?: string, roundtrip = true) =>
    planarDepots(
      { x: 0, y: 0 },
      [{ id: "here", x: 450, y: 0 }],
      [1, 2, 3, 4, 5].map((k) => ({ id: `j${k}`, x: 100 * k, y: 0 })),
      [{ id: "van", roundtrip, ...(startAt ? { startAt } : {}) }],
    );

  it("leaves from that point and returns to its depot: the nearest stops first, the checker replays it", () => {
    const problem = line("here");
    const solution = solveSync(problem, { maxIterations: 300 });
    expect(check(problem, solution)).toEqual([]);
    const [tour] = solution.tours;
    expect(tour.startAt).toBe("here");
    expect(tour.depot).toBeUndefined();
    // 450 -> 500 -> 400 ... 100 -> 0: 50 + 400 + 100 back, not the 1,000 of a round trip from the depot.
    expect(tour.stops.map((s) => s.jobId)).toEqual(["j5", "j4", "j3", "j2", "j1"]);
    expect(solution.summary.distance).toBeCloseTo(550, 6);
    expect(tour.stops[0].distance).toBeCloseTo(50, 6);
  });

  it("an open tour from there ends at its last stop; without startAt the tour leaves from the depot", () => {
    const open = line("here", false);
    const fromHere = solveSync(open, { maxIterations: 300 });
    expect(check(open, fromHere)).toEqual([]);
    expect(fromHere.summary.distance).toBeCloseTo(50 + 400, 6);
    const fromDepot = solveSync(line(), { maxIterations: 300 });
    expect(fromDepot.tours[0].startAt).toBeUndefined();
    expect(fromDepot.tours[0].stops[0].jobId).toBe("j1");
  });

  it("the checker finds a tour replayed from the wrong start", () => {
    const problem = line("here");
    const solution = solveSync(problem, { maxIterations: 300 });
    const { startAt: _, ...moved } = solution.tours[0];
    expect(check(problem, { ...solution, tours: [moved] }).map((v) => v.code)).toContain("DEPOT");
    expect(() => solveSync({ ...problem, vehicles: [{ id: "van", startAt: "nowhere" }] }, { maxIterations: 10 })).toThrow(/nowhere/);
  });
});
