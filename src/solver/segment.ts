/**
 * Duration segments (Vidal et al. 2013; PyVRP's DurationSegment): a route
 * piece is summarised by four numbers so that two pieces concatenate in O(1):
 * - duration: minimal time from the first service start to the last
 *   service end, waiting included;
 * - timeWarp: how much the windows would have to be violated (0 = feasible);
 * - earliest / latest: the window of start times of the first service that
 *   achieve that duration and time warp.
 * The result of `merge` is left in `seg` to keep the hot loops allocation-free.
 */
export const seg = { duration: 0, timeWarp: 0, earliest: 0, latest: 0 };

/** Concatenates (d1, w1, e1, l1) + travel + (d2, w2, e2, l2) into `seg`. */
export function merge(
  d1: number,
  w1: number,
  e1: number,
  l1: number,
  travel: number,
  d2: number,
  w2: number,
  e2: number,
  l2: number,
): void {
  const delta = d1 - w1 + travel;
  const wait = Math.max(e2 - delta - l1, 0);
  const warp = Math.max(e1 + delta - l2, 0);
  seg.duration = d1 + d2 + travel + wait;
  seg.timeWarp = w1 + w2 + warp;
  seg.earliest = Math.max(e2 - delta, e1) - wait;
  seg.latest = Math.min(l2 - delta, l1) + warp;
}

/** Tolerance for floating-point comparisons of times and loads. */
export const EPS = 1e-6;
