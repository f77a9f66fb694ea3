import type { Job, Problem, Solution, Vehicle } from "../../src/solver";

export interface Point {
  x: number;
  y: number;
}

/** A problem on the plane: Euclidean distances, travel time = distance. */
export function planar(depot: Point, jobs: (Omit<Job, "location"> & Point)[], rest: Partial<Problem> = {}): Problem {
  const pts = [depot, ...jobs];
  const n = pts.length;
  const distances = new Float64Array(n * n);
  for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) distances[a * n + b] = Math.hypot(pts[a].x - pts[b].x, pts[a].y - pts[b].y);
  return {
    depot: { lat: depot.y, lon: depot.x },
    jobs: jobs.map(({ x, y, ...j }) => ({ ...j, location: { lat: y, lon: x } })),
    matrices: { default: { size: n, distances, durations: distances } },
    ...rest,
  };
}

/**
 * Seeded jobs with windows on a square around its centre (Park-Miller
 * generator): windows open in [0, opens) and last minWidth + [0, extraWidth);
 * loads 1-20, capacity 200, `fleet` vehicles with shifts ending at `latestEnd`.
 */
export function seededPlanar(o: {
  jobs: number;
  seed: number;
  side: number;
  opens: number;
  minWidth: number;
  extraWidth: number;
  fleet: number;
  latestEnd: number;
}): Problem {
  let s = o.seed;
  const rand = () => ((s = (s * 16807) % 2147483647) / 2147483647);
  return planar(
    { x: o.side / 2, y: o.side / 2 },
    Array.from({ length: o.jobs }, (_, i) => {
      const open = Math.floor(rand() * o.opens);
      return {
        id: `j${i}`,
        x: Math.floor(rand() * o.side),
        y: Math.floor(rand() * o.side),
        service: 10,
        load: [1 + Math.floor(rand() * 20)],
        timeWindow: { start: open, end: open + o.minWidth + Math.floor(rand() * o.extraWidth) },
      };
    }),
    { vehicles: vehicles(o.fleet, { capacity: [200], shift: { earliestStart: 0, latestEnd: o.latestEnd } }) },
  );
}

export function vehicles(count: number, v: Omit<Vehicle, "id"> = {}): Vehicle[] {
  return Array.from({ length: count }, (_, i) => ({ id: `v${i + 1}`, ...v }));
}

/** Tours as lists of job ids, for compact assertions. */
export function routes(s: Solution): string[][] {
  return s.tours.map((t) => t.stops.map((x) => x.jobId));
}

/** A tour that serves `ids` in order, with times replayed naively (for checker tests). */
export function tourOf(problem: Problem, vehicleId: string, ids: string[], start = 0): Solution["tours"][number] {
  const n = problem.jobs.length + 1;
  const m = problem.matrices!.default!;
  let t = start;
  let prev = 0;
  let distance = 0;
  const stops = ids.map((id) => {
    const i = problem.jobs.findIndex((j) => j.id === id) + 1;
    const job = problem.jobs[i - 1];
    const arrival = t + m.durations[prev * n + i];
    distance += m.distances[prev * n + i];
    const serviceStart = Math.max(arrival, job.timeWindow?.start ?? -Infinity);
    const departure = serviceStart + (job.service ?? 0);
    t = departure;
    const leg = m.distances[prev * n + i];
    prev = i;
    return { jobId: id, arrival, serviceStart, departure, waiting: serviceStart - arrival, load: [], distance: leg };
  });
  distance += m.distances[prev * n];
  const end = t + m.durations[prev * n];
  return { vehicleId, start, end, stops, distance, duration: end - start, waiting: 0, cost: distance };
}

export function solutionOf(tours: Solution["tours"], unassigned: string[] = []): Solution {
  const distance = tours.reduce((a, t) => a + t.distance, 0);
  return {
    tours,
    unassigned: unassigned.map((jobId) => ({ jobId, reason: "FLEET", remedy: "" })),
    relaxed: [],
    summary: { tours: tours.length, unassigned: unassigned.length, distance, duration: 0, waiting: 0, cost: distance },
    stats: { iterations: 0, elapsedMs: 0, stoppedBy: "budget", seed: 1 },
  };
}
