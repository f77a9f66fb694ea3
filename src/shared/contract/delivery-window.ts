/** The window a delivery is held to, the same for the worker (ETAs, day report, tracking page) and the pages. */
export interface HeldWindowFields {
  pdt_from: string | null;
  pdt_to: string | null;
  /** The window of its several (`time_windows`) the plan chose; null without one. */
  window_from?: string | null;
  window_to?: string | null;
}

/** The window the plan chose among the delivery's `time_windows`, else `pdt_from`..`pdt_to`. */
export const heldWindow = (d: HeldWindowFields): { from: string | null; to: string | null } =>
  d.window_from && d.window_to ? { from: d.window_from, to: d.window_to } : { from: d.pdt_from, to: d.pdt_to };
