/**
 * Warm start, and big plans split into standalone parts and merged back
 * (the fan-out of routing across queue consumers), through the solver's API.
 */
import { describe, expect, it } from "vitest";
import { type InitialTour, check, mergeParts, solveSync, splitPlan, toursOf } from "../../src/solver";
import { routes, seededPlanar } from "./helpers";

const plan = (jobs: number) => seededPlanar({ jobs, seed: 777, side: 200, opens: 800, minWidth: 100, extraWidth: 200, fleet: jobs / 4, latestEnd: 1400 });
const aborted = { aborted: true };
const sortedJobs = (tours: readonly InitialTour[]) => tours.flatMap((t) => t.jobIds).sort();

describe("warm start", () => {
  const problem = plan(80);
  const first = solveSync(problem, { maxIterations: 50, seed: 3 });

  it("starts from the given tours and never returns anything worse", () => {
    expect(first.unassigned).toEqual([]);
    // A pre-aborted search returns the start itself.
    expect(routes(solveSync(problem, { initial: toursOf(first), signal: aborted }))).toEqual(routes(first));
    const improved = solveSync(problem, { initial: toursOf(first), maxIterations: 2000, seed: 5 });
    expect(check(problem, improved)).toEqual([]);
    expect(improved.unassigned).toEqual([]);
    expect(improved.summary.tours).toBeLessThanOrEqual(first.summary.tours);
    if (improved.summary.tours === first.summary.tours) expect(improved.summary.cost).toBeLessThanOrEqual(first.summary.cost + 1e-6);
  });

  it("places jobs no tour names and drops a tour that breaks a constraint", () => {
    const tours = toursOf(first);
    const [dropped, ...kept] = tours;
    // The first tour loses a job; the second is reversed, which breaks its windows.
    const start = [{ ...dropped, jobIds: dropped.jobIds.slice(1) }, { ...kept[0], jobIds: [...kept[0].jobIds].reverse() }, ...kept.slice(1)];
    const s = solveSync(problem, { initial: start, signal: aborted });
    expect(check(problem, s)).toEqual([]);
    expect(s.unassigned).toEqual([]);
    expect(s.tours.flatMap((t) => t.stops.map((x) => x.jobId)).sort()).toEqual(problem.jobs.map((j) => j.id).sort());
  });

  it("refuses unknown or repeated ids", () => {
    const [a, b] = toursOf(first);
    expect(() => solveSync(problem, { initial: [{ vehicleId: "nope", jobIds: a.jobIds }], signal: aborted })).toThrow(/unknown vehicle nope/);
    expect(() => solveSync(problem, { initial: [{ ...a, jobIds: [...a.jobIds, "j-x"] }], signal: aborted })).toThrow(/unknown job j-x/);
    expect(() => solveSync(problem, { initial: [a, { ...b, jobIds: [a.jobIds[0]] }], signal: aborted })).toThrow(/on two tours/);
    expect(() => solveSync(problem, { initial: [a, { ...b, vehicleId: a.vehicleId }], signal: aborted })).toThrow(/two tours/);
  });
});

describe("split and merge", () => {
  const problem = plan(320);
  const first = solveSync(problem, { maxIterations: 100, seed: 2 });
  const parts = splitPlan(problem, first, { partJobs: 60 });

  it("splits a plan into standalone parts of whole tours, each job and vehicle in one part", () => {
    expect(first.unassigned).toEqual([]);
    expect(parts.length).toBeGreaterThanOrEqual(4);
    expect(parts.flatMap((p) => sortedJobs(p.initial)).sort()).toEqual(problem.jobs.map((j) => j.id).sort());
    const vehicles = parts.flatMap((p) => p.vehicleIds);
    expect(new Set(vehicles).size).toBe(vehicles.length);
    const firstTours = new Set(routes(first).map((r) => r.join(",")));
    for (const part of parts) {
      expect(sortedJobs(part.initial).length).toBeGreaterThanOrEqual(30);
      expect(part.problem.jobs.map((j) => j.id).sort()).toEqual(sortedJobs(part.initial));
      for (const t of part.initial) expect(firstTours.has(t.jobIds.join(","))).toBe(true);
      // Standalone: its own matrices, and its initial tours are a feasible solution of it.
      expect(part.problem.matrices!.default!.size).toBe(part.problem.jobs.length + 1);
      const start = solveSync(part.problem, { initial: part.initial, signal: aborted });
      expect(check(part.problem, start)).toEqual([]);
      expect(routes(start)).toEqual(part.initial.map((t) => t.jobIds));
    }
  });

  it("merges improved parts into one feasible plan no worse than the first one", async () => {
    const results = new Map(parts.map((p) => [p.id, toursOf(solveSync(p.problem, { initial: p.initial, maxIterations: 1500, seed: 9 }))]));
    const merged = await mergeParts(problem, parts, results, { maxIterations: 300 });
    expect(check(problem, merged)).toEqual([]);
    expect(merged.unassigned).toEqual([]);
    expect(merged.summary.tours).toBeLessThanOrEqual(first.summary.tours);
    if (merged.summary.tours === first.summary.tours) expect(merged.summary.cost).toBeLessThan(first.summary.cost);
  });

  it("a missing part, or one whose result loses a job, keeps its initial tours", async () => {
    const [missing, broken, ...solved] = parts;
    const results = new Map(solved.map((p) => [p.id, toursOf(solveSync(p.problem, { initial: p.initial, maxIterations: 300, seed: 9 }))]));
    results.set(broken.id, broken.initial.map((t, i) => (i === 0 ? { ...t, jobIds: t.jobIds.slice(1) } : t)));
    const merged = await mergeParts(problem, parts, results, { signal: aborted });
    expect(check(problem, merged)).toEqual([]);
    expect(merged.unassigned).toEqual([]);
    const tours = new Set(routes(merged).map((r) => r.join(",")));
    for (const t of [...missing.initial, ...broken.initial]) expect(tours.has(t.jobIds.join(","))).toBe(true);
    for (const p of solved) for (const t of results.get(p.id)!) expect(tours.has(t.jobIds.join(","))).toBe(true);
  });
});
