import type { Location, Problem, TrafficOptions, TravelMatrix, VehicleClassId } from "./types";
import { vehicleClass } from "./vehicle-classes";

/** Roads are longer than the great circle; 1.3 is a common urban circuity. */
export const CIRCUITY_FACTOR = 1.3;
const EARTH_RADIUS_M = 6_371_008.8;

/** Anything that can produce matrices, e.g. an OSRM `table` client. */
export interface MatrixProvider {
  matrix(points: Location[], vehicleClass: VehicleClassId): TravelMatrix | Promise<TravelMatrix>;
}

export function greatCircleMetres(a: Location, b: Location): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h =
    Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Problem points in matrix order: depot first, then the jobs, then the further depots (`Problem.depots`). */
export function problemPoints(problem: Problem): Location[] {
  return [problem.depot, ...problem.jobs.map((j) => j.location), ...(problem.depots ?? []).map((d) => d.location)];
}

/**
 * Road distances estimated as great-circle distance x circuity, in metres.
 * Float32 keeps a 2,001-point matrix at 16 MB.
 */
export function greatCircleDistances(points: Location[]): Float32Array {
  const n = points.length;
  const d = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const m = greatCircleMetres(points[i], points[j]) * CIRCUITY_FACTOR;
      d[i * n + j] = m;
      d[j * n + i] = m;
    }
  }
  return d;
}

/** A leg's distance or free-flow duration as the search reads it (node 0 = depot, node i = job i - 1). */
export interface Matrix {
  at(from: number, to: number): number;
}

/** A stored n x n matrix (row-major). */
export class DenseMatrix implements Matrix {
  constructor(
    readonly values: Float32Array | Float64Array,
    readonly size: number,
  ) {}

  at(from: number, to: number): number {
    return this.values[from * this.size + to];
  }
}

/**
 * A vehicle's view of a matrix when it starts or ends at a further depot:
 * node 0 (the search's "depot" of every tour) is read as the point the tour
 * leaves from (`start`) where a leg leaves node 0 and as the point it
 * returns to (`end`) where a leg arrives there; both after the jobs, or 0.
 * Only such vehicles get one, so problems with a single depot read their
 * matrices as before.
 */
export class DepotMatrix implements Matrix {
  constructor(
    readonly base: Matrix,
    readonly start: number,
    readonly end: number = start,
  ) {}

  at(from: number, to: number): number {
    return this.base.at(from === 0 ? this.start : from, to === 0 ? this.end : to);
  }
}

/**
 * The embedded distances computed on demand from unit vectors (chord length
 * -> great circle, the same value as the haversine formula): 48 bytes per
 * point instead of 4 x n per point, for plans too large to store the matrix.
 */
export class GreatCircleMatrix implements Matrix {
  private readonly x: Float64Array;
  private readonly y: Float64Array;
  private readonly z: Float64Array;

  constructor(points: Location[]) {
    const n = points.length;
    this.x = new Float64Array(n);
    this.y = new Float64Array(n);
    this.z = new Float64Array(n);
    const rad = Math.PI / 180;
    points.forEach((p, i) => {
      const lat = p.lat * rad;
      const lon = p.lon * rad;
      this.x[i] = Math.cos(lat) * Math.cos(lon);
      this.y[i] = Math.cos(lat) * Math.sin(lon);
      this.z[i] = Math.sin(lat);
    });
  }

  at(from: number, to: number): number {
    const dx = this.x[from] - this.x[to];
    const dy = this.y[from] - this.y[to];
    const dz = this.z[from] - this.z[to];
    const halfChord = Math.sqrt(dx * dx + dy * dy + dz * dz) / 2;
    return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, halfChord)) * CIRCUITY_FACTOR;
  }
}

/** Above this many points the embedded matrix is computed on demand (a stored one would take > 32 MB). */
export const STORED_EMBEDDED_MAX_POINTS = 2_900;

/** The embedded distances for the search: stored while small, computed on demand beyond. */
export function embeddedMatrix(points: Location[]): Matrix {
  if (points.length > STORED_EMBEDDED_MAX_POINTS) return new GreatCircleMatrix(points);
  return new DenseMatrix(greatCircleDistances(points), points.length);
}

/** Seconds per metre at a class's average speed. */
export function secondsPerMetre(cls: VehicleClassId): number {
  return 3.6 / vehicleClass(cls).speedKmh;
}

/** The embedded provider: great-circle x circuity at the class's average speed. */
export const greatCircleProvider: MatrixProvider = {
  matrix(points, cls) {
    const distances = greatCircleDistances(points);
    const spm = secondsPerMetre(cls);
    const durations = new Float32Array(distances.length);
    for (let i = 0; i < distances.length; i++) durations[i] = distances[i] * spm;
    return { size: points.length, distances, durations };
  },
};

/**
 * Fills `problem.matrices` from an (asynchronous) provider, e.g. OSRM, for
 * every vehicle class in use, so that `solve` only sees matrices.
 */
export async function prepareMatrices(problem: Problem, provider: MatrixProvider): Promise<Problem> {
  const points = problemPoints(problem);
  const classes = new Set<VehicleClassId>((problem.vehicles ?? []).map((v) => v.vehicleClass ?? "car"));
  if (classes.size === 0) classes.add("car");
  const matrices: NonNullable<Problem["matrices"]> = { ...problem.matrices };
  for (const cls of classes) if (!matrices[cls]) matrices[cls] = await provider.matrix(points, cls);
  return { ...problem, matrices };
}

// Rush hours slow traffic down on weekdays; nights are free-flowing.
const WEEKDAY_PROFILE = [
  1, 1, 1, 1, 1, 0.95, 0.8, 0.6, 0.6, 0.75, 0.85, 0.85, 0.8, 0.85, 0.85, 0.8, 0.65, 0.6, 0.7, 0.85, 0.95, 1,
  1, 1,
];
const WEEKEND_PROFILE = [
  1, 1, 1, 1, 1, 1, 1, 1, 0.95, 0.9, 0.85, 0.8, 0.8, 0.8, 0.85, 0.85, 0.85, 0.85, 0.9, 0.95, 1, 1, 1, 1,
];
export const DEFAULT_SPEED_FACTORS: number[][] = [0, 1, 2, 3, 4, 5, 6].map((d) =>
  d < 5 ? WEEKDAY_PROFILE : WEEKEND_PROFILE,
);

/** Resolved traffic model: speed factor for a departure at time t. */
export interface TrafficModel {
  weekday: number;
  speedFactors: number[][];
}

export function trafficModel(traffic: Problem["traffic"]): TrafficModel | undefined {
  if (!traffic) return undefined;
  const opts: TrafficOptions = traffic === true ? {} : traffic;
  return { weekday: opts.weekday ?? 0, speedFactors: opts.speedFactors ?? DEFAULT_SPEED_FACTORS };
}

/** Speed factor for a departure at time `t` (seconds from midnight of `weekday`). */
export function speedFactorAt(model: TrafficModel, t: number): number {
  const hours = Math.floor(t / 3600);
  const day = (((model.weekday + Math.floor(hours / 24)) % 7) + 7) % 7;
  const hour = ((hours % 24) + 24) % 24;
  return model.speedFactors[day][hour];
}

/** The slowest factor of the profile: planning with it never arrives later than reality. */
export function slowestSpeedFactor(model: TrafficModel): number {
  let min = Infinity;
  for (const day of model.speedFactors) for (const f of day) min = Math.min(min, f);
  return min;
}

/** Travel time of a leg departing at `t`, given its free-flow duration. */
export function trafficTravelTime(model: TrafficModel | undefined, freeFlow: number, t: number): number {
  return model ? freeFlow / speedFactorAt(model, t) : freeFlow;
}
