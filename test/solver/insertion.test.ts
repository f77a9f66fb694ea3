import { describe, expect, it } from "vitest";
import { type Job, type Problem, type Vehicle, cheapestInsertion, check } from "../../src/solver";

interface Point {
  x: number;
  y: number;
}

/** A line of stops on the plane (Euclidean, travel time = distance), a depot at the origin, one vehicle. */
function line(jobs: (Omit<Job, "location"> & Point)[], vehicle: Vehicle, startAt?: Point): Problem {
  const pts = [{ x: 0, y: 0 }, ...jobs, ...(startAt ? [startAt] : [])];
  const n = pts.length;
  const distances = new Float64Array(n * n);
  for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) distances[a * n + b] = Math.hypot(pts[a].x - pts[b].x, pts[a].y - pts[b].y);
  return {
    depot: { lat: 0, lon: 0 },
    ...(startAt ? { depots: [{ id: "here", location: { lat: startAt.y, lon: startAt.x } }] } : {}),
    jobs: jobs.map(({ x, y, ...j }) => ({ ...j, location: { lat: y, lon: x } })),
    vehicles: [{ ...vehicle, ...(startAt ? { startAt: "here" } : {}) }],
    matrices: { default: { size: n, distances, durations: distances } },
  };
}

const stops = [10, 20, 30, 40].map((x) => ({ id: `s${x}`, x, y: 0, load: [1] }));
const tour = { vehicleId: "van", jobIds: ["s10", "s20", "s30", "s40"] };

describe("cheapestInsertion", () => {
  it("puts the job where it adds least and keeps the tour's order", () => {
    // An open tour (a round trip would take a job near the line cheapest on the way back).
    const problem = line([...stops, { id: "new", x: 25, y: 5, load: [1] }], { id: "van", capacity: [10], roundtrip: false });
    const result = cheapestInsertion(problem, tour, ["new"]);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.insertion.jobIds).toEqual(["s10", "s20", "new", "s30", "s40"]);
    // 2 x hypot(5, 5) - 10 metres more.
    expect(result.insertion.addedDistance).toBeCloseTo(2 * Math.hypot(5, 5) - 10, 6);
    expect(result.insertion.addedCost).toBeCloseTo(result.insertion.addedDistance / 1000, 6);
    // The job list of the problem holds only this tour's jobs: the checker replays the new tour as the whole plan.
    const t = result.insertion.tour;
    const summary = { tours: 1, unassigned: 0, distance: t.distance, duration: t.duration, waiting: t.waiting, cost: t.cost };
    expect(check(problem, { tours: [t], unassigned: [], relaxed: [], summary, stats: { iterations: 0, elapsedMs: 0, stoppedBy: "complete", seed: 1 } })).toEqual([]);
  });

  it("respects a window: the job goes where it can still be reached in time, not where it is cheapest", () => {
    // Ten seconds at each stop: cheapest between s30 and s40, but the window closes at 50, which the van keeps
    // only coming from s10 (arriving at 45) or straight from the depot (35); from s10 is the cheaper of the two.
    const served = stops.map((s) => ({ ...s, service: 10 }));
    const problem = line([...served, { id: "new", x: 35, y: 1, timeWindow: { start: 0, end: 50 } }], { id: "van", roundtrip: false });
    const result = cheapestInsertion(problem, tour, ["new"]);
    expect(result.ok && result.insertion.jobIds).toEqual(["s10", "new", "s20", "s30", "s40"]);
  });

  it("starts from where the tour is now (startAt)", () => {
    // The van is at x = 35 already: the new job at x = 36 goes first, before the rest of the tour.
    const problem = line([...stops.slice(3), { id: "new", x: 36, y: 0 }], { id: "van" }, { x: 35, y: 0 });
    const result = cheapestInsertion(problem, { vehicleId: "van", jobIds: ["s40"] }, ["new"]);
    expect(result.ok && result.insertion.jobIds).toEqual(["new", "s40"]);
  });

  it("answers why when the tour cannot take the job: capacity, or a window closing before the van can arrive", () => {
    const full = line([...stops, { id: "new", x: 25, y: 0, load: [1] }], { id: "van", capacity: [4] });
    const tooMuch = cheapestInsertion(full, tour, ["new"]);
    expect(tooMuch).toMatchObject({ ok: false, tourLegal: true, unassigned: [{ jobId: "new", reason: "FLEET" }] });
    const early = line([...stops, { id: "new", x: 100, y: 0, timeWindow: { start: 0, end: 50 } }], { id: "van" });
    const unreachable = cheapestInsertion(early, tour, ["new"]);
    expect(unreachable).toMatchObject({ ok: false, tourLegal: true, unassigned: [{ jobId: "new", reason: "TIME_WINDOW" }] });
  });

  it("inserts nothing into a tour that is already late", () => {
    const late = line([{ ...stops[0], timeWindow: { start: 0, end: 5 } }, ...stops.slice(1), { id: "new", x: 25, y: 0 }], { id: "van" });
    expect(cheapestInsertion(late, tour, ["new"])).toEqual({ ok: false, tourLegal: false, unassigned: [] });
  });

  it("refuses jobs it does not know or the tour holds", () => {
    const problem = line([...stops, { id: "new", x: 25, y: 0 }], { id: "van" });
    expect(() => cheapestInsertion(problem, tour, ["s20"])).toThrow(/on the tour already/);
    expect(() => cheapestInsertion(problem, tour, ["nope"])).toThrow(/unknown job/);
  });
});
