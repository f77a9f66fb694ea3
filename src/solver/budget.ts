import type { Progress, SolveOptions } from "./types";

/**
 * Search budget: wall clock and/or iterations, plus cancellation. Phases ask
 * `fraction()` to split the budget; `tick()` counts one search iteration.
 *
 * Note: in Cloudflare Workers the clock only advances across I/O; `solve`
 * yields every few hundred steps so the clock (and a time limit) moves on.
 */
export class Budget {
  private readonly clock: () => number;
  readonly started: number;
  iterations = 0;
  cancelled = false;
  private lastProgress = 0;
  private best: (() => Omit<Progress, "fraction">) | null = null;
  private readonly timeLimit: number;
  private readonly maxIterations: number;

  constructor(private readonly options: SolveOptions) {
    this.clock = options.clock ?? Date.now;
    this.started = this.clock();
    this.maxIterations = options.maxIterations ?? Infinity;
    this.timeLimit = options.timeLimitMs ?? (options.maxIterations === undefined ? 5_000 : Infinity);
  }

  elapsedMs(): number {
    return this.clock() - this.started;
  }

  /** Share of the budget used, 0..1 (1 once cancelled). */
  fraction(): number {
    if (this.cancelled) return 1;
    const byTime = this.timeLimit === Infinity ? 0 : this.elapsedMs() / this.timeLimit;
    const byIterations = this.maxIterations === Infinity ? 0 : this.iterations / this.maxIterations;
    return Math.min(1, Math.max(byTime, byIterations));
  }

  tick(): void {
    this.iterations++;
    if ((this.iterations & 63) === 0) this.progress();
  }

  /** Where progress reports get the best solution's figures from. */
  watch(best: () => Omit<Progress, "fraction">): void {
    this.best = best;
  }

  /** True once the budget is spent or the caller cancelled. */
  exhausted(): boolean {
    if (!this.cancelled && (this.options.signal?.aborted || this.options.shouldStop?.())) this.cancelled = true;
    return this.fraction() >= 1;
  }

  /** Reports progress at most every 100 ms (`force`: now, e.g. on a new best). */
  progress(force = false): void {
    if (!this.options.onProgress || !this.best) return;
    const now = this.clock();
    if (!force && now - this.lastProgress < 100) return;
    this.lastProgress = now;
    this.options.onProgress({ fraction: this.fraction(), ...this.best() });
  }
}
