import { CIRCUITY_FACTOR, greatCircleMetres, speedFactorAt, trafficModel } from "./matrix";
import type { Job, Problem, Solution, TimeWindow, Vehicle, Violation } from "./types";
import { VEHICLE_CLASSES } from "./vehicle-classes";

/**
 * Independent feasibility checker. It shares no evaluation code with the
 * solver: it replays every tour stop by stop from the problem's own data and
 * reports each broken rule. `tolerance` absorbs float rounding (seconds,
 * metres, load units).
 */
export function check(problem: Problem, solution: Solution, tolerance = 0.01): Violation[] {
  const violations: Violation[] = [];
  const add = (v: Violation) => violations.push(v);
  const jobIndex = new Map<string, number>();
  problem.jobs.forEach((j, i) => jobIndex.set(j.id, i));
  const vehicles: Vehicle[] =
    problem.vehicles ??
    Array.from({ length: problem.numVehicles ?? Math.max(1, problem.jobs.length) }, (_, i) => ({
      id: `vehicle-${i + 1}`,
      capacity: problem.vehicleCapacity,
    }));
  const vehicleById = new Map(vehicles.map((v) => [v.id, v]));
  const maxTours = Math.min(problem.numVehicles ?? Infinity, vehicles.length);
  const traffic = trafficModel(problem.traffic);
  const relaxedMinutes = new Map(solution.relaxed.map((r) => [r.jobId, r.minutes]));

  // Relaxed windows must be allowed by the problem's relax settings.
  for (const r of solution.relaxed) {
    const job = problem.jobs[jobIndex.get(r.jobId) ?? -1];
    const allowed =
      job !== undefined &&
      problem.relax !== undefined &&
      r.minutes > 0 &&
      r.minutes <= Math.min(300, problem.relax.maxMinutes) &&
      (windowsOf(job)?.at(-1)?.end ?? Infinity) >= (problem.relax.afterTime ?? -Infinity);
    if (!allowed) {
      relaxedMinutes.delete(r.jobId);
      add({ code: "TIME_WINDOW", message: `window of ${r.jobId} relaxed by ${r.minutes} min, which the problem does not allow`, jobId: r.jobId });
    }
  }

  if (solution.tours.length > maxTours) {
    add({ code: "TOO_MANY_TOURS", message: `${solution.tours.length} tours, at most ${maxTours} allowed` });
  }

  // Where every job ended up.
  const tourOf = new Map<string, number>();
  const positionOf = new Map<string, number>();
  const usedVehicles = new Set<string>();
  solution.tours.forEach((tour, t) => {
    if (usedVehicles.has(tour.vehicleId)) add({ code: "VEHICLE_REUSED", message: `vehicle ${tour.vehicleId} drives two tours`, vehicleId: tour.vehicleId });
    usedVehicles.add(tour.vehicleId);
    tour.stops.forEach((s, i) => {
      if (!jobIndex.has(s.jobId)) add({ code: "UNKNOWN_JOB", message: `unknown job ${s.jobId}`, jobId: s.jobId });
      else if (tourOf.has(s.jobId)) add({ code: "DUPLICATE_JOB", message: `job ${s.jobId} served twice`, jobId: s.jobId });
      tourOf.set(s.jobId, t);
      positionOf.set(s.jobId, i);
    });
  });
  const unassigned = new Set<string>();
  for (const u of solution.unassigned) {
    if (!jobIndex.has(u.jobId)) add({ code: "UNKNOWN_JOB", message: `unknown unassigned job ${u.jobId}`, jobId: u.jobId });
    if (tourOf.has(u.jobId)) add({ code: "DUPLICATE_JOB", message: `job ${u.jobId} both served and unassigned`, jobId: u.jobId });
    unassigned.add(u.jobId);
  }
  for (const j of problem.jobs) {
    if (!tourOf.has(j.id) && !unassigned.has(j.id)) add({ code: "MISSING_JOB", message: `job ${j.id} neither served nor unassigned`, jobId: j.id });
  }

  // Pairs: same tour, pickup first; or both unassigned.
  for (const j of problem.jobs) {
    if (j.pickup === undefined || !jobIndex.has(j.pickup)) continue;
    const tp = tourOf.get(j.pickup);
    const td = tourOf.get(j.id);
    if (tp === undefined && td === undefined) continue;
    if (tp !== td || positionOf.get(j.pickup)! > positionOf.get(j.id)!) {
      add({ code: "PICKUP_DELIVERY", message: `pickup ${j.pickup} must precede delivery ${j.id} on the same tour`, jobId: j.id });
    }
  }
  // Groups: one tour for all members, or none served.
  const groups = new Map<string, Job[]>();
  for (const j of problem.jobs) if (j.group !== undefined) groups.set(j.group, [...(groups.get(j.group) ?? []), j]);
  for (const [g, members] of groups) {
    const tours = new Set(members.map((m) => tourOf.get(m.id)));
    if (tours.size > 1) add({ code: "GROUP", message: `group ${g} is split (${[...tours].map((t) => (t === undefined ? "unassigned" : `tour ${t}`)).join(", ")})` });
  }
  // fix_order: served jobs appear in the given order, tour after tour.
  if (problem.fixOrder) {
    let last = -1;
    for (const tour of solution.tours) {
      for (const s of tour.stops) {
        const i = jobIndex.get(s.jobId) ?? -1;
        if (i < last) add({ code: "FIX_ORDER", message: `job ${s.jobId} is out of the given order`, jobId: s.jobId });
        last = Math.max(last, i);
      }
    }
  }

  let totalDistance = 0;
  for (const tour of solution.tours) {
    const v = vehicleById.get(tour.vehicleId);
    if (!v) {
      add({ code: "UNKNOWN_VEHICLE", message: `unknown vehicle ${tour.vehicleId}`, vehicleId: tour.vehicleId });
      continue;
    }
    totalDistance += checkTour(problem, v, tour, jobIndex, relaxedMinutes, traffic, tolerance, add);
  }
  if (Math.abs(totalDistance - solution.summary.distance) > tolerance * Math.max(1, solution.tours.length) + 1e-6 * totalDistance) {
    add({ code: "TOTALS", message: `summary distance ${solution.summary.distance} but tours add up to ${totalDistance}` });
  }
  if (solution.summary.tours !== solution.tours.length || solution.summary.unassigned !== solution.unassigned.length) {
    add({ code: "TOTALS", message: "summary counts do not match the tours and unassigned jobs" });
  }
  return violations;
}

/**
 * The windows a job's service may start in, by the public rules (types.ts):
 * `timeWindows` cut to the outer `timeWindow`, or `timeWindow` alone, or
 * none ([]); null when `timeWindows` leave nothing inside the outer window.
 */
function windowsOf(job: Job): TimeWindow[] | null {
  const outer = job.timeWindow;
  if (!job.timeWindows || job.timeWindows.length === 0) return outer ? [{ start: outer.start, end: outer.end }] : [];
  const lo = outer?.start ?? -Infinity;
  const hi = outer?.end ?? Infinity;
  const cut = job.timeWindows.filter((w) => w.end >= lo && w.start <= hi).map((w) => ({ start: Math.max(w.start, lo), end: Math.min(w.end, hi) }));
  return cut.length > 0 ? cut : null;
}

function checkTour(
  problem: Problem,
  v: Vehicle,
  tour: Solution["tours"][number],
  jobIndex: Map<string, number>,
  relaxedMinutes: Map<string, number>,
  traffic: ReturnType<typeof trafficModel>,
  tol: number,
  add: (v: Violation) => void,
): number {
  const cls = v.vehicleClass ?? "car";
  const matrix = problem.matrices?.[cls] ?? problem.matrices?.default;
  const speed = VEHICLE_CLASSES.find((c) => c.id === cls)!.speedKmh / 3.6;
  const factor = v.travelTimeFactor ?? 1;
  // Matrix points: the depot, the jobs, then the further depots (types.ts, TravelMatrix).
  const jobs = problem.jobs.length;
  const depots = problem.depots ?? [];
  const n = jobs + 1 + depots.length;
  const point = (i: number) => (i === 0 ? problem.depot : i <= jobs ? problem.jobs[i - 1].location : depots[i - jobs - 1].location);
  // Leg between matrix points a and b departing at t: [metres, seconds].
  const leg = (a: number, b: number, t: number): [number, number] => {
    let metres: number;
    let seconds: number;
    if (matrix) {
      metres = matrix.distances[a * n + b];
      seconds = matrix.durations[a * n + b];
    } else {
      metres = greatCircleMetres(point(a), point(b)) * CIRCUITY_FACTOR;
      seconds = metres / speed;
    }
    seconds *= factor;
    if (traffic && cls !== "bicycle") seconds /= speedFactorAt(traffic, t);
    return [metres, seconds];
  };
  const vid = tour.vehicleId;
  const shift = v.shift ?? {};
  // Each tour starts (and on a round trip ends) at its vehicle's depot; a vehicle with `startAt` starts there instead.
  const pointOf = (id: string | undefined) => {
    if (id === undefined) return 0;
    const k = depots.findIndex((d) => d.id === id);
    if (k < 0) add({ code: "DEPOT", message: `vehicle ${vid} names depot ${id}, which the problem does not have`, vehicleId: vid });
    return k < 0 ? 0 : jobs + 1 + k;
  };
  const home = pointOf(v.depot);
  const departure = v.startAt === undefined ? home : pointOf(v.startAt);
  if (tour.depot !== v.depot) add({ code: "DEPOT", message: `tour of ${vid} names depot ${tour.depot ?? "(the problem's)"}, but the vehicle is at ${v.depot ?? "the problem's depot"}`, vehicleId: vid });
  if (tour.startAt !== v.startAt) add({ code: "DEPOT", message: `tour of ${vid} starts at ${tour.startAt ?? "its depot"}, but the vehicle starts at ${v.startAt ?? "its depot"}`, vehicleId: vid });
  for (const s of tour.stops) {
    const only = problem.jobs[jobIndex.get(s.jobId) ?? -1]?.depot;
    if (only !== undefined && only !== v.depot) add({ code: "DEPOT", message: `${s.jobId} may only be served from depot ${only}, but ${vid} is at ${v.depot ?? "the problem's depot"}`, jobId: s.jobId, vehicleId: vid });
  }
  if (v.maxStops !== undefined && tour.stops.length > v.maxStops) add({ code: "MAX_STOPS", message: `tour of ${vid} has ${tour.stops.length} stops, at most ${v.maxStops} allowed`, vehicleId: vid });
  const skills = new Set(v.skills ?? []);
  for (const s of tour.stops) {
    const missing = (problem.jobs[jobIndex.get(s.jobId) ?? -1]?.skills ?? []).filter((k) => !skills.has(k));
    if (missing.length) add({ code: "SKILLS", message: `${vid} lacks ${missing.join(", ")} for ${s.jobId}`, jobId: s.jobId, vehicleId: vid });
  }
  if (tour.start < (shift.earliestStart ?? 0) - tol) add({ code: "SHIFT_START", message: `tour of ${vid} departs before its shift`, vehicleId: vid });
  if (shift.latestStart !== undefined && tour.start > shift.latestStart + tol) add({ code: "SHIFT_START", message: `tour of ${vid} departs after its latest start`, vehicleId: vid });

  // Loads: deliveries are on board from the start; pickups from their stop to their delivery.
  const dims = Math.max(1, v.capacity?.length ?? 0, ...tour.stops.map((s) => problem.jobs[jobIndex.get(s.jobId) ?? 0]?.load?.length ?? 0));
  const load = new Array<number>(dims).fill(0);
  const isPickup = new Set(problem.jobs.filter((j) => j.pickup !== undefined).map((j) => j.pickup!));
  for (const s of tour.stops) {
    const j = problem.jobs[jobIndex.get(s.jobId) ?? -1];
    if (j && j.pickup === undefined && !isPickup.has(j.id)) for (let d = 0; d < dims; d++) load[d] += j.load?.[d] ?? 0;
  }
  const overload = (where: string) => {
    for (let d = 0; d < dims; d++) {
      const cap = v.capacity?.[d];
      if (cap !== undefined && load[d] > cap + tol) add({ code: "CAPACITY", message: `${vid} carries ${load[d]} > ${cap} (dimension ${d + 1}) ${where}`, vehicleId: vid });
    }
  };
  overload("leaving the depot");

  let t = tour.start;
  let prev = departure;
  let distance = 0;
  // Per leg: when it may begin (the previous departure), the driving it takes, and when the next service starts.
  const legs: { from: number; driving: number; until: number }[] = [];
  for (const s of tour.stops) {
    const idx = jobIndex.get(s.jobId);
    if (idx === undefined) continue;
    const j = problem.jobs[idx];
    const [metres, seconds] = leg(prev, idx + 1, t);
    legs.push({ from: t, driving: seconds, until: s.serviceStart });
    distance += metres;
    if (s.arrival < t + seconds - tol) add({ code: "SCHEDULE", message: `${s.jobId} reached at ${s.arrival}, earliest possible ${t + seconds}`, jobId: s.jobId, vehicleId: vid });
    const arrival = Math.max(s.arrival, t + seconds);
    const given = windowsOf(j);
    // Relaxation widens the last window.
    const widening = (relaxedMinutes.get(j.id) ?? 0) * 60;
    const windows = (given ?? []).map((w, i, all) => ({ start: w.start, end: w.end + (i === all.length - 1 ? widening : 0) }));
    let start: number;
    if (given === null) {
      start = Math.max(s.serviceStart, arrival);
      add({ code: "TIME_WINDOW", message: `${s.jobId} served, but none of its timeWindows lies inside its outer timeWindow`, jobId: s.jobId, vehicleId: vid });
    } else if (windows.length <= 1) {
      const ready = windows[0]?.start ?? -Infinity;
      const due = windows[0]?.end ?? Infinity;
      if (s.serviceStart < Math.max(arrival, ready) - tol) add({ code: "SCHEDULE", message: `${s.jobId} served before arrival or window start`, jobId: s.jobId, vehicleId: vid });
      start = Math.max(s.serviceStart, arrival, ready);
      if (start > due + tol) add({ code: "TIME_WINDOW", message: `${s.jobId} served at ${start}, window ends ${due}`, jobId: s.jobId, vehicleId: vid });
    } else {
      if (s.serviceStart < arrival - tol) add({ code: "SCHEDULE", message: `${s.jobId} served before arrival`, jobId: s.jobId, vehicleId: vid });
      start = Math.max(s.serviceStart, arrival);
      const at = start;
      if (!windows.some((w) => at >= w.start - tol && at <= w.end + tol)) {
        const list = windows.map((w) => `[${w.start}, ${w.end}]`).join(", ");
        add({ code: "TIME_WINDOW", message: `${s.jobId} served at ${start}, outside every one of its windows ${list}`, jobId: s.jobId, vehicleId: vid });
        // Replay on as if served when the next window opens.
        const next = windows.filter((w) => w.start > at).sort((a, b) => a.start - b.start)[0];
        if (next) start = next.start;
      }
    }
    // The window the stop names must be one of the job's, and hold its service start.
    if (s.window) {
      const named = s.window;
      const i = (given ?? []).findIndex((w) => Math.abs(w.start - named.start) <= tol && Math.abs(w.end - named.end) <= tol);
      if (i < 0) add({ code: "SCHEDULE", message: `${s.jobId} names window [${named.start}, ${named.end}], which is not one of its windows`, jobId: s.jobId, vehicleId: vid });
      else if (start < windows[i].start - tol || start > windows[i].end + tol) {
        add({ code: "SCHEDULE", message: `${s.jobId} starts service at ${start}, outside the window [${named.start}, ${named.end}] it names`, jobId: s.jobId, vehicleId: vid });
      }
    }
    if (s.departure < start + (j.service ?? 0) - tol) add({ code: "SCHEDULE", message: `${s.jobId} left before its service ended`, jobId: s.jobId, vehicleId: vid });
    t = Math.max(s.departure, start + (j.service ?? 0));
    if (j.pickup !== undefined) {
      const p = problem.jobs[jobIndex.get(j.pickup) ?? -1];
      for (let d = 0; d < dims; d++) load[d] -= p?.load?.[d] ?? 0;
    } else if (isPickup.has(j.id)) {
      for (let d = 0; d < dims; d++) load[d] += j.load?.[d] ?? 0;
    } else {
      for (let d = 0; d < dims; d++) load[d] -= j.load?.[d] ?? 0;
    }
    overload(`after ${j.id}`);
    prev = idx + 1;
  }
  let end = t;
  if (v.roundtrip !== false) {
    const [metres, seconds] = leg(prev, home, t);
    distance += metres;
    end = t + seconds;
    legs.push({ from: t, driving: seconds, until: tour.end });
  }
  if (v.breaks?.length || v.workingTimeRules?.length || tour.breaks?.length) checkBreaks(v, tour, legs, tol, add);
  if (tour.end < end - tol) add({ code: "SCHEDULE", message: `tour of ${vid} ends at ${tour.end}, earliest possible ${end}`, vehicleId: vid });
  end = Math.max(end, tour.end);
  if (shift.latestEnd !== undefined && end > shift.latestEnd + tol) add({ code: "SHIFT_END", message: `tour of ${vid} ends at ${end} after ${shift.latestEnd}`, vehicleId: vid });
  if (v.maxTourDuration !== undefined && end - tour.start > v.maxTourDuration + tol) {
    add({ code: "MAX_DURATION", message: `tour of ${vid} lasts ${end - tour.start} > ${v.maxTourDuration}`, vehicleId: vid });
  }
  if (Math.abs(distance - tour.distance) > tol * (1 + tour.stops.length) + 1e-6 * distance) {
    add({ code: "TOTALS", message: `tour of ${vid} reports ${tour.distance} m, legs add up to ${distance}`, vehicleId: vid });
  }
  return distance;
}

/** The working-time rules' figures (types.ts, `WorkingTimeRule`), written here once more so the checker shares nothing with the solver. */
const H = 3600;
const M = 60;

/**
 * Breaks and working-time rules. The timeline is rebuilt from the tour:
 * on each leg the vehicle drives from the previous departure, around the
 * breaks planned there, and waits (which is work) until the next service.
 */
function checkBreaks(v: Vehicle, tour: Solution["tours"][number], legs: { from: number; driving: number; until: number }[], tol: number, add: (v: Violation) => void): void {
  const vid = v.id;
  const breaks = [...(tour.breaks ?? [])].sort((a, b) => a.start - b.start);
  const fail = (code: "BREAK" | "WORKING_TIME", message: string) => add({ code, message, vehicleId: vid });
  breaks.forEach((b, i) => {
    if (b.end < b.start - tol) fail("BREAK", `break ${b.id} of ${vid} ends before it starts`);
    if (i > 0 && b.start < breaks[i - 1].end - tol) fail("BREAK", `breaks ${breaks[i - 1].id} and ${b.id} of ${vid} overlap`);
    if (b.start < tour.start - tol || b.end > tour.end + tol) fail("BREAK", `break ${b.id} of ${vid} lies outside its tour`);
    if (!legs.some((l) => b.start >= l.from - tol && b.end <= l.until + tol)) fail("BREAK", `break ${b.id} of ${vid} overlaps a service`);
  });
  for (const spec of v.breaks ?? []) {
    const taken = breaks.find((b) => b.id === spec.id);
    const reached = tour.start < spec.window.end && tour.end > spec.window.start;
    if (!taken) {
      if (reached) fail("BREAK", `tour of ${vid} runs during the window of break ${spec.id} but does not take it`);
    } else if (taken.start < spec.window.start - tol || taken.start > spec.window.end + tol) fail("BREAK", `break ${spec.id} of ${vid} starts at ${taken.start}, outside its window`);
    else if (taken.end - taken.start < spec.duration - tol) fail("BREAK", `break ${spec.id} of ${vid} lasts ${taken.end - taken.start} s, less than ${spec.duration}`);
  }

  // The timeline: work (driving, waiting, service) and breaks, in order.
  type Piece = { kind: "drive" | "work" | "break"; length: number };
  const pieces: Piece[] = [];
  let lastEnd = tour.start;
  for (const l of legs) {
    if (lastEnd < l.from - tol) pieces.push({ kind: "work", length: l.from - lastEnd }); // the service before this leg
    let p = l.from;
    let driving = l.driving;
    for (const b of breaks.filter((b) => b.start >= l.from - tol && b.end <= l.until + tol)) {
      const d = Math.min(driving, Math.max(0, b.start - p));
      if (d > 0) pieces.push({ kind: "drive", length: d });
      driving -= d;
      if (b.start - p - d > tol) pieces.push({ kind: "work", length: b.start - p - d });
      pieces.push({ kind: "break", length: b.end - b.start });
      p = Math.max(p, b.end);
    }
    if (p + driving > l.until + tol) fail("BREAK", `the breaks of ${vid} leave too little time to drive to the stop served at ${l.until}`);
    if (driving > 0) pieces.push({ kind: "drive", length: driving });
    if (l.until - p - driving > tol) pieces.push({ kind: "work", length: l.until - p - driving });
    lastEnd = l.until;
  }
  if (tour.end > lastEnd + tol) pieces.push({ kind: "work", length: tour.end - lastEnd }); // the last service of an open tour

  const rules = v.workingTimeRules ?? [];
  // A tour under way goes on with the day so far.
  const soFar = v.workedSoFar ?? { work: 0, sinceBreak: 0, breaks: 0, driving: 0, drivingSinceBreak: 0 };
  if (rules.includes("de-arbzg")) {
    let block = soFar.sinceBreak;
    let work = soFar.work;
    let rest = soFar.breaks;
    let longest = block;
    for (const p of pieces) {
      if (p.kind !== "break") (block += p.length), (work += p.length), (longest = Math.max(longest, block));
      else if (p.length >= 15 * M - tol) (block = 0), (rest += p.length);
    }
    if (longest > 6 * H + tol) fail("WORKING_TIME", `${vid} works ${(longest / H).toFixed(2)} h without a break of 15 min (de-arbzg: at most 6 h)`);
    const owed = work > 9 * H ? 45 * M : work > 6 * H ? 30 * M : 0;
    if (rest < owed - tol) fail("WORKING_TIME", `${vid} works ${(work / H).toFixed(2)} h with ${Math.round(rest / M)} min of breaks (de-arbzg: ${owed / M})`);
    if (work > 10 * H + tol) fail("WORKING_TIME", `${vid} works ${(work / H).toFixed(2)} h (de-arbzg: at most 10 h)`);
  }
  if (rules.includes("eu-561")) {
    let driving = soFar.drivingSinceBreak;
    let total = soFar.driving;
    let split = false;
    for (const p of pieces) {
      if (p.kind === "drive") {
        driving += p.length;
        total += p.length;
        if (driving > 4.5 * H + tol) {
          fail("WORKING_TIME", `${vid} drives ${(driving / H).toFixed(2)} h without the 45 min break (eu-561: at most 4.5 h)`);
          driving = 0;
        }
      } else if (p.kind === "break") {
        if (p.length >= 45 * M - tol || (split && p.length >= 30 * M - tol)) (driving = 0), (split = false);
        else if (p.length >= 15 * M - tol) split = true;
      }
    }
    if (total > 9 * H + tol) fail("WORKING_TIME", `${vid} drives ${(total / H).toFixed(2)} h in the day (eu-561: at most 9 h)`);
  }
}
