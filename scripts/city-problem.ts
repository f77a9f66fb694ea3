import type { Problem } from "../src/solver";

/** A seeded city instance: jobs around a depot, 1-3 h windows over a 10 h day. */
export function cityProblem(jobs: number, seedValue: number): Problem {
  let s = seedValue >>> 0;
  const rand = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const depot = { lat: 52.52, lon: 13.405 };
  const dayStart = 7 * 3600;
  const dayEnd = 19 * 3600;
  return {
    depot,
    jobs: Array.from({ length: jobs }, (_, i) => {
      const r = 0.2 * Math.sqrt(rand());
      const a = rand() * 2 * Math.PI;
      const open = dayStart + rand() * 8 * 3600;
      const width = 3600 * (1 + 2 * rand());
      return {
        id: `job-${i + 1}`,
        location: { lat: depot.lat + r * Math.sin(a), lon: depot.lon + 1.6 * r * Math.cos(a) },
        service: 300,
        timeWindow: { start: open, end: Math.min(dayEnd - 1800, open + width) },
        load: [1 + Math.floor(rand() * 10)],
      };
    }),
    numVehicles: jobs,
    vehicleCapacity: [150],
    vehicles: Array.from({ length: Math.ceil(jobs / 8) }, (_, i) => ({
      id: `van-${i + 1}`,
      capacity: [150],
      shift: { earliestStart: dayStart, latestEnd: dayEnd },
    })),
  };
}
