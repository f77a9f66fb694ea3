import type { Problem, TravelMatrix } from "./types";

/**
 * From this many jobs on, the search numbers jobs along a Hilbert curve.
 * Below, the matrix fits in a core's level-2 cache anyway (500 jobs: 2 MB in
 * double precision, 1 MB in single; docs/experiments/2026-11-28-hilbert-curve-numbering.md).
 */
export const SPATIAL_ORDER_FROM = 500;

/** Grid of the curve: 1,024 x 1,024 cells over the jobs' bounding box. */
const CURVE_ORDER = 10;

/**
 * The problem with its jobs along a Hilbert curve through their locations,
 * and its matrices permuted to match. The search reads the legs of
 * neighbouring jobs together (a ruined string and its recreate, granular
 * neighbourhoods); with neighbours at nearby node numbers those reads share
 * cache lines of the n x n matrix, where in the caller's order (deliveries
 * by id, a random order in space) nearly every read of an 8 MB matrix
 * missed. Job ids are kept, so the answer is unchanged in kind; only the
 * order in which the search meets jobs differs. `fixOrder` problems and
 * small ones are returned as they are.
 */
export function inSpatialOrder(problem: Problem): Problem {
  const jobs = problem.jobs;
  if (problem.fixOrder || jobs.length < SPATIAL_ORDER_FROM) return problem;
  let minLat = Infinity;
  let maxLat = -Infinity;
  let minLon = Infinity;
  let maxLon = -Infinity;
  for (const { location } of jobs) {
    minLat = Math.min(minLat, location.lat);
    maxLat = Math.max(maxLat, location.lat);
    minLon = Math.min(minLon, location.lon);
    maxLon = Math.max(maxLon, location.lon);
  }
  const cells = 1 << CURVE_ORDER;
  const cell = (v: number, min: number, max: number) =>
    max > min ? Math.min(cells - 1, Math.floor(((v - min) / (max - min)) * cells)) : 0;
  const key = jobs.map((j) => hilbertIndex(cell(j.location.lon, minLon, maxLon), cell(j.location.lat, minLat, maxLat)));
  // order[k] = the caller's index of the job that becomes job k (stable for equal cells).
  const order = jobs.map((_, i) => i).sort((a, b) => key[a] - key[b] || a - b);
  if (order.every((from, to) => from === to)) return problem;
  // One copy per matrix, however many classes share it.
  const permuted = new Map<TravelMatrix, TravelMatrix>();
  const matrices = problem.matrices && Object.fromEntries(
    Object.entries(problem.matrices).map(([cls, m]) => {
      if (m && !permuted.has(m)) permuted.set(m, permuteMatrix(m, order, problem.depots?.length ?? 0));
      return [cls, m && permuted.get(m)];
    }),
  );
  return { ...problem, jobs: order.map((i) => jobs[i]), ...(matrices && { matrices }) };
}

/**
 * Rows and columns in the new order (node 0, the depot, stays first, and the
 * further depots stay after the jobs); a size that does not fit is left for
 * `compile` to reject.
 */
function permuteMatrix(m: TravelMatrix, order: number[], depots: number): TravelMatrix {
  const n = order.length + 1 + depots;
  if (m.size !== n || m.distances.length !== n * n || m.durations.length !== n * n) return m;
  const node = [0, ...order.map((i) => i + 1), ...Array.from({ length: depots }, (_, k) => order.length + 1 + k)];
  const permute = (values: Float32Array | Float64Array) => {
    const out = new (values.constructor as Float32ArrayConstructor | Float64ArrayConstructor)(n * n);
    for (let a = 0; a < n; a++) {
      const row = node[a] * n;
      for (let b = 0; b < n; b++) out[a * n + b] = values[row + node[b]];
    }
    return out;
  };
  const distances = permute(m.distances);
  return { size: n, distances, durations: m.durations === m.distances ? distances : permute(m.durations) };
}

/** Position of cell (x, y) along the Hilbert curve over the grid (the classic xy2d). */
function hilbertIndex(x: number, y: number): number {
  let d = 0;
  for (let s = 1 << (CURVE_ORDER - 1); s > 0; s >>= 1) {
    const rx = (x & s) > 0 ? 1 : 0;
    const ry = (y & s) > 0 ? 1 : 0;
    d += s * s * ((3 * rx) ^ ry);
    if (ry === 0) {
      if (rx === 1) {
        x = s - 1 - x;
        y = s - 1 - y;
      }
      [x, y] = [y, x];
    }
  }
  return d;
}
