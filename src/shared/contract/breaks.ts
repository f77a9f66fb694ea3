/**
 * Breaks on the wire, the same for the worker (route records, ETAs, the day report) and the pages (console
 * timeline, driver app): what a vehicle or driver asks for, and what a planned route holds.
 */

/** The named working-time rules a company, vehicle or driver selects (docs/features/fleet-and-opening-hours.md). */
export const WORKING_TIME_RULES = ["de-arbzg", "eu-561"] as const;
export type WorkingTimeRuleId = (typeof WORKING_TIME_RULES)[number];

/** A break at a given time of day: it starts between `from` and `to` and lasts `minutes`. */
export interface BreakSpec {
  /** Times of day as vehicles store them: `hh:mm:ss+hh:mm`, or `hh:mm:ss` on the company's wall clock. */
  from: string;
  to: string;
  minutes: number;
}

/** A break the plan placed in a route, between the stops `after_orderindex` and the next (0: before the first). */
export interface RouteBreak {
  /** ISO 8601 UTC. */
  start: string;
  end: string;
  minutes: number;
  after_orderindex: number;
  /** At the stop after its service, at the next stop before its service (while waiting, where there is waiting), or on the way between. */
  where: "after-service" | "before-service" | "on-the-way";
  /** Why it is there: a fixed break of the vehicle or driver, or the working-time rule that requires it. */
  reason: "fixed" | WorkingTimeRuleId;
}

/** Minutes of the breaks of a route. */
export const breakMinutes = (breaks: readonly RouteBreak[]): number => breaks.reduce((sum, b) => sum + b.minutes, 0);
