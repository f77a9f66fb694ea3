/**
 * A carrier's day that no textbook set describes: a seeded Berlin day of
 * deliveries with opening hours (some with two windows), skills (refrigerated,
 * tail-lift), a mixed fleet (vans, refrigerated vans, trucks with a lift) at
 * two depots (Mitte and a hub in the south),
 * solved through the solver's API and checked by the independent checker.
 * It prints, per seed, the plan and the same day with the constraints
 * dropped (no skills, each delivery's outer window only), so the cost of the
 * constraints is measured, not guessed.
 *
 *   npm run bench:realistic -- [--deliveries 400] [--seconds 30] [--seeds 1,2] [--clock cpu]
 *
 * Breaks and working-time rules join this day as the solver learns them
 * (issue 45).
 */
import { type Job, type Problem, type Solution, type Vehicle, check, solveSync } from "../src/solver";
import { Random } from "../src/solver/random";

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const deliveries = Number(arg("deliveries") ?? 400);
const seconds = Number(arg("seconds") ?? 30);
const seeds = (arg("seeds") ?? "1,2").split(",").map(Number);
const cpu = arg("clock") === "cpu";
const clock = cpu ? () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; } : undefined;

const HOUR = 3600;
const DEPOT = { lat: 52.5317, lon: 13.3849 };
const SOUTH_HUB = { id: "south", location: { lat: 52.4675, lon: 13.4021 } };

/** The day of `seed`: where, when, what each delivery needs, and the fleet. */
export function berlinDay(seed: number, n: number): Problem {
  const rnd = new Random(seed * 7919 + n);
  // Deliveries cluster around a few districts, the rest spread over the city.
  const centres = Array.from({ length: 8 }, () => ({ lat: 52.45 + rnd.next() * 0.14, lon: 13.22 + rnd.next() * 0.36 }));
  const jobs: Job[] = Array.from({ length: n }, (_, i) => {
    const c = rnd.next() < 0.7 ? centres[rnd.int(centres.length)] : { lat: 52.42 + rnd.next() * 0.2, lon: 13.15 + rnd.next() * 0.5 };
    const location = { lat: c.lat + (rnd.next() - 0.5) * 0.03, lon: c.lon + (rnd.next() - 0.5) * 0.05 };
    const kind = rnd.next();
    const job: Job = { id: `d${i}`, location, service: (3 + rnd.int(6)) * 60, load: [1 + rnd.int(10), 1 + rnd.int(4)] };
    if (kind < 0.2) {
      // A business with a lunch break: two windows.
      const open = 8 + rnd.int(2);
      const close = 16 + rnd.int(3);
      job.timeWindow = { start: open * HOUR, end: close * HOUR };
      job.timeWindows = [
        { start: open * HOUR, end: 12 * HOUR },
        { start: 13 * HOUR + rnd.int(2) * 1800, end: close * HOUR },
      ];
    } else if (kind < 0.65) {
      const start = 8 + rnd.int(8);
      job.timeWindow = { start: start * HOUR, end: (start + 2 + rnd.int(3)) * HOUR };
    }
    const skill = rnd.next();
    if (skill < 0.06) job.skills = ["refrigerated"];
    else if (skill < 0.1) job.skills = ["tail-lift"];
    return job;
  });
  const fleetSize = Math.ceil(n / 8);
  const vehicles: Vehicle[] = Array.from({ length: fleetSize }, (_, i) => {
    const truck = i % 6 === 5;
    const reefer = !truck && i % 4 === 1;
    return {
      id: truck ? `truck-${i}` : reefer ? `reefer-${i}` : `van-${i}`,
      vehicleClass: truck ? "truck" : "car",
      capacity: truck ? [300, 60] : [120, 24],
      shift: { earliestStart: 7 * HOUR, latestEnd: 19 * HOUR },
      maxTourDuration: 10 * HOUR,
      costs: { fixed: truck ? 180 : 120, perKm: truck ? 0.6 : 0.35 },
      ...(truck ? { skills: ["tail-lift"] } : reefer ? { skills: ["refrigerated"] } : {}),
      // Every driver is an employee (Arbeitszeitgesetz); truck drivers keep the EU driving-time rules too.
      workingTimeRules: truck ? ["de-arbzg", "eu-561"] : ["de-arbzg"],
      // Every other vehicle starts at the southern hub.
      ...(i % 2 === 1 ? { depot: SOUTH_HUB.id } : {}),
    };
  });
  return { depot: DEPOT, depots: [SOUTH_HUB], jobs, vehicles };
}

/** The same day without breaks, skills and with each delivery's outer window only. */
function unconstrained(p: Problem): Problem {
  return {
    ...p,
    jobs: p.jobs.map(({ skills: _s, timeWindows: _w, ...j }) => j),
    vehicles: p.vehicles!.map(({ skills: _s, ...v }) => v),
  };
}

/** The same day without breaks: what legality costs. */
function withoutBreaks(p: Problem): Problem {
  return { ...p, vehicles: p.vehicles!.map(({ workingTimeRules: _r, ...v }) => v) };
}

function figures(p: Problem, s: Solution) {
  const tours = s.tours.filter((t) => t.stops.length);
  return {
    tours: tours.length,
    km: Math.round(tours.reduce((sum, t) => sum + t.distance, 0) / 100) / 10,
    hours: Math.round(tours.reduce((sum, t) => sum + t.duration, 0) / 360) / 10,
    unassigned: s.unassigned.length,
    break_hours: Math.round(tours.reduce((sum, t) => sum + (t.breaks ?? []).reduce((b, x) => b + x.end - x.start, 0), 0) / 360) / 10,
    violations: check(p, s).length,
    second_window: tours.reduce((k, t) => k + t.stops.filter((x) => x.window && p.jobs.find((j) => j.id === x.jobId)?.timeWindows?.[1]?.start === x.window.start).length, 0),
  };
}

console.log(`Berlin day: ${deliveries} deliveries, ${seconds} s ${cpu ? "CPU" : "wall"} per run, seeds ${seeds.join(", ")}`);
for (const seed of seeds) {
  const day = berlinDay(seed, deliveries);
  const constrained = figures(day, solveSync(day, { timeLimitMs: seconds * 1000, seed, ...(clock ? { clock } : {}) }));
  const illegal = withoutBreaks(day);
  const noBreaks = figures(illegal, solveSync(illegal, { timeLimitMs: seconds * 1000, seed, ...(clock ? { clock } : {}) }));
  const free = unconstrained(illegal);
  const plain = figures(free, solveSync(free, { timeLimitMs: seconds * 1000, seed, ...(clock ? { clock } : {}) }));
  const costPct = (a: number, b: number) => `${b ? (((a - b) / b) * 100).toFixed(1) : "0.0"} %`;
  console.log(
    JSON.stringify({ seed, jobs: deliveries, two_windows: day.jobs.filter((j) => j.timeWindows).length, skilled: day.jobs.filter((j) => j.skills).length, vehicles: day.vehicles!.length, constrained, without_breaks: noBreaks, unconstrained: plain }),
  );
  console.log(`  seed ${seed}: ${constrained.tours} tours, ${constrained.km} km (${plain.tours} tours, ${plain.km} km without skills and second windows: ${costPct(constrained.km, plain.km)} km), unassigned ${constrained.unassigned}, ${constrained.break_hours} h of breaks (without breaks: ${noBreaks.tours} tours, ${noBreaks.km} km, ${costPct(constrained.km, noBreaks.km)} km), checker violations ${constrained.violations}, ${constrained.second_window} stops in their afternoon window`);
}
