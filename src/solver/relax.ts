import type { Instance } from "./model";
import type { SolutionState } from "./state";
import type { RelaxedJob } from "./types";

const STEP_MINUTES = 30;
const MAX_MINUTES = 300;

/**
 * Window relaxation for jobs that would stay unassigned: widen their window
 * end by 30, 60, ... minutes (up to the requested maximum, at most 300) and
 * try to insert them, smallest widening first. With `afterTime`, windows
 * closing before that time stay strict. Inserted jobs keep their widened
 * window (in `inst.due`) so later evaluation stays consistent. A job with
 * several windows has its last one widened (and `afterTime` compares its end).
 */
export function relaxWindows(inst: Instance, state: SolutionState): Map<number, number> {
  const relaxed = new Map<number, number>();
  const options = inst.problem.relax;
  if (!options || options.maxMinutes <= 0 || state.unassigned.length === 0) return relaxed;
  const maxMinutes = Math.min(MAX_MINUTES, options.maxMinutes);
  const afterTime = options.afterTime ?? -Infinity;
  const original = inst.due.slice();
  const originalWinEnd = inst.winEnd.slice();
  const eligible = (u: number) => inst.units[u].every((n) => original[n] >= afterTime);
  // A job with several windows is widened at its last window (inst.due is its outer end).
  const widen = (n: number, seconds: number) => {
    inst.due[n] = original[n] + seconds;
    const k = inst.winFrom[n + 1] - 1;
    if (k >= inst.winFrom[n]) inst.winEnd[k] = originalWinEnd[k] + seconds;
  };
  for (let step = STEP_MINUTES; ; step += STEP_MINUTES) {
    const minutes = Math.min(step, maxMinutes);
    const candidates = state.unassigned
      .filter(eligible)
      .sort((a, b) => inst.priority[inst.units[b][0]] - inst.priority[inst.units[a][0]]);
    for (const u of candidates) {
      for (const n of inst.units[u]) widen(n, minutes * 60);
      const placement = state.bestPlacement(u, null, 0, true);
      if (placement) {
        state.apply(u, placement);
        for (const n of inst.units[u]) relaxed.set(n, minutes);
      } else {
        for (const n of inst.units[u]) widen(n, 0);
      }
    }
    if (minutes >= maxMinutes || state.unassigned.length === 0) break;
  }
  return relaxed;
}

/** Public form of the relaxations, with the lateness actually incurred. */
export function relaxedJobs(inst: Instance, relaxed: Map<number, number>, serviceStart: Map<string, number>, originalDue: (node: number) => number): RelaxedJob[] {
  const out: RelaxedJob[] = [];
  for (const [node, minutes] of relaxed) {
    const id = inst.problem.jobs[node - 1].id;
    const start = serviceStart.get(id) ?? 0;
    out.push({ jobId: id, minutes, lateness: Math.max(0, start - originalDue(node)) });
  }
  return out;
}
