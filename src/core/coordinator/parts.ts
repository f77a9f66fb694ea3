/**
 * Big plans improved in parts by several consumers (services/routing/fan-out.ts):
 * what the run that splits a plan hands the coordinator, and where the parts lie.
 */
import type { RoutingMergeJob } from "../queues";

/** Objects of a plan's parts in the UPLOADS bucket. */
export const fanOutPrefix = (companyId: number, pid: string) => `fanout/${companyId}/${pid}/`;

/** Tours as job ids per vehicle (the solver's `InitialTour`). */
export type PartTours = { vehicleId: string; jobIds: string[] }[];

/** One part of a big plan: its tours in the first solution and the vehicles it may use. */
export interface FanOutPart {
  id: number;
  initial: PartTours;
  vehicleIds: string[];
}

/** How a plan's parts are to be collected (`startParts`). */
export interface PartsPlan {
  /** When to merge without the parts still missing. */
  deadline: number;
  /** The watchdog's new deadline for the whole process (after the merge's final pass). */
  finalBy: number;
  /** The job that merges the parts. */
  job: RoutingMergeJob;
  /** Progress of the process with none and with all parts in. */
  progress: [number, number];
}
