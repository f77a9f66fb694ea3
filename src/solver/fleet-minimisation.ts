import type { Budget } from "./budget";
import type { Random } from "./random";
import { recreate, ruin } from "./sisr";
import type { SolutionState } from "./state";

/**
 * Fleet minimisation of SISR (Christiaens & Vanden Berghe 2020, its section on fleet minimisation):
 * with one tour fewer, the jobs left over form the set A of absent jobs;
 * each iteration ruins and recreates the plan with the fleet capped
 * (sisr.ts's `ruin`/`recreate`) and keeps the candidate when it leaves
 * fewer jobs absent, or as many whose summed absence counters are smaller.
 * Every iteration adds one to the counter of each job still absent, so a
 * job that stays out long enough is eventually put in at the price of
 * jobs that were out less often. A step moves a whole ruin (about ten
 * jobs) where the ejection search (route-minimisation.ts) moves one job
 * and ejects a few: the absent set changes in bigger, better-informed
 * steps. When A is empty the plan has a tour fewer; the next shortest
 * tour goes.
 *
 * On large plans the ruin and the insertions stay near the absent jobs: a
 * scope (state.ts) of the tours that hold one of each absent job's
 * correlated neighbours, rebuilt whenever A changes. Iterations then cost
 * the same at 1,000 jobs as at 200.
 *
 * Not called by `solve` (route-minimisation.ts keeps the ejection search):
 * on gh1000 it was no better than the ejection search at the minimum fleet
 * (solver README, "SISR fleet minimisation at 1,000 jobs"); kept, with its
 * tests, for the search that combines both.
 */

export interface FleetSearch {
  /** The best complete plan so far (not changed). */
  best: SolutionState;
  /** Working plan; may already have absent jobs (e.g. a stalled ejection search's pool). */
  current: SolutionState;
  /** No tour below this (capacity bound). */
  bound: number;
  /** Correlated neighbours, `near.length / size` per job; null: no scope (whole plan). */
  near: Int32Array | null;
  /** Budget fraction at which to stop in any case. */
  until: number;
  /** Budget share after the last tour dissolved at which to give up. */
  stallShare: number;
}

export function* minimiseFleet(search: FleetSearch, rng: Random, budget: Budget, onImproved: (s: SolutionState) => void): Generator<void, SolutionState> {
  let best = search.best;
  const current = search.current;
  const inst = current.inst;
  const { bound, near, until, stallShare } = search;
  const absence = new Float64Array(inst.units.length);
  let lastGain = budget.fraction();
  /** Tours allowed: one fewer than the best plan has (a ruin that empties a tour may open it again). */
  let fleet = best.routes.length - 1;
  const absentSum = (s: SolutionState) => {
    let sum = 0;
    for (const u of s.unassigned) sum += absence[u];
    return sum;
  };
  const dissolve = () => {
    // One of the two shortest tours at random (shorter tours are easier to empty).
    const sorted = current.routes.slice().sort((a, b) => a.nodes.length - b.nodes.length);
    current.removeTour(sorted[Math.min(sorted.length - 1, rng.int(2))]);
    fleet = current.routes.length;
  };
  const rescope = () => {
    if (!near) return;
    current.scope = null;
    const k = near.length / inst.size;
    const mask = new Uint8Array(inst.size);
    const nodes: number[] = [];
    for (const u of current.unassigned) {
      for (const n of inst.units[u]) {
        mask[n] = 1;
        for (let i = 0; i < k; i++) {
          const r = current.routeOf[near[n * k + i]];
          if (!r || mask[r.nodes[0]]) continue;
          for (const m of r.nodes) {
            mask[m] = 1;
            nodes.push(m);
          }
        }
      }
    }
    current.scope = { mask, nodes };
  };
  // A pool handed over has no tour to dissolve yet; the fleet is the plan's.
  if (current.unassigned.length > 0) fleet = current.routes.length;
  if (current.unassigned.length === 0) {
    if (current.routes.length <= bound) return best;
    dissolve();
  }
  rescope();
  let absent = current.unassigned.length;
  let absentAbsence = absentSum(current);
  while (!budget.exhausted() && budget.fraction() < until && budget.fraction() - lastGain < stallShare) {
    budget.tick();
    if ((budget.iterations & 15) === 0) yield;
    current.begin();
    const removed = ruin(current, rng);
    // The jobs absent longest first, into the slack the ruin left; then SISR's recreate for the rest.
    const waiting = current.unassigned.filter((u) => !removed.includes(u)).sort((a, b) => absence[b] - absence[a]);
    for (const u of waiting) {
      const placement = current.bestPlacement(u, rng, 0, current.routes.length < fleet);
      if (placement) current.apply(u, placement);
    }
    recreate(current, removed, rng, fleet);
    const count = current.unassigned.length;
    // Christiaens & Vanden Berghe also take a candidate with more absent jobs when their counters sum lower: at
    // 1,000 jobs that let the absent set grow to 60 jobs from a pool of 12 (gh1000 C1_10_8), so here only as many.
    if (count < absent || (count === absent && absentSum(current) < absentAbsence)) {
      current.commit();
      if (count === 0) {
        current.scope = null;
        best = current.clone();
        onImproved(best);
        lastGain = budget.fraction();
        if (current.routes.length <= bound) break;
        dissolve();
      }
      rescope();
      absent = current.unassigned.length;
      absentAbsence = absentSum(current);
    } else current.rollback();
    for (const u of current.unassigned) absence[u]++;
    absentAbsence += current.unassigned.length;
  }
  best.scope = null;
  return best;
}
