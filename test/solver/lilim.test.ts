import { describe, expect, it } from "vitest";
import { benchmarkFormat, benchmarkProblem, check, liLimProblem, parseLiLim, type Solution, solveSync } from "../../src/solver";

/**
 * A small Li & Lim file as published: tab separated, CRLF. One vehicle of
 * capacity 10; pairs 1 -> 2 and 3 -> 4 each load 6, so both cannot be on
 * board at once; pair 5 -> 6 loads 4 and may ride along with either.
 */
const SMALL = [
  "1\t10\t1",
  "0\t0\t0\t0\t0\t1000\t0\t0\t0",
  "1\t10\t0\t6\t0\t1000\t5\t0\t2",
  "2\t20\t0\t-6\t0\t1000\t5\t1\t0",
  "3\t-10\t0\t6\t0\t1000\t5\t0\t4",
  "4\t-20\t0\t-6\t0\t1000\t5\t3\t0",
  "5\t0\t10\t4\t0\t1000\t5\t0\t6",
  "6\t0\t20\t-4\t0\t1000\t5\t5\t0",
  "",
].join("\r\n");

const opts = { maxIterations: 300, seed: 1 };
const position = (s: Solution, id: string) => {
  const t = s.tours.findIndex((tour) => tour.stops.some((x) => x.jobId === id));
  return { tour: t, at: t < 0 ? -1 : s.tours[t].stops.findIndex((x) => x.jobId === id) };
};

describe("Li & Lim reader", () => {
  it("reads the header and every task row of a tab-separated CRLF file", () => {
    const inst = parseLiLim(SMALL);
    expect(inst).toMatchObject({ vehicles: 1, capacity: 10, speed: 1 });
    expect(inst.tasks).toHaveLength(7);
    expect(inst.tasks[2]).toEqual({ id: 2, x: 20, y: 0, demand: -6, ready: 0, due: 1000, service: 5, pickup: 1, delivery: 0 });
  });

  it("maps a pair to a pickup job carrying the demand and a delivery job naming its pickup, with the file's fleet", () => {
    const p = liLimProblem(parseLiLim(SMALL));
    expect(p.jobs.map((j) => j.id)).toEqual(["1", "2", "3", "4", "5", "6"]);
    expect(p.jobs[0]).toMatchObject({ id: "1", load: [6], service: 5, timeWindow: { start: 0, end: 1000 } });
    expect(p.jobs[0].pickup).toBeUndefined();
    expect(p.jobs[1]).toMatchObject({ id: "2", pickup: "1" });
    expect(p.vehicles).toHaveLength(1);
    expect(p.vehicles![0]).toMatchObject({ capacity: [10], shift: { earliestStart: 0, latestEnd: 1000 } });
    const m = p.matrices!.default!;
    expect(m.distances[0 * m.size + 5]).toBeCloseTo(10, 12); // depot to task 5 at (0, 10)
    expect(m.durations[1 * m.size + 2]).toBeCloseTo(10, 12); // travel time = distance
  });

  it("solves it with every pickup before its delivery on one tour, never over capacity, and the checker agrees", () => {
    const p = liLimProblem(parseLiLim(SMALL));
    const s = solveSync(p, opts);
    expect(check(p, s)).toEqual([]);
    expect(s.unassigned).toEqual([]);
    for (const [pick, drop] of [["1", "2"], ["3", "4"], ["5", "6"]]) {
      const a = position(s, pick);
      const b = position(s, drop);
      expect(a.tour).toBeGreaterThanOrEqual(0);
      expect(b.tour).toBe(a.tour);
      expect(a.at).toBeLessThan(b.at);
    }
    for (const t of s.tours) for (const stop of t.stops) expect(stop.load[0]).toBeLessThanOrEqual(10);
  });

  it("rejects a row that is not 9 numbers, naming its line", () => {
    const bad = SMALL.replace("3\t-10\t0\t6\t0\t1000\t5\t0\t4", "3\t-10\t0\t6\t0\t1000\t5\t0");
    expect(() => parseLiLim(bad)).toThrow(/^not a Li & Lim instance: line 5: expected 9 numbers/);
  });

  it("rejects a pair whose rows do not name each other, and one whose amounts differ", () => {
    expect(() => parseLiLim(SMALL.replace("2\t20\t0\t-6\t0\t1000\t5\t1\t0", "2\t20\t0\t-6\t0\t1000\t5\t3\t0"))).toThrow(
      /line 4: delivery 2 must name its pickup 1/,
    );
    expect(() => parseLiLim(SMALL.replace("2\t20\t0\t-6\t0\t1000\t5\t1\t0", "2\t20\t0\t-5\t0\t1000\t5\t1\t0"))).toThrow(
      /line 4: delivery 2 must have demand -6/,
    );
  });

  it("rejects a bad header and ids out of order", () => {
    expect(() => parseLiLim(SMALL.replace("1\t10\t1", "0\t10\t1"))).toThrow(/line 1: the vehicle count must be a positive integer/);
    expect(() => parseLiLim(SMALL.replace("4\t-20", "7\t-20"))).toThrow(/line 6: expected id 4/);
  });

  it("tells Li & Lim from Solomon, and refuses a file in neither format", () => {
    const solomon = "C101\r\n\r\nVEHICLE\r\nNUMBER     CAPACITY\r\n  25         200\r\n\r\nCUSTOMER\r\nCUST NO.  XCOORD.   YCOORD.    DEMAND   READY TIME  DUE DATE   SERVICE   TIME\r\n \r\n    0      40         50          0          0       1236          0\r\n    1      45         68         10        912        967         90\r\n";
    expect(benchmarkFormat(SMALL)).toBe("lilim");
    expect(benchmarkFormat(solomon)).toBe("solomon");
    expect(benchmarkProblem(SMALL).problem.jobs[1].pickup).toBe("1");
    expect(benchmarkProblem(solomon).problem.jobs.map((j) => j.id)).toEqual(["1"]);
    // A Cordeau MDVRP file ("type m n t", then "D Q") is read by its own reader (cordeau.test.ts), which refuses a truncated one.
    expect(() => benchmarkProblem("2 4 50 4\n0 80\n")).toThrow(/Cordeau MDVRP/);
    expect(() => benchmarkProblem("1 2 3 4 5\nsome words\n")).toThrow(/unknown instance format/);
  });
});
