import { BreakClock } from "./breaks";
import { trafficTravelTime } from "./matrix";
import { type Instance, windowAt } from "./model";
import type { Route } from "./route";
import { EPS, merge, seg } from "./segment";
import type { Stop, Tour } from "./types";

/**
 * Timetable of a planned tour. The departure is the earliest one that
 * achieves the tour's minimal duration (from its duration segment); times
 * then follow the real, possibly time-dependent, travel times. Planning used
 * the slowest traffic factor, so real arrivals are never later than planned.
 * Node 0 is the vehicle's own depot (its matrices read it so: model.ts).
 * A vehicle with breaks or working-time rules gets them placed (`timedWithBreaks`).
 */
/** How far a tour is from legal: the search's penalty when it breaks a constraint, plus the excess its breaks leave (0: legal). */
export const illegality = (inst: Instance, route: Route): number =>
  (route.feasible ? 0 : route.penalty) + (route.vehicle.breakRules ? timedWithBreaks(inst, route).excess : 0);

export function timetable(inst: Instance, route: Route): Tour {
  return route.vehicle.breakRules ? timedWithBreaks(inst, route).tour : timed(inst, route, plainStart(route)).tour;
}

/**
 * The tour timed with its breaks placed, and `excess`: by how many seconds
 * it still breaks a window, the shift, the tour duration or a working-time
 * limit (0: legal as planned). The departure that achieves the minimal
 * duration comes first; when breaks make that tour late, the earliest
 * departure is tried (more slack before the windows), and then the latest
 * departure before the first that is as good: a tour that needs 20 minutes
 * more for its break leaves 20 minutes earlier, not at the start of the shift
 * to wait at its first stop.
 */
export function timedWithBreaks(inst: Instance, route: Route): { tour: Tour; excess: number } {
  const plain = plainStart(route);
  const planned = timed(inst, route, plain);
  if (planned.excess <= EPS || route.nodes.length === 0) return planned;
  const early = timed(inst, route, route.vehicle.earliestStart);
  if (early.excess >= planned.excess) return planned;
  // Bisection to a second: the excess grows with the departure except where a break moves across a stop.
  let lo = route.vehicle.earliestStart;
  let hi = plain;
  let best = early;
  while (hi - lo > 1) {
    const mid = (lo + hi) / 2;
    const t = timed(inst, route, mid);
    if (t.excess <= early.excess + EPS) {
      lo = mid;
      best = t;
    } else hi = mid;
  }
  return best;
}

function plainStart(route: Route): number {
  const v = route.vehicle;
  const len = route.nodes.length;
  const tEnd = route.time(route.nodes[len - 1], -1);
  merge(route.fDur[len], route.fWarp[len], route.fEarly[len], route.fLate[len], tEnd, 0, 0, -Infinity, v.latestEnd);
  return Math.max(v.earliestStart, seg.earliest);
}

function timed(inst: Instance, route: Route, start: number): { tour: Tour; excess: number } {
  const v = route.vehicle;
  const nodes = route.nodes;
  const len = nodes.length;
  const clock = v.breakRules ? new BreakClock(v.breakRules, route.duration, start) : null;
  let excess = 0;
  let t = start;
  let prev = 0;
  let load: number[] = [];
  for (let d = 0; d < inst.dims; d++) load.push(route.fPlain[len * inst.dims + d]);
  const stops: Stop[] = [];
  let distance = 0;
  let waiting = 0;
  const multi = (node: number) => inst.multiWindow && inst.winFrom[node + 1] > inst.winFrom[node];
  for (let i = 0; i < len; i++) {
    const node = nodes[i];
    const leg = v.distances.at(prev, node);
    const travel = trafficTravelTime(v.traffic, v.durations.at(prev, node) * v.freeFlowScale, t);
    const arrival = clock ? clock.drive(t, travel, i) : t + travel;
    // Several windows: the first still open at the (real) arrival; never later than the one planned, as arrivals are never later.
    let k = multi(node) ? windowAt(inst, node, arrival) : -1;
    let serviceStart = Math.max(arrival, k >= 0 ? inst.winStart[k] : inst.ready[node]);
    let breakTime = 0;
    if (clock) {
      const before = clock.breakSeconds;
      let ready = clock.wait(arrival, serviceStart, i);
      // Breaks may have run past this window: the next one still open.
      if (k >= 0 && ready > inst.winEnd[k] + EPS) {
        k = windowAt(inst, node, ready);
        ready = clock.wait(ready, Math.max(ready, inst.winStart[k]), i);
      }
      serviceStart = clock.serve(ready, inst.service[node], i);
      excess += Math.max(0, serviceStart - (k >= 0 ? inst.winEnd[k] : inst.due[node]));
      breakTime = clock.breakSeconds - before;
    }
    const given = inst.windows[node];
    const window = given.length === 0 ? undefined : given[k >= 0 ? k - inst.winFrom[node] : 0];
    const departure = serviceStart + inst.service[node];
    load = load.map((q, d) => q + inst.delta[node * inst.dims + d]);
    stops.push({
      jobId: inst.problem.jobs[node - 1].id,
      arrival,
      serviceStart,
      departure,
      waiting: serviceStart - arrival - breakTime,
      load,
      distance: leg,
      ...(window ? { window: { start: window.start, end: window.end } } : {}),
    });
    distance += leg;
    waiting += serviceStart - arrival - breakTime;
    t = departure;
    prev = node;
  }
  let end = t;
  if (!v.open) {
    distance += v.distances.at(prev, 0);
    const travel = trafficTravelTime(v.traffic, v.durations.at(prev, 0) * v.freeFlowScale, t);
    end = clock ? clock.drive(t, travel, len) : t + travel;
  }
  const duration = end - start;
  if (clock) {
    clock.finish();
    excess += clock.excess + Math.max(0, end - v.givenLatestEnd) + Math.max(0, duration - v.givenMaxDuration);
  }
  const tour: Tour = {
    vehicleId: v.id,
    ...(v.depot !== undefined ? { depot: v.depot } : {}),
    ...(v.startAt !== undefined ? { startAt: v.startAt } : {}),
    start,
    end,
    stops,
    distance,
    duration,
    waiting,
    ...(clock ? { breaks: clock.breaks } : {}),
    cost: route.costOf(distance, duration, waiting),
  };
  return { tour, excess };
}
