import { trafficTravelTime } from "./matrix";
import { type Instance, windowAt } from "./model";
import type { Route } from "./route";
import { merge, seg } from "./segment";
import type { Stop, Tour } from "./types";

/**
 * Timetable of a planned tour. The departure is the earliest one that
 * achieves the tour's minimal duration (from its duration segment); times
 * then follow the real, possibly time-dependent, travel times. Planning used
 * the slowest traffic factor, so real arrivals are never later than planned.
 * Node 0 is the vehicle's own depot (its matrices read it so: model.ts).
 */
export function timetable(inst: Instance, route: Route): Tour {
  const v = route.vehicle;
  const nodes = route.nodes;
  const len = nodes.length;
  const tEnd = route.time(nodes[len - 1], -1);
  merge(route.fDur[len], route.fWarp[len], route.fEarly[len], route.fLate[len], tEnd, 0, 0, -Infinity, v.latestEnd);
  let t = Math.max(v.earliestStart, seg.earliest);
  const start = t;
  let prev = 0;
  let load: number[] = [];
  for (let d = 0; d < inst.dims; d++) load.push(route.fPlain[len * inst.dims + d]);
  const stops: Stop[] = [];
  let distance = 0;
  let waiting = 0;
  for (const node of nodes) {
    const leg = v.distances.at(prev, node);
    const travel = trafficTravelTime(v.traffic, v.durations.at(prev, node) * v.freeFlowScale, t);
    const arrival = t + travel;
    // Several windows: the first still open at the (real) arrival; never later than the one planned, as arrivals are never later.
    const k = inst.multiWindow && inst.winFrom[node + 1] > inst.winFrom[node] ? windowAt(inst, node, arrival) : -1;
    const serviceStart = Math.max(arrival, k >= 0 ? inst.winStart[k] : inst.ready[node]);
    const given = inst.windows[node];
    const window = given.length === 0 ? undefined : given[k >= 0 ? k - inst.winFrom[node] : 0];
    const departure = serviceStart + inst.service[node];
    load = load.map((q, d) => q + inst.delta[node * inst.dims + d]);
    stops.push({
      jobId: inst.problem.jobs[node - 1].id,
      arrival,
      serviceStart,
      departure,
      waiting: serviceStart - arrival,
      load,
      distance: leg,
      ...(window ? { window: { start: window.start, end: window.end } } : {}),
    });
    distance += leg;
    waiting += serviceStart - arrival;
    t = departure;
    prev = node;
  }
  let end = t;
  if (!v.open) {
    distance += v.distances.at(prev, 0);
    end = t + trafficTravelTime(v.traffic, v.durations.at(prev, 0) * v.freeFlowScale, t);
  }
  const duration = end - start;
  return {
    vehicleId: v.id,
    ...(v.depot !== undefined ? { depot: v.depot } : {}),
    start,
    end,
    stops,
    distance,
    duration,
    waiting,
    cost: route.costOf(distance, duration, waiting),
  };
}
