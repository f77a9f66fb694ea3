/** The company's live channel (contract.md §6): what the websocket sends the consoles and driver apps. */
import type { Point } from "./geo";
import type { ProofSummary } from "./proof";

/** An event of the live channel; the event log and the webhooks carry the same payloads. */
export type LiveEvent =
  | { type: "process"; process_id: string; action: string; status: string; meta: string; link: string }
  | { type: "route"; id: number; status: number; driver_id: number | null }
  | {
      type: "delivery";
      id: number;
      status: number;
      route_id: number | null;
      /** That a proof of delivery exists and what it holds (never the images); null when one was deleted (`proof_deleted`). */
      proof?: ProofSummary | null;
      proof_deleted?: { id: number; by: number; at: string };
    }
  | { type: "driverposition"; driver_id: number; position: Point; timestamp: string }
  | { type: "eta"; route_id: number };

/** A message on the socket: an event (with `event_id` when it is in the event log), or an answer to the client's own messages. */
export type LiveMessage =
  | (LiveEvent & { event_id?: number })
  | { type: "pong" }
  | { type: "resumed"; last_event_id: number; complete: boolean }
  | { type: "error"; message: string };

/** Close code of a socket whose token no longer holds (the user was deactivated, removed or changed role): log in again. */
export const TOKEN_REVOKED = { code: 4403, reason: "token revoked" } as const;

/** How long a ticket of `POST /ws/ticket` opens the live channel (once). */
export const WS_TICKET_SECONDS = 30;

/** The answer of `POST /ws/ticket`: `url` opens the socket (absolute, `wss:` where the service is served over TLS). */
export interface WsTicket {
  ticket: string;
  expires_in: number;
  url: string;
}

/** The access token itself in the live channel's URL (`?access_token=`): deprecated since, and refused from `sunset` on (only tickets open the socket then). */
export const ACCESS_TOKEN_IN_URL = { deprecated: "2026-12-03", sunset: "2027-06-30" } as const;

/** The instants of ACCESS_TOKEN_IN_URL's days (UTC midnight), for the check and the answer's headers. */
export const ACCESS_TOKEN_IN_URL_MS = { deprecated: Date.parse(`${ACCESS_TOKEN_IN_URL.deprecated}T00:00:00Z`), sunset: Date.parse(`${ACCESS_TOKEN_IN_URL.sunset}T00:00:00Z`) } as const;
