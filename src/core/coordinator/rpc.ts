/**
 * The company's coordinator as its callers see it: the RPC surface of the
 * Durable Object (`src/durable/company.ts` implements it). `env.COMPANY` is
 * typed by this interface, so the edge, the queue consumers and the verbs
 * never depend on the object's internals.
 */
import type { AuthUser } from "../context";
import type { RoutingJob } from "../queues";
import type { LifecycleOp, LifecycleOutcome } from "./changes";
import type { PublishedEvent } from "./live";
import type { AttemptKind, AttemptOutcome, AttemptSubjects, AttemptVerdict } from "./login-throttle";
import type { FanOutPart, PartTours, PartsPlan } from "./parts";
import type { ProcessAction, ProcessState, ProcessUpdate } from "./processes";

/** Whom a live-channel ticket was issued to, and when that user's access token was issued. */
export interface WsTicketHolder {
  user: AuthUser;
  tokenIssuedMs: number;
}

export interface CompanyCoordinatorRpc extends Rpc.DurableObjectBranded {
  /** A route or delivery state change of contract.md §5, one at a time per company; then the live channel hears of it. */
  applyChange(op: LifecycleOp): Promise<LifecycleOutcome>;

  /** Sends an event to staff and the driver it concerns (with its `event_id` when logged) and kicks the webhooks that want it. */
  broadcast(published: PublishedEvent): Promise<number>;
  /** The user's tokens just ended (deactivated, removed, role changed): closes its websockets with 4403. */
  endSessions(userId: number): Promise<number>;
  /** The webhook routes call this after every change of an endpoint. */
  webhooksChanged(): Promise<void>;
  /** A single-use ticket that opens `user`'s websocket within WS_TICKET_SECONDS (src/durable/ws-tickets.ts). */
  issueWsTicket(user: AuthUser, tokenIssuedMs: number): string;
  /** Who a ticket was issued to, taking it (a second redeem answers null, as do unknown and expired tickets). */
  redeemWsTicket(ticket: string): WsTicketHolder | null;
  /** Connected clients by role, for status pages and tests. */
  connections(): Promise<{ staff: number; drivers: number }>;

  /**
   * Registers a new process with the status of each action; durable, so it
   * survives eviction. `watch`: the queue job that runs it and the time by
   * which it should be final; the watchdog re-runs or fails it after that.
   */
  createProcess(processId: string, state: ProcessState, watch?: { job: RoutingJob; deadline: number }): Promise<void>;
  getProcess(processId: string): Promise<ProcessState | null>;
  /** Updates one action of a process (`meta` merged into its meta JSON) and tells the live channel. */
  updateProcess(processId: string, action: ProcessAction, update: ProcessUpdate): Promise<ProcessState | null>;
  /** Claims the routing of a process for one consumer run; `deadline`: when this run should be done. */
  claimRouting(processId: string, attempt: string, deadline?: number): Promise<boolean>;
  /** Whether `attempt` still holds the claim (the watchdog may have handed the process to a re-run). */
  holdsClaim(processId: string, attempt: string): Promise<boolean>;
  /** The run `attempt` is about to write its routes: false when it lost the claim or the process is final; no cancelling after true. */
  beginWrite(processId: string, attempt: string): Promise<boolean>;
  /** Cancels a process that is not final and not writing its routes: it fails with the error `cancelled`. */
  cancelProcess(processId: string, by: { userId: number }): Promise<{ ok: true; state: ProcessState } | { ok: false; status: 404 | 409; message: string }>;
  /** A queue attempt threw and will be retried: the error stays on the `final` record as `last_error`. */
  noteFailedAttempt(processId: string, error: string): Promise<void>;
  /** Marks a process that will not finish as failed, with the reason; a final process stays as it is. */
  failProcess(processId: string, reason: string): Promise<ProcessState | null>;

  /** The run holding the claim `attempt` registers the parts of a big plan before it sends them; false when it lost the claim or the process is final. */
  startParts(processId: string, attempt: string, parts: FanOutPart[], plan: PartsPlan): Promise<boolean>;
  /** Whether the result of this part is still wanted. */
  partWanted(processId: string, attempt: string, partId: number): Promise<boolean>;
  /** The improved tours of one part (null: it keeps its initial tours); idempotent by part id; the last part in sends the merge job. */
  submitPart(processId: string, attempt: string, partId: number, tours: PartTours | null): Promise<boolean>;
  /** The parts and the results in, for the merge job of run `attempt` (null when another run holds the parts). */
  partsForMerge(processId: string, attempt: string): Promise<{ parts: FanOutPart[]; results: { id: number; tours: PartTours }[] } | null>;

  /** Login throttle: counts a password or code attempt before it runs, or refuses it. */
  beginAttempt(kind: AttemptKind, subjects: AttemptSubjects): AttemptVerdict;
  /** Takes the counted failure back after a success ("succeeded") or a refusal for another reason ("void"). */
  endAttempt(kind: AttemptKind, subjects: AttemptSubjects, outcome: AttemptOutcome): void;
}
