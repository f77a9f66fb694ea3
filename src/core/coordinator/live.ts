/** Events on their way to the live channel and the webhooks. */
import type { LiveEvent } from "../../shared/contract/live";

export interface LiveEntry {
  event: LiveEvent;
  /** The driver the event concerns: drivers only ever see their own. */
  driverId: number | null;
}

/**
 * A live event as it is published: with its id in the event log when it was
 * logged; without one it is live only (progress of a running process action,
 * a driver position no webhook wanted).
 */
export interface PublishedEvent extends LiveEntry {
  eventId?: number;
}
