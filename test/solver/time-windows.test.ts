import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { check, type Problem, type Solution, solveSync, type TimeWindow } from "../../src/solver";
import { planar, vehicles } from "./helpers";

// Travel time = distance in seconds on the plane (helpers.ts); times are seconds from midnight.
const H = 3600;
const opts = { maxIterations: 400, seed: 3 };
const codes = (p: Problem, s: Solution) => check(p, s).map((v) => v.code);
const stopOf = (s: Solution, id: string) => s.tours.flatMap((t) => t.stops).find((x) => x.jobId === id);
const morningAndAfternoon: TimeWindow[] = [
  { start: 8 * H, end: 10 * H },
  { start: 14 * H, end: 16 * H },
];

describe("several time windows", () => {
  it("a job open 08-10 and 14-16 that can only be reached after 10 is served in its second window, which its stop names", () => {
    // Leaving at 09:30, one hour away: the morning window has closed on arrival.
    const p = planar({ x: 0, y: 0 }, [{ id: "shop", x: H, y: 0, service: 600, timeWindows: morningAndAfternoon }], {
      vehicles: vehicles(1, { shift: { earliestStart: 9.5 * H } }),
    });
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(s.unassigned).toEqual([]);
    const stop = stopOf(s, "shop")!;
    expect(stop.serviceStart).toBe(14 * H);
    expect(stop.window).toEqual({ start: 14 * H, end: 16 * H });
  });

  it("a job reached in time for its first window is served there, and its stop names it", () => {
    const p = planar({ x: 0, y: 0 }, [{ id: "shop", x: H, y: 0, timeWindows: morningAndAfternoon }], {
      vehicles: vehicles(1, { shift: { earliestStart: 6 * H } }),
    });
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(stopOf(s, "shop")).toMatchObject({ serviceStart: 8 * H, window: { start: 8 * H, end: 10 * H } });
  });

  it("a job whose every window closes before any vehicle can arrive is unassigned TIME_WINDOW, the remedy naming the windows", () => {
    const p = planar(
      { x: 0, y: 0 },
      [
        { id: "shop", x: H, y: 0, timeWindows: morningAndAfternoon },
        { id: "late", x: H, y: 10 },
      ],
      { vehicles: vehicles(1, { shift: { earliestStart: 17 * H } }) },
    );
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(s.unassigned).toEqual([{ jobId: "shop", reason: "TIME_WINDOW", remedy: expect.stringMatching(/08:00-10:00, 14:00-16:00.*the last 120 min before/) }]);
    expect(stopOf(s, "late")).toBeDefined();
  });

  it("the solver serves a job in its morning window when only that leaves time for the other job of the one tour", () => {
    // A (08-10 or 14-15) and B (14-15) lie 1.5 h apart: A in the afternoon leaves no time for B
    // (in either order), A in the morning does. With A's afternoon window alone, one job is left out.
    const jobs = (aWindows: TimeWindow[]) => [
      { id: "A", x: H, y: 0, timeWindows: aWindows },
      { id: "B", x: H, y: 1.5 * H, timeWindow: { start: 14 * H, end: 15 * H } },
    ];
    const fleet = { vehicles: vehicles(1, { shift: { earliestStart: 7 * H } }) };
    const afternoon = { start: 14 * H, end: 15 * H };
    const onlyAfternoon = solveSync(planar({ x: 0, y: 0 }, jobs([afternoon]), fleet), opts);
    expect(onlyAfternoon.unassigned).toHaveLength(1);
    const p = planar({ x: 0, y: 0 }, jobs([{ start: 8 * H, end: 10 * H }, afternoon]), fleet);
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(s.unassigned).toEqual([]);
    expect(s.tours[0].stops.map((x) => x.jobId)).toEqual(["A", "B"]);
    expect(stopOf(s, "A")!.window).toEqual({ start: 8 * H, end: 10 * H });
    expect(stopOf(s, "B")!.serviceStart).toBe(14 * H);
  });

  it("with a maximum tour duration the tour departs late and serves a job in its afternoon window rather than wait after the morning one", () => {
    // A (08-09 or 14-15) one hour out, B (14-15) one hour from A: A at 08:00 means waiting until B opens
    // and a tour of 8 h; A in the afternoon (before or after B) makes it about 3.4 h, within the 4 h allowed.
    const p = planar(
      { x: 0, y: 0 },
      [
        { id: "A", x: H, y: 0, timeWindows: [{ start: 8 * H, end: 9 * H }, { start: 14 * H, end: 15 * H }] },
        { id: "B", x: H, y: H, timeWindow: { start: 14 * H, end: 15 * H } },
      ],
      { vehicles: vehicles(1, { shift: { earliestStart: 6 * H }, maxTourDuration: 4 * H }) },
    );
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(s.unassigned).toEqual([]);
    expect(stopOf(s, "A")!.window).toEqual({ start: 14 * H, end: 15 * H });
    expect(s.tours[0].duration).toBeLessThanOrEqual(4 * H);
  });

  it("the windows are cut to the outer timeWindow, and windows all outside it make the job INVALID", () => {
    const p = planar(
      { x: 0, y: 0 },
      [
        // Outer 09:00-15:00: what is left is 09:00-10:00 and 14:00-15:00; reached at 10:30, so 14:00.
        { id: "cut", x: H, y: 0, timeWindow: { start: 9 * H, end: 15 * H }, timeWindows: morningAndAfternoon },
        { id: "none", x: H, y: 5, timeWindow: { start: 11 * H, end: 13 * H }, timeWindows: morningAndAfternoon },
      ],
      { vehicles: vehicles(1, { shift: { earliestStart: 9.5 * H } }) },
    );
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(stopOf(s, "cut")).toMatchObject({ serviceStart: 14 * H, window: { start: 14 * H, end: 15 * H } });
    expect(s.unassigned).toEqual([{ jobId: "none", reason: "INVALID", remedy: expect.stringMatching(/outer timeWindow/) }]);
  });

  it("refuses unsorted or overlapping windows with the job and the windows in the message", () => {
    const problem = (timeWindows: TimeWindow[]) => planar({ x: 0, y: 0 }, [{ id: "shop", x: 10, y: 0, timeWindows }], { vehicles: vehicles(1) });
    expect(() => solveSync(problem([morningAndAfternoon[1], morningAndAfternoon[0]]), opts)).toThrow(/job shop: timeWindows must be sorted by start and must not overlap/);
    expect(() => solveSync(problem([{ start: 0, end: 100 }, { start: 50, end: 200 }]), opts)).toThrow(/window 2 starts at 50, before window 1 ends at 100/);
    expect(() => solveSync(problem([{ start: 100, end: 0 }]), opts)).toThrow(/starts after it ends/);
  });

  it("relaxation widens the last window, and the checker accepts the late service there only", () => {
    const p: Problem = {
      ...planar({ x: 0, y: 0 }, [{ id: "shop", x: H, y: 0, timeWindows: morningAndAfternoon }], {
        vehicles: vehicles(1, { shift: { earliestStart: 16 * H } }),
      }),
      relax: { maxMinutes: 120 },
    };
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(s.relaxed).toEqual([{ jobId: "shop", minutes: 60, lateness: H }]);
    expect(stopOf(s, "shop")).toMatchObject({ serviceStart: 17 * H, window: { start: 14 * H, end: 16 * H } });
  });

  it("a pickup with two windows and its delivery are served in order on one tour, each inside its windows", () => {
    const p = planar(
      { x: 0, y: 0 },
      [
        { id: "pick", x: H, y: 0, load: [3], timeWindows: morningAndAfternoon },
        { id: "drop", x: 2 * H, y: 0, pickup: "pick", timeWindow: { start: 15 * H, end: 17 * H } },
        { id: "other", x: 0, y: H, group: "g", timeWindows: morningAndAfternoon },
        { id: "other2", x: 0, y: 1.1 * H, group: "g" },
      ],
      { vehicles: vehicles(2, { capacity: [3], shift: { earliestStart: 9.5 * H } }) },
    );
    const s = solveSync(p, opts);
    expect(codes(p, s)).toEqual([]);
    expect(s.unassigned).toEqual([]);
    expect(stopOf(s, "pick")!.window).toEqual({ start: 14 * H, end: 16 * H });
  });
});

describe("the checker and several windows", () => {
  const p = planar({ x: 0, y: 0 }, [{ id: "shop", x: H, y: 0, service: 600, timeWindows: morningAndAfternoon }], {
    vehicles: vehicles(1, { shift: { earliestStart: 9.5 * H } }),
  });
  const solved = () => solveSync(p, opts);
  /** The solution with its one tour leaving at 09:30 and its stop (reached at 10:30) served at `at`. */
  const servedAt = (s: Solution, at: number, window?: TimeWindow): Solution => {
    const tour = s.tours[0];
    const stop = { ...tour.stops[0], arrival: 10.5 * H, serviceStart: at, departure: at + 600, waiting: at - 10.5 * H, window };
    return { ...s, tours: [{ ...tour, start: 9.5 * H, stops: [stop], end: at + 600 + H }] };
  };

  it("catches a stop served between its two windows", () => {
    const s = servedAt(solved(), 12 * H);
    const violations = check(p, s);
    expect(violations).toContainEqual(expect.objectContaining({ code: "TIME_WINDOW", jobId: "shop", message: expect.stringMatching(/outside every one of its windows/) }));
  });

  it("accepts the same stop inside its second window, and catches one naming a window it was not served in", () => {
    expect(check(p, servedAt(solved(), 15 * H, { start: 14 * H, end: 16 * H }))).toEqual([]);
    expect(check(p, servedAt(solved(), 15 * H, { start: 8 * H, end: 10 * H })).map((v) => v.code)).toEqual(["SCHEDULE"]);
    expect(check(p, servedAt(solved(), 15 * H, { start: 9 * H, end: 10 * H })).map((v) => v.code)).toEqual(["SCHEDULE"]);
  });
});

describe("random problems with one to three windows per job (property)", () => {
  it("every plan passes the independent checker and leaves out a job only with a reason", () => {
    const window = fc.record({ gap: fc.integer({ min: 0, max: 120 }), width: fc.integer({ min: 5, max: 80 }) });
    const problem = fc.record({
      jobs: fc.array(
        fc.record({
          x: fc.integer({ min: -50, max: 50 }),
          y: fc.integer({ min: -50, max: 50 }),
          service: fc.integer({ min: 0, max: 10 }),
          load: fc.integer({ min: 0, max: 6 }),
          open: fc.integer({ min: 0, max: 150 }),
          windows: fc.array(window, { minLength: 1, maxLength: 3 }),
          // Sometimes also the outer window, which cuts the windows.
          outer: fc.option(fc.record({ from: fc.integer({ min: 0, max: 200 }), width: fc.integer({ min: 20, max: 400 }) }), { nil: undefined, freq: 4 }),
          // Sometimes the delivery of the previous job (a pair), or in a group with it.
          link: fc.constantFrom("none", "none", "none", "pair", "group"),
        }),
        { minLength: 1, maxLength: 20 },
      ),
      fleet: fc.array(
        fc.record({
          capacity: fc.integer({ min: 5, max: 30 }),
          latestEnd: fc.option(fc.integer({ min: 150, max: 600 }), { nil: undefined }),
          maxTourDuration: fc.option(fc.integer({ min: 100, max: 400 }), { nil: undefined, freq: 3 }),
        }),
        { minLength: 1, maxLength: 4 },
      ),
      seed: fc.integer({ min: 1, max: 1000 }),
    });
    fc.assert(
      fc.property(problem, ({ jobs, fleet, seed }) => {
        const p = planar(
          { x: 0, y: 0 },
          jobs.map((j, i) => {
            let t = j.open;
            const timeWindows = j.windows.map((w) => {
              const start = t + w.gap;
              t = start + w.width;
              return { start, end: t };
            });
            const link = i > 0 && j.link === "pair" && jobs[i - 1].link !== "pair" ? { pickup: `j${i - 1}` } : i > 0 && j.link === "group" ? { group: `g${i - 1}` } : {};
            return {
              id: `j${i}`,
              x: j.x,
              y: j.y,
              service: j.service,
              load: [j.load],
              timeWindows,
              ...(j.outer ? { timeWindow: { start: j.outer.from, end: j.outer.from + j.outer.width } } : {}),
              ...link,
              ...(jobs[i + 1]?.link === "group" ? { group: `g${i}` } : {}),
            };
          }),
          {
            vehicles: fleet.map((v, i) => ({
              id: `v${i}`,
              capacity: [v.capacity],
              ...(v.latestEnd === undefined ? {} : { shift: { latestEnd: v.latestEnd } }),
              ...(v.maxTourDuration === undefined ? {} : { maxTourDuration: v.maxTourDuration }),
            })),
          },
        );
        const s = solveSync(p, { maxIterations: 150, seed });
        expect(check(p, s)).toEqual([]);
        for (const u of s.unassigned) expect(u.remedy.length).toBeGreaterThan(10);
        for (const stop of s.tours.flatMap((t) => t.stops)) expect(stop.window).toBeDefined();
      }),
      { numRuns: 80, seed: 45 },
    );
  });
});
