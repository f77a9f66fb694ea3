import type { Problem } from "./types";

/** A Solomon / Gehring-Homberger VRPTW instance. */
export interface SolomonInstance {
  name: string;
  vehicles: number;
  capacity: number;
  /** Row 0 is the depot; its window is the scheduling horizon. */
  customers: { id: number; x: number; y: number; demand: number; ready: number; due: number; service: number }[];
}

/**
 * Parses the text format by whitespace tokens (files have CRLF endings,
 * blank lines with a space, and headings whose spacing varies).
 */
export function parseSolomon(text: string): SolomonInstance {
  const tokens = text.split(/\s+/).filter((t) => t.length > 0);
  const name = tokens[0];
  const v = tokens.indexOf("CAPACITY");
  if (v < 0) throw new Error("not a Solomon instance: no VEHICLE section");
  const vehicles = Number(tokens[v + 1]);
  const capacity = Number(tokens[v + 2]);
  // Customer rows start after the last heading word ("TIME").
  let i = tokens.lastIndexOf("TIME") + 1;
  const customers: SolomonInstance["customers"] = [];
  while (i + 7 <= tokens.length) {
    const row = tokens.slice(i, i + 7).map(Number);
    if (row.some((x) => !Number.isFinite(x))) break;
    const [id, x, y, demand, ready, due, service] = row;
    customers.push({ id, x, y, demand, ready, due, service });
    i += 7;
  }
  if (!Number.isFinite(vehicles) || !Number.isFinite(capacity) || customers.length < 2) {
    throw new Error("not a Solomon instance: bad vehicle or customer section");
  }
  return { name, vehicles, capacity, customers };
}

/**
 * The instance as a Problem: Euclidean distances in double precision,
 * travel time = distance, raw units; job ids are the customer numbers.
 */
export function solomonProblem(inst: SolomonInstance): Problem {
  const [depot, ...rest] = inst.customers;
  const pts = inst.customers;
  const n = pts.length;
  const distances = new Float64Array(n * n);
  for (let a = 0; a < n; a++) {
    for (let b = 0; b < n; b++) distances[a * n + b] = Math.hypot(pts[a].x - pts[b].x, pts[a].y - pts[b].y);
  }
  return {
    // Coordinates are planar; the matrix below is what counts.
    depot: { lat: depot.y, lon: depot.x },
    jobs: rest.map((c) => ({
      id: String(c.id),
      location: { lat: c.y, lon: c.x },
      service: c.service,
      timeWindow: { start: c.ready, end: c.due },
      load: [c.demand],
    })),
    vehicles: Array.from({ length: inst.vehicles }, (_, i) => ({
      id: `vehicle-${i + 1}`,
      capacity: [inst.capacity],
      shift: { earliestStart: depot.ready, latestEnd: depot.due },
      costs: { perKm: 1000 },
    })),
    numVehicles: inst.vehicles,
    matrices: { default: { size: n, distances, durations: distances } },
  };
}
