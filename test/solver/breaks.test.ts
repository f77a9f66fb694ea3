import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Job, type Problem, type Solution, type Vehicle, type WorkingTimeRule, check, solveSync } from "../../src/solver";
import { planar } from "./helpers";

const H = 3600;
const M = 60;

/** A long day on the plane (travel seconds = distance): `count` stops of 10 min on a ring 40 min from the depot. */
function longDay(rules: WorkingTimeRule[], extra: Partial<Vehicle> = {}, count = 26): Problem {
  const jobs = Array.from({ length: count }, (_, i) => {
    const a = (2 * Math.PI * i) / count;
    return { id: `j${i}`, x: Math.cos(a) * 40 * M, y: Math.sin(a) * 40 * M, service: 10 * M };
  });
  return planar({ x: 0, y: 0 }, jobs, {
    vehicles: [{ id: "van", shift: { earliestStart: 7 * H, latestEnd: 19 * H }, workingTimeRules: rules, ...extra }],
  });
}

const strip = (s: Solution): Solution => ({ ...s, tours: s.tours.map((t) => ({ ...t, breaks: [] })) });

describe("breaks and working-time rules", () => {
  it("de-arbzg: a day over 9 hours of work gets 45 minutes of breaks and no block over 6 hours; the checker sees a plan without them", () => {
    const p = longDay(["de-arbzg"]);
    const s = solveSync(p, { maxIterations: 300 });
    expect(s.unassigned).toEqual([]);
    expect(check(p, s)).toEqual([]);
    const [tour] = s.tours;
    const work = tour.duration - tour.breaks!.reduce((a, b) => a + b.end - b.start, 0);
    expect(work).toBeGreaterThan(9 * H);
    expect(tour.breaks!.reduce((a, b) => a + b.end - b.start, 0)).toBeGreaterThanOrEqual(45 * M);
    for (const b of tour.breaks!) expect(b.end - b.start).toBeGreaterThanOrEqual(15 * M);
    expect(check(p, strip(s)).map((v) => v.code)).toContain("WORKING_TIME");
  });

  it("a tour under way goes on with the day so far: 5.5 h worked without a break need one within the next half hour, and 9.5 h leave half an hour", () => {
    // Six stops of 10 min close together 40 min out: under three hours, which alone need no break at all.
    const soFar = { work: 5.5 * H, sinceBreak: 5.5 * H, breaks: 0, driving: 3 * H, drivingSinceBreak: 3 * H };
    const cluster = (extra: Partial<Vehicle>) =>
      planar({ x: 0, y: 0 }, Array.from({ length: 6 }, (_, i) => ({ id: `c${i}`, x: 40 * M + 2 * M * i, y: 0, service: 10 * M })), {
        vehicles: [{ id: "van", shift: { earliestStart: 7 * H, latestEnd: 19 * H }, workingTimeRules: ["de-arbzg"], ...extra }],
      });
    const fresh = cluster({});
    expect(solveSync(fresh, { maxIterations: 200 }).tours[0].breaks ?? []).toEqual([]);
    const p = cluster({ workedSoFar: soFar });
    const s = solveSync(p, { maxIterations: 200 });
    expect(s.unassigned).toEqual([]);
    expect(check(p, s)).toEqual([]);
    const [tour] = s.tours;
    const first = tour.breaks![0];
    expect(first.start - tour.start).toBeLessThanOrEqual(0.5 * H + 1);
    // 30 min of breaks in all beyond 6 h of work (none taken so far).
    expect(tour.breaks!.reduce((a, b) => a + b.end - b.start, 0)).toBeGreaterThanOrEqual(30 * M);
    // The checker knows the day so far: the same tour without its break breaks the rules.
    expect(check(p, strip(s)).map((v) => v.code)).toContain("WORKING_TIME");
    expect(check(fresh, strip(s))).toEqual([]);
    // 9.5 h worked: at most half an hour of work is left in the day (de-arbzg: 10 h), so most stops stay out.
    const late = cluster({ workedSoFar: { ...soFar, work: 9.5 * H, sinceBreak: 2 * H, breaks: 45 * M } });
    const short = solveSync(late, { maxIterations: 200 });
    expect(check(late, short)).toEqual([]);
    expect(short.unassigned.length).toBeGreaterThanOrEqual(5);
    expect(() => solveSync(cluster({ workedSoFar: { ...soFar, work: -1 } }))).toThrow(/workedSoFar.work/);
  });

  it("eu-561: driving over 4.5 hours is interrupted by 45 minutes (or 15 then 30), and at most 9 hours are driven", () => {
    const p = longDay(["eu-561"]);
    const s = solveSync(p, { maxIterations: 300 });
    expect(check(p, s)).toEqual([]);
    const minutes = s.tours.flatMap((t) => t.breaks!).reduce((a, b) => a + b.end - b.start, 0);
    expect(minutes).toBeGreaterThanOrEqual(45 * M);
    expect(check(p, strip(s)).map((v) => v.code)).toContain("WORKING_TIME");
  });

  it("a day longer than the rules allow leaves jobs out rather than returning an illegal tour", () => {
    // 60 stops of 10 min each are more than 10 hours of work for one van.
    const p = longDay(["de-arbzg"], {}, 60);
    const s = solveSync(p, { maxIterations: 300 });
    expect(check(p, s)).toEqual([]);
    expect(s.unassigned.length).toBeGreaterThan(0);
    for (const u of s.unassigned) expect(u.remedy.length).toBeGreaterThan(10);
  });

  it("a tour that needs its break time earlier leaves just early enough, not at the start of the shift", () => {
    // The duration-minimal departure serves b at its window's end and meets the break on the way there; leaving at
    // the shift's start (midnight) would keep every window too, with hours of waiting at the first stop.
    const p = planar(
      { x: 0, y: 0 },
      [
        { id: "a", x: 10 * M, y: 0, service: 5 * M, timeWindow: { start: 10 * H, end: 13 * H } },
        { id: "b", x: 20 * M, y: 0, service: 5 * M, timeWindow: { start: 8 * H, end: 11 * H } },
        { id: "c", x: 30 * M, y: 0, service: 5 * M, timeWindow: { start: 12 * H, end: 15 * H } },
      ],
      { vehicles: [{ id: "van", shift: { earliestStart: 0 }, breaks: [{ id: "lunch", window: { start: 10 * H + 30 * M, end: 11 * H + 30 * M }, duration: 20 * M }] }] },
    );
    const s = solveSync(p, { maxIterations: 200 });
    expect(check(p, s)).toEqual([]);
    const [tour] = s.tours;
    expect(tour.breaks).toHaveLength(1);
    expect(tour.start).toBeGreaterThan(8 * H);
    expect(tour.stops[0].waiting).toBeLessThan(2 * H);
  });

  it("a fixed break starts inside its window and lasts its duration; the checker refuses one outside", () => {
    const p = longDay([], { breaks: [{ id: "lunch", window: { start: 12 * H, end: 12 * H + 30 * M }, duration: 30 * M }] });
    const s = solveSync(p, { maxIterations: 300 });
    expect(check(p, s)).toEqual([]);
    const lunch = s.tours[0].breaks!.find((b) => b.id === "lunch")!;
    expect(lunch.start).toBeGreaterThanOrEqual(12 * H);
    expect(lunch.start).toBeLessThanOrEqual(12 * H + 30 * M);
    expect(lunch.end - lunch.start).toBeGreaterThanOrEqual(30 * M);
    const moved = { ...s, tours: s.tours.map((t) => ({ ...t, breaks: t.breaks!.map((b) => ({ ...b, start: b.start + 2 * H, end: b.end + 2 * H })) })) };
    expect(check(p, moved).map((v) => v.code)).toContain("BREAK");
  });

  it("a job that only a break's time would let the vehicle serve is unassigned with reason BREAKS", () => {
    // The break must start at 09:00 and lasts until 09:30; the job's window is 09:05-09:10.
    const p = planar({ x: 0, y: 0 }, [{ id: "a", x: 600, y: 0, service: 60, timeWindow: { start: 9 * H + 5 * M, end: 9 * H + 10 * M } }], {
      vehicles: [{ id: "van", shift: { earliestStart: 8 * H }, breaks: [{ id: "b", window: { start: 9 * H, end: 9 * H }, duration: 30 * M }] }],
    });
    const s = solveSync(p, { maxIterations: 50 });
    expect(check(p, s)).toEqual([]);
    expect(s.unassigned).toEqual([expect.objectContaining({ jobId: "a", reason: "BREAKS" })]);
  });

  it("vehicles without breaks are timed as before (no breaks listed)", () => {
    const p = longDay([]);
    const s = solveSync(p, { maxIterations: 100 });
    expect(s.tours[0].breaks).toBeUndefined();
  });

  it("an unknown rule is refused", () => {
    expect(() => solveSync(longDay(["de-xyz" as WorkingTimeRule]), { maxIterations: 10 })).toThrow(/unknown working-time rule/);
  });

  it("random days with rules, fixed breaks and windows: every plan passes the checker (property)", () => {
    const job = fc.record({
      x: fc.integer({ min: -3600, max: 3600 }),
      y: fc.integer({ min: -3600, max: 3600 }),
      service: fc.integer({ min: 0, max: 30 * M }),
      window: fc.option(fc.record({ open: fc.integer({ min: 7 * H, max: 17 * H }), width: fc.integer({ min: 10 * M, max: 4 * H }) }), { nil: undefined }),
      second: fc.option(fc.integer({ min: 30 * M, max: 3 * H }), { nil: undefined }),
    });
    const vehicle = fc.record({
      rules: fc.subarray(["de-arbzg", "eu-561"] as WorkingTimeRule[]),
      lunch: fc.option(fc.record({ start: fc.integer({ min: 10 * H, max: 14 * H }), width: fc.integer({ min: 0, max: 2 * H }), duration: fc.integer({ min: 5 * M, max: 60 * M }) }), { nil: undefined }),
      end: fc.integer({ min: 12 * H, max: 21 * H }),
      maxDuration: fc.option(fc.integer({ min: 4 * H, max: 12 * H }), { nil: undefined }),
    });
    const day = fc.record({ jobs: fc.array(job, { minLength: 1, maxLength: 25 }), fleet: fc.array(vehicle, { minLength: 1, maxLength: 3 }), seed: fc.integer({ min: 1, max: 1000 }) });
    fc.assert(
      fc.property(day, ({ jobs, fleet, seed }) => {
        const built: (Omit<Job, "location"> & { x: number; y: number })[] = jobs.map((j, i) => {
          const w = j.window;
          const windows = w ? [{ start: w.open, end: w.open + w.width }, ...(j.second ? [{ start: w.open + w.width + j.second, end: w.open + w.width + j.second + w.width }] : [])] : [];
          return { id: `j${i}`, x: j.x, y: j.y, service: j.service, ...(windows.length === 1 ? { timeWindow: windows[0] } : windows.length > 1 ? { timeWindows: windows } : {}) };
        });
        const p = planar({ x: 0, y: 0 }, built, {
          vehicles: fleet.map((v, i) => ({
            id: `v${i}`,
            shift: { earliestStart: 7 * H, latestEnd: v.end },
            workingTimeRules: v.rules,
            ...(v.maxDuration === undefined ? {} : { maxTourDuration: v.maxDuration }),
            ...(v.lunch ? { breaks: [{ id: "lunch", window: { start: v.lunch.start, end: v.lunch.start + v.lunch.width }, duration: v.lunch.duration }] } : {}),
          })),
        });
        const s = solveSync(p, { maxIterations: 150, seed });
        expect(check(p, s)).toEqual([]);
        for (const u of s.unassigned) expect(u.remedy.length).toBeGreaterThan(10);
      }),
      { numRuns: 120, seed: 46 },
    );
  });
});
