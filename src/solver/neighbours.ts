import type { Instance } from "./model";

/** Neighbours per job in the local search's granular neighbourhood (Toth & Vigo 2003). */
export const GRANULAR_NEIGHBOURS = 30;
/** Weights of waiting and time warp in the time-window-aware proximity (Vidal et al. 2013). */
const WAIT_WEIGHT = 0.2;
const WARP_WEIGHT = 1;

/**
 * Granular neighbour lists: per job the `k` jobs it is most likely to be
 * next to in a good solution. The proximity of i and j is Vidal et al.'s
 * (2013, HGS-TW) travel time plus the waiting and the time warp that
 * serving j right after i would cause,
 *   t(i,j) + 0.2 max(0, e(j) - t(i,j) - s(i) - l(i)) + max(0, e(i) + s(i) + t(i,j) - l(j)),
 * taken in the better of both directions (PyVRP's symmetric proximity), in
 * seconds of the first vehicle. Candidates are the `inst.neighbours`
 * (nearest by distance, computed once per solve), so the lists cost
 * O(n x 80) time and O(n x k) memory, also with an on-demand matrix.
 */
export function granularNeighbours(inst: Instance, k = GRANULAR_NEIGHBOURS): { list: Int32Array; count: number } {
  const pool = inst.neighbourCount;
  const count = Math.min(k, pool);
  const list = new Int32Array(inst.size * count);
  const v = inst.vehicles[0];
  if (count === 0 || !v) return { list, count };
  const { ready, due, service } = inst;
  const proximity = (i: number, j: number) => {
    const t = v.durations.at(i, j) * v.timeScale;
    return t + WAIT_WEIGHT * Math.max(0, ready[j] - t - service[i] - due[i]) + WARP_WEIGHT * Math.max(0, ready[i] + service[i] + t - due[j]);
  };
  const candidates = new Int32Array(pool);
  const scores = new Float64Array(pool);
  const order = Array.from({ length: pool }, (_, i) => i);
  for (let i = 1; i < inst.size; i++) {
    for (let c = 0; c < pool; c++) {
      const j = inst.neighbours[i * pool + c];
      candidates[c] = j;
      scores[c] = Math.min(proximity(i, j), proximity(j, i));
    }
    order.sort((a, b) => scores[a] - scores[b] || a - b);
    for (let c = 0; c < count; c++) list[i * count + c] = candidates[order[c]];
  }
  return { list, count };
}
