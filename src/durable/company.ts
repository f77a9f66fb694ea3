/**
 * One Durable Object per company (named by the company id): it serialises the
 * company's state transitions, hosts routing-process status, and holds the
 * dispatchers' and drivers' websockets (hibernation API, so connections
 * survive eviction). A thin RPC surface: each concern lives in a module
 * beside it (src/durable/README.md).
 */
import { DurableObject } from "cloudflare:workers";
import type { Env, RoutingJob } from "../core/env";
import type { LifecycleOp, LifecycleOutcome } from "../core/services/route-lifecycle";
import type { PublishedEvent } from "../core/services/events";
import { arm } from "./alarms";
import { ChangeQueue } from "./changes";
import { EtaRefresh } from "./eta-refresh";
import { EventOutbox } from "./event-outbox";
import { Host } from "./host";
import { LiveChannel } from "./live";
import { type AttemptKind, type AttemptOutcome, type AttemptSubjects, type AttemptVerdict, LoginThrottle } from "./login-throttle";
import { type FanOutPart, type PartTours, PlanParts, type PartsPlan } from "./parts";
import { type ProcessAction, type ProcessState, type ProcessUpdate, Processes } from "./processes";

export class CompanyCoordinator extends DurableObject<Env> {
  private readonly host: Host;
  private readonly live: LiveChannel;
  private readonly etas: EtaRefresh;
  private readonly changes: ChangeQueue;
  private readonly outbox: EventOutbox;
  private readonly processes: Processes;
  private readonly parts: PlanParts;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.host = new Host(ctx, env);
    this.live = new LiveChannel(this.host);
    this.etas = new EtaRefresh(this.host, this.live);
    this.changes = new ChangeQueue(this.host, this.live, this.etas);
    this.outbox = new EventOutbox(this.host, this.live);
    this.processes = new Processes(this.host, this.live, this.outbox, (pid) => this.parts.drop(pid));
    this.parts = new PlanParts(this.host, this.processes);
  }

  /** A route or delivery state change of contract.md §5, one at a time per company; then the live channel hears of it. */
  async applyChange(op: LifecycleOp): Promise<LifecycleOutcome> {
    return this.changes.apply(op);
  }

  /** Whatever is due: process events to log, overdue processes, plans in parts, the ETA refresh, pruning; then the alarm for the next due time. */
  override async alarm(): Promise<void> {
    const now = Date.now();
    await this.outbox.run(now);
    await this.processes.checkDeadlines(now);
    await this.parts.checkDeadlines(now);
    await this.etas.run(now);
    await this.processes.prune(now);
    await arm(this.ctx.storage);
  }

  /** Websocket upgrade; the worker authenticated the user and passes who it is. */
  override async fetch(request: Request): Promise<Response> {
    return this.live.accept(request);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await this.live.message(ws, message);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.live.close(ws, code, reason);
  }

  /** Sends an event to staff and the driver it concerns (with its `event_id` when logged) and kicks the webhooks that want it. */
  async broadcast(published: PublishedEvent): Promise<number> {
    return this.live.broadcast(published);
  }

  /** The user's tokens just ended (deactivated, removed, role changed): closes its websockets with 4403. */
  async endSessions(userId: number): Promise<number> {
    return this.live.endSessions(userId);
  }

  /** The webhook routes call this after every change of an endpoint. */
  async webhooksChanged(): Promise<void> {
    this.live.webhooksChanged();
  }

  /**
   * Registers a new process with the status of each action; durable, so it
   * survives eviction. `watch`: the queue job that runs it and the time by
   * which it should be final; the watchdog re-runs or fails it after that.
   */
  async createProcess(processId: string, state: ProcessState, watch?: { job: RoutingJob; deadline: number }): Promise<void> {
    await this.processes.create(processId, state, watch);
  }

  async getProcess(processId: string): Promise<ProcessState | null> {
    return this.processes.get(processId);
  }

  /** Updates one action of a process (`meta` merged into its meta JSON) and tells the live channel. */
  async updateProcess(processId: string, action: ProcessAction, update: ProcessUpdate): Promise<ProcessState | null> {
    return this.processes.update(processId, action, update);
  }

  /** Claims the routing of a process for one consumer run; `deadline`: when this run should be done. */
  async claimRouting(processId: string, attempt: string, deadline?: number): Promise<boolean> {
    return this.processes.claim(processId, attempt, deadline);
  }

  /** Whether `attempt` still holds the claim (the watchdog may have handed the process to a re-run). */
  async holdsClaim(processId: string, attempt: string): Promise<boolean> {
    return this.processes.holdsClaim(processId, attempt);
  }

  /** The run `attempt` is about to write its routes: false when it lost the claim or the process is final; no cancelling after true. */
  async beginWrite(processId: string, attempt: string): Promise<boolean> {
    return this.processes.beginWrite(processId, attempt);
  }

  /** Cancels a process that is not final and not writing its routes: it fails with the error `cancelled`. */
  async cancelProcess(processId: string, by: { userId: number }): Promise<{ ok: true; state: ProcessState } | { ok: false; status: 404 | 409; message: string }> {
    return this.processes.cancel(processId, by);
  }

  /** A queue attempt threw and will be retried: the error stays on the `final` record as `last_error`. */
  async noteFailedAttempt(processId: string, error: string): Promise<void> {
    await this.processes.noteFailedAttempt(processId, error);
  }

  /** Marks a process that will not finish as failed, with the reason; a final process stays as it is. */
  async failProcess(processId: string, reason: string): Promise<ProcessState | null> {
    return this.processes.fail(processId, reason);
  }

  /** The run holding the claim `attempt` registers the parts of a big plan before it sends them; false when it lost the claim or the process is final. */
  async startParts(processId: string, attempt: string, parts: FanOutPart[], plan: PartsPlan): Promise<boolean> {
    return this.parts.start(processId, attempt, parts, plan);
  }

  /** Whether the result of this part is still wanted. */
  async partWanted(processId: string, attempt: string, partId: number): Promise<boolean> {
    return this.parts.wanted(processId, attempt, partId);
  }

  /** The improved tours of one part (null: it keeps its initial tours); idempotent by part id; the last part in sends the merge job. */
  async submitPart(processId: string, attempt: string, partId: number, tours: PartTours | null): Promise<boolean> {
    return this.parts.submit(processId, attempt, partId, tours);
  }

  /** The parts and the results in, for the merge job of run `attempt` (null when another run holds the parts). */
  async partsForMerge(processId: string, attempt: string): Promise<{ parts: FanOutPart[]; results: { id: number; tours: PartTours }[] } | null> {
    return this.parts.forMerge(processId, attempt);
  }

  /** Login throttle (login-throttle.ts): counts a password or code attempt before it runs, or refuses it. */
  beginAttempt(kind: AttemptKind, subjects: AttemptSubjects): AttemptVerdict {
    return this.loginThrottle().begin(kind, subjects);
  }

  /** Takes the counted failure back after a success ("succeeded") or a refusal for another reason ("void"). */
  endAttempt(kind: AttemptKind, subjects: AttemptSubjects, outcome: AttemptOutcome): void {
    this.loginThrottle().end(kind, subjects, outcome);
  }

  /** Created on first use: most calls to the object never touch the throttle's table. */
  private throttle?: LoginThrottle;
  private loginThrottle(): LoginThrottle {
    return (this.throttle ??= new LoginThrottle(this.ctx.storage.sql));
  }

  /** Connected clients by role, for status pages and tests. */
  async connections(): Promise<{ staff: number; drivers: number }> {
    return this.live.connections();
  }
}
