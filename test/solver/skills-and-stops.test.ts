import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { check, type Problem, type Solution, solveSync } from "../../src/solver";
import { planar, vehicles } from "./helpers";

const opts = { maxIterations: 400, seed: 3 };
const codes = (p: Problem, s: Solution) => check(p, s).map((v) => v.code);
const tourOfJob = (s: Solution, id: string) => s.tours.find((t) => t.stops.some((x) => x.jobId === id))?.vehicleId;

describe("skills", () => {
  it("a job that needs a skill goes to the vehicle that has it, though another tour is cheaper", () => {
    // The cold job sits among the van's jobs; the refrigerated truck has room for one job only,
    // so without the skill the cheapest plan sends it to "far" and the van takes the cold job.
    const jobs = [
      { id: "a", x: 10, y: 0, load: [1] },
      { id: "b", x: 11, y: 1, load: [1] },
      { id: "cold", x: 12, y: 0, load: [1], skills: ["refrigerated"] },
      { id: "far", x: -30, y: 0, load: [1] },
    ];
    const fleet = [
      { id: "van", capacity: [3] },
      { id: "reefer", capacity: [1], skills: ["refrigerated", "tail-lift"] },
    ];
    const free = planar({ x: 0, y: 0 }, jobs.map(({ skills: _s, ...j }) => j), { vehicles: fleet });
    const p = planar({ x: 0, y: 0 }, jobs, { vehicles: fleet });
    expect(codes(p, solveSync(free, opts))).toContain("SKILLS");
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(tourOfJob(s, "cold")).toBe("reefer");
  });

  it("a job whose skills no vehicle has all of is unassigned as SKILLS, naming them, and the rest is planned", () => {
    const p = planar(
      { x: 0, y: 0 },
      [
        { id: "a", x: 10, y: 0 },
        { id: "hazmat", x: 11, y: 0, skills: ["adr", "tail-lift"] },
      ],
      { vehicles: [{ id: "v1", skills: ["adr"] }, { id: "v2", skills: ["tail-lift"] }] },
    );
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(s.unassigned).toEqual([{ jobId: "hazmat", reason: "SKILLS", remedy: expect.stringMatching(/adr, tail-lift/) }]);
    expect(tourOfJob(s, "a")).toBeDefined();
  });

  it("a warm start that puts a job on a vehicle without its skill is repaired", () => {
    const p = planar(
      { x: 0, y: 0 },
      [
        { id: "a", x: 10, y: 0 },
        { id: "cold", x: -10, y: 0, skills: ["refrigerated"] },
      ],
      { vehicles: [{ id: "van" }, { id: "reefer", skills: ["refrigerated"] }] },
    );
    const s = solveSync(p, { ...opts, initial: [{ vehicleId: "van", jobIds: ["a", "cold"] }] });
    expect(codes(p, s)).toEqual([]);
    expect(tourOfJob(s, "cold")).toBe("reefer");
  });

  it("refuses more distinct required skills than it can track, loudly", () => {
    const jobs = Array.from({ length: 32 }, (_, i) => ({ id: `j${i}`, x: i, y: 0, skills: [`s${i}`] }));
    expect(() => solveSync(planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(1) }), opts)).toThrow(/at most 31 distinct skills/);
  });
});

describe("stops per tour", () => {
  it("a tour never has more stops than its vehicle allows, though one tour would be shorter", () => {
    const jobs = Array.from({ length: 6 }, (_, i) => ({ id: `j${i}`, x: 10 + i, y: 0 }));
    const free = planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(3, { costs: { fixed: 100 } }) });
    const p = planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(3, { costs: { fixed: 100 }, maxStops: 2 }) });
    expect(codes(p, solveSync(free, opts))).toContain("MAX_STOPS");
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(s.tours.map((t) => t.stops.length)).toEqual([2, 2, 2]);
  });

  it("jobs beyond every tour's stops are unassigned as MAX_STOPS with the limit in the remedy", () => {
    const jobs = Array.from({ length: 5 }, (_, i) => ({ id: `j${i}`, x: 10 + i, y: 0 }));
    const p = planar({ x: 0, y: 0 }, jobs, { vehicles: vehicles(2, { maxStops: 2 }) });
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(s.unassigned).toHaveLength(1);
    expect(s.unassigned[0]).toMatchObject({ reason: "MAX_STOPS", remedy: expect.stringMatching(/at most 2/) });
  });
});

describe("random problems with skills and stop limits (property)", () => {
  it("every plan passes the independent checker and leaves out a job only with a reason", () => {
    const skill = fc.constantFrom("refrigerated", "tail-lift", "adr", "two-person");
    const problem = fc.record({
      jobs: fc.array(
        fc.record({
          x: fc.integer({ min: -50, max: 50 }),
          y: fc.integer({ min: -50, max: 50 }),
          service: fc.integer({ min: 0, max: 10 }),
          load: fc.integer({ min: 0, max: 6 }),
          open: fc.integer({ min: 0, max: 200 }),
          width: fc.option(fc.integer({ min: 20, max: 300 }), { nil: undefined }),
          skills: fc.array(skill, { maxLength: 2 }),
        }),
        { minLength: 1, maxLength: 25 },
      ),
      fleet: fc.array(
        fc.record({ skills: fc.array(skill, { maxLength: 3 }), maxStops: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }), capacity: fc.integer({ min: 5, max: 30 }) }),
        { minLength: 1, maxLength: 5 },
      ),
      seed: fc.integer({ min: 1, max: 1000 }),
    });
    fc.assert(
      fc.property(problem, ({ jobs, fleet, seed }) => {
        const p = planar(
          { x: 0, y: 0 },
          jobs.map((j, i) => ({
            id: `j${i}`,
            x: j.x,
            y: j.y,
            service: j.service,
            load: [j.load],
            ...(j.width === undefined ? {} : { timeWindow: { start: j.open, end: j.open + j.width } }),
            ...(j.skills.length ? { skills: [...new Set(j.skills)] } : {}),
          })),
          { vehicles: fleet.map((v, i) => ({ id: `v${i}`, capacity: [v.capacity], skills: v.skills, ...(v.maxStops === undefined ? {} : { maxStops: v.maxStops }) })) },
        );
        const s = solveSync(p, { maxIterations: 150, seed });
        expect(check(p, s)).toEqual([]);
        for (const u of s.unassigned) expect(u.remedy.length).toBeGreaterThan(10);
      }),
      { numRuns: 60, seed: 44 },
    );
  });
});
