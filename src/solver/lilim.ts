import type { Job, Problem } from "./types";

/** One row of a Li & Lim file: a task (half of a pair) or, as row 0, the depot. */
export interface LiLimTask {
  id: number;
  x: number;
  y: number;
  /** > 0 at a pickup, < 0 at its delivery (the same amount), 0 at the depot. */
  demand: number;
  ready: number;
  due: number;
  service: number;
  /** At a delivery: the id of its pickup; 0 otherwise. */
  pickup: number;
  /** At a pickup: the id of its delivery; 0 otherwise. */
  delivery: number;
}

/** A Li & Lim (2003) PDPTW instance. */
export interface LiLimInstance {
  vehicles: number;
  capacity: number;
  /** Travel time = distance / speed (1 in every published file). */
  speed: number;
  /** Row 0 is the depot; its window is the scheduling horizon. */
  tasks: LiLimTask[];
}

const lines = (text: string) =>
  text
    .split(/\r?\n/)
    .map((l, i) => ({ no: i + 1, tokens: l.trim().split(/\s+/).filter((t) => t.length > 0) }))
    .filter((l) => l.tokens.length > 0);

const numeric = (tokens: string[]) => tokens.every((t) => Number.isFinite(Number(t)));

/**
 * Parses a Li & Lim file as published (tab or space separated, CRLF-safe).
 * Refuses, naming the line, anything it would otherwise have to guess: a
 * bad header, a row that is not 9 numbers, ids not 0..n in order, a depot
 * that is not row 0 with no demand, and pairs whose rows do not name each
 * other or whose amounts differ.
 */
export function parseLiLim(text: string): LiLimInstance {
  const ls = lines(text);
  const fail = (no: number | undefined, what: string): never => {
    throw new Error(`not a Li & Lim instance: ${no === undefined ? "" : `line ${no}: `}${what}`);
  };
  if (ls.length === 0) fail(undefined, "the file is empty");
  const head = ls[0];
  if (head.tokens.length !== 3 || !numeric(head.tokens)) fail(head.no, `expected "vehicles capacity speed", found "${head.tokens.join(" ")}"`);
  const [vehicles, capacity, speed] = head.tokens.map(Number);
  if (!Number.isInteger(vehicles) || vehicles < 1) fail(head.no, `the vehicle count must be a positive integer, found ${vehicles}`);
  if (!(capacity > 0)) fail(head.no, `the capacity must be positive, found ${capacity}`);
  if (!(speed > 0)) fail(head.no, `the speed must be positive, found ${speed}`);
  const tasks: LiLimTask[] = [];
  const lineOf: number[] = [];
  for (const l of ls.slice(1)) {
    if (l.tokens.length !== 9 || !numeric(l.tokens)) fail(l.no, `expected 9 numbers "id x y demand ready due service pickup delivery", found "${l.tokens.join(" ")}"`);
    const [id, x, y, demand, ready, due, service, pickup, delivery] = l.tokens.map(Number);
    if (id !== tasks.length) fail(l.no, `expected id ${tasks.length} (ids run 0..n in order), found ${id}`);
    if (ready > due) fail(l.no, `the window [${ready}, ${due}] of ${id} closes before it opens`);
    tasks.push({ id, x, y, demand, ready, due, service, pickup, delivery });
    lineOf.push(l.no);
  }
  if (tasks.length < 3) fail(undefined, "a depot row and at least one pickup and delivery are needed");
  const depot = tasks[0];
  if (depot.demand !== 0 || depot.pickup !== 0 || depot.delivery !== 0) fail(lineOf[0], "row 0 (the depot) must have demand, pickup and delivery 0");
  const n = tasks.length;
  for (const t of tasks.slice(1)) {
    const no = lineOf[t.id];
    if (t.demand > 0) {
      if (t.pickup !== 0 || t.delivery < 1 || t.delivery >= n) fail(no, `pickup ${t.id} must have pickup 0 and the id of a delivery in 1..${n - 1}, found ${t.pickup} ${t.delivery}`);
      const d = tasks[t.delivery];
      if (d.pickup !== t.id || d.delivery !== 0) fail(lineOf[d.id], `delivery ${d.id} must name its pickup ${t.id}, found pickup ${d.pickup} delivery ${d.delivery}`);
      if (d.demand !== -t.demand) fail(lineOf[d.id], `delivery ${d.id} must have demand ${-t.demand} (its pickup ${t.id} has ${t.demand}), found ${d.demand}`);
    } else if (t.demand < 0) {
      if (t.delivery !== 0 || t.pickup < 1 || t.pickup >= n || tasks[t.pickup].delivery !== t.id) fail(no, `delivery ${t.id} must name a pickup in 1..${n - 1} that names it back, found pickup ${t.pickup} delivery ${t.delivery}`);
    } else {
      fail(no, `task ${t.id} has demand 0: every task is a pickup (> 0) or a delivery (< 0)`);
    }
  }
  return { vehicles, capacity, speed, tasks };
}

/**
 * The instance as a Problem, like `solomonProblem`: Euclidean distances in
 * double precision, travel time = distance / speed, raw units, one depot,
 * the file's fleet and capacity; job ids are the task ids. A pair is a
 * pickup job carrying the file's demand and a delivery job naming it
 * (`pickup`): the solver keeps the pickup's load on board until the
 * delivery, which is the file's negative demand there (a delivery's own
 * `load` is ignored, so it gets none).
 */
export function liLimProblem(inst: LiLimInstance): Problem {
  const pts = inst.tasks;
  const n = pts.length;
  const distances = new Float64Array(n * n);
  for (let a = 0; a < n; a++) {
    for (let b = 0; b < n; b++) distances[a * n + b] = Math.hypot(pts[a].x - pts[b].x, pts[a].y - pts[b].y);
  }
  const durations = inst.speed === 1 ? distances : distances.map((d) => d / inst.speed);
  const [depot, ...rest] = pts;
  return {
    // Coordinates are planar; the matrix below is what counts.
    depot: { lat: depot.y, lon: depot.x },
    jobs: rest.map((t): Job => ({
      id: String(t.id),
      location: { lat: t.y, lon: t.x },
      service: t.service,
      timeWindow: { start: t.ready, end: t.due },
      ...(t.demand > 0 ? { load: [t.demand] } : { pickup: String(t.pickup) }),
    })),
    vehicles: Array.from({ length: inst.vehicles }, (_, i) => ({
      id: `vehicle-${i + 1}`,
      capacity: [inst.capacity],
      shift: { earliestStart: depot.ready, latestEnd: depot.due },
      costs: { perKm: 1000 },
    })),
    numVehicles: inst.vehicles,
    matrices: { default: { size: n, distances, durations } },
  };
}
