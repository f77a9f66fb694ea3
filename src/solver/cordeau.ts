import type { Problem } from "./types";

/**
 * Cordeau, Gendreau & Laporte (1997) multi-depot VRP files (Cordeau's
 * `p01` ... `p23`, `pr01` ... `pr10`), as published:
 *
 *   type m n t                    type 2 = MDVRP; m vehicles per depot, n customers, t depots
 *   D Q                           t lines, one per depot: maximum tour duration (0 = none), capacity
 *   i x y d q f a list...         n customer lines: id 1..n, coordinates, service duration, demand,
 *                                 visit frequency and the a visit combinations (periodic variants; ignored)
 *   i x y d q f a list...         t depot lines in the same shape, ids n+1 .. n+t, demand 0
 *
 * Whitespace separated, CRLF-safe. Distances and travel times are Euclidean
 * doubles; a tour starts and ends at its depot, its load at most Q and its
 * duration (travel + service) at most D of that depot.
 */
export interface CordeauInstance {
  vehiclesPerDepot: number;
  customers: CordeauPoint[];
  depots: CordeauDepot[];
}

export interface CordeauPoint {
  /** The file's id: customers 1..n, depots n+1..n+t. */
  id: number;
  x: number;
  y: number;
  service: number;
  demand: number;
}

export interface CordeauDepot extends CordeauPoint {
  /** Maximum tour duration (travel + service); 0 = none. */
  maxDuration: number;
  capacity: number;
}

/**
 * Reads a Cordeau MDVRP file. Refuses, naming the line, what it would have
 * to guess: a type other than 2, counts that are not positive integers, a
 * depot line that is not `D Q`, a customer or depot row that is not
 * `i x y d q f a` plus its a combinations, ids out of order, a negative
 * demand or service, a depot with demand, lines missing or left over.
 */
export function parseCordeau(text: string): CordeauInstance {
  const lines = text
    .split(/\r?\n/)
    .map((l, i) => ({ line: i + 1, tokens: l.trim().split(/\s+/).filter((t) => t.length > 0) }))
    .filter((l) => l.tokens.length > 0);
  const fail = (line: number | undefined, why: string): never => {
    throw new Error(`not a Cordeau MDVRP file: ${line === undefined ? "" : `line ${line}: `}${why}`);
  };
  const numbers = (l: (typeof lines)[number]) => {
    const xs = l.tokens.map(Number);
    if (xs.some((x) => !Number.isFinite(x))) fail(l.line, `"${l.tokens.join(" ")}" is not a row of numbers`);
    return xs;
  };
  const count = (x: number, what: string, line: number) => {
    if (!Number.isInteger(x) || x < 1) fail(line, `${what} must be a positive integer (got ${x})`);
    return x;
  };
  const head = lines[0] ?? fail(undefined, "the file is empty");
  const first = numbers(head);
  if (first.length !== 4) fail(head.line, `the first line must be "type m n t" (4 numbers, got ${first.length})`);
  const [type, m, n, t] = first;
  if (type !== 2) fail(head.line, `problem type ${type} is not the MDVRP (type 2)`);
  count(m, "m (vehicles per depot)", head.line);
  count(n, "n (customers)", head.line);
  count(t, "t (depots)", head.line);
  const expected = 1 + t + n + t;
  if (lines.length < expected) fail(lines.at(-1)?.line, `expected ${expected} lines (1 + t depot limits + n customers + t depots), got ${lines.length}`);
  if (lines.length > expected) fail(lines[expected].line, `${lines.length - expected} more line${lines.length - expected === 1 ? "" : "s"} after the last depot`);
  const limits = lines.slice(1, 1 + t).map((l) => {
    const xs = numbers(l);
    if (xs.length !== 2) fail(l.line, `a depot's limits must be "D Q" (2 numbers, got ${xs.length})`);
    const [maxDuration, capacity] = xs;
    if (maxDuration < 0) fail(l.line, `maximum duration ${maxDuration} is negative`);
    if (!(capacity > 0)) fail(l.line, `capacity ${capacity} must be positive`);
    return { maxDuration, capacity };
  });
  const row = (l: (typeof lines)[number], id: number): CordeauPoint => {
    const xs = numbers(l);
    if (xs.length < 7) fail(l.line, `a row must be "i x y d q f a" and the a visit combinations (got ${xs.length} numbers)`);
    const [i, x, y, service, demand, , a] = xs;
    if (i !== id) fail(l.line, `id ${i} where ${id} was expected (customers 1..n, then depots n+1..n+t, in order)`);
    if (!Number.isInteger(a) || a < 0 || xs.length !== 7 + a) fail(l.line, `row ${i} announces ${a} visit combinations but has ${xs.length - 7}`);
    if (service < 0) fail(l.line, `service duration ${service} of ${i} is negative`);
    if (demand < 0) fail(l.line, `demand ${demand} of ${i} is negative`);
    return { id: i, x, y, service, demand };
  };
  const customers = lines.slice(1 + t, 1 + t + n).map((l, k) => row(l, k + 1));
  const depots = lines.slice(1 + t + n).map((l, k) => {
    const p = row(l, n + 1 + k);
    if (p.demand !== 0 || p.service !== 0) fail(l.line, `depot ${p.id} has a demand or service duration`);
    return { ...p, ...limits[k] };
  });
  return { vehiclesPerDepot: m, customers, depots };
}

/**
 * The instance as a Problem: job ids are the customer ids, depot ids the
 * file's depot ids (n+1 .. n+t) in `depots`; per depot `m` vehicles
 * "<depot id>-1" ... with its capacity and maximum duration, starting and
 * ending there (`Vehicle.depot`). One Euclidean matrix in double precision,
 * travel time = distance, in which a point's index is its file id (index 0,
 * the problem's `depot`, is a copy of the first depot that no vehicle
 * uses). Solve it with `objective: "cost"`: the set's objective is the total
 * distance with at most `m` vehicles per depot.
 */
export function cordeauProblem(inst: CordeauInstance): Problem {
  const { customers, depots } = inst;
  const pts = [depots[0], ...customers, ...depots];
  const size = pts.length;
  const distances = new Float64Array(size * size);
  for (let a = 0; a < size; a++) {
    for (let b = 0; b < size; b++) distances[a * size + b] = Math.hypot(pts[a].x - pts[b].x, pts[a].y - pts[b].y);
  }
  const at = (p: CordeauPoint) => ({ lat: p.y, lon: p.x });
  return {
    // Coordinates are planar; the matrix is what counts.
    depot: at(depots[0]),
    depots: depots.map((d) => ({ id: String(d.id), location: at(d) })),
    jobs: customers.map((c) => ({ id: String(c.id), location: at(c), service: c.service, load: [c.demand] })),
    vehicles: depots.flatMap((d) =>
      Array.from({ length: inst.vehiclesPerDepot }, (_, k) => ({
        id: `${d.id}-${k + 1}`,
        depot: String(d.id),
        capacity: [d.capacity],
        ...(d.maxDuration > 0 ? { maxTourDuration: d.maxDuration } : {}),
        costs: { perKm: 1000 },
      })),
    ),
    matrices: { default: { size, distances, durations: distances } },
  };
}
